/**
 * The context-trim adapter against a stand-in of Pi's extension API: configuration, the budget it
 * derives from the model, and its safe failure (untrimmed, reported once).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import contextTrim from "../../extensions/context-trim/index.ts";
import { MARKER_CUSTOM_TYPE } from "../../extensions/context-trim/prompt.ts";
import { fingerprintReady } from "../../extensions/shared/text/fingerprint.ts";
import type { TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";
import { useAgentDirEnv } from "../fixtures/agent-dir-env.ts";
import { filler, HistoryBuilder } from "./transcript-history.ts";

type Handler = (event: { type: "context"; messages: TranscriptMessage[] }, ctx: unknown) => unknown;

// The hook answers synchronously once the xxHash fingerprint runs (Pi awaits it either way).
beforeAll(async () => {
	await fingerprintReady();
});

const env = useAgentDirEnv();

function setup(options: {
	config?: unknown;
	model?: { contextWindow: number; maxTokens: number };
	prompt?: () => string;
}) {
	const agentDir = env.agentDir("ct-adapter");
	const cwd = join(agentDir, "cwd");
	mkdirSync(cwd);
	if (options.config !== undefined) writeFileSync(join(agentDir, "headroom.json"), JSON.stringify(options.config));
	let handler: Handler | undefined;
	const pi = {
		on: (name: string, h: Handler) => {
			if (name === "context") handler = h;
		},
		getActiveTools: () => ["bash"],
		getAllTools: () => [{ name: "bash", description: "Run a command", parameters: { type: "object" } }],
	};
	contextTrim(pi as never);
	const ctx = {
		cwd,
		hasUI: false,
		model: options.model,
		getSystemPrompt: options.prompt ?? (() => "You are a coding agent."),
		getContextUsage: () => undefined,
		sessionManager: { getSessionFile: () => "/sessions/s.jsonl" },
	};
	return (messages: TranscriptMessage[]) =>
		(handler as Handler)({ type: "context", messages }, ctx) as { messages: TranscriptMessage[] } | undefined;
}

function history(turns: number): TranscriptMessage[] {
	const b = new HistoryBuilder().user("TASK: tidy the repo");
	for (let i = 0; i < turns; i++) {
		b.assistant(`step ${i}`, [{ name: "bash", arguments: { command: `ls ${i}` }, result: filler(`out ${i}`, 3000) }]);
	}
	return b.messages;
}

const model = { contextWindow: 16_000, maxTokens: 2000 };

describe("context-trim adapter", () => {
	it("leaves a history that fits alone and trims one that does not, naming the session file", () => {
		const call = setup({ model });
		expect(call(history(3))).toBeUndefined();
		const out = call(history(60));
		const markers = out?.messages.filter((m) => m.customType === MARKER_CUSTOM_TYPE) ?? [];
		expect(markers).toHaveLength(1);
		expect(String(markers[0].content)).toContain("/sessions/s.jsonl");
	});

	it("does nothing when disabled in headroom.json", () => {
		const call = setup({ model, config: { contextTrim: { enabled: false } } });
		expect(call(history(60))).toBeUndefined();
	});

	it("uses a configured output reserve: a larger reserve trims more", () => {
		const small = setup({ model: { contextWindow: 40_000, maxTokens: 1000 } })(history(60));
		const large = setup({
			model: { contextWindow: 40_000, maxTokens: 1000 },
			config: { contextTrim: { reserveTokens: 20_000 } },
		})(history(60));
		expect(large?.messages.length).toBeLessThan(small?.messages.length ?? 0);
	});

	it("reports a bad configuration value once and falls back to the default", () => {
		const errors = vi.spyOn(console, "error").mockImplementation(() => {});
		const call = setup({ model, config: { contextTrim: { cutStepTokens: -5 } } });
		expect(call(history(60))?.messages.some((m) => m.customType === MARKER_CUSTOM_TYPE)).toBe(true);
		call(history(61));
		expect(errors).toHaveBeenCalledTimes(1);
		expect(String(errors.mock.calls[0][0])).toContain("contextTrim.cutStepTokens");
	});

	it("cuts an oversized result with the configured projection.headShare", () => {
		const lines = Array.from({ length: 4000 }, (_, i) => `line ${i} ${"x".repeat(40)}`).join("\n");
		const big = new HistoryBuilder()
			.user("TASK: read the log")
			.assistant("reading", [{ name: "bash", arguments: { command: "cat log" }, result: lines }])
			.user("and now?").messages;
		/** Characters shown before the omission marker in the shortened tool result. */
		const headChars = (out: { messages: TranscriptMessage[] } | undefined) => {
			const text = JSON.stringify(out?.messages.filter((m) => m.role === "toolResult") ?? []);
			const at = text.indexOf("omitted — see the footer");
			expect(at).toBeGreaterThan(0);
			return text.slice(text.indexOf("line 0 "), at).length;
		};
		const byDefault = headChars(setup({ model })(big));
		const headLight = headChars(setup({ model, config: { projection: { headShare: 0.2 } } })(big));
		expect(headLight).toBeLessThan(byDefault / 2);
	});

	it("sends the history untrimmed without a model, and on an internal error (reported once)", () => {
		expect(setup({})(history(60))).toBeUndefined();
		const errors = vi.spyOn(console, "error").mockImplementation(() => {});
		const broken = setup({
			model,
			prompt: () => {
				throw new Error("prompt unavailable");
			},
		});
		expect(broken(history(60))).toBeUndefined();
		expect(broken(history(61))).toBeUndefined();
		expect(errors).toHaveBeenCalledTimes(1);
		expect(String(errors.mock.calls[0][0])).toContain("prompt unavailable");
	});
});

/**
 * Model choice against a registry the size of Pi's (some 970 built-in models, most without credentials):
 * errors stay short and name usable models first, bare ids resolve among usable models only, and a
 * resumed child gets the same bounded list. Also the wording of spawn/queue/re-run texts in print mode
 * (no UI: single-shot, call subagent_wait) versus with a UI, and singular/plural in result texts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { restoreFromSession } from "../../extensions/subagents/delivery/persistence.ts";
import { MODEL_CHOICES_SHOWN } from "../../extensions/subagents/domain/models.ts";
import type { ChildRecord } from "../../extensions/subagents/domain/records.ts";
import * as P from "../../extensions/subagents/prompt/common.ts";
import { badToolsError } from "../../extensions/subagents/prompt/spawn.ts";
import { cancelTool } from "../../extensions/subagents/tools/cancel.ts";
import { sendTool } from "../../extensions/subagents/tools/send.ts";
import { spawnTool } from "../../extensions/subagents/tools/spawn.ts";
import { childRecord, deliveredSession, type FakeWorld, tempRoot, until, useFakeWorlds } from "./subagents-fakes.ts";

type Model = { provider: string; id: string; contextWindow: number; maxTokens: number };
const model = (provider: string, id: string): Model => ({ provider, id, contextWindow: 128_000, maxTokens: 4096 });

/** Usable: the session's provider (5 models), a router (30) and one "openai" model; plus "shared" on two. */
const USABLE: Model[] = [
	...["mock-model", "mock-b", "mock-c", "mock-d", "shared"].map((id) => model("mock", id)),
	...Array.from({ length: 29 }, (_, i) => model("router", `r-${String(i).padStart(2, "0")}`)),
	model("router", "shared"),
	model("openai", "gpt-4o"),
];
/** Known without credentials: 24 providers × 38 models, "gpt-4o" and "shared" among them. */
const KEYLESS: Model[] = Array.from({ length: 24 }, (_, p) =>
	Array.from({ length: 38 }, (_, i) =>
		model(`nokey-${p}`, i === 0 ? "gpt-4o" : i === 1 ? "shared" : i === 2 ? "claude-x" : `m-${i}`),
	),
).flat();
const ALL = [...USABLE, ...KEYLESS];
const USABLE_KEYS = new Set(USABLE.map((m) => `${m.provider}/${m.id}`));
/** A generous bound: 20 choices of about 20 bytes plus the sentence around them. */
const ERROR_MAX_BYTES = 1024;

const world = useFakeWorlds({ models: ALL, available: USABLE });

async function spawnError(w: FakeWorld, spec: string): Promise<string> {
	try {
		await spawnTool(w.services, { prompt: "task", model: spec }, w.ctx);
	} catch (error) {
		return (error as Error).message;
	}
	throw new Error(`spawn with model ${spec} did not fail`);
}

/** provider/id names in a text. */
const namesIn = (text: string) => [...text.matchAll(/\b([\w-]+\/[\w.-]+)/g)].map((m) => m[1]);

describe("model errors against a large registry", () => {
	it("an unknown model lists 20 usable models, the session's provider first, then counts the rest", async () => {
		const w = world();
		const text = await spawnError(w, "no-such-model");
		expect(Buffer.byteLength(text)).toBeLessThanOrEqual(ERROR_MAX_BYTES);
		const names = namesIn(text);
		expect(names.length).toBe(MODEL_CHOICES_SHOWN);
		expect(names.every((n) => USABLE_KEYS.has(n))).toBe(true);
		expect(names.slice(0, 5)).toEqual(["mock/mock-b", "mock/mock-c", "mock/mock-d", "mock/mock-model", "mock/shared"]);
		expect(text).toContain(`… and ${USABLE.length - MODEL_CHOICES_SHOWN} more.`);
		expect(text.startsWith('Unknown model "no-such-model"; models you can use:')).toBe(true);
	});

	it("a bare id that keyless providers share resolves to the one usable model", async () => {
		const w = world();
		const out = await spawnTool(w.services, { prompt: "task", model: "gpt-4o" }, w.ctx);
		expect(out.content[0].text).toContain("on openai/gpt-4o (tools:");
		await until(() => w.backend.created.length === 1);
		expect(w.backend.created[0].model).toEqual(model("openai", "gpt-4o"));
	});

	it("ambiguity is judged among usable models only", async () => {
		const w = world();
		const text = await spawnError(w, "shared");
		expect(text).toBe(
			'Model "shared" is ambiguous among the models you can use; pass provider/id, one of: mock/shared, router/shared.',
		);
	});

	it("an id known only without credentials says so, bounded, and lists usable models", async () => {
		const w = world();
		const text = await spawnError(w, "claude-x");
		expect(Buffer.byteLength(text)).toBeLessThanOrEqual(ERROR_MAX_BYTES);
		expect(text).toContain(
			"is known only to providers with no credentials configured here (nokey-0, nokey-1, nokey-10, nokey-11, nokey-12 … and 19 more)",
		);
		expect(text).toContain(`models you can use: mock/mock-b,`);
		expect(text).toContain(`… and ${USABLE.length - MODEL_CHOICES_SHOWN} more.`);
	});

	it("an exact provider/id without credentials is still accepted: an explicit choice", async () => {
		const w = world();
		const out = await spawnTool(w.services, { prompt: "task", model: "nokey-3/m-7" }, w.ctx);
		expect(out.content[0].text).toContain("on nokey-3/m-7 (tools:");
	});

	it("with no usable model at all the error says so instead of listing the registry", async () => {
		const w = world({ available: [] });
		const text = await spawnError(w, "nope");
		// The session's own model runs, so it is offered even when the registry marks nothing usable.
		expect(text).toBe('Unknown model "nope"; models you can use: mock/mock-model.');
	});

	it("a resumed child whose model is gone gets the same bounded list", async () => {
		const root = tempRoot("subagents-models-");
		const file = join(root, "child.jsonl");
		writeFileSync(file, "{}\n");
		const data = {
			key: "sa-1#1",
			id: "sa-1",
			run: 1,
			state: "completed",
			name: "old",
			model: "gone/model",
			prompt: "old task",
			turns: 1,
			createdAt: 1,
			sessionFile: file,
			tools: ["read"],
			cwd: process.cwd(),
			bytes: 3,
			text: "old",
		};
		const w = world({ root, sessionManager: deliveredSession(root, data) });
		restoreFromSession(w.services, w.ctx);
		const error = await sendTool(w.services, { id: "sa-1", text: "more" }, w.ctx).then(
			() => "",
			(e: Error) => e.message,
		);
		expect(Buffer.byteLength(error)).toBeLessThanOrEqual(ERROR_MAX_BYTES);
		expect(error).toContain('sa-1 "old" ran on gone/model, which this session cannot run now');
		expect(
			namesIn(error)
				.filter((n) => n !== "gone/model")
				.every((n) => USABLE_KEYS.has(n)),
		).toBe(true);
		expect(error).toContain(`… and ${USABLE.length - MODEL_CHOICES_SHOWN} more`);
	});
});

describe("spawn wording by mode", () => {
	it("without a UI the spawn and queue texts say single-shot and ask for subagent_wait; with a UI, automatic", async () => {
		const root = tempRoot("subagents-print-");
		const withFile = {
			getSessionDir: () => join(root, "s"),
			getBranch: () => [],
			getSessionFile: () => join(root, "s", "parent.jsonl"),
		};
		const print = world({
			root,
			models: [model("mock", "mock-model")],
			available: undefined,
			sessionManager: withFile,
		});
		const texts: string[] = [];
		for (let i = 0; i < 6; i++) {
			const out = await spawnTool(print.services, { prompt: `task ${i}`, name: `t${i}` }, print.ctx);
			texts.push(out.content[0].text);
		}
		for (const [i, text] of texts.entries()) {
			expect(text).toContain(
				`This is a single-shot run (no UI): call subagent_wait(ids=["sa-${i + 1}"]) before you finish.`,
			);
			expect(text).toContain("delivered when this session is continued (pi -c)");
			expect(text).not.toContain("arrives automatically");
		}
		expect(texts[4]).toMatch(
			/^Queued sa-5 "t4": 4 of 4 slots busy; position 1 in the queue\. It starts on mock\/mock-model/,
		);
		expect(texts[5]).toMatch(/^Queued sa-6 "t5": 4 of 4 slots busy; position 2 in the queue\./);

		// --no-session: nothing is kept for a later -c, and the text does not pretend otherwise.
		const ephemeral = world({ models: [model("mock", "mock-model")], available: undefined });
		const lost = (await spawnTool(ephemeral.services, { prompt: "task" }, ephemeral.ctx)).content[0].text;
		expect(lost).toContain("stopped; this session has no file, so its output is not kept.");
		expect(lost).not.toContain("pi -c");

		const ui = world({ models: [model("mock", "mock-model")], available: undefined, hasUI: true });
		const out = await spawnTool(ui.services, { prompt: "task", name: "u" }, ui.ctx);
		expect(out.content[0].text).toContain(
			'It runs in the background. Its result arrives automatically when it finishes, or call subagent_wait(ids=["sa-1"]).',
		);
		expect(out.content[0].text).not.toContain("single-shot");
	});
});

describe("singular and plural", () => {
	const child = (turns: number): ChildRecord =>
		childRecord({ name: "n", model: "mock/mock-model", state: "completed", endedAt: 3000, turns, outputTokens: 1 });

	it("one turn, one token, one subagent, one result read as singular; other counts as plural", () => {
		expect(P.resultHeader(child(1), "completed", 1)).toBe(
			'── sa-1 "n" completed in 2.0 s (1 turn, mock/mock-model) ──',
		);
		expect(P.resultHeader(child(3), "completed", 2)).toContain("(3 turns, run 2,");
		expect(P.listLine(child(1), 5000, "✓")).toBe('✓ sa-1 "n" completed · 2.0 s · 1 turn · mock/mock-model');
		expect(P.listLine(child(0), 5000, "✓")).toContain("· 0 turns ·");
		expect(P.checkText(child(1), 5000, "")).toContain("run 1 · 1 turn · 1 output token");
		expect(P.statusLine({ ...child(1), state: "running", endedAt: undefined }, 2000)).toContain("(1 turn)");
		expect(P.cancelHeader(1)).toBe("Cancelled 1 subagent. Its partial output:");
		expect(P.cancelHeader(2)).toBe("Cancelled 2 subagents. Partial output of each:");
		expect(P.restoredNote(1)).toBe("[1 subagent result from before the session was reloaded or resumed]");
		expect(P.waitProgress([child(1)], 5000)).toBe("Waiting for 1 subagent: sa-1 completed");
		expect(badToolsError(["a", "b"], ["read"])).toBe("Unknown tools a, b; available to children: read.");
	});

	it("subagent_cancel of one running child says 1 subagent", async () => {
		const w = world({ models: [model("mock", "mock-model")], available: undefined });
		await spawnTool(w.services, { prompt: "task", name: "c" }, w.ctx);
		await until(() => w.backend.started("sa-1"));
		const out = await cancelTool(w.services, { ids: ["sa-1"] }, w.ctx);
		expect(out.content[0].text.startsWith("Cancelled 1 subagent. Its partial output:")).toBe(true);
	});
});

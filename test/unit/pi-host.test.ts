import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api, AssistantMessage, Model } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import {
	compactionSettingsOf,
	completeOneOff,
	DEFERRED_EXPOSURE,
	modelCallRoute,
	PI_DEFAULT_COMPACTION,
	readCompactionSettings,
	settleDeferredTools,
} from "../../extensions/shared/host/pi-host.ts";

const made: string[] = [];
afterEach(() => {
	for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

const model = {
	provider: "mock",
	id: "m",
	api: "openai-completions",
	baseUrl: "http://127.0.0.1:1/v1",
} as unknown as Model<Api>;
const reply = {
	role: "assistant",
	content: [{ type: "text", text: "ok" }],
	stopReason: "stop",
} as unknown as AssistantMessage;

describe("one-off model calls through the host", () => {
	it("use the registry's complete (Pi 1.x) with prompt caching off, and never ask for credentials themselves", async () => {
		const seen: unknown[] = [];
		const registry = {
			complete: async (_m: unknown, _c: unknown, options: unknown) => {
				seen.push(options);
				return reply;
			},
			getApiKeyAndHeaders: async () => {
				throw new Error("must not be called on the registry route");
			},
		};
		expect(modelCallRoute(registry)).toBe("registry");
		const out = await completeOneOff(registry, model, { messages: [] }, { maxTokens: 99, temperature: 0.3 });
		expect(out).toBe(reply);
		expect(seen).toEqual([
			{ maxTokens: 99, temperature: 0.3, signal: undefined, maxRetries: undefined, cacheRetention: "none" },
		]);
	});

	it("fall back to pi-ai's complete on 0.73 and fail with the registry's reason when there are no credentials", async () => {
		const registry = { getApiKeyAndHeaders: async () => ({ ok: false, error: "no key for mock" }) };
		expect(modelCallRoute(registry)).toBe("pi-ai");
		await expect(completeOneOff(registry, model, { messages: [] }, {})).rejects.toThrow("no key for mock");
	});
});

describe("Pi's compaction settings", () => {
	it("read preparation.settings when well-formed, nothing otherwise", () => {
		expect(compactionSettingsOf({ settings: { enabled: true, reserveTokens: 5, keepRecentTokens: 7 } })).toEqual({
			enabled: true,
			reserveTokens: 5,
			keepRecentTokens: 7,
		});
		expect(compactionSettingsOf({ settings: { reserveTokens: "x" } })).toBeUndefined();
		expect(compactionSettingsOf(undefined)).toBeUndefined();
	});

	it("read the agent dir's settings.json the way Pi does, with Pi's defaults when absent", () => {
		const dir = mkdtempSync(join(tmpdir(), "headroom-pi-host-"));
		made.push(dir);
		const agentDir = join(dir, "agent");
		const cwd = join(dir, "project");
		mkdirSync(agentDir, { recursive: true });
		mkdirSync(cwd, { recursive: true });
		expect(readCompactionSettings(cwd, agentDir, undefined, true)).toEqual(PI_DEFAULT_COMPACTION);
		writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { reserveTokens: 9000 } }));
		const read = readCompactionSettings(cwd, agentDir, { provider: "mock", id: "m" }, true);
		expect(read.reserveTokens).toBe(9000);
		expect(read.keepRecentTokens).toBe(PI_DEFAULT_COMPACTION.keepRecentTokens);
	});
});

describe("deferred exposure", () => {
	const api = (active: string[]) => ({
		active,
		getActiveTools() {
			return [...this.active];
		},
		setActiveTools(names: string[]) {
			this.active = names;
		},
	});
	const RARE = ["subagent_check", "subagent_list"];

	it("leaves rare tools to tool_search only when wanted and tool_search is active", () => {
		const withSearch = api(["read", "subagent_spawn", "tool_search"]);
		expect(settleDeferredTools(withSearch, RARE, true, "subagent_spawn")).toBe("deferred");
		expect(withSearch.active).toEqual(["read", "subagent_spawn", "tool_search"]);
		const off = api(["read", "subagent_spawn", "tool_search"]);
		expect(settleDeferredTools(off, RARE, false, "subagent_spawn")).toBe("direct");
		expect(off.active).toEqual(["read", "subagent_spawn", "tool_search", ...RARE]);
	});

	it("declares them directly without tool_search, never twice, and not when the extension is left out", () => {
		const plain = api(["read", "subagent_spawn", "subagent_check"]);
		expect(settleDeferredTools(plain, RARE, true, "subagent_spawn")).toBe("direct");
		expect(plain.active).toEqual(["read", "subagent_spawn", "subagent_check", "subagent_list"]);
		const leftOut = api(["read"]);
		expect(settleDeferredTools(leftOut, RARE, true, "subagent_spawn")).toBe("inactive");
		expect(leftOut.active).toEqual(["read"]);
		expect(DEFERRED_EXPOSURE).toEqual({ exposure: "deferred" });
	});
});

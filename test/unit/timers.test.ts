/**
 * A delay beyond the runtime's longest timer (2^31 − 1 ms) fires at once in Node and Bun. Every delay from
 * configuration or a tool's parameters is clamped to that limit, with a message saying so.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../extensions/shared/host/config.ts";
import { clampTimerMs, MAX_TIMER_MS, MAX_TIMER_SECONDS } from "../../extensions/shared/host/timers.ts";
import { waitUntil } from "../../extensions/subagents/children/wait-until.ts";
import { waitTimeoutClampedNote } from "../../extensions/subagents/prompt/common.ts";
import { type CompleteFn, summarize } from "../../extensions/tool-artifacts/summary.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("clampTimerMs", () => {
	it("keeps every delay within [0, 2^31 − 1] and leaves shorter ones alone", () => {
		fc.assert(
			fc.property(fc.double({ noNaN: false }), (ms) => {
				const c = clampTimerMs(ms);
				expect(c).toBeGreaterThanOrEqual(0);
				expect(c).toBeLessThanOrEqual(MAX_TIMER_MS);
				if (ms >= 0 && ms <= MAX_TIMER_MS) expect(c === ms).toBe(true); // -0 comes back as 0
			}),
		);
		expect(clampTimerMs(Number.POSITIVE_INFINITY)).toBe(MAX_TIMER_MS);
	});
});

describe("a long timeout does not end at once", () => {
	it("subagent_wait's wait with timeout_s of 2,147,484 s or more keeps waiting", async () => {
		const controller = new AbortController();
		const outcome = waitUntil(new Set(), () => false, { timeoutMs: 2_147_484_000, signal: controller.signal });
		let settled: unknown;
		void outcome.then((o) => {
			settled = o;
		});
		await sleep(60);
		expect(settled).toBeUndefined();
		controller.abort();
		expect(await outcome).toEqual({ timedOut: false, aborted: true });
		expect(waitTimeoutClampedNote(3_000_000, MAX_TIMER_SECONDS)).toMatch(
			/longer than the longest wait possible, 2147483 s/,
		);
	});

	it("a summary with a timeoutMs beyond the limit still gets its reply", async () => {
		const model = { provider: "mock", id: "mock-cheap", maxTokens: 4096 } as Parameters<CompleteFn>[0];
		const complete: CompleteFn = async () => {
			await sleep(40);
			return { role: "assistant", content: [{ type: "text", text: "SUMMARY" }], stopReason: "stop" } as never;
		};
		const request = { kind: "command" as const, tool: "bash", args: "{}", output: "out", cut: false };
		const outcome = await summarize(request, { model, timeoutMs: 1e13, temperature: 0.3, maxTokens: 100, complete });
		expect(outcome).toMatchObject({ ok: true, text: "SUMMARY" });
	});

	it("configured delays beyond the limit are clamped to it, with a warning naming the key", () => {
		const root = makeTestDir("timers-config");
		const agentDir = join(root, "agent");
		const cwd = join(root, "project");
		mkdirSync(agentDir, { recursive: true });
		writeFileSync(
			join(agentDir, "headroom.json"),
			JSON.stringify({
				subagents: { maxRunSeconds: 1e9, idleTimeoutSeconds: 3e6, pollThrottleMs: 2 ** 40, maxConcurrent: 3 },
				toolArtifacts: { summary: { timeoutMs: 2 ** 31 } },
			}),
		);
		const { config, warnings } = loadConfig({ agentDir, cwd });
		expect(config.subagents.maxRunSeconds).toBe(MAX_TIMER_SECONDS);
		expect(config.subagents.idleTimeoutSeconds).toBe(MAX_TIMER_SECONDS);
		expect(config.subagents.pollThrottleMs).toBe(MAX_TIMER_MS);
		expect(config.toolArtifacts.summary.timeoutMs).toBe(MAX_TIMER_MS);
		expect(config.subagents.maxConcurrent).toBe(3);
		expect(warnings).toHaveLength(4);
		expect(warnings.join("\n")).toMatch(
			/"subagents.maxRunSeconds": longer than the longest timer .*; clamped to 2147483/,
		);
		expect(warnings.join("\n")).toMatch(/"toolArtifacts.summary.timeoutMs": .*clamped to 2147483647/);
	});
});

/**
 * The pure parts of one child's run: the watchdog's verdict, how events fold into the record, and
 * how a run's last messages become its outcome. Property-based over arbitrary inputs.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	applyEvent,
	type ChildEvent,
	type ManagerLimits,
	type Runtime,
	runOutcome,
	watchdogTickMs,
	watchdogVerdict,
} from "../../extensions/subagents/children/child-run.ts";
import { type ChildRecord, type ChildState, RECENT_TOOL_CALLS } from "../../extensions/subagents/domain/records.ts";
import {
	emptyAnswerNote,
	maxRunTimeError,
	PROVIDER_ERROR,
	watchdogError,
} from "../../extensions/subagents/prompt/common.ts";
import { childRecord } from "./subagents-fakes.ts";

const STATES: ChildState[] = ["queued", "starting", "running", "completed", "failed", "cancelled"];

function record(): ChildRecord {
	return childRecord({ prompt: "t", startedAt: 0 });
}

const runtime = (): Runtime => ({ model: {}, systemAppend: [], lastActivity: 0, toolsInFlight: 0, settledRuns: 0 });

describe("watchdogVerdict", () => {
	it("stops exactly a running, unstopped child past its run time, or silent with no tool running", () => {
		fc.assert(
			fc.property(
				fc.constantFrom(...STATES),
				fc.boolean(),
				fc.nat(3),
				fc.nat(100_000),
				fc.nat(100_000),
				fc.nat(100_000),
				fc.integer({ min: 1, max: 50_000 }),
				fc.integer({ min: 1, max: 50_000 }),
				(state, stopping, tools, startedAt, lastActivity, now, inactivityTimeoutMs, maxRunTimeMs) => {
					const limits: ManagerLimits = { maxConcurrent: 1, inactivityTimeoutMs, maxRunTimeMs };
					const rt = {
						stopReason: stopping ? { state: "cancelled" as const, error: "x" } : undefined,
						toolsInFlight: tools,
						lastActivity,
					};
					const verdict = watchdogVerdict({ state, startedAt, model: "p/m" }, rt, limits, now);
					const live = state === "running" && !stopping;
					const overRun = now - startedAt > maxRunTimeMs;
					const silent = tools === 0 && now - lastActivity > inactivityTimeoutMs;
					expect(verdict !== undefined).toBe(live && (overRun || silent));
					if (verdict) {
						// Cut by the run-time limit: an honest partial result; silent: a failure.
						expect(verdict.state).toBe(overRun ? "incomplete" : "failed");
						expect(verdict.error).toBe(
							overRun
								? maxRunTimeError(Math.round(maxRunTimeMs / 1000))
								: watchdogError("p/m", Math.round(inactivityTimeoutMs / 1000)),
						);
					}
				},
			),
		);
	});

	it("ticks a quarter of the inactivity limit, kept within 50 ms and 1 s, unless configured", () => {
		fc.assert(
			fc.property(fc.integer({ min: 1, max: 10_000_000 }), (ms) => {
				const tick = watchdogTickMs({ maxConcurrent: 1, inactivityTimeoutMs: ms, maxRunTimeMs: 1 });
				expect(tick).toBeGreaterThanOrEqual(50);
				expect(tick).toBeLessThanOrEqual(1000);
				expect(tick <= ms / 4 || tick === 50).toBe(true);
			}),
		);
		expect(watchdogTickMs({ maxConcurrent: 1, inactivityTimeoutMs: 1, maxRunTimeMs: 1, watchdogTickMs: 7 })).toBe(7);
	});
});

const eventArb: fc.Arbitrary<ChildEvent> = fc.oneof(
	fc.constant({ type: "activity" as const }),
	fc.stringMatching(/^[a-z ]{0,6}$/).map((delta) => ({ type: "text" as const, delta })),
	fc.option(fc.nat(50), { nil: undefined }).map((outputTokens) => ({ type: "assistant_end" as const, outputTokens })),
	fc.constant({ type: "turn_end" as const, contextTokens: 10, contextWindow: 100 }),
	fc.constantFrom("bash", "read").map((name) => ({ type: "tool_start" as const, name, args: "{}" })),
	fc.tuple(fc.constantFrom("bash", "read"), fc.boolean()).map(([name, isError]) => ({
		type: "tool_end" as const,
		name,
		isError,
	})),
);

describe("applyEvent", () => {
	it("keeps every text delta in order, counts turns and tokens, bounds the tool notes, never goes below zero tools", () => {
		fc.assert(
			fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
				const child = record();
				const rt = runtime();
				events.forEach((e, i) => {
					applyEvent(child, rt, e, i + 1);
					expect(rt.toolsInFlight).toBeGreaterThanOrEqual(0);
					expect(child.recentTools.length).toBeLessThanOrEqual(RECENT_TOOL_CALLS);
				});
				const deltas = events.flatMap((e) => (e.type === "text" ? [e.delta] : []));
				expect(child.partialText.replace(/\n\n/g, "")).toBe(deltas.join("").replace(/\n\n/g, ""));
				expect(child.turns).toBe(events.filter((e) => e.type === "turn_end").length);
				const tokens = events.reduce((n, e) => n + (e.type === "assistant_end" ? (e.outputTokens ?? 0) : 0), 0);
				expect(child.outputTokens).toBe(tokens);
				expect(rt.lastActivity).toBe(events.length === 0 ? 0 : events.length);
			}),
		);
	});

	it("only turn ends change what the status line shows", () => {
		expect(applyEvent(record(), runtime(), { type: "turn_end" }, 1).visible).toBe(true);
		expect(applyEvent(record(), runtime(), { type: "text", delta: "x" }, 1).visible).toBe(false);
	});
});

describe("runOutcome", () => {
	it("a provider error fails, an abort cancels, otherwise the last text, the partial output or a note", () => {
		fc.assert(
			fc.property(
				fc.constantFrom("stop", "error", "aborted", undefined),
				fc.string({ maxLength: 8 }),
				fc.string({ maxLength: 8 }),
				(stopReason, text, partial) => {
					const messages = [{ role: "assistant", content: [{ type: "text", text }], stopReason }];
					const outcome = runOutcome(messages, partial);
					if (stopReason === "error") expect(outcome).toEqual({ state: "failed", error: PROVIDER_ERROR });
					else if (stopReason === "aborted") expect(outcome).toEqual({ state: "cancelled", error: "aborted" });
					else expect(outcome).toEqual({ state: "completed", text: text || partial.trimEnd() || emptyAnswerNote() });
				},
			),
		);
	});
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	compactionPlan,
	growthPerTurn,
	HandoffStager,
	isStale,
	type KeepEntry,
	keepAfterStaging,
	leadTurnsFor,
	ProbeObserver,
	shouldResume,
	shouldStage,
	stagingThreshold,
	staleBound,
} from "../../extensions/handoff/probe.ts";

const PROBE = { enabled: true, marginTokens: 8192, leadTurns: 4 };
const PI_DEFAULT = { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 };

describe("shouldStage", () => {
	it("stages only when enabled, idle and free tokens are below the threshold", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 1, max: 200_000 }),
				fc.integer({ min: 0, max: 200_000 }),
				fc.integer({ min: 1, max: 100_000 }),
				fc.boolean(),
				fc.constantFrom("idle", "staging", "staged" as const),
				(window, tokens, threshold, enabled, phase) => {
					const got = shouldStage({ tokens, contextWindow: window }, threshold, phase, enabled);
					expect(got).toBe(enabled && phase === "idle" && window - tokens < threshold);
				},
			),
		);
	});

	it("never stages on an unknown reading", () => {
		expect(shouldStage(undefined, 8000, "idle")).toBe(false);
		expect(shouldStage({ tokens: null, contextWindow: 1000 }, 8000, "idle")).toBe(false);
		expect(shouldStage({ tokens: Number.NaN, contextWindow: 1000 }, 8000, "idle")).toBe(false);
		expect(shouldStage({ tokens: 10, contextWindow: 0 }, 8000, "idle")).toBe(false);
		expect(shouldStage({ tokens: 10, contextWindow: Number.NaN }, 8000, "idle")).toBe(false);
	});
});

describe("stagingThreshold", () => {
	it("sits above Pi's own reserve, so the handoff is staged before Pi compacts (property)", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 0, max: 100_000 }),
				fc.integer({ min: 8_000, max: 2_000_000 }),
				fc.option(fc.integer({ min: 0, max: 50_000 }), { nil: undefined }),
				fc.option(fc.integer({ min: 1, max: 60_000 }), { nil: undefined }),
				fc.option(fc.integer({ min: 1, max: 600_000 }), { nil: undefined }),
				(reserveTokens, window, growth, turnMs, handoffMs) => {
					const t = stagingThreshold(PROBE, { ...PI_DEFAULT, reserveTokens }, window, {
						growthPerTurn: growth,
						turnMs,
						handoffMs,
					});
					expect(t).toBeGreaterThanOrEqual(reserveTokens + PROBE.marginTokens);
					// Never more than a quarter of the window above the reserve (or the least margin).
					expect(t - reserveTokens).toBeLessThanOrEqual(Math.max(PROBE.marginTokens, Math.floor(window / 4)));
				},
			),
		);
	});

	it("covers lead turns of the observed growth, more when a handoff was measured slower than that", () => {
		// 64k window, Pi's defaults, 3k tokens a turn: 4 turns of lead = 12k above the 16,384 reserve.
		expect(stagingThreshold(PROBE, PI_DEFAULT, 64_000, { growthPerTurn: 3000 })).toBe(16_384 + 12_000);
		// A handoff took 6 turns' time: 7 turns of lead (capped at a quarter of the window, 16k).
		expect(stagingThreshold(PROBE, PI_DEFAULT, 64_000, { growthPerTurn: 2000, turnMs: 1000, handoffMs: 6000 })).toBe(
			16_384 + 14_000,
		);
		expect(leadTurnsFor(PROBE, { turnMs: 1000, handoffMs: 1500 })).toBe(4);
		// No growth seen yet: the least margin.
		expect(stagingThreshold(PROBE, PI_DEFAULT, 64_000, {})).toBe(16_384 + 8192);
		// A fixed threshold replaces all of it.
		expect(stagingThreshold({ ...PROBE, freeTokensThreshold: 5000 }, PI_DEFAULT, 64_000, {})).toBe(5000);
	});

	it("takes the growth from the largest recent increase and ignores shrinking readings", () => {
		expect(growthPerTurn([])).toBeUndefined();
		expect(growthPerTurn([1000])).toBeUndefined();
		expect(growthPerTurn([1000, 4000, 5000, 4000])).toBe(3000);
		expect(growthPerTurn([9000, 1000])).toBeUndefined();
		const o = new ProbeObserver();
		o.turnEnded(1000, 200);
		o.turnEnded(2500, 400);
		o.turnEnded(null, 300);
		expect(o.observations()).toEqual({ growthPerTurn: 1500, turnMs: 300, handoffMs: undefined });
		o.compacted();
		o.handoffTook(900);
		expect(o.observations()).toMatchObject({ growthPerTurn: undefined, handoffMs: 900 });
	});
});

describe("compactionPlan and staleness", () => {
	it("an overflow retry never waits for three calls; other reasons use what was staged", () => {
		expect(compactionPlan("overflow", "staged", false)).toBe("use-staged");
		expect(compactionPlan("overflow", "staging", false)).toBe("summary-only");
		expect(compactionPlan("overflow", "idle", false)).toBe("summary-only");
		for (const reason of ["threshold", "manual", undefined] as const) {
			expect(compactionPlan(reason, "staged", false)).toBe("use-staged");
			expect(compactionPlan(reason, "staging", false)).toBe("use-staged");
			expect(compactionPlan(reason, "idle", false)).toBe("full");
		}
		// /compact with instructions runs afresh with the focus, whatever is staged.
		expect(compactionPlan("manual", "staged", true)).toBe("full");
		expect(compactionPlan("overflow", "staged", true)).toBe("full");
	});

	it("the stale bound keeps 40% of the usable window free after a staged compaction, at least keepRecentTokens", () => {
		// 64k window, Pi's defaults: 60% of (64,000 − 16,384) = 28,569.
		expect(staleBound(PROBE, PI_DEFAULT, 64_000)).toBe(28_569);
		expect(staleBound(PROBE, PI_DEFAULT, 20_000)).toBe(20_000);
		expect(staleBound({ ...PROBE, maxStaleTokens: 5000 }, PI_DEFAULT, 64_000)).toBe(5000);
	});

	it("a staged handoff is stale once the context grew past the bound since staging", () => {
		expect(isStale(30_000, 50_001, 20_000)).toBe(true);
		expect(isStale(30_000, 50_000, 20_000)).toBe(false);
		expect(isStale(30_000, null, 20_000)).toBe(false);
	});

	it("the stager hands over the tokens of its staging point with the result", async () => {
		const stager = new HandoffStager<string>();
		stager.start("leaf-1", async () => "handoff", 41_000);
		expect(stager.state()).toEqual({ phase: "staging", leafId: "leaf-1", tokens: 41_000 });
		expect(await stager.take()).toEqual({ leafId: "leaf-1", tokens: 41_000, result: "handoff" });
		expect(stager.phase).toBe("idle");
	});
});

describe("keepAfterStaging", () => {
	const msg = (id: string, role: string): KeepEntry => ({ id, type: "message", message: { role } });
	const branch = [msg("u1", "user"), msg("a1", "assistant"), msg("t1", "toolResult"), msg("a2", "assistant")];

	it("keeps from the first entry after the staged point", () => {
		expect(keepAfterStaging(branch, "t1", "a1")).toEqual({ usable: true, firstKeptEntryId: "a2", arrivedAfter: 1 });
	});

	it("falls back to Pi's cut when nothing arrived", () => {
		expect(keepAfterStaging(branch, "a2", "a1")).toEqual({ usable: true, firstKeptEntryId: "a1", arrivedAfter: 0 });
	});

	it("refuses when the staged point is gone, a compaction intervened, or a tool result would lose its call", () => {
		expect(keepAfterStaging(branch, "zz", "a1").usable).toBe(false);
		expect(keepAfterStaging([...branch, { id: "c", type: "compaction" }], "a2", "a1").usable).toBe(false);
		expect(keepAfterStaging(branch, "a1", "a1").usable).toBe(false);
	});

	it("property: a usable keep never starts the kept messages with a tool result", () => {
		const roles = fc.constantFrom("user", "assistant", "toolResult");
		fc.assert(
			fc.property(fc.array(roles, { minLength: 1, maxLength: 20 }), fc.nat(), (rs, pick) => {
				const entries = rs.map((r, i) => msg(`e${i}`, r));
				const staged = entries[pick % entries.length].id;
				const d = keepAfterStaging(entries, staged, "fallback");
				if (!d.usable) return;
				const start = entries.findIndex((e) => e.id === d.firstKeptEntryId);
				if (start >= 0) expect(entries[start].message?.role).not.toBe("toolResult");
				if (d.arrivedAfter === 0) expect(d.firstKeptEntryId).toBe("fallback");
			}),
		);
	});
});

describe("shouldResume", () => {
	it("auto resumes only a run that ended mid-task", () => {
		expect(shouldResume("auto", "toolUse")).toBe(true);
		expect(shouldResume("auto", "length")).toBe(true);
		expect(shouldResume("auto", "error")).toBe(true);
		expect(shouldResume("auto", "stop")).toBe(false);
		expect(shouldResume("auto", "aborted")).toBe(false);
		expect(shouldResume("auto", undefined)).toBe(false);
		expect(shouldResume("always", "stop")).toBe(true);
		expect(shouldResume("always", "aborted")).toBe(false);
		expect(shouldResume("never", "error")).toBe(false);
	});
});

function deferred<T>() {
	let resolve!: (v: T) => void;
	const promise = new Promise<T>((r) => {
		resolve = r;
	});
	return { promise, resolve };
}

describe("HandoffStager", () => {
	it("holds one handoff at a time and hands it over exactly once", async () => {
		const s = new HandoffStager<string>();
		const d = deferred<string | undefined>();
		expect(s.start("L1", () => d.promise)).toBe(true);
		expect(s.start("L2", async () => "other")).toBe(false);
		expect(s.phase).toBe("staging");
		const a = s.take();
		const b = s.take();
		d.resolve("H");
		const [ra, rb] = await Promise.all([a, b]);
		expect([ra, rb].filter(Boolean)).toEqual([{ leafId: "L1", tokens: 0, result: "H" }]);
		expect(s.phase).toBe("idle");
		expect(await s.take()).toBeUndefined();
	});

	it("returns to idle when staging fails or yields nothing", async () => {
		const s = new HandoffStager<string>();
		s.start("L", async () => {
			throw new Error("x");
		});
		expect(await s.take()).toBeUndefined();
		expect(s.phase).toBe("idle");
		s.start("L", async () => undefined);
		await new Promise((r) => setTimeout(r, 0));
		expect(s.phase).toBe("idle");
	});

	it("a staged result waits for take; reset aborts a run in flight", async () => {
		const s = new HandoffStager<string>();
		s.start("L", async () => "R");
		await new Promise((r) => setTimeout(r, 0));
		expect(s.state()).toEqual({ phase: "staged", leafId: "L", tokens: 0, result: "R" });
		s.reset();
		let aborted = false;
		s.start(
			"M",
			(signal) =>
				new Promise((resolve) =>
					signal.addEventListener("abort", () => {
						aborted = true;
						resolve(undefined);
					}),
				),
		);
		s.reset();
		await new Promise((r) => setTimeout(r, 0));
		expect(aborted).toBe(true);
		expect(s.phase).toBe("idle");
	});

	it("take with an aborted compaction signal aborts the staging run", async () => {
		const s = new HandoffStager<string>();
		s.start("L", (signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve(undefined))));
		const c = new AbortController();
		const t = s.take(c.signal);
		c.abort();
		expect(await t).toBeUndefined();
		expect(s.phase).toBe("idle");
	});
});

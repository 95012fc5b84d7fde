import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	freeTokens,
	HandoffStager,
	type KeepEntry,
	keepAfterStaging,
	shouldResume,
	shouldStage,
} from "../../extensions/handoff/probe.ts";

const ON = { enabled: true, freeTokensThreshold: 8000 };

describe("shouldStage", () => {
	it("stages only when enabled, idle and free tokens are below the threshold", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 1, max: 200_000 }),
				fc.integer({ min: 0, max: 200_000 }),
				fc.boolean(),
				fc.constantFrom("idle", "staging", "staged" as const),
				(window, tokens, enabled, phase) => {
					const got = shouldStage({ tokens, contextWindow: window }, { ...ON, enabled }, phase);
					expect(got).toBe(enabled && phase === "idle" && window - tokens < ON.freeTokensThreshold);
				},
			),
		);
	});

	it("never stages on an unknown reading", () => {
		expect(shouldStage(undefined, ON, "idle")).toBe(false);
		expect(shouldStage({ tokens: null, contextWindow: 1000 }, ON, "idle")).toBe(false);
		expect(freeTokens({ tokens: Number.NaN, contextWindow: 1000 })).toBeUndefined();
		expect(freeTokens({ tokens: 10, contextWindow: 0 })).toBeUndefined();
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
		expect([ra, rb].filter(Boolean)).toEqual([{ leafId: "L1", result: "H" }]);
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
		expect(s.state()).toEqual({ phase: "staged", leafId: "L", result: "R" });
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

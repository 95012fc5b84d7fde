import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	type Allocation,
	type AllocationInput,
	allocateBatchBudgets,
	DEFAULT_HEADROOM_SHARE,
	ONE_LINE_ENTRY_BYTES,
	readHeadroom,
	resolveCaps,
	STATIC_CAPS,
	type Surface,
	type UsageReading,
} from "../../extensions/shared/budget/batch.ts";
import { MIN_WINDOW_BYTES, MIN_WINDOW_LINES } from "../../extensions/shared/projection/projection.ts";
import { bytesForTokens, estimateTokensFromBytes } from "../../extensions/shared/text/tokens.ts";

const KIB = 1024;
const surfaces: Surface[] = ["autoDelivery", "wait", "check"];

const size = fc.oneof(
	{ weight: 3, arbitrary: fc.nat({ max: 1200 }) },
	{ weight: 3, arbitrary: fc.nat({ max: 3 * KIB }) },
	{ weight: 4, arbitrary: fc.nat({ max: 64 * KIB }) },
	{ weight: 2, arbitrary: fc.nat({ max: 4 * 1024 * KIB }) },
);
/** Mostly realistic line counts (bytes / average line length), sometimes unrelated ones. */
const result = fc.oneof(
	{
		weight: 4,
		arbitrary: fc
			.record({ bytes: size, lineLength: fc.integer({ min: 1, max: 200 }) })
			.map(({ bytes, lineLength }) => ({ bytes, lines: Math.max(1, Math.ceil(bytes / lineLength)) })),
	},
	{ weight: 1, arbitrary: fc.record({ bytes: size, lines: fc.nat({ max: 3000 }) }) },
);
const results = fc.array(result, { maxLength: 14 });
const surface = fc.constantFrom(...surfaces);
const wrapper = fc.nat({ max: 400 });

/** A reading that makes sense: 0 ≤ tokens ≤ window, window > 0. */
const anyValidUsage = fc
	.integer({ min: 1, max: 1_000_000 })
	.chain((contextWindow) =>
		fc.record({ tokens: fc.nat({ max: contextWindow }), contextWindow: fc.constant(contextWindow) }),
	);
/** A valid reading with little headroom left, where minimum windows and one-line entries come into play. */
const tightUsage = fc
	.record({ contextWindow: fc.integer({ min: 20_000, max: 400_000 }), free: fc.nat({ max: 12_000 }) })
	.map(({ contextWindow, free }) => ({ contextWindow, tokens: Math.max(0, contextWindow - free) }));
const validUsage = fc.oneof(anyValidUsage, tightUsage);

const baseInput = fc.record({
	surface,
	results,
	wrapperBytesPerResult: wrapper,
	wrapperBytesPerBatch: wrapper,
	reservedOutputTokens: fc.nat({ max: 64_000 }),
});

/** What the allocation adds up to: charged bytes of every item plus the caller's wrappers. */
function total(a: Allocation, input: AllocationInput): number {
	const n = input.results.length;
	const wrappers = (input.wrapperBytesPerBatch ?? 0) + n * (input.wrapperBytesPerResult ?? 0);
	return a.items.reduce((s, it) => s + it.chargedBytes, 0) + wrappers;
}

/** The result fits the item's limits verbatim (so the projection returns it whole). */
function verbatim(input: AllocationInput, i: number, a: Allocation): boolean {
	const r = input.results[i];
	const lim = a.items[i].limits;
	return !!lim && r.bytes <= lim.maxBytes && r.lines <= lim.maxLines && a.items[i].chargedBytes === r.bytes;
}

/** The least a result can be shown with: whole when short enough, else the minimum window. */
function leastNeed(r: { bytes: number; lines: number }, s: Surface): number {
	const caps = STATIC_CAPS[s];
	return r.bytes <= MIN_WINDOW_BYTES && r.lines <= caps.perResultLines ? r.bytes : MIN_WINDOW_BYTES;
}

describe("allocateBatchBudgets: invariants over random batches and readings", () => {
	const anyUsage = fc.option(validUsage, { nil: undefined, freq: 4 });

	it("is deterministic, does not mutate its input, and returns one item per result", () => {
		fc.assert(
			fc.property(baseInput, anyUsage, (base, usage) => {
				const input = { ...base, usage };
				const copy = structuredClone(input);
				const a = allocateBatchBudgets(input);
				expect(allocateBatchBudgets(copy)).toEqual(a);
				expect(input).toEqual(copy);
				expect(a.items).toHaveLength(input.results.length);
				for (const item of a.items) expect(item.oneLine).toBe(item.limits === undefined);
			}),
		);
	});

	it("respects the static caps and the minimum readable window for every kept result", () => {
		fc.assert(
			fc.property(baseInput, anyUsage, (base, usage) => {
				const input = { ...base, usage };
				const a = allocateBatchBudgets(input);
				const caps = STATIC_CAPS[input.surface];
				expect(a.batchBytes).toBeLessThanOrEqual(caps.batchBytes);
				a.items.forEach((item, i) => {
					if (!item.limits) return;
					expect(item.limits.maxBytes).toBeLessThanOrEqual(caps.perResultBytes);
					expect(item.limits.maxLines).toBe(caps.perResultLines);
					expect(item.limits.maxBytes).toBeGreaterThanOrEqual(MIN_WINDOW_BYTES);
					expect(item.limits.maxLines).toBeGreaterThanOrEqual(MIN_WINDOW_LINES);
					// A charge below the window is only allowed for a result shown whole.
					if (item.chargedBytes < MIN_WINDOW_BYTES) expect(verbatim(input, i, a)).toBe(true);
					if (!verbatim(input, i, a)) expect(item.chargedBytes).toBe(item.limits.maxBytes);
				});
			}),
		);
	});

	it("fits the batch cap, and uses one-line entries only when the minimum windows do not fit", () => {
		fc.assert(
			fc.property(baseInput, anyUsage, (base, usage) => {
				const input = { ...base, usage };
				const a = allocateBatchBudgets(input);
				const n = input.results.length;
				const wrappers = input.wrapperBytesPerBatch + n * input.wrapperBytesPerResult;
				const oneLiners = a.items.filter((it) => it.oneLine).length;
				if (n > 0 && oneLiners < n) expect(total(a, input)).toBeLessThanOrEqual(a.batchBytes);
				else if (total(a, input) > a.batchBytes)
					expect(n * ONE_LINE_ENTRY_BYTES + wrappers).toBeGreaterThan(a.batchBytes);
				const allWindows = input.results.reduce((s, r) => s + leastNeed(r, input.surface), 0) + wrappers;
				if (allWindows <= a.batchBytes || n === 0) expect(oneLiners).toBe(0);
				else expect(oneLiners).toBeGreaterThan(0);
			}),
		);
	});

	it("keeps the results that need least first (ties in batch order) when some must be one-line entries", () => {
		const crowded = fc.record({
			surface,
			results: fc.array(result, { minLength: 2, maxLength: 40 }),
			wrapperBytesPerResult: wrapper,
			wrapperBytesPerBatch: wrapper,
			reservedOutputTokens: fc.constant(0),
		});
		let mixed = 0;
		fc.assert(
			fc.property(crowded, tightUsage, (base, usage) => {
				const input = { ...base, usage };
				const a = allocateBatchBudgets(input);
				const need = input.results.map((r) => leastNeed(r, input.surface));
				a.items.forEach((kept, j) => {
					if (kept.oneLine) return;
					a.items.forEach((dropped, i) => {
						if (dropped.oneLine) expect(need[j] < need[i] || (need[j] === need[i] && j < i)).toBe(true);
					});
				});
				if (a.items.some((it) => it.oneLine) && a.items.some((it) => !it.oneLine)) mixed++;
			}),
			{ numRuns: 300 },
		);
		// The generator must reach the case under test: batches with both kept and one-line results.
		expect(mixed).toBeGreaterThan(20);
	});

	it("water-fills: short results stay whole, shortened ones share one level, little is left unused", () => {
		fc.assert(
			fc.property(baseInput, anyUsage, (base, usage) => {
				const input = { ...base, usage };
				const a = allocateBatchBudgets(input);
				if (a.items.some((it) => it.oneLine)) return;
				const cap = STATIC_CAPS[input.surface];
				const truncated = a.items.map((_, i) => !verbatim(input, i, a));
				// Shortened results that could still use more bytes all sit at one level.
				const hungry = (i: number) =>
					truncated[i] && a.items[i].chargedBytes < Math.min(cap.perResultBytes, input.results[i].bytes);
				const levels = new Set(a.items.filter((_, i) => hungry(i)).map((it) => it.chargedBytes));
				expect(levels.size).toBeLessThanOrEqual(1);
				const level = [...levels][0];
				if (level === undefined) return;
				// Every result that fits verbatim within the shared level is shown whole.
				input.results.forEach((r, i) => {
					if (r.bytes <= level && r.lines <= cap.perResultLines) expect(truncated[i]).toBe(false);
				});
				// The batch cap binds: unused bytes are fewer than the number of results (integer rounding only).
				expect(a.batchBytes - total(a, input)).toBeLessThan(input.results.length);
			}),
		);
	});

	it("leaves bytes unused only when a larger batch cap would change nothing", () => {
		fc.assert(
			fc.property(baseInput, anyUsage, (base, usage) => {
				const input = { ...base, usage };
				const a = allocateBatchBudgets(input);
				if (a.batchBytes - total(a, input) < input.results.length) return;
				const roomy = allocateBatchBudgets({ ...input, usage: undefined, caps: { batchBytes: 2 ** 40 } });
				if (a.items.some((it) => it.oneLine)) {
					// Kept at exactly their minimum: the slack is smaller than one more window.
					expect(a.batchBytes - total(a, input)).toBeLessThan(MIN_WINDOW_BYTES);
				} else expect(roomy.items).toEqual(a.items);
			}),
		);
	});

	it("is monotone: less headroom never gives the batch or any result a larger budget", () => {
		// Two amounts of used tokens in the same window; near-full windows are drawn often, since
		// that is where results switch between full size, minimum window and one-line entry.
		const pair = fc.oneof(
			fc.record({ window: fc.integer({ min: 1, max: 400_000 }), a: fc.nat(), b: fc.nat() }),
			fc.record({ window: fc.constant(200_000), a: fc.nat({ max: 20_000 }), b: fc.nat({ max: 20_000 }) }),
		);
		fc.assert(
			fc.property(baseInput, pair, (base, { window, a, b }) => {
				// More used tokens = less headroom; a and b count free tokens, clamped to the window.
				const [moreFree, lessFree] = [Math.max(a, b) % (window + 1), Math.min(a, b) % (window + 1)].sort(
					(x, y) => y - x,
				);
				const tight = allocateBatchBudgets({ ...base, usage: { tokens: window - lessFree, contextWindow: window } });
				const loose = allocateBatchBudgets({ ...base, usage: { tokens: window - moreFree, contextWindow: window } });
				const unlimited = allocateBatchBudgets({ ...base, usage: undefined });
				expect(tight.batchBytes).toBeLessThanOrEqual(loose.batchBytes);
				expect(loose.batchBytes).toBeLessThanOrEqual(unlimited.batchBytes);
				for (const [small, large] of [
					[tight, loose],
					[loose, unlimited],
				]) {
					small.items.forEach((item, i) => {
						if (item.oneLine) return;
						expect(large.items[i].oneLine).toBe(false);
						expect(item.chargedBytes).toBeLessThanOrEqual(large.items[i].chargedBytes);
						expect(item.limits!.maxBytes).toBeLessThanOrEqual(large.items[i].limits!.maxBytes);
					});
				}
			}),
			{ numRuns: 1000 },
		);
	});

	it("with a valid reading, the batch stays within the headroom share by the conservative estimate", () => {
		fc.assert(
			fc.property(baseInput, validUsage, (base, usage) => {
				const a = allocateBatchBudgets({ ...base, usage });
				const headroom = usage.contextWindow - usage.tokens - base.reservedOutputTokens;
				expect(a.source).toBe("headroom");
				expect(estimateTokensFromBytes(a.batchBytes)).toBeLessThanOrEqual(
					Math.max(0, headroom) * DEFAULT_HEADROOM_SHARE,
				);
			}),
		);
	});
});

describe("allocateBatchBudgets: fallback to the static caps", () => {
	const nonsense: Array<[string, UsageReading | null | undefined, number | undefined]> = [
		["no reading", undefined, undefined],
		["null reading", null, undefined],
		["tokens null (just after compaction)", { tokens: null, contextWindow: 200_000, percent: null }, undefined],
		["negative tokens", { tokens: -5, contextWindow: 200_000 }, undefined],
		["NaN tokens", { tokens: Number.NaN, contextWindow: 200_000 }, undefined],
		["infinite tokens", { tokens: Number.POSITIVE_INFINITY, contextWindow: 200_000 }, undefined],
		["tokens above the window", { tokens: 250_000, contextWindow: 200_000 }, undefined],
		["zero window", { tokens: 0, contextWindow: 0 }, undefined],
		["negative window", { tokens: 0, contextWindow: -1 }, undefined],
		["NaN window", { tokens: 10, contextWindow: Number.NaN }, undefined],
		["NaN reserve", { tokens: 10, contextWindow: 200_000 }, Number.NaN],
		["negative reserve", { tokens: 10, contextWindow: 200_000 }, -100],
	];
	for (const [label, usage, reserved] of nonsense) {
		it(`${label} → static caps`, () => {
			for (const s of surfaces) {
				const input = { surface: s, results: [{ bytes: 100 * KIB, lines: 900 }], reservedOutputTokens: reserved };
				const a = allocateBatchBudgets({ ...input, usage });
				expect(a.source).toBe("static");
				expect(a.batchBytes).toBe(STATIC_CAPS[s].batchBytes);
				expect(a.reason).toMatch(/^static caps \(/);
				expect(a.items).toEqual(allocateBatchBudgets({ surface: s, results: input.results }).items);
				expect(readHeadroom(usage, reserved).ok).toBe(false);
			}
		});
	}
});

describe("readHeadroom", () => {
	it("says how far a reading above the window is over it, and only then", () => {
		fc.assert(
			fc.property(fc.integer({ min: 1, max: 2_000_000 }), fc.integer({ min: 0, max: 4_000_000 }), (window, tokens) => {
				const reading = readHeadroom({ tokens, contextWindow: window });
				if (tokens > window) expect(reading).toEqual({ ok: false, why: expect.any(String), overBy: tokens - window });
				else expect(reading).toEqual({ ok: true, tokens: window - tokens });
			}),
		);
		expect(readHeadroom({ tokens: -5, contextWindow: 1000 })).not.toHaveProperty("overBy");
	});
});

describe("allocateBatchBudgets: examples", () => {
	it("auto-delivery without a reading: a short report whole, a long one at the 24 KiB cap", () => {
		const a = allocateBatchBudgets({
			surface: "autoDelivery",
			results: [
				{ bytes: 2 * KIB, lines: 40 },
				{ bytes: 300 * KIB, lines: 5000 },
			],
			wrapperBytesPerResult: 120,
			wrapperBytesPerBatch: 200,
		});
		expect(a.source).toBe("static");
		expect(a.items[0]).toMatchObject({ oneLine: false, chargedBytes: 2 * KIB });
		expect(a.items[1].limits).toEqual({ maxBytes: 24 * KIB, maxLines: STATIC_CAPS.autoDelivery.perResultLines });
	});

	it("wait: three long results share the 48 KiB batch after wrappers, none above 16 KiB", () => {
		const a = allocateBatchBudgets({
			surface: "wait",
			results: [1, 2, 3].map(() => ({ bytes: 200 * KIB, lines: 4000 })),
			wrapperBytesPerResult: 100,
			wrapperBytesPerBatch: 300,
		});
		const body = 48 * KIB - 300 - 3 * 100;
		for (const item of a.items) {
			expect(item.limits!.maxBytes).toBeLessThanOrEqual(16 * KIB);
			expect(item.limits!.maxBytes).toBe(Math.floor(body / 3));
		}
	});

	it("check previews: 2 KiB and 20 lines", () => {
		const a = allocateBatchBudgets({ surface: "check", results: [{ bytes: 50 * KIB, lines: 700 }] });
		expect(a.items[0].limits).toEqual({ maxBytes: 2 * KIB, maxLines: 20 });
	});

	it("little headroom: the headroom cap applies and the reason says so", () => {
		const usage = { tokens: 190_000, contextWindow: 200_000 };
		const a = allocateBatchBudgets({
			surface: "autoDelivery",
			results: [{ bytes: 100 * KIB, lines: 900 }],
			usage,
			reservedOutputTokens: 4000,
		});
		expect(a.source).toBe("headroom");
		expect(a.batchBytes).toBe(bytesForTokens(3000));
		expect(a.reason).toContain("headroom 6,000 tokens");
	});

	it("a full window: every result becomes a one-line entry, none is silently dropped", () => {
		const a = allocateBatchBudgets({
			surface: "autoDelivery",
			results: [
				{ bytes: 10, lines: 1 },
				{ bytes: 90 * KIB, lines: 900 },
			],
			usage: { tokens: 128_000, contextWindow: 128_000 },
		});
		expect(a.batchBytes).toBe(0);
		expect(a.items.every((it) => it.oneLine)).toBe(true);
		expect(a.reason).toContain("2 of 2 results as one-line entries");
	});

	it("many results, tight headroom: the short ones are kept whole, the rest as one-line entries", () => {
		const results = Array.from({ length: 12 }, (_, i) =>
			i % 3 === 0 ? { bytes: 200, lines: 5 } : { bytes: 80 * KIB, lines: 800 },
		);
		const a = allocateBatchBudgets({ surface: "wait", results, usage: { tokens: 96_000, contextWindow: 100_000 } });
		results.forEach((r, i) => {
			if (r.bytes === 200) expect(a.items[i]).toMatchObject({ oneLine: false, chargedBytes: 200 });
		});
		expect(a.items.some((it) => it.oneLine)).toBe(true);
		expect(a.items.some((it) => !it.oneLine && it.chargedBytes === MIN_WINDOW_BYTES)).toBe(true);
	});

	it("unknown result sizes are shortened, never assumed to fit", () => {
		const a = allocateBatchBudgets({ surface: "wait", results: [{ bytes: Number.NaN, lines: -1 }] });
		expect(a.items[0].limits!.maxBytes).toBe(16 * KIB);
	});

	it("user caps apply; per-result caps below the minimum window are raised to it", () => {
		expect(resolveCaps("wait", { perResultBytes: 100, perResultLines: 2, batchBytes: 8 * KIB })).toEqual({
			batchBytes: 8 * KIB,
			perResultBytes: MIN_WINDOW_BYTES,
			perResultLines: MIN_WINDOW_LINES,
		});
		expect(resolveCaps("wait", { batchBytes: Number.NaN })).toEqual(STATIC_CAPS.wait);
		const a = allocateBatchBudgets({
			surface: "autoDelivery",
			results: [{ bytes: 100 * KIB, lines: 100 }],
			caps: { perResultBytes: 4 * KIB },
		});
		expect(a.items[0].limits!.maxBytes).toBe(4 * KIB);
	});

	it("a nonsensical headroom share falls back to the default; a valid one is used", () => {
		const usage = { tokens: 0, contextWindow: 20_000 };
		const base = { surface: "autoDelivery" as const, results: [], usage };
		const byDefault = allocateBatchBudgets(base).batchBytes;
		for (const bad of [0, -1, 1.5, Number.NaN]) {
			expect(allocateBatchBudgets({ ...base, headroomShare: bad }).batchBytes).toBe(byDefault);
		}
		expect(allocateBatchBudgets({ ...base, headroomShare: 0.25 }).batchBytes).toBe(bytesForTokens(5000));
	});
});

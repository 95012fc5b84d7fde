/**
 * A scan reads the rules' decisions on the key lines, made a part of the text at a time (decidePart) and joined
 * (joinDecided), whichever thread made them (issue 32, cost: notable-parallel.ts). Wherever the parts end, the
 * scan is exactly the scan of the whole text: parts decided ahead at any line boundaries, or by the walk itself
 * in parts of any size, on every log of both corpora and on random logs of real lines, keys, ANSI sequences,
 * carriage returns, lone surrogates, long lines, filler and repeats. Decisions made for another text, other rules
 * or other steps are not used.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	DecisionCache,
	decidePart,
	decisionsOf,
	isTableRule,
	joinDecided,
	MATCH_UNITS,
	NOTABLE_RULES,
	type NotableEvaluation,
	scanNotable,
	scanNotableAt,
} from "../../extensions/shared/text/notable.ts";
import { flatDecided } from "../fixtures/notable-decided.ts";
import { loadEvalLogs } from "../fixtures/notable-eval.ts";
import { notableKey, notableLog } from "../fixtures/notable-log-arbitrary.ts";

const LOGS = loadEvalLogs();
const LINES = [...new Set(LOGS.flatMap((log) => log.text.split("\n")))];
const CAPS = [undefined, 40, 7];

/** The decisions of `text` made in parts ending at the line starts at or after `cuts` (unit offsets). */
function decidedAt(text: string, cuts: readonly number[], evaluation?: NotableEvaluation) {
	const { enabled, steps } = decisionsOf({ evaluation });
	const decisions = new DecisionCache(enabled, steps, text.length);
	const ends = [...new Set(cuts.map((c) => c % (text.length + 1)))]
		.map((c) => (c === 0 ? 0 : text.indexOf("\n", c - 1) + 1 || text.length))
		.filter((c) => c > 0 && c < text.length)
		.sort((a, b) => a - b);
	const parts = [];
	let start = 0;
	for (const end of [...new Set(ends), text.length]) {
		const at: number[] = [];
		const newlines = decidePart(text.slice(start, end), decisions, at);
		parts.push({ units: end - start, newlines, at });
		start = end;
	}
	return joinDecided(parts, enabled, steps);
}

const piece = fc.oneof(
	{ weight: 4, arbitrary: notableKey },
	{ weight: 6, arbitrary: fc.nat(LINES.length - 1).map((i) => LINES[i]) },
	{ weight: 2, arbitrary: fc.constantFrom(" ", ": ", "[", "]", "0", "12", "-----", "[INFO] ", "##[group]") },
	{ weight: 1, arbitrary: fc.constantFrom("\u001b[31m", "\u001b[0m", "\u001b", "\r", "\uD83D", "\uDC00", "é") },
	{ weight: 1, arbitrary: fc.constant("x".repeat(MATCH_UNITS + 3)) },
);
const log = notableLog(piece);
const evaluations: (NotableEvaluation | undefined)[] = [undefined, { rules: isTableRule, steps: false }];

describe("decisions made in parts", () => {
	it("give every log of both corpora its own scan, parts ending anywhere, decided ahead or by the walk", () => {
		for (const entry of LOGS) {
			const text = entry.text;
			const whole = scanNotableAt(text, CAPS);
			const third = Math.ceil(text.length / 3);
			for (const cuts of [[1], [third, 2 * third], [...Array(16).keys()].map((k) => k * 997 + 1)]) {
				let lines = 0;
				const decided = decidedAt(text, cuts);
				expect(scanNotableAt(text, CAPS, { decided, counted: (n) => (lines = n) }), entry.id).toEqual(whole);
				expect(lines).toBe(decided.lines);
				expect(decided.lines).toBe(text.split("\n").length);
			}
			for (const partUnits of [1, 500, 4096])
				expect(scanNotableAt(text, CAPS, { evaluation: { partUnits } }), `${entry.id} ${partUnits}`).toEqual(whole);
		}
	});

	it("give random logs their own scan (keys, ANSI, \\r, lone surrogates, long lines, repeats)", () => {
		fc.assert(
			fc.property(
				log,
				fc.array(fc.nat(), { maxLength: 12 }),
				fc.integer({ min: 1, max: 300 }),
				fc.constantFrom(...evaluations),
				(text, cuts, partUnits, evaluation) => {
					const whole = scanNotableAt(text, CAPS, { evaluation });
					expect(scanNotableAt(text, CAPS, { evaluation, decided: decidedAt(text, cuts, evaluation) })).toEqual(whole);
					expect(scanNotableAt(text, CAPS, { evaluation: { ...evaluation, partUnits } })).toEqual(whole);
				},
			),
			{ numRuns: 300 },
		);
	});

	it("are triples of each key line's start, line and rule, counted per part", () => {
		const text = "ok\nerror: boom\n\nnothing here\nFAILED tests/a.py::t - assert 1\n3 passed in 0.5s";
		const at: number[] = [];
		const { enabled, steps } = decisionsOf();
		expect(decidePart(text, new DecisionCache(enabled, steps), at)).toBe(5);
		const lines = text.split("\n");
		for (let k = 0; k < at.length; k += 3) {
			const [start, line, rule] = [at[k], at[k + 1], at[k + 2]];
			expect(text.slice(start).startsWith(lines[line])).toBe(true);
			expect(rule).toBeGreaterThanOrEqual(-1);
			expect(rule).toBeLessThan(NOTABLE_RULES.length);
		}
		expect(at.filter((_, k) => k % 3 === 1)).toEqual([1, 4, 5]);
		const joined = joinDecided(
			[
				{ units: 3, newlines: 1, at: [] },
				{ units: text.length, newlines: 5, at },
			],
			enabled,
			steps,
		);
		expect(joined.lines).toBe(7);
		expect(joined.units).toBe(3 + text.length);
		expect(flatDecided(joined).at.filter((_, k) => k % 3 === 1)).toEqual([3, 6, 7]);
		expect(joined.parts.map((p) => p.units)).toEqual([3, text.length]);
		expect(() => decidePart(42 as unknown as string, new DecisionCache(enabled, steps), [])).toThrow(TypeError);
	});

	it("are not used for another text, other rules or other steps", () => {
		const text = LOGS.find((l) => l.text.length > 20_000)?.text as string;
		const other = `${text}\nerror: one more line`;
		const decided = decidedAt(text, [5000]);
		// Decisions that say nothing (no key line) would hide every failure if they were used.
		const empty = { ...decided, parts: decided.parts.map((p) => ({ ...p, at: new Int32Array(0) })) };
		expect(scanNotable(text, { decided: { ...empty, units: text.length - 1 } })).toEqual(scanNotable(text));
		// Parts that do not add up to the text: not used either.
		const short = { ...empty, parts: empty.parts.slice(1) };
		expect(scanNotable(text, { decided: short })).toEqual(scanNotable(text));
		expect(scanNotable(other, { decided })).toEqual(scanNotable(other));
		const table = { rules: isTableRule };
		expect(scanNotable(text, { evaluation: table, decided: empty })).toEqual(scanNotable(text, { evaluation: table }));
		const before = { steps: false };
		expect(scanNotable(text, { evaluation: before, decided: empty })).toEqual(
			scanNotable(text, { evaluation: before }),
		);
		// The same decisions, used: the same scan; and decisions that say nothing, used: a scan that finds nothing.
		expect(scanNotable(text, { decided })).toEqual(scanNotable(text));
		expect(scanNotable(text).lines.length).toBeGreaterThan(0);
		expect(scanNotable(text, { decided: empty }).lines).toEqual([]);
	});
});

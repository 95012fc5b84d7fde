/**
 * The case-insensitive many-word search behind the notable-line scan (extensions/shared/text/word-automaton.ts):
 * it finds exactly the words a naive lower-case search finds, steps over ANSI colour sequences, and never
 * matches across a newline.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildWordAutomaton, FOLD_EXCEPTIONS } from "../../extensions/shared/text/word-automaton.ts";

const WORDS = ["fail", "failed", "error", "error:", "err!", "●", "--- fail", "ai", "not ok"];
const automaton = buildWordAutomaton(WORDS);

/** What a naive search finds: each word that occurs in the lower-cased text. */
function naive(text: string): string[] {
	const lower = text.toLowerCase();
	return WORDS.filter((w) => lower.includes(w)).sort();
}

describe("buildWordAutomaton", () => {
	it("FOLD_EXCEPTIONS lists every unit that lower-cases to one unit whose upper case is not it", () => {
		const found: Array<[number, number]> = [];
		for (let c = 0; c < 0x10000; c++) {
			const unit = String.fromCharCode(c);
			const lower = unit.toLowerCase();
			if (lower.length === 1 && lower !== unit && lower.toUpperCase() !== unit) found.push([c, lower.charCodeAt(0)]);
		}
		expect(found).toEqual(FOLD_EXCEPTIONS.map(([u, l]) => [u, l]));
	});

	it("folds like a naive lower-case search on cased letters, the exceptions included", () => {
		const words = ["kill", "error", "ßtop", "åbc", "ωx", "ǆa", "fail ✗"];
		const folded = buildWordAutomaton(words);
		const units = "kK\u212aiIlLeErRoOßẞ\u1e9eåÅ\u212bωΩ\u2126xXǄǅǆaAbBcCtTpPfF✗ \u0130\u00e9\n";
		const text = fc.string({ unit: fc.constantFrom(...units), maxLength: 40 });
		fc.assert(
			fc.property(text, (t) => {
				const lines = t.toLowerCase().split("\n");
				const expected = words.filter((w) => lines.some((l) => l.includes(w))).sort();
				expect([...folded.wordsIn(t)].sort()).toEqual(expected);
			}),
			{ numRuns: 1000 },
		);
	});

	it("finds the same words as a naive lower-case search, and the first match where it ends", () => {
		const text = fc.string({ unit: fc.constantFrom(..."failedFAILEDro:!● -tnok NOT"), maxLength: 60 });
		fc.assert(
			fc.property(text, (t) => {
				expect([...automaton.wordsIn(t)].sort()).toEqual(naive(t));
				const end = automaton.next(t, 0);
				if (naive(t).length === 0) expect(end).toBe(-1);
				else {
					expect(naive(t.slice(0, end + 1)).length).toBeGreaterThan(0);
					expect(naive(t.slice(0, end))).toEqual([]);
				}
			}),
			{ numRuns: 500 },
		);
	});

	it("steps over ANSI colour sequences inside a word, and never matches across a newline", () => {
		expect([...automaton.wordsIn("\u001b[31mFAIL\u001b[0mED x")]).toEqual(expect.arrayContaining(["fail", "failed"]));
		expect(automaton.next("fa\nil", 0)).toBe(-1);
		expect(automaton.next("ok\nERR!", 0)).toBe(6);
		// A bare ESC at a line's end does not swallow the newline: the next line is searched from its start.
		expect(automaton.next("fa\u001b\nil", 0)).toBe(-1);
		expect(automaton.next("ok\u001b\nerr!", 0)).toBe(7);
		automaton.next("x\u001b\ny\nerror: z", 0);
		expect(automaton.passed()).toEqual({ newlines: 2, lastNewline: 4 });
	});

	it("goes on from where next stopped to collect a line's other words", () => {
		const line = "--- FAIL: TestX error: boom";
		const at = automaton.next(line, 0);
		const words = automaton.wordsAfter(line, at, line.length).map((i) => automaton.words[i]);
		expect(words.sort()).toEqual(naive(line));
	});
});

/**
 * The line search of the word automaton (`lines`: several searches interleaved over the parts of a block,
 * extensions/shared/text/word-automaton.ts) finds exactly what `next` finds from each line start: the same
 * lines, first matches, line starts, line numbers and words after the first match, whatever the blocks' and
 * parts' boundaries, on texts with keys in any case, ANSI sequences inside keys, CRLF, lone surrogates, U+0000
 * and lines longer than a block, and when the caller skips lines (as the scan does while it carries context).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MATCH_UNITS, NOTABLE_KEYS } from "../../extensions/shared/text/notable.ts";
import { buildWordAutomaton, type WordAutomaton } from "../../extensions/shared/text/word-automaton.ts";

const WORDS = ["fail", "failed", "error", "error:", "err!", "●", "--- fail", "ai", "not ok", "ok\u0000"];

/** What the walk gives per found line: [first match's end, line start, line, words after (sorted)]. */
type Found = [number, number, number, number[]];

/** The scan's walk by `next` and `passed` (the reference): from each `pos`, skipping `skips[i]` lines after the i-th find. */
function byNext(a: WordAutomaton, text: string, skips: number[], window = MATCH_UNITS): Found[] {
	const out: Found[] = [];
	const n = text.length;
	let pos = 0;
	let line = 1;
	while (pos <= n) {
		let lineStart = pos;
		const first = a.next(text, pos);
		if (first === -1) break;
		const passed = a.passed();
		line += passed.newlines;
		if (passed.lastNewline !== -1) lineStart = passed.lastNewline + 1;
		let lineEnd = text.indexOf("\n", first);
		if (lineEnd === -1) lineEnd = n;
		const windowEnd = Math.min(lineEnd, lineStart + window);
		const words = first < windowEnd ? a.wordsAfter(text, first, windowEnd) : [];
		out.push([first, lineStart, line, [...words].sort((x, y) => x - y)]);
		if (lineEnd >= n) break;
		pos = lineEnd + 1;
		line++;
		for (let s = skips[out.length % skips.length] ?? 0; s > 0 && pos <= n; s--) {
			const e = text.indexOf("\n", pos);
			if (e === -1) {
				pos = n + 1;
				break;
			}
			pos = e + 1;
			line++;
		}
	}
	return out;
}

/** The same walk by `lines` (blocks of `block` units; words in the first `window` units of a line). */
function byLines(a: WordAutomaton, text: string, skips: number[], block?: number, window = MATCH_UNITS): Found[] {
	const out: Found[] = [];
	const n = text.length;
	const walk = a.lines(text, window, block);
	let pos = 0;
	while (pos <= n) {
		const first = walk.next(pos);
		if (first === -1) break;
		let lineEnd = text.indexOf("\n", first);
		if (lineEnd === -1) lineEnd = n;
		const windowEnd = Math.min(lineEnd, walk.lineStart + window);
		// The words the search collected are wordsAfter's, in its order.
		const words = first < windowEnd ? a.wordsAfter(text, first, windowEnd) : [];
		expect(walk.words).toEqual(words);
		out.push([first, walk.lineStart, walk.line, [...words].sort((x, y) => x - y)]);
		if (lineEnd >= n) break;
		pos = lineEnd + 1;
		for (let s = skips[out.length % skips.length] ?? 0; s > 0 && pos <= n; s--) {
			const e = text.indexOf("\n", pos);
			if (e === -1) {
				pos = n + 1;
				break;
			}
			pos = e + 1;
		}
	}
	return out;
}

/** Pieces of log text: the words in any case and split by colours, line ends, escapes, surrogates, filler. */
function pieces(words: readonly string[]): fc.Arbitrary<string> {
	const word = fc.constantFrom(...words).chain((w) =>
		fc
			.tuple(fc.array(fc.boolean(), { minLength: w.length, maxLength: w.length }), fc.nat(w.length))
			.map(([up, cut]) => {
				const cased = [...w].map((c, i) => (up[i] ? c.toUpperCase() : c)).join("");
				return cut > 0 && cut < cased.length && up[0] ? `${cased.slice(0, cut)}\u001b[31m${cased.slice(cut)}` : cased;
			}),
	);
	const other = fc.constantFrom(
		"\n",
		"\r\n",
		"\n\n",
		" ",
		"x",
		"ok",
		"fa",
		"\u001b[0m",
		"\u001b[1;31m",
		"\u001b",
		"\u001bX",
		"\u001b[",
		"\u001b\n",
		"\ud800",
		"\udc00",
		"\u0000",
		"é",
		"\u212a",
		"\t",
		"0) ",
		": ",
	);
	return fc.oneof(
		{ weight: 2, arbitrary: word },
		{ weight: 5, arbitrary: other },
		{ weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
	);
}

function texts(words: readonly string[]): fc.Arbitrary<string> {
	const line = fc.array(pieces(words), { maxLength: 30 }).map((p) => p.join(""));
	const giant = fc.tuple(fc.nat(4000), pieces(words)).map(([n, p]) => `${"ab".repeat(n)}${p}`);
	return fc
		.array(fc.oneof({ weight: 6, arbitrary: line }, { weight: 1, arbitrary: giant }), { maxLength: 40 })
		.map((l) => l.join("\n"));
}

const small = buildWordAutomaton(WORDS);
/** Without the word that holds U+0000 (a search can then step on U+0000: the long line's parallel search). */
const parkable = buildWordAutomaton(WORDS.filter((w) => !w.includes("\u0000")));
const LONGEST_KEY = NOTABLE_KEYS.reduce((a, b) => (b.length > a.length ? b : a)).toUpperCase();
const notable = buildWordAutomaton(NOTABLE_KEYS);
const skips = fc.array(fc.nat(3), { maxLength: 5 });

describe("word automaton: the interleaved line search", () => {
	it("finds what next finds from each line start, for any block size (parts and blocks end anywhere)", () => {
		fc.assert(
			fc.property(texts(WORDS), skips, fc.integer({ min: 1, max: 300 }), (text, skip, block) => {
				const expected = byNext(small, text, skip);
				expect(byLines(small, text, skip, block)).toEqual(expected);
				// Once the walk is done, its line is the text's line count (what the scan reports of the text).
				const walk = small.lines(text, MATCH_UNITS, block);
				let pos = 0;
				for (let first = walk.next(pos); first !== -1; first = walk.next(pos)) {
					const eol = text.indexOf("\n", first);
					pos = eol === -1 ? text.length + 1 : eol + 1;
				}
				expect(walk.line).toBe(text.split("\n").length);
				expect(byLines(small, text, skip)).toEqual(expected);
			}),
			{ numRuns: 600 },
		);
	});

	it("collects a found line's words within any window of its start, as wordsAfter does", () => {
		fc.assert(
			fc.property(
				texts(WORDS),
				skips,
				fc.integer({ min: 1, max: 300 }),
				fc.integer({ min: 0, max: 60 }),
				(text, skip, block, window) => {
					const expected = byNext(small, text, skip, window);
					expect(byLines(small, text, skip, block, window)).toEqual(expected);
					expect(byLines(small, text, skip, undefined, window)).toEqual(expected);
				},
			),
			{ numRuns: 400 },
		);
	});

	it("finds a long line's first match and words as next does, wherever its parts and chunks end", () => {
		// Lines longer than a block without an escape sequence are searched by several searches over parts of
		// the line, each from a little before its part: keys of any length across every kind of boundary.
		const piece = fc.oneof(
			{ weight: 2, arbitrary: fc.constantFrom(...WORDS, "FAILED", "Error:", "NOT OK", "--- FAIL", LONGEST_KEY) },
			{ weight: 3, arbitrary: fc.nat(40).map((n) => "ab".repeat(n)) },
			{
				weight: 2,
				arbitrary: fc.constantFrom(" ", "x", "fai", "erro", "---", "\u212a", "\ud800", "\u0000", "\u001b[0m"),
			},
		);
		const line = fc.array(piece, { maxLength: 40 }).map((p) => p.join(""));
		const text = fc.array(line, { minLength: 1, maxLength: 4 }).map((l) => l.join("\n"));
		fc.assert(
			fc.property(
				text,
				skips,
				fc.integer({ min: 1, max: 64 }),
				fc.integer({ min: 0, max: 400 }),
				(t, skip, block, window) => {
					for (const a of [small, parkable, notable]) {
						const expected = byNext(a, t, skip, window);
						expect(byLines(a, t, skip, block, window)).toEqual(expected);
					}
				},
			),
			{ numRuns: 1500 },
		);
	});

	it("knows the words of every line it has searched over, as indicesIn of the line's window gives them", () => {
		fc.assert(
			fc.property(
				texts(WORDS),
				fc.array(fc.nat(3), { maxLength: 5 }),
				fc.integer({ min: 1, max: 300 }),
				fc.integer({ min: 0, max: 60 }),
				(text, carry, block, window) => {
					// As the scan walks: after a found line, a few lines visited one by one (carrying context).
					const a = buildWordAutomaton(WORDS.filter((w) => !w.includes("\u0000")));
					const walk = a.lines(text, window, block);
					const n = text.length;
					let pos = 0;
					for (let i = 0; pos <= n; i++) {
						const first = walk.next(pos);
						if (first === -1) break;
						let lineEnd = text.indexOf("\n", first);
						for (let c = carry[i % Math.max(1, carry.length)] ?? 0; lineEnd !== -1 && c >= 0; c--) {
							const lineStart = lineEnd + 1;
							let end = text.indexOf("\n", lineStart);
							if (end === -1) end = n;
							const keys = walk.keysAt(lineStart);
							if (keys !== undefined) {
								expect(keys).toEqual(a.indicesIn(text, lineStart, Math.min(end, lineStart + window)));
							}
							lineEnd = end === n ? -1 : end;
						}
						pos = lineEnd === -1 ? n + 1 : lineEnd + 1;
					}
				},
			),
			{ numRuns: 500 },
		);
		// Lines before the searched block, or past it, are not known.
		const walk = small.lines("a fail\nb\nc error", 8, 10); // the first block: "a fail\nb\n"
		expect(walk.keysAt(0)).toBeUndefined();
		expect(walk.next(0)).toBe(4); // "ai"
		expect(walk.keysAt(7)).toEqual([]);
		expect(walk.keysAt(9)).toBeUndefined();
	});

	it("finds what next finds with the scan's own keys", () => {
		const keys = NOTABLE_KEYS.filter((_, i) => i % 3 === 0);
		fc.assert(
			fc.property(texts(keys), skips, fc.integer({ min: 1, max: 2000 }), (text, skip, block) => {
				const expected = byNext(notable, text, skip);
				expect(byLines(notable, text, skip, block)).toEqual(expected);
				expect(byLines(notable, text, skip)).toEqual(expected);
			}),
			{ numRuns: 300 },
		);
	});

	it("walks texts longer than a block, with lines longer than one, as next does", () => {
		const rows = [
			"ok",
			"build FAILED",
			"\u001b[31mError\u001b[0m: x",
			"e    y",
			"\ud83d\ude00 panic: z",
			"tests: 3 passed",
		];
		const lines: string[] = [];
		for (let i = 0; i < 30000; i++)
			lines.push(i % 9973 === 5 ? `${"a".repeat(70000 + i)} fail` : `${rows[(i * 7) % rows.length]} ${i}`);
		for (const text of [lines.join("\n"), lines.join("\r\n"), `${lines.join("\n")}\n`]) {
			const expected = byNext(notable, text, [0]);
			expect(expected.length).toBeGreaterThan(20000);
			expect(byLines(notable, text, [0])).toEqual(expected);
			expect(byLines(notable, text, [0, 2, 0, 1])).toEqual(byNext(notable, text, [0, 2, 0, 1]));
		}
	});

	it("gives nothing on an empty text or one without a word, and stops at the end", () => {
		expect(small.lines("").next(0)).toBe(-1);
		expect(small.lines("ok\nfine\n").next(0)).toBe(-1);
		const walk = small.lines("ok\nFAIL here\nok");
		expect(walk.next(0)).toBe(5); // "ai" ends first
		expect([walk.lineStart, walk.line]).toEqual([3, 2]);
		expect(walk.next(13)).toBe(-1);
	});
});

/**
 * The run-at-a-time estimateTokens returns exactly what the character-at-a-time estimator it
 * replaced returned (kept verbatim in ./tokens-reference.ts), for every text: the estimate's
 * calibration, its tests and the figures in docs/benchmarks.md rest on that equality.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { estimateTokens } from "../../extensions/shared/text/tokens.ts";
import { loadCorpora } from "../fixtures/corpora/index.ts";
import { referenceEstimateTokens } from "./tokens-reference.ts";

/** Any sequence of UTF-16 code units: lone and reversed surrogates, NUL, controls. */
const anyUtf16 = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) });

/** Code units where the estimator's classes change: ASCII edges, U+0080–U+00BF, U+07FF/U+0800, surrogates, CJK edges. */
const edgeUnit = fc
	.constantFrom(
		0,
		8,
		9,
		10,
		11,
		13,
		31,
		32,
		47,
		48,
		57,
		58,
		64,
		65,
		90,
		91,
		96,
		97,
		122,
		123,
		127,
		0x80,
		0xa0,
		0xbf,
		0xc0,
		0xd7,
		0xff,
		0x301,
		0x7ff,
		0x800,
		0x2e7f,
		0x2e80,
		0x9fff,
		0xa000,
		0xabff,
		0xac00,
		0xd7af,
		0xd7b0,
		0xd800,
		0xdbff,
		0xdc00,
		0xdfff,
		0xe000,
		0xf8ff,
		0xf900,
		0xfaff,
		0xfb00,
		0xfe2f,
		0xfe30,
		0xfe4f,
		0xfe50,
		0xfeff,
		0xff00,
		0xffef,
		0xfff0,
		0xfffd,
		0xffff,
	)
	.map((c) => String.fromCharCode(c));

/** Pieces of the shapes the estimator splits at: words, camelCase, ACRONYMWord, numbers, blanks, punctuation, wide text. */
const piece = fc.oneof(
	fc.constantFrom(
		"a",
		"Z",
		"word",
		"Word",
		"WORD",
		"camelCaseName",
		"HTMLParser",
		"getHTTPResponseCode",
		"XMLHttpRequest",
		"aB",
		"AbC",
		"ABc",
		"ABCDEFGHIJKLMNOP",
		"Ünïcödé",
		"ÉCOLE",
		"Жук",
		"שלום",
		"مرحبا",
		"7",
		"42",
		"2025-08-04T00:53:30.084Z",
		"0x7ff",
		" ",
		"  ",
		"\t",
		"\t\t\t",
		" ".repeat(70),
		"\n",
		"\r\n",
		"\n\n\n\n\n\n\n\n\n",
		"\r",
		"\0",
		".",
		",",
		'"',
		"});",
		'": "',
		"`${",
		"->",
		"«»",
		"§",
		"—",
		"…",
		"€",
		"中文",
		"日本語のテキスト",
		"한국어",
		"，",
		"😀",
		"👨‍👩‍👧",
		"🇺🇳",
		"e\u0301",
		"\u0301\u0308",
		"\ud800",
		"\udc00",
		"\udbff\udfff",
		"\udc00\ud800",
		"\ufeff",
	),
	fc.string({ unit: "grapheme-ascii", maxLength: 12 }),
	fc.string({ unit: "grapheme", maxLength: 6 }),
	fc.string({ unit: "binary", maxLength: 6 }),
	fc.string({ unit: edgeUnit, maxLength: 6 }),
	fc.stringMatching(/^[A-Z]{1,5}[a-z]{0,5}$/),
	fc.stringMatching(/^[ \t]{1,3}[!-/:-@[-`{-~]{1,3}[A-Za-z]{1,4}$/),
);
const pieced = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(""));

function expectSame(text: string): void {
	expect(estimateTokens(text)).toBe(referenceEstimateTokens(text));
}

describe("estimateTokens equals the character-at-a-time reference", () => {
	it("for any UTF-16 string, lone surrogates included", () => {
		fc.assert(fc.property(anyUtf16, expectSame), { numRuns: 2000 });
	});

	it("for any Unicode text (code points, graphemes, emoji, combining marks)", () => {
		fc.assert(fc.property(fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" })), expectSame), {
			numRuns: 1000,
		});
	});

	it("for texts built from the pieces the split cares about, and from class-edge code units", () => {
		fc.assert(fc.property(fc.oneof(pieced, fc.string({ unit: edgeUnit })), expectSame), { numRuns: 3000 });
	});

	it("for giant single lines and long runs of one class", () => {
		const long = fc
			.tuple(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1000, max: 20_000 }))
			.map(([parts, times]) => parts.join("").repeat(times).slice(0, 200_000));
		fc.assert(fc.property(long, expectSame), { numRuns: 25 });
	});

	it("for the calibration corpora, whole and cut anywhere (even inside a surrogate pair)", () => {
		for (const corpus of loadCorpora()) {
			expectSame(corpus.text);
			fc.assert(
				fc.property(fc.nat(corpus.text.length), fc.nat(4096), (start, length) =>
					expectSame(corpus.text.slice(start, start + length)),
				),
				{ numRuns: 50 },
			);
		}
	});

	it.each([
		["empty", ""],
		["one letter", "a"],
		["one capital", "Z"],
		["camelCase", "fooBarBaz"],
		["ACRONYMWord", "HTMLParser and XMLHttpRequest"],
		["capitals then a two-byte letter", "ABé ABÉ Aé"],
		["a two-byte letter then a capital", "éA ÉA"],
		["space before a word, punctuation, a digit, a newline, the end", "a b a . a 1 a \n a "],
		["punctuation before letters", '."a": "b", (c) => d.e'],
		["a tab before a word", "\tword\t\tword"],
		["CRLF and NUL", "line\r\nline\0\0line\r\n\r\n"],
		["long space and newline runs", `${" ".repeat(200)}x${"\n".repeat(17)}y`],
		["digit runs", "1 12 123 1234 12345678901234567890"],
		["Latin-1 punctuation (U+0080–U+00BF) before letters", "«word» ¿qué? §a ¶b"],
		["U+07FF and U+0800 next to letters", "a\u07ffb\u0800c"],
		["CJK beside ASCII", "中文abc中文 123，日本語。"],
		["emoji and pairs beside letters", "a😀b👨‍👩‍👧c🇺🇳"],
		["lone surrogates everywhere", "\ud800a\udc00B\udbff\udbff\udfff1\udfff\ud800"],
		["fractions that add up unevenly", "✓ ok ✓ ok ✓ ok 😀😀😀 ✓✓✓ done ✓"],
		["combining marks", "e\u0301e\u0301 a\u0308"],
	])("example: %s", (_name, text) => {
		expectSame(text);
	});
});

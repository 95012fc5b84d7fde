import fc from "fast-check";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
	bytesForTokens,
	CONSERVATIVE_BYTES_PER_TOKEN,
	estimateTokens,
	estimateTokensFromBytes,
	estimateTokensUpperBound,
	utf8Length,
	utf8LengthPortable,
} from "../../extensions/shared/text/tokens.ts";
import { loadCorpora } from "../fixtures/corpora/index.ts";

/** The contract: the estimate never under-counts o200k_base by more than this share. */
const MAX_UNDER_COUNT = 0.1;
/** Documented ceiling of the over-count on the calibration corpora (docs/benchmarks.md reports the real figures). */
const MAX_OVER_COUNT = 0.35;
/** Window size for the per-chunk check, in UTF-16 units. */
const CHUNK_UNITS = 16 * 1024;

/** Any UTF-16 string, lone surrogates included. */
const anyUtf16 = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) });
/** Text made of the pieces that matter to the estimator's classes. */
const mixedText = fc.string({
	unit: fc.constantFrom(
		"a",
		"Z",
		"q",
		"7",
		" ",
		"  ",
		"\n",
		"\t",
		".",
		"});",
		"é",
		"Ж",
		"中",
		"文",
		"—",
		"😀",
		"\uD800",
	),
});

/** The longest prefix of `text` whose UTF-8 encoding is at most `bytes` long, cut at a character boundary. */
function prefixOfBytes(text: string, bytes: number): string {
	const buf = Buffer.from(text, "utf8");
	let end = Math.min(bytes, buf.length);
	while (end > 0 && end < buf.length && (buf[end] & 0xc0) === 0x80) end--;
	return buf.subarray(0, end).toString("utf8");
}

describe("utf8Length", () => {
	it("equals Buffer.byteLength for any UTF-16 string, lone surrogates included", () => {
		fc.assert(
			fc.property(fc.oneof(anyUtf16, fc.string({ unit: "binary" }), mixedText), (text) => {
				expect(utf8Length(text)).toBe(Buffer.byteLength(text, "utf8"));
				expect(utf8LengthPortable(text)).toBe(new TextEncoder().encode(text).length);
			}),
		);
	});
});

describe("estimateTokens", () => {
	it("is a whole number between 1 and the UTF-8 byte length for non-empty text, 0 for empty", () => {
		expect(estimateTokens("")).toBe(0);
		fc.assert(
			fc.property(fc.oneof(anyUtf16, mixedText), (text) => {
				const tokens = estimateTokens(text);
				expect(Number.isInteger(tokens)).toBe(true);
				if (text.length === 0) expect(tokens).toBe(0);
				else expect(tokens).toBeGreaterThanOrEqual(1);
				expect(tokens).toBeLessThanOrEqual(utf8Length(text));
			}),
		);
	});

	it("never exceeds estimateTokensUpperBound of the text's length (any UTF-16 text)", () => {
		expect(estimateTokensUpperBound(0)).toBe(0);
		// the densest texts: three-byte symbols (1.2 each, summed in floating point), digits after single spaces
		for (const text of ["—".repeat(5), "—".repeat(1001), " 1".repeat(500), "\uD800".repeat(7), "😀".repeat(9)])
			expect(estimateTokens(text)).toBeLessThanOrEqual(estimateTokensUpperBound(text.length));
		fc.assert(
			fc.property(fc.oneof(anyUtf16, mixedText, fc.string({ unit: "binary" })), (text) => {
				expect(estimateTokens(text)).toBeLessThanOrEqual(estimateTokensUpperBound(text.length));
			}),
			{ numRuns: 500 },
		);
	});

	it("never under-counts o200k_base by more than 10% on short mixed texts of real words", () => {
		const piece = fc.constantFrom(
			"the ",
			"budget ",
			"window, ",
			"result. ",
			"readFile(",
			"); ",
			"42 ",
			"\n",
			"上下文",
			"预算。",
		);
		fc.assert(
			fc.property(fc.array(piece, { minLength: 20, maxLength: 200 }), (pieces) => {
				const text = pieces.join("");
				expect(estimateTokens(text)).toBeGreaterThanOrEqual((1 - MAX_UNDER_COUNT) * countTokens(text));
			}),
			{ numRuns: 50 },
		);
	});

	for (const corpus of loadCorpora()) {
		it(`${corpus.name}: within -10% / +35% of o200k_base over the whole corpus and every 16 KiB window`, () => {
			const actual = countTokens(corpus.text);
			const estimate = estimateTokens(corpus.text);
			expect(estimate).toBeGreaterThanOrEqual((1 - MAX_UNDER_COUNT) * actual);
			expect(estimate).toBeLessThanOrEqual((1 + MAX_OVER_COUNT) * actual);
			for (let start = 0; start + CHUNK_UNITS <= corpus.text.length; start += CHUNK_UNITS) {
				const chunk = corpus.text.slice(start, start + CHUNK_UNITS);
				expect(estimateTokens(chunk)).toBeGreaterThanOrEqual((1 - MAX_UNDER_COUNT) * countTokens(chunk));
			}
		});
	}
});

describe("bytes ↔ tokens (the conservative ratio)", () => {
	it("bytesForTokens is monotone and its inverse never exceeds the token count", () => {
		fc.assert(
			fc.property(fc.nat({ max: 10_000_000 }), fc.nat({ max: 10_000_000 }), (a, b) => {
				const [lo, hi] = a <= b ? [a, b] : [b, a];
				expect(bytesForTokens(lo)).toBeLessThanOrEqual(bytesForTokens(hi));
				expect(estimateTokensFromBytes(bytesForTokens(lo))).toBeLessThanOrEqual(lo);
				expect(bytesForTokens(estimateTokensFromBytes(lo))).toBeGreaterThanOrEqual(lo);
			}),
		);
	});

	it("gives 0 for nonsense and never a non-finite byte count", () => {
		for (const bad of [Number.NaN, -1, -0.5, 0, Number.NEGATIVE_INFINITY]) {
			expect(bytesForTokens(bad)).toBe(0);
			expect(estimateTokensFromBytes(bad)).toBe(0);
		}
		expect(Number.isFinite(bytesForTokens(Number.POSITIVE_INFINITY))).toBe(true);
	});

	for (const corpus of loadCorpora()) {
		it(`${corpus.name}: bytesForTokens(n) bytes hold at most n o200k tokens, and the byte-only estimate is the more cautious`, () => {
			const bytes = utf8Length(corpus.text);
			expect(estimateTokens(corpus.text)).toBeLessThanOrEqual(estimateTokensFromBytes(bytes));
			expect(bytes / estimateTokens(corpus.text)).toBeGreaterThanOrEqual(CONSERVATIVE_BYTES_PER_TOKEN);
			for (const n of [256, 2_000, 8_000, 20_000]) {
				const prefix = prefixOfBytes(corpus.text, bytesForTokens(n));
				expect(countTokens(prefix)).toBeLessThanOrEqual(n);
				expect(estimateTokens(prefix)).toBeLessThanOrEqual(n);
			}
		});
	}
});

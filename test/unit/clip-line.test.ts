import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ASCII_METER, meterFor, UTF8_METER } from "../../extensions/shared/projection/cut.ts";
import { MAX_REASON_BYTES, sanitizeReason } from "../../extensions/shared/projection/prompt.ts";
import { CLIP_MARK, clipLine, splitsSurrogatePair, utf8ByteLength } from "../../extensions/shared/text/utf8.ts";
import { textArb } from "./projection-arbitraries.ts";

const budgetArb = fc.integer({ min: -5, max: 400 });

describe("clipLine", () => {
	it("returns the text itself when it fits, else a prefix plus the mark, never over the budget", () => {
		fc.assert(
			fc.property(textArb, budgetArb, (text, maxBytes) => {
				const out = clipLine(text, maxBytes);
				const budget = Math.max(0, maxBytes);
				if (utf8ByteLength(text) <= budget) {
					expect(out).toBe(text);
					return;
				}
				expect(utf8ByteLength(out)).toBeLessThanOrEqual(budget);
				const body = budget >= 3 ? out.slice(0, -CLIP_MARK.length) : out;
				if (budget >= 3) expect(out.endsWith(CLIP_MARK)).toBe(true);
				expect(text.startsWith(body)).toBe(true);
				// Never ends inside a surrogate pair.
				expect(splitsSurrogatePair(text, body.length)).toBe(false);
				// Maximal: one more character (a whole pair where there is one) would not fit with the mark.
				const next =
					body.length + (text.length > body.length + 1 && splitsSurrogatePair(text, body.length + 1) ? 2 : 1);
				const room = budget >= 3 ? budget - 3 : budget;
				expect(utf8ByteLength(text.slice(0, next))).toBeGreaterThan(room);
			}),
		);
	});

	it("keeps wide characters whole at every budget", () => {
		const text = "日本😀e\u0301中文😀😀x";
		for (let budget = 0; budget <= utf8ByteLength(text) + 2; budget++) {
			const out = clipLine(text, budget);
			// Well-formed output: encoding it replaces nothing, so no character was split.
			expect(Buffer.from(out).toString()).toBe(out);
			expect(text.startsWith(out.endsWith(CLIP_MARK) ? out.slice(0, -1) : out)).toBe(true);
			expect(utf8ByteLength(out)).toBeLessThanOrEqual(budget);
		}
	});

	it("treats NaN and fractions sanely", () => {
		expect(clipLine("abcdef", Number.NaN)).toBe("");
		expect(clipLine("abcdef", 4.9)).toBe("a…");
		expect(clipLine("abc", 3)).toBe("abc");
		expect(clipLine("abcd", 3)).toBe("…");
		expect(clipLine("abcd", 2)).toBe("ab");
	});

	it("bounds failure reasons in footers", () => {
		const reason = sanitizeReason(`EACCES ${"权限".repeat(200)}`);
		expect(utf8ByteLength(reason)).toBeLessThanOrEqual(MAX_REASON_BYTES);
		expect(reason.endsWith(CLIP_MARK)).toBe(true);
		expect(sanitizeReason("short\nreason")).toBe("short reason");
	});
});

describe("byte meters", () => {
	const ascii = fc.string({
		unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
		maxLength: 300,
	});

	it("picks the ASCII meter exactly for all-ASCII texts", () => {
		fc.assert(
			fc.property(textArb, (text) => {
				const isAscii = /^[\x00-\x7f]*$/.test(text);
				expect(meterFor(text, utf8ByteLength(text)) === ASCII_METER).toBe(isAscii);
			}),
		);
	});

	it("measures an ASCII text exactly as the UTF-8 meter does", () => {
		fc.assert(
			fc.property(ascii, fc.nat(400), fc.nat(300), fc.nat(300), (text, maxBytes, a, b) => {
				const lo = Math.min(a, b, text.length);
				const hi = Math.min(Math.max(a, b), text.length);
				expect(ASCII_METER.range(text, lo, hi)).toBe(UTF8_METER.range(text, lo, hi));
				expect(ASCII_METER.advance(text, lo, maxBytes, hi)).toEqual(UTF8_METER.advance(text, lo, maxBytes, hi));
				expect(ASCII_METER.retreat(text, hi, maxBytes, lo)).toEqual(UTF8_METER.retreat(text, hi, maxBytes, lo));
			}),
		);
	});
});

/**
 * readPage (issue 32, cost): how many lines from a line's start one read returns whole, found from where the lines
 * end and a few measured prefixes (none for an ASCII window), is what measuring every line gives: the reference
 * below is the line-by-line count it replaced.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	ASCII_METER,
	type ByteMeter,
	meterFor,
	READ_PAGE_MAX_BYTES,
	readPage,
	UTF8_METER,
} from "../../extensions/shared/projection/cut.ts";
import { utf8ByteLength } from "../../extensions/shared/text/utf8.ts";

/** The count line by line: each line's bytes (and the "\n" before it) added until one read's bytes are over. */
function reference(text: string, m: ByteMeter, lineStart: number, maxLines: number) {
	const n = text.length;
	const windowEnd = Math.min(n, lineStart + READ_PAGE_MAX_BYTES + 1);
	const window = text.slice(lineStart, windowEnd);
	let lines = 0;
	let bytes = 0;
	let pos = 0;
	while (lines < maxLines) {
		const newline = window.indexOf("\n", pos);
		const end = newline !== -1 ? newline : windowEnd === n ? window.length : -1;
		const add = end === -1 ? Number.POSITIVE_INFINITY : m.range(window, pos, end) + (lines > 0 ? 1 : 0);
		if (bytes + add > READ_PAGE_MAX_BYTES) break;
		bytes += add;
		lines++;
		if (newline === -1) break;
		pos = newline + 1;
	}
	return { limit: Math.max(1, lines), longLine: lines === 0 };
}

/** Lines of 0..3000 units (ASCII, or with 2-, 3- and 4-byte characters and lone surrogates), up to ~150 KB. */
const line = fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.constantFrom("a", "é", "€", "😀", "\uD800", "x y"));
const textArb = fc
	.tuple(fc.array(fc.tuple(line, fc.boolean()), { minLength: 1, maxLength: 60 }), fc.boolean())
	.map(([lines, endsWithNewline]) => {
		const parts = lines.map(([[n, unit], ascii]) => (ascii ? "a".repeat(n) : unit.repeat(Math.ceil(n / unit.length))));
		return parts.join("\n") + (endsWithNewline ? "\n" : "");
	});

describe("readPage", () => {
	it("counts the lines one read returns as measuring each line does", () => {
		fc.assert(
			fc.property(textArb, fc.nat(), fc.integer({ min: 0, max: 2100 }), (text, at, maxLines) => {
				const start = at % (text.length + 1);
				const lineStart = start === 0 ? 0 : text.lastIndexOf("\n", start - 1) + 1;
				for (const m of [meterFor(text, utf8ByteLength(text)), UTF8_METER]) {
					expect(readPage(text, m, lineStart, maxLines)).toEqual(reference(text, m, lineStart, maxLines));
				}
				if (utf8ByteLength(text) === text.length) {
					expect(readPage(text, ASCII_METER, lineStart, maxLines)).toEqual(
						reference(text, UTF8_METER, lineStart, maxLines),
					);
				}
			}),
			{ numRuns: 600 },
		);
	});

	it("stops at the read's byte limit, its line limit and a line longer than one read", () => {
		const short = "ab\n".repeat(30_000);
		expect(readPage(short, ASCII_METER, 0, 2000)).toEqual({ limit: 2000, longLine: false });
		expect(readPage(short, UTF8_METER, 0, 50_000)).toEqual({
			limit: Math.floor((READ_PAGE_MAX_BYTES + 1) / 3),
			longLine: false,
		});
		// Exactly one read's bytes fit; one more byte does not.
		const exact = `${"a".repeat(READ_PAGE_MAX_BYTES - 1)}\n\nc`;
		expect(readPage(exact, UTF8_METER, 0, 2000)).toEqual({ limit: 2, longLine: false });
		expect(readPage(exact, ASCII_METER, 0, 2000)).toEqual({ limit: 2, longLine: false });
		const over = `${"é".repeat(READ_PAGE_MAX_BYTES / 2 - 1)}a\né`;
		expect(readPage(over, UTF8_METER, 0, 2000)).toEqual({ limit: 1, longLine: false });
		const long = `${"é".repeat(READ_PAGE_MAX_BYTES)}\nb\n`;
		expect(readPage(long, UTF8_METER, 0, 2000)).toEqual({ limit: 1, longLine: true });
		expect(readPage(long, UTF8_METER, long.indexOf("\n") + 1, 2000)).toEqual({ limit: 2, longLine: false });
	});
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatCount, sanitizeReason, shellQuote } from "../../extensions/shared/projection/prompt.ts";
import {
	advanceByBytes,
	afterNthNewline,
	afterNthNewlineFromEnd,
	countLinesUpTo,
	countNewlines,
	rangeByteLength,
	replaceLoneSurrogates,
	retreatByBytes,
	splitsSurrogatePair,
	toWellFormed,
	utf8ByteLength,
} from "../../extensions/shared/text/utf8.ts";
import { bytesOf, stored, textArb } from "./projection-arbitraries.ts";

const withRange = textArb.chain((text) =>
	fc
		.tuple(fc.integer({ min: 0, max: text.length }), fc.integer({ min: 0, max: text.length }))
		.map(([a, b]) => ({ text, start: Math.min(a, b), end: Math.max(a, b) })),
);

describe("utf8 helpers", () => {
	it("measure UTF-8 bytes like Buffer does (lone surrogates as 3)", () => {
		fc.assert(
			fc.property(withRange, ({ text, start, end }) => {
				expect(utf8ByteLength(text)).toBe(Buffer.from(text).length);
				if (!splitsSurrogatePair(text, start) && !splitsSurrogatePair(text, end)) {
					expect(rangeByteLength(text, start, end)).toBe(bytesOf(text.slice(start, end)));
				}
			}),
		);
	});

	it("advance and retreat by bytes: maximal, within budget, never splitting a pair", { timeout: 600_000 }, () => {
		fc.assert(
			fc.property(withRange, fc.integer({ min: 0, max: 5000 }), ({ text, start, end }, budget) => {
				if (splitsSurrogatePair(text, start) || splitsSurrogatePair(text, end)) return;
				const a = advanceByBytes(text, start, budget, end);
				expect(a.end).toBeLessThanOrEqual(end);
				expect(a.bytes).toBe(bytesOf(text.slice(start, a.end)));
				expect(a.bytes).toBeLessThanOrEqual(budget);
				expect(splitsSurrogatePair(text, a.end)).toBe(false);
				if (a.end < end) {
					const step = splitsSurrogatePair(text, a.end + 1) ? 2 : 1;
					expect(bytesOf(text.slice(start, a.end + step))).toBeGreaterThan(budget);
				}
				const r = retreatByBytes(text, end, budget, start);
				expect(r.start).toBeGreaterThanOrEqual(start);
				expect(r.bytes).toBe(bytesOf(text.slice(r.start, end)));
				expect(r.bytes).toBeLessThanOrEqual(budget);
				expect(splitsSurrogatePair(text, r.start)).toBe(false);
				if (r.start > start) {
					const step = splitsSurrogatePair(text, r.start - 1) ? 2 : 1;
					expect(bytesOf(text.slice(r.start - step, end))).toBeGreaterThan(budget);
				}
			}),
			{ numRuns: 1000 },
		);
	});

	it("advance and retreat by bytes are maximal on every short string of mixed widths (exhaustive)", () => {
		const alphabet = ["a", "é", "中", "😀", "\ud800", "\udc00"];
		let strings = [""];
		for (let len = 0; len < 4; len++) strings = strings.flatMap((s) => alphabet.map((c) => s + c));
		for (const text of strings) {
			for (let budget = 0; budget <= 14; budget++) {
				const a = advanceByBytes(text, 0, budget);
				const best = Math.max(
					...[...Array(text.length + 1).keys()].filter(
						(e) => !splitsSurrogatePair(text, e) && bytesOf(text.slice(0, e)) <= budget,
					),
				);
				expect(a.end).toBe(best);
				const r = retreatByBytes(text, text.length, budget);
				const bestStart = Math.min(
					...[...Array(text.length + 1).keys()].filter(
						(s) => !splitsSurrogatePair(text, s) && bytesOf(text.slice(s)) <= budget,
					),
				);
				expect(r.start).toBe(bestStart);
			}
		}
	});

	it("count newlines and lines without splitting, as read counts", () => {
		fc.assert(
			fc.property(withRange, fc.integer({ min: 0, max: 400 }), ({ text, start, end }, cap) => {
				expect(countNewlines(text)).toBe(text.split("\n").length - 1);
				expect(countNewlines(text, start, end)).toBe(text.slice(start, end).split("\n").length - 1);
				expect(countLinesUpTo(text, cap)).toBe(Math.min(text.split("\n").length, cap + 1));
			}),
		);
	});

	it("find the n-th newline from either end of a range", () => {
		fc.assert(
			fc.property(withRange, fc.integer({ min: 1, max: 50 }), ({ text, start, end }, n) => {
				const positions: number[] = [];
				for (let i = start; i < end; i++) if (text[i] === "\n") positions.push(i + 1);
				expect(afterNthNewline(text, n, start, end)).toBe(positions[n - 1] ?? -1);
				expect(afterNthNewlineFromEnd(text, n, start, end)).toBe(positions[positions.length - n] ?? -1);
			}),
		);
	});

	it("make text well-formed exactly as UTF-8 encoding does", () => {
		fc.assert(
			fc.property(textArb, (text) => {
				expect(toWellFormed(text)).toBe(stored(text));
				expect(replaceLoneSurrogates(text)).toBe(stored(text));
			}),
		);
	});
});

describe("prompt helpers", () => {
	it("format counts with comma separators like en-US", () => {
		fc.assert(
			fc.property(fc.nat(), (n) => {
				expect(formatCount(n)).toBe(n.toLocaleString("en-US"));
			}),
		);
	});

	it("quote a path for a POSIX shell so it round-trips", async () => {
		const { execFileSync } = await import("node:child_process");
		for (const path of ["/a b/c", "/it's/here", `/q"uote/$HOME/\`x\``, "/ü/😀"]) {
			expect(execFileSync("sh", ["-c", `printf %s ${shellQuote(path)}`]).toString()).toBe(path);
		}
	});

	it("reduce a failure reason to one short line", () => {
		fc.assert(
			fc.property(fc.string({ maxLength: 1000 }), (reason) => {
				const s = sanitizeReason(reason);
				expect(/[\u0000-\u001f\u007f]/.test(s)).toBe(false);
				expect(s.length).toBeLessThanOrEqual(201);
				expect(s.length).toBeGreaterThan(0);
				expect(stored(s)).toBe(s);
			}),
		);
	});
});

/**
 * scanNotable returns exactly what the reference scan returns (kept verbatim in ./notable-reference.ts), so a
 * faster rewrite changes no result: on every log of the real-log corpus, and on random texts built
 * from real log lines mixed with the rules' keys in any case, ANSI sequences (inside keys too), CRLF, CI
 * prefixes, lone surrogates, non-Latin-1 text (two-byte strings) and giant lines.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	isTableRule,
	NOTABLE_KEYS,
	type NotableOptions,
	scanNotable as scanNow,
} from "../../extensions/shared/text/notable.ts";
import { loadRealLogs } from "../fixtures/real-logs.ts";
import { referenceScanNotable } from "./notable-reference.ts";

const LOGS = loadRealLogs();

/** The scan without the generic rules and steps of issue 32: exactly the reference. */
const scanNotable = (text: string, options: NotableOptions = {}) =>
	scanNow(text, { ...options, evaluation: { rules: isTableRule, steps: false } });
/** Every line of the corpus, once. */
const CORPUS_LINES = [...new Set(LOGS.flatMap((log) => log.text.split("\n")))];

/** A key in a random case mix. */
const key = fc
	.tuple(fc.constantFrom(...NOTABLE_KEYS), fc.array(fc.boolean(), { maxLength: 40 }))
	.map(([k, up]) => [...k].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(""));

/** Pieces a log line is made of. */
const piece = fc.oneof(
	{ weight: 4, arbitrary: key },
	{ weight: 4, arbitrary: fc.nat(CORPUS_LINES.length - 1).map((i) => CORPUS_LINES[i]) },
	{ weight: 2, arbitrary: fc.constantFrom(" ", "\t", ": ", "[", "]", "(", ")", "0", "12", "e", "s", "k", "\u212a") },
	{
		weight: 2,
		arbitrary: fc.constantFrom(
			"\u001b[31m",
			"\u001b[0m",
			"\u001b[1;32m",
			"\u001b",
			"\u001b[",
			"\u001bX",
			"\u001b]0;title\u0007",
			"\u001b\u001b",
			"\u001b\n",
		),
	},
	{ weight: 1, arbitrary: fc.constantFrom("\r", "\r\n", "\n", "\uD83D", "\uDE00", "\uD83D\uDE00", "é", "中文", "●") },
	{
		weight: 1,
		arbitrary: fc.constantFrom("2024-01-02T03:04:05.123Z ", "[task 2024] ", "12:00:01     INFO - ", "PID 12 | "),
	},
	{ weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }) },
);

/** A random log: lines of pieces, now and then a giant one. */
const log = fc
	.tuple(
		fc.array(
			fc.array(piece, { maxLength: 8 }).map((ps) => ps.join("")),
			{ maxLength: 60 },
		),
		fc.option(fc.tuple(fc.nat(60), fc.integer({ min: 1000, max: 5000 }), key)),
	)
	.map(([lines, giant]) => {
		if (giant) lines.splice(giant[0], 0, `${"x".repeat(giant[1])}${giant[2]}`);
		return lines.join("\n");
	});

const options = fc.record(
	{ maxLines: fc.integer({ min: 0, max: 30 }), maxLineChars: fc.integer({ min: 0, max: 600 }) },
	{ requiredKeys: [] },
);

describe("scanNotable equals the reference scan", () => {
	it("on every log of the corpus", () => {
		for (const entry of LOGS) {
			expect(scanNotable(entry.text), entry.file).toEqual(referenceScanNotable(entry.text));
			expect(scanNotable(entry.text, { maxLines: 7 }), entry.file).toEqual(
				referenceScanNotable(entry.text, { maxLines: 7 }),
			);
		}
	});

	it("on random texts of real lines, keys, ANSI, CRLF and surrogates", () => {
		fc.assert(
			fc.property(log, options, (text, opts) => {
				expect(scanNotable(text, opts)).toEqual(referenceScanNotable(text, opts));
			}),
			{ numRuns: 400 },
		);
	});
});

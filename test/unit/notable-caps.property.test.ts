/**
 * One scan for several caps (issue 32, cost): scanNotableAt(text, caps) returns, for each cap, exactly what
 * scanNotable(text, { maxLines: cap }) returns — on every log of both corpora (the rules' own and the held-out
 * one), read as steps and as before them, and on random logs of real lines mixed with the rules' keys, ANSI
 * sequences, CI prefixes, filler and blank lines (which context steps over) and repeated lines (which fold, and
 * whose folding depends on the cap).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isTableRule, type NotableOptions, scanNotable, scanNotableAt } from "../../extensions/shared/text/notable.ts";
import { loadEvalLogs } from "../fixtures/notable-eval.ts";
import { notableKey, notableLog } from "../fixtures/notable-log-arbitrary.ts";

const LOGS = loadEvalLogs();
/** Every line of both corpora, once. */
const LINES = [...new Set(LOGS.flatMap((log) => log.text.split("\n")))];
/** The caps the tool-output stub scans with (its excerpt's section and the summary model's input), and others. */
const CAPS = [40, 100, 0, 1, 7];

/** Pieces a log line is made of. */
const piece = fc.oneof(
	{ weight: 4, arbitrary: notableKey },
	{ weight: 6, arbitrary: fc.nat(LINES.length - 1).map((i) => LINES[i]) },
	{ weight: 2, arbitrary: fc.constantFrom(" ", ": ", "[", "]", "0", "12", "e", "-----", "[INFO] ", "##[group]") },
	{ weight: 1, arbitrary: fc.constantFrom("\u001b[31m", "\u001b[0m", "\u001b", "\r", "\uD83D", "é", "●") },
	{ weight: 1, arbitrary: fc.constantFrom("2024-01-02T03:04:05.123Z ", "[task 2024] ", "PID 12 | ") },
);

/** A random log: lines of pieces, some repeated (folded repeats), some blank. */
const log = notableLog(piece);

const evaluations: (NotableOptions["evaluation"] | undefined)[] = [undefined, { rules: isTableRule, steps: false }];

describe("scanNotableAt: one scan for several caps", () => {
	it("gives each cap exactly its own scan on every log of both corpora, as steps and as before them", () => {
		for (const entry of LOGS) {
			for (const evaluation of evaluations) {
				const caps = [40, 100];
				const many = scanNotableAt(entry.text, caps, { evaluation });
				for (const [i, cap] of caps.entries()) {
					expect(many[i], `${entry.id} cap ${cap}`).toEqual(scanNotable(entry.text, { maxLines: cap, evaluation }));
				}
			}
		}
	});

	it("gives each cap exactly its own scan on random logs (keys, ANSI, prefixes, filler, repeats)", () => {
		fc.assert(
			fc.property(
				log,
				fc.subarray(CAPS, { minLength: 1 }),
				fc.integer({ min: 2, max: 600 }),
				fc.constantFrom(...evaluations),
				(text, caps, maxLineChars, evaluation) => {
					const many = scanNotableAt(text, caps, { maxLineChars, evaluation });
					expect(many).toHaveLength(caps.length);
					for (const [i, cap] of caps.entries()) {
						expect(many[i]).toEqual(scanNotable(text, { maxLines: cap, maxLineChars, evaluation }));
					}
				},
			),
			{ numRuns: 300 },
		);
	});

	it("keeps the order of the caps given, and a missing cap is the default", () => {
		const text = LOGS.reduce((a, b) => (b.text.length > a.length ? b.text : a), "");
		const [small, byDefault, big] = scanNotableAt(text, [3, undefined, 30]);
		expect(small).toEqual(scanNotable(text, { maxLines: 3 }));
		expect(byDefault).toEqual(scanNotable(text));
		expect(big).toEqual(scanNotable(text, { maxLines: 30 }));
		expect(small.lines.length).toBeLessThan(big.lines.length);
	});
});

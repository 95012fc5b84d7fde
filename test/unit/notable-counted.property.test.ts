/**
 * A scan's line count (issue 32, cost): `counted` gets the text's lines as Pi's read counts them, for any text and
 * any caps, so the tool-output stub's header takes them from the scan instead of a line pass of its own; and the
 * scan with the callback is the scan without it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scanNotable, scanNotableAt } from "../../extensions/shared/text/notable.ts";
import { countLines } from "../../extensions/shared/text/utf8.ts";
import { realLogLinesArb } from "../fixtures/real-log-arbitraries.ts";
import { loadRealLogs } from "../fixtures/real-logs.ts";

const LOGS = loadRealLogs();
/** Real log lines, with the units a walk treats apart (ANSI escapes, "\r", lone surrogates) spliced in. */
const textArb = fc.oneof(
	realLogLinesArb(LOGS, { minLines: 1, maxLines: 400, maxParts: 4 }),
	fc.string({
		unit: fc.constantFrom(..."ab \n\n\r\t\u001b[31mé😀\uD800 error FAILED passed 3 tests exit code"),
		maxLength: 400,
	}),
	fc
		.tuple(
			realLogLinesArb(LOGS, { minLines: 1, maxLines: 60, maxParts: 2 }),
			fc.nat(),
			fc.constantFrom("\u001b", "\u001b[", "\r", "\n"),
		)
		.map(([t, at, piece]) => `${t.slice(0, at % (t.length + 1))}${piece}${t.slice(at % (t.length + 1))}`),
);

describe("a scan's line count", () => {
	it("is the text's lines as Pi counts them, and leaves the scan as it is", () => {
		fc.assert(
			fc.property(textArb, fc.constantFrom(undefined, 1, 5, 40), (text, maxLines) => {
				const counts: number[] = [];
				const scan = scanNotable(text, { maxLines, counted: (lines) => counts.push(lines) });
				expect(counts).toEqual([countLines(text)]);
				expect(scan).toEqual(scanNotable(text, { maxLines }));
			}),
			{ numRuns: 400 },
		);
	});

	it("is given once by a pass at several caps", () => {
		fc.assert(
			fc.property(textArb, (text) => {
				const counts: number[] = [];
				const scans = scanNotableAt(text, [100, 40, 1], { counted: (lines) => counts.push(lines) });
				expect(counts).toEqual([countLines(text)]);
				expect(scans).toEqual(scanNotableAt(text, [100, 40, 1]));
			}),
			{ numRuns: 150 },
		);
	});

	it("counts every line of each corpus log", () => {
		for (const log of LOGS) {
			let lines = -1;
			scanNotable(log.text, { counted: (n) => (lines = n) });
			expect(lines, log.id).toBe(log.lines);
		}
	});
});

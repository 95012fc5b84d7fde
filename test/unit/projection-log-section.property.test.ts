/**
 * projectLog's notable section is fitted from its items' sizes, each item made and measured once per call
 * (issue 32 item 4: the fitting re-projected every line for every size it tried, about a fifth of a stub with a
 * summary on 1 MiB). The proof that nothing else changed: section() returns exactly what the fitting as it was
 * (projection-log-section-reference.ts) returns — the same lines, in the same order, the same count of the rest,
 * the same text with and without line numbers — on random logs of real lines from both corpora, on every log
 * of both corpora at a sweep of limits, and on made-up notable lines (long ones, several lines, wide
 * characters, lone surrogates) at limits near their sizes, where a count of the rest that gets shorter can make
 * more lines fit than fewer.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { section, sectionItems } from "../../extensions/shared/projection/log.ts";
import { NOTABLE_HEADING, NOTABLE_HEADING_UNSAVED } from "../../extensions/shared/projection/prompt.ts";
import { type NotableLine, scanNotable } from "../../extensions/shared/text/notable.ts";
import { loadHeldoutLogs } from "../fixtures/heldout-logs.ts";
import { realLogLinesArb } from "../fixtures/real-log-arbitraries.ts";
import { loadRealLogs, type RealLog } from "../fixtures/real-logs.ts";
import { referenceSection } from "./projection-log-section-reference.ts";

const real = loadRealLogs();
const heldout = loadHeldoutLogs();
/** Both corpora as the arbitraries take them (a text each). */
const corpora = [...real, ...heldout.map((log) => ({ ...log, text: log.text }) as unknown as RealLog)];

/** The section's fields that the view is made of, lines by their number. */
function facts(s: {
	list: string;
	unnumbered: string;
	text: string;
	bytes: number;
	lines: number;
	shown: readonly NotableLine[];
	omitted: number;
}) {
	return { ...s, shown: s.shown.map((l) => l.line) };
}

function same(
	ranked: readonly NotableLine[],
	dropped: number,
	maxBytes: number,
	maxLines: number,
	lineOffset: number,
	heading: string,
) {
	const got = section(ranked, dropped, maxBytes, maxLines, heading, sectionItems(lineOffset));
	const want = referenceSection(ranked, dropped, maxBytes, maxLines, lineOffset, heading);
	expect(facts({ ...got, unnumbered: got.unnumbered() })).toEqual(facts(want));
	return got.shown.length;
}

const byRank = (lines: readonly NotableLine[]) => [...lines].sort((a, b) => a.rank - b.rank);

describe("the notable section's fitting", () => {
	it("equals the fitting as it was on random logs of real lines of both corpora", () => {
		let listed = 0;
		fc.assert(
			fc.property(
				realLogLinesArb(corpora, { minLines: 20, maxLines: 400, maxParts: 6 }),
				fc.integer({ min: 2, max: 120 }),
				fc.integer({ min: 0, max: 9000 }),
				fc.integer({ min: 0, max: 130 }),
				fc.nat(5000),
				fc.nat(40),
				fc.boolean(),
				(text, cap, maxBytes, maxLines, lineOffset, dropped, saved) => {
					const scan = scanNotable(text, { maxLines: cap });
					const heading = saved ? NOTABLE_HEADING : NOTABLE_HEADING_UNSAVED;
					listed += same(byRank(scan.lines), scan.dropped + dropped, maxBytes, maxLines, lineOffset, heading);
				},
			),
			{ numRuns: 300 },
		);
		expect(listed).toBeGreaterThan(1000); // the property listed lines, not only empty sections
	});

	it("equals the fitting as it was on every log of both corpora, at a sweep of limits", () => {
		let listed = 0;
		for (const log of [...real, ...heldout]) {
			const ranked = byRank(scanNotable(log.text, { maxLines: 100 }).lines);
			for (const maxBytes of [0, 700, 2048, 3072, 8192]) {
				for (const maxLines of [3, 24, 40, 101]) {
					listed += same(ranked, 0, maxBytes, maxLines, 0, NOTABLE_HEADING);
				}
			}
		}
		expect(listed).toBeGreaterThan(5_000);
	});

	it("equals the fitting as it was on made-up lines at limits near their sizes", () => {
		const text = fc.string({
			unit: fc.constantFrom(..."ab xé\n\r\t😀\uD800\uDFFF0123456789"),
			maxLength: 400,
		});
		const line = fc.record({
			line: fc.integer({ min: 1, max: 99_999 }),
			text,
			count: fc.integer({ min: 1, max: 2000 }),
		});
		fc.assert(
			fc.property(
				fc.uniqueArray(line, { selector: (l) => l.line, maxLength: 60 }),
				fc.nat(20),
				fc.integer({ min: 0, max: 3000 }),
				fc.integer({ min: 0, max: 70 }),
				fc.nat(100),
				(made, dropped, maxBytes, maxLines, lineOffset) => {
					const ranked: NotableLine[] = made.map((l, rank) => ({
						...l,
						rule: "test",
						kind: "failure",
						failing: false,
						rank,
					}));
					same(ranked, dropped, maxBytes, maxLines, lineOffset, NOTABLE_HEADING);
				},
			),
			{ numRuns: 2000 },
		);
	});
});

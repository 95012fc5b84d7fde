/**
 * `measured` (issue 32 item 4): a caller that projects one long text several times measures it once
 * (measureText) and passes the sizes along. The result is exactly the one project() gives when it measures the
 * text itself, for any text, limits, store state and window; sizes measured of another text are not used. A line count
 * the caller has (a scan's) spares measureText its pass over the lines.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { READ_PAGE_MAX_BYTES } from "../../extensions/shared/projection/cut.ts";
import { longerLineThan, measureText, project } from "../../extensions/shared/projection/projection.ts";
import { countLines, utf8ByteLength } from "../../extensions/shared/text/utf8.ts";

/** The longest line of `t` in UTF-16 units. */
const longest = (t: string) => Math.max(...t.split("\n").map((l) => l.length));

const STORED = { ok: true as const, path: "/s/0123456789abcdef.txt", sha256: "0".repeat(64) };
const text = fc.string({ unit: fc.constantFrom(..."ab \n\n\r\té😀\uD800x0123456789"), maxLength: 6000 });
const options = fc.record(
	{
		maxBytes: fc.integer({ min: 0, max: 5000 }),
		maxLines: fc.integer({ min: 0, max: 200 }),
		headShare: fc.double({ min: 0, max: 1, noNaN: true }),
		stored: fc.constant(STORED),
		window: fc.constantFrom(undefined, { span: "middle" as const }, { span: "all" as const, firstNumber: 40 }),
	},
	{ requiredKeys: [] },
);

describe("project with sizes measured by the caller", () => {
	it("measureText gives the text's bytes, lines and whether a line may be longer than one read", () => {
		fc.assert(
			fc.property(text, (t) => {
				const m = measureText(t);
				expect(m.text).toBe(t);
				expect(m.bytes).toBe(utf8ByteLength(t));
				expect(m.lines).toBe(countLines(t));
				expect(m.longLine).toBe(longest(t) * 3 > READ_PAGE_MAX_BYTES);
				// The sizes the caller has (the store's bytes, a scan's line count) give the same answer.
				expect(measureText(t, m.bytes, m.lines)).toEqual(m);
			}),
		);
	});

	it("measureText with the caller's line count finds lines longer than one read without a pass", () => {
		// Lines around the longest that surely fits one read (a third of its bytes), with short ones between.
		const edge = Math.floor(READ_PAGE_MAX_BYTES / 3);
		const line = fc.oneof(fc.integer({ min: edge - 2, max: edge + 2 }), fc.integer({ min: 0, max: 300 }));
		fc.assert(
			fc.property(fc.array(line, { maxLength: 6 }), fc.boolean(), (lengths, endsWithNewline) => {
				const t = lengths.map((n) => "é".repeat(n)).join("\n") + (endsWithNewline ? "\n" : "");
				expect(measureText(t, undefined, countLines(t))).toEqual(measureText(t));
			}),
			{ numRuns: 200 },
		);
	});

	it("longerLineThan says whether some line has more units than the limit", () => {
		fc.assert(
			fc.property(text, fc.integer({ min: 0, max: 40 }), (t, units) => {
				expect(longerLineThan(t, units)).toBe(longest(t) > units);
			}),
			{ numRuns: 2000 },
		);
	});

	it("gives exactly what project gives without them, and ignores sizes of another text", () => {
		fc.assert(
			fc.property(
				text,
				text,
				options,
				fc.constantFrom("toolArtifacts.stub.command", "notable.line"),
				(t, other, o, surface) => {
					const plain = project(t, surface, o);
					expect(project(t, surface, { ...o, measured: measureText(t) })).toEqual(plain);
					// A file read's window speaks of its source: that text's sizes are the ones used.
					expect(project(t, surface, { ...o, source: { text: t, firstLine: 3 }, measured: measureText(t) })).toEqual(
						project(t, surface, { ...o, source: { text: t, firstLine: 3 } }),
					);
					if (other !== t) {
						const wrong = { ...measureText(other), text: other };
						expect(project(t, surface, { ...o, measured: wrong })).toEqual(plain);
					}
				},
			),
			{ numRuns: 1500 },
		);
	});
});

/**
 * `measured` (issue 32 item 4): a caller that projects one long text several times measures it once
 * (measureText) and passes the sizes along. The result is exactly the one project() gives when it measures the
 * text itself, for any text, limits, store state and window; sizes measured of another text are not used.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { measureText, project } from "../../extensions/shared/projection/projection.ts";
import { countLines, utf8ByteLength } from "../../extensions/shared/text/utf8.ts";

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
	it("measureText gives the text's bytes, lines and longest line", () => {
		fc.assert(
			fc.property(text, (t) => {
				const m = measureText(t);
				expect(m.text).toBe(t);
				expect(m.bytes).toBe(utf8ByteLength(t));
				expect(m.lines).toBe(countLines(t));
				expect(m.longestLineUnits).toBe(Math.max(...t.split("\n").map((l) => l.length)));
			}),
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

/**
 * clippedText (issue 32, cost): the notable section clips each long item without a whole projection; its text is
 * exactly project()'s on a clipping surface (the `notable.line` surface, and any other clipping limits).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clippedText } from "../../extensions/shared/projection/clip.ts";
import { limitsOf, surfaceOf } from "../../extensions/shared/projection/limits.ts";
import { project } from "../../extensions/shared/projection/projection.ts";

const text = fc.string({ unit: fc.constantFrom(..."ab \n\tèé€😀\uD800\uDC00L12: x"), maxLength: 700 });
const clipping = fc.record({
	maxBytes: fc.integer({ min: 0, max: 400 }),
	maxLines: fc.integer({ min: 0, max: 4 }),
	clip: fc.constant(true as const),
});

describe("clippedText", () => {
	it("is project()'s text on a clipping surface when the text does not fit", () => {
		fc.assert(
			fc.property(text, clipping, (t, surface) => {
				const p = project(t, surface);
				if (p.clipped) expect(clippedText(t, limitsOf(surfaceOf(surface), {}))).toBe(p.text);
			}),
			{ numRuns: 3000 },
		);
	});

	it("is the notable.line surface's clip", () => {
		fc.assert(
			fc.property(text, (t) => {
				const p = project(t, "notable.line");
				if (p.clipped) expect(clippedText(t, limitsOf(surfaceOf("notable.line"), {}))).toBe(p.text);
			}),
			{ numRuns: 2000 },
		);
	});
});

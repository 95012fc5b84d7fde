/**
 * The list mode of the one projection, `project(items, surface, options)`: any items, any budget. The output
 * fits the surface's bytes and lines (and entries), the "and N more" count is exact, whole items are shown
 * in order, as many as fit, and the marker never stands for one item that would fit in its place.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ListOptions, project, type SurfaceLimits } from "../../extensions/shared/projection/projection.ts";
import { listMore } from "../../extensions/shared/projection/prompt.ts";
import { SURFACE_NAMES, SURFACES } from "../../extensions/shared/surfaces.ts";
import { bytesOf, linesOf, NASTY_PIECES } from "./projection-arbitraries.ts";

const RUNS = { numRuns: 500 };

const itemArb = fc.oneof(
	fc.string({ maxLength: 30 }),
	fc.string({ unit: "grapheme", maxLength: 12 }),
	fc.constantFrom(...NASTY_PIECES),
	fc.stringMatching(/^[a-z]{1,8}\/[a-z0-9-]{1,20}$/),
	fc.string({ maxLength: 400 }),
);
const itemsArb = fc.array(itemArb, { maxLength: 60 });
const limitsArb: fc.Arbitrary<SurfaceLimits> = fc.record({
	maxBytes: fc.oneof(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 6000 })),
	maxLines: fc.integer({ min: 1, max: 70 }),
	clip: fc.constant(true),
});
const shapeArb = fc.constantFrom<ListOptions>(
	{},
	{ separator: ", ", markerSeparator: " " },
	{ separator: "; ", markerSeparator: ", ", more: (n) => `and ${n} more` },
	{ separator: "\n", more: (n) => `  … and ${n} more files` },
	{ separator: ", ", more: () => "" },
);

/** The marker a call with `options` writes for `omitted` items. */
function markerOf(options: ListOptions, omitted: number): string {
	return (options.more ?? listMore)(omitted);
}

function fitsWhole(items: string[], options: ListOptions, lim: SurfaceLimits): boolean {
	const joined = items.join(options.separator ?? "\n");
	return bytesOf(joined) <= lim.maxBytes && linesOf(joined) <= lim.maxLines && items.length <= lim.maxLines;
}

describe("project(items) properties", () => {
	it("fits the surface's bytes, lines and entries, whatever the items and the budget", () => {
		fc.assert(
			fc.property(itemsArb, limitsArb, shapeArb, (items, lim, options) => {
				const p = project(items, lim, options);
				expect(bytesOf(p.text)).toBeLessThanOrEqual(lim.maxBytes);
				expect(linesOf(p.text)).toBeLessThanOrEqual(lim.maxLines);
				expect(p.entries.length).toBeLessThanOrEqual(lim.maxLines);
				expect(p.shownItems + p.omittedItems).toBe(items.length);
			}),
			RUNS,
		);
	});

	it("shows every item, verbatim and without a marker, exactly when they all fit", () => {
		fc.assert(
			fc.property(itemsArb, limitsArb, shapeArb, (items, lim, options) => {
				const p = project(items, lim, options);
				const all = fitsWhole(items, options, lim);
				expect(p.truncated).toBe(!all);
				if (all) {
					expect(p.text).toBe(items.join(options.separator ?? "\n"));
					expect(p.omittedItems).toBe(0);
				}
			}),
			RUNS,
		);
	});

	it("names the exact count of the items not shown, after whole items in order, as many as fit", () => {
		fc.assert(
			fc.property(itemsArb, limitsArb, shapeArb, (items, lim, options) => {
				const p = project(items, lim, options);
				if (!p.truncated) return;
				const separator = options.separator ?? "\n";
				const joiner = options.markerSeparator ?? separator;
				const marker = markerOf(options, p.omittedItems);
				const whole = items.slice(0, p.shownItems);
				const clippedFirst = p.shownItems === 1 && p.entries[0] !== items[0];
				if (p.marker !== "") {
					expect(p.marker).toBe(marker);
					expect(p.text.endsWith(marker)).toBe(true);
				}
				if (!clippedFirst && p.marker !== "") {
					const shown = whole.join(separator);
					expect(p.text).toBe(p.shownItems > 0 ? `${shown}${joiner}${marker}` : marker);
				}
				if (clippedFirst) {
					expect(p.entries[0].endsWith("…")).toBe(true);
					expect(items[0].startsWith(p.entries[0].slice(0, -1))).toBe(true);
				}
				// Maximal: one more whole item (and the marker for the rest, if any) would not fit.
				if (!clippedFirst && p.marker !== "" && p.shownItems < items.length) {
					const next = p.shownItems + 1;
					const nextText =
						next === items.length
							? items.join(separator)
							: `${items.slice(0, next).join(separator)}${joiner}${markerOf(options, items.length - next)}`;
					const nextEntries = next === items.length ? next : next + (markerOf(options, items.length - next) ? 1 : 0);
					const fitsNext =
						bytesOf(nextText) <= lim.maxBytes && linesOf(nextText) <= lim.maxLines && nextEntries <= lim.maxLines;
					expect(fitsNext).toBe(false);
				}
			}),
			RUNS,
		);
	});

	it("never writes '… and 1 more' where that item fits in the marker's place", () => {
		fc.assert(
			fc.property(itemsArb, limitsArb, (items, lim) => {
				const p = project(items, lim);
				if (p.omittedItems === 1 && p.marker !== "") {
					const last = items[items.length - 1];
					expect(bytesOf(last) > bytesOf(p.marker) || linesOf(last) > linesOf(p.marker)).toBe(true);
					expect(fitsWhole(items, {}, lim)).toBe(false);
				}
			}),
			RUNS,
		);
	});

	it("keeps every list surface of the table within its bytes and lines", () => {
		const lists = SURFACE_NAMES.filter((name) => (SURFACES[name] as { clip?: boolean }).clip === true);
		fc.assert(
			fc.property(fc.constantFrom(...lists), itemsArb, shapeArb, (name, items, options) => {
				const p = project(items, name, options);
				expect(bytesOf(p.text)).toBeLessThanOrEqual(SURFACES[name].maxBytes);
				expect(linesOf(p.text)).toBeLessThanOrEqual(SURFACES[name].maxLines);
			}),
			RUNS,
		);
	});
});

describe("project(items) examples", () => {
	const names = Array.from({ length: 31 }, (_, i) => `p/m${i}`);
	const surface = { maxBytes: 4096, maxLines: 31, clip: true };

	it("shows all 31 of 31 items in 31 entries rather than 30 and '… and 1 more'", () => {
		expect(project(names, surface).text).toBe(names.join("\n"));
	});

	it("shows 30 of 32 and counts the other 2", () => {
		const p = project([...names, "p/m31"], surface);
		expect(p.entries).toEqual([...names.slice(0, 30), "… and 2 more"]);
		expect(p.omittedItems).toBe(2);
	});

	it("clips a first item too long to show whole, then counts the rest", () => {
		const p = project(["x".repeat(100), "b", "c"], { maxBytes: 40, maxLines: 2, clip: true }, { separator: ", " });
		expect(p.text).toBe(`${"x".repeat(21)}…, … and 2 more`);
		expect(bytesOf(p.text)).toBeLessThanOrEqual(40);
		expect(p.shownItems).toBe(1);
	});

	it("writes the mark alone when not even the count fits, and nothing under 3 bytes", () => {
		expect(project(["alpha", "beta"], { maxBytes: 4, maxLines: 1, clip: true }).text).toBe("…");
		expect(project(["alpha", "beta"], { maxBytes: 2, maxLines: 1, clip: true }).text).toBe("");
	});

	it("gives an empty list as an empty text", () => {
		const p = project([], "subagents.modelChoices");
		expect(p.text).toBe("");
		expect(p.truncated).toBe(false);
	});
});

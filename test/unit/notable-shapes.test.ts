import { describe, expect, it } from "vitest";
import { SHAPES_LOG, scanNotable } from "../../extensions/shared/text/notable.ts";

/**
 * The scan keeps one small scan's objects for the process (SHAPES in notable.ts) so that V8 keeps the hidden
 * classes its optimized code checks across full collections. That only works if the sample scan makes every
 * kind of object a real scan makes: these are the kinds it must keep making.
 */
describe("the sample log the scan keeps its shapes from", () => {
	const scan = scanNotable(SHAPES_LOG);
	const kinds = new Set(scan.lines.map((l) => l.kind));

	it("holds failures, context and summaries", () => {
		expect([...kinds].sort()).toEqual(["context", "failure", "summary"]);
	});

	it("folds a repeat, and holds a failing summary and a step's verdict", () => {
		expect(scan.lines.some((l) => l.count > 1)).toBe(true);
		expect(scan.lines.some((l) => l.kind === "summary" && l.failing)).toBe(true);
		expect(scan.lines.some((l) => l.rule === "generic.step-verdict")).toBe(true);
	});

	it("cleans a line of its escapes and reads a JSON record", () => {
		expect(SHAPES_LOG).toContain("\u001b[");
		expect(scan.lines.some((l) => l.text.startsWith("error: mismatched types"))).toBe(true);
		expect(scan.lines.some((l) => l.text.startsWith('{"level":"error"'))).toBe(true);
	});

	it("drops nothing: every line it finds is kept", () => {
		expect(scan.dropped).toBe(0);
		expect(scan.failures).toBeGreaterThanOrEqual(5);
	});
});

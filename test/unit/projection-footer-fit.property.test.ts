/**
 * The footer's numbers never push a view over its bytes. The room for the marker and the footer is reserved from
 * their longest wording for the text, which names the omitted lines "1–<last>"; a view whose first omitted line
 * has as many digits as the last one (a few short lines, then lines longer than half a side's budget, so both
 * cuts fall inside a line) used to come out a byte or two over maxBytes ("lines 10–31 … offset=10, limit=22" is
 * one byte longer than the reserved "lines 1–32 … offset=32, limit=32"). Such a view is now cut again, smaller.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { project } from "../../extensions/shared/projection/projection.ts";
import { countLines, utf8ByteLength } from "../../extensions/shared/text/utf8.ts";

const PATH =
	"/home/u/.pi/agent/cache/headroom/tool-outputs/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.txt";
const STORED = { ok: true as const, path: PATH, sha256: "0".repeat(64) };
const shortLines = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);

describe("a projection's footer", () => {
	it("keeps the view within maxBytes when the first omitted line has as many digits as the last", () => {
		// 9 short lines, a long one, 20 short, a long one, 1 short: head and tail cut inside the long lines.
		const long = "L".repeat(1500);
		const text = [...shortLines(9), long, ...shortLines(20), long, ...shortLines(1)].join("\n");
		const p = project(text, "toolArtifacts.stub.command", {
			maxBytes: 1024,
			maxLines: 40,
			headShare: 0.4,
			stored: STORED,
		});
		expect(p.footer).toContain("Omitted: lines 10–31");
		expect(utf8ByteLength(p.text)).toBeLessThanOrEqual(1024);
	});

	it("never lets the view exceed its limits, whatever the mix of short and long lines", () => {
		const block = fc.oneof(
			fc.integer({ min: 1, max: 40 }).map(shortLines),
			fc
				.tuple(fc.integer({ min: 300, max: 4000 }), fc.constantFrom("L", "é", "😀", "L\r"))
				.map(([n, c]) => [c.repeat(Math.ceil(n / c.length))]),
		);
		fc.assert(
			fc.property(
				fc.array(block, { minLength: 2, maxLength: 8 }),
				fc.boolean(),
				fc.integer({ min: 1024, max: 2400 }),
				fc.integer({ min: 8, max: 120 }),
				fc.double({ min: 0, max: 1, noNaN: true }),
				fc.constantFrom(1, 4001, 99_990),
				(blocks, trailing, maxBytes, maxLines, headShare, firstLine) => {
					const text = blocks.flat().join("\n") + (trailing ? "\n" : "");
					const source = { text: `${"x\n".repeat(firstLine - 1)}${text}`, firstLine };
					for (const options of [{}, { source }]) {
						const p = project(text, "toolArtifacts.stub.command", {
							maxBytes,
							maxLines,
							headShare,
							stored: STORED,
							...options,
						});
						expect(utf8ByteLength(p.text)).toBeLessThanOrEqual(p.maxBytes);
						expect(countLines(p.text)).toBeLessThanOrEqual(p.maxLines);
						expect(p.maxBytes).toBe(maxBytes);
					}
				},
			),
			{ numRuns: 1500 },
		);
	});
});

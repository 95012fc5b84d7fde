/**
 * A large output's view keeps the notable lines of its middle (LargeOutputReader). A line the scan clipped ends
 * in "…", beyond Latin-1: kept as is, it made the whole view a two-byte string (the 256 MiB memory bench read
 * 1.64–1.80× instead of 1.35×). `viewLine` keeps such a line in Latin-1 so that the scan of the view shows
 * exactly the text the scan of the file showed, with the same rule.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_NOTABLE_LINE_CHARS, scanNotable } from "../../extensions/shared/text/notable.ts";
import { viewLine } from "../../extensions/tool-artifacts/full-output.ts";
import { loadRealLogs } from "../fixtures/real-logs.ts";

/** Real notable lines of the corpus (cleaned, as the scan keeps them, not clipped). */
const REAL = loadRealLogs()
	.flatMap((log) => scanNotable(log.text).lines)
	.filter((l) => l.kind !== "context" && !l.text.endsWith("…"))
	.map((l) => l.text);

const latin1Tail = fc
	.array(fc.constantFrom("a", " ", "0", "=", "é", "\u00a0", "/", "ok", "passed", "-", "\t"), { maxLength: 400 })
	.map((parts) => parts.join(""));
const anyTail = fc
	.array(fc.constantFrom("a", " ", "€", "😀", "✓", "…", "é"), { maxLength: 400 })
	.map((parts) => parts.join(""));

describe("viewLine", () => {
	it("shows what the file's scan showed: a long line's view line scans to the same text and rule (property)", () => {
		fc.assert(
			fc.property(fc.constantFrom(...REAL), latin1Tail, anyTail, fc.boolean(), (real, pad, wide, latin) => {
				const long = `${real} ${"x".repeat(DEFAULT_NOTABLE_LINE_CHARS)}${latin ? pad : wide}`;
				const [kept] = scanNotable(long).lines;
				if (!kept) return; // the long line is no hit (a rule that wants the line's end)
				const held = viewLine(kept.text);
				const [again] = scanNotable(held).lines;
				expect(again?.text).toBe(kept.text);
				expect(again?.rule).toBe(kept.rule);
				if (!/[^\u0000-\u00ff]/.test(kept.text.slice(0, -1))) expect(/[^\u0000-\u00ff]/.test(held)).toBe(false);
			}),
			{ numRuns: 300 },
		);
	});

	it("keeps a line that was not clipped, or that holds a unit beyond Latin-1 anyway, as it is", () => {
		fc.assert(
			fc.property(fc.constantFrom(...REAL), anyTail, (real, wide) => {
				const text = `${real}${wide}`.slice(0, DEFAULT_NOTABLE_LINE_CHARS);
				if (!text.endsWith("…") || /[^\u0000-\u00ff]/.test(text.slice(0, -1))) expect(viewLine(text)).toBe(text);
			}),
		);
		expect(viewLine(`${"a".repeat(DEFAULT_NOTABLE_LINE_CHARS - 2)}€…`)).toBe(
			`${"a".repeat(DEFAULT_NOTABLE_LINE_CHARS - 2)}€…`,
		);
		expect(viewLine("FAILED x…")).toBe("FAILED x…");
	});
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	effectiveLimits,
	fitsVerbatim,
	MIN_WINDOW_BYTES,
	MIN_WINDOW_LINES,
	projectParts,
	READ_PAGE_MAX_BYTES,
	READ_PAGE_MAX_LINES,
} from "../../extensions/shared/projection/projection.ts";
import {
	artifactArb,
	bytesOf,
	displayLines,
	isWellFormed,
	limitsArb,
	linesOf,
	reconstruct,
	stored,
	textArb,
} from "./projection-arbitraries.ts";

const RUNS = { numRuns: 400 };
/** Paths up to this long never force the window above the documented minimum. */
const ORDINARY_PATH_CHARS = 300;

function splitsPair(s: string, i: number): boolean {
	return i > 0 && i < s.length && /[\uD800-\uDBFF]/.test(s[i - 1]) && /[\uDC00-\uDFFF]/.test(s[i]);
}

describe("projectText properties", () => {
	it("fits the whole output in the limits (raised only to the minimum window, or for a very long path)", () => {
		fc.assert(
			fc.property(textArb, limitsArb, artifactArb, (text, limits, artifact) => {
				const parts = projectParts(text, limits, artifact);
				const out = parts.projection.text;
				expect(bytesOf(out)).toBeLessThanOrEqual(parts.limits.maxBytes);
				expect(linesOf(out)).toBeLessThanOrEqual(parts.limits.maxLines);
				expect(parts.limits.maxLines).toBe(Math.max(limits.maxLines, MIN_WINDOW_LINES));
				const pathChars = artifact?.ok ? artifact.path.length : 0;
				if (pathChars <= ORDINARY_PATH_CHARS) {
					expect(parts.limits.maxBytes).toBe(Math.max(limits.maxBytes, MIN_WINDOW_BYTES));
				}
			}),
			RUNS,
		);
	});

	it("returns the text verbatim exactly when it fits both limits", () => {
		fc.assert(
			fc.property(textArb, limitsArb, artifactArb, (text, limits, artifact) => {
				const lim = effectiveLimits(limits);
				const fits = bytesOf(text) <= lim.maxBytes && linesOf(text) <= lim.maxLines;
				const p = projectParts(text, limits, artifact).projection;
				expect(fitsVerbatim(text, limits)).toBe(fits);
				expect(p.truncated).toBe(!fits);
				expect(p.totalBytes).toBe(bytesOf(text));
				expect(p.totalLines).toBe(linesOf(text));
				if (fits) {
					expect(p.text).toBe(text);
					expect(p.artifact).toBeUndefined();
					expect(p.omittedBytes + p.omittedLines).toBe(0);
				}
			}),
			RUNS,
		);
	});

	it("never breaks a character: cuts avoid surrogate pairs and the output is well-formed", () => {
		fc.assert(
			fc.property(textArb, limitsArb, artifactArb, (text, limits, artifact) => {
				const parts = projectParts(text, limits, artifact);
				if (!parts.projection.truncated) return;
				expect(splitsPair(text, parts.headEnd)).toBe(false);
				expect(splitsPair(text, parts.tailStart)).toBe(false);
				expect(isWellFormed(parts.projection.text)).toBe(true);
			}),
			RUNS,
		);
	});

	it("lays out head + marker + tail + footer, head a prefix and tail a suffix of the stored text", () => {
		fc.assert(
			fc.property(textArb, limitsArb, artifactArb, (text, limits, artifact) => {
				const parts = projectParts(text, limits, artifact);
				if (!parts.projection.truncated) return;
				const { head, tail, marker, footer } = parts;
				const whole = stored(text);
				expect(whole.startsWith(head)).toBe(true);
				expect(whole.endsWith(tail)).toBe(true);
				expect(head).toBe(stored(text.slice(0, parts.headEnd)));
				expect(tail).toBe(stored(text.slice(parts.tailStart)));
				expect(parts.headEnd).toBeLessThan(parts.tailStart);
				const sepA = head !== "" && !head.endsWith("\n") ? "\n" : "";
				const sepB = tail !== "" && !tail.endsWith("\n") ? "\n" : "";
				expect(parts.projection.text).toBe(`${head}${sepA}${marker}\n${tail}${sepB}${footer}`);
				expect(marker).toContain(`(${parts.projection.omittedBytes.toLocaleString("en-US")} bytes) omitted`);
				expect(marker.includes("\n") || footer.includes("\n")).toBe(false);
			}),
			RUNS,
		);
	});

	it("keeps each side within its share and cuts at a line boundary when that keeps at least half", () => {
		fc.assert(
			fc.property(textArb, limitsArb, artifactArb, (text, limits, artifact) => {
				const parts = projectParts(text, limits, artifact);
				if (!parts.projection.truncated) return;
				const { head, tail, budget } = parts;
				expect(bytesOf(head)).toBeLessThanOrEqual(budget.headBytes);
				expect(displayLines(head)).toBeLessThanOrEqual(budget.headLines);
				expect(bytesOf(tail)).toBeLessThanOrEqual(budget.tailBytes);
				expect(displayLines(tail)).toBeLessThanOrEqual(budget.tailLines);
				// A side is empty only when its budget cannot hold one character or one line.
				if (budget.headBytes >= 4 && budget.headLines >= 1) expect(head.length).toBeGreaterThan(0);
				if (budget.tailBytes >= 4 && budget.tailLines >= 1) expect(tail.length).toBeGreaterThan(0);
				// Mid-line head cut: the last line boundary in the head would have kept less than half.
				if (head !== "" && !head.endsWith("\n")) {
					const newline = head.lastIndexOf("\n");
					if (newline !== -1) expect(bytesOf(head.slice(0, newline + 1)) * 2).toBeLessThan(budget.headBytes);
				}
				// Mid-line tail cut: the first line start in the tail would have kept less than half.
				if (parts.tailStart < text.length && text[parts.tailStart - 1] !== "\n") {
					const newline = tail.indexOf("\n");
					if (newline !== -1) expect(bytesOf(tail.slice(newline + 1)) * 2).toBeLessThan(budget.tailBytes);
				}
				// A cut on a line boundary either could not grow (bytes or lines) or keeps at least half.
				const nextChar = text.slice(parts.headEnd, parts.headEnd + (splitsPair(text, parts.headEnd + 1) ? 2 : 1));
				const grown = stored(text.slice(0, parts.headEnd) + nextChar);
				const headMaximal = bytesOf(grown) > budget.headBytes || displayLines(grown) > budget.headLines;
				expect(headMaximal || bytesOf(head) * 2 >= budget.headBytes).toBe(true);
				const prevStart = parts.tailStart - (splitsPair(text, parts.tailStart - 1) ? 2 : 1);
				const grownTail = stored(text.slice(prevStart));
				const tailMaximal =
					prevStart < parts.headEnd ||
					bytesOf(grownTail) > budget.tailBytes ||
					displayLines(grownTail) > budget.tailLines;
				expect(tailMaximal || bytesOf(tail) * 2 >= budget.tailBytes).toBe(true);
			}),
			RUNS,
		);
	});

	it("counts what was omitted: bytes add up, lines match the text, and the read call starts at the first omitted line", () => {
		fc.assert(
			fc.property(textArb, limitsArb, artifactArb, (text, limits, artifact) => {
				const parts = projectParts(text, limits, artifact);
				const p = parts.projection;
				if (!p.truncated) return;
				expect(p.omittedBytes).toBe(bytesOf(text) - bytesOf(parts.head) - bytesOf(parts.tail));
				expect(p.omittedBytes).toBeGreaterThan(0);
				const first = linesOf(text.slice(0, parts.headEnd));
				const last = linesOf(text.slice(0, parts.tailStart - 1));
				expect(p.firstOmittedLine).toBe(first);
				expect(p.omittedLines).toBe(last - first + 1);
				const headWhole = parts.head === "" || parts.head.endsWith("\n");
				const tailWhole = text[parts.tailStart - 1] === "\n";
				if (headWhole && tailWhole) {
					expect(displayLines(parts.head) + p.omittedLines + linesOf(parts.tail)).toBe(p.totalLines);
				}
				if (artifact?.ok) {
					expect(p.readOffset).toBe(first);
					expect(parts.footer).toContain(
						`read(path=${JSON.stringify(artifact.path)}, offset=${p.readOffset}, limit=${p.readLimit})`,
					);
				} else {
					expect(p.readOffset).toBeUndefined();
					expect(parts.footer).toContain("NOT saved");
					expect(parts.footer).not.toContain("read(");
				}
			}),
			RUNS,
		);
	});

	it("picks a read limit that one read returns whole, within the omitted lines", () => {
		fc.assert(
			fc.property(textArb, limitsArb, artifactArb, (text, limits, artifact) => {
				const p = projectParts(text, limits, artifact).projection;
				if (!p.truncated || !artifact?.ok) return;
				const lines = stored(text).split("\n");
				const offset = p.readOffset!;
				const limit = p.readLimit!;
				const page = lines.slice(offset - 1, offset - 1 + limit).join("\n");
				expect(limit).toBeGreaterThanOrEqual(1);
				expect(limit).toBeLessThanOrEqual(Math.min(p.omittedLines, READ_PAGE_MAX_LINES));
				const fitsPage = bytesOf(page) <= READ_PAGE_MAX_BYTES;
				expect(fitsPage || limit === 1).toBe(true);
				// Maximal: one more line would overflow the page or pass the omitted range.
				const more = lines.slice(offset - 1, offset + limit).join("\n");
				if (fitsPage && limit < Math.min(p.omittedLines, READ_PAGE_MAX_LINES)) {
					expect(bytesOf(more)).toBeGreaterThan(READ_PAGE_MAX_BYTES);
				}
				expect(p.text.includes("tail -c +")).toBe(!fitsPage && !/[\u0000-\u001f\u007f]/.test(artifact.path));
			}),
			RUNS,
		);
	});

	it("reconstructs the stored text from head, the omitted lines and tail", () => {
		fc.assert(
			fc.property(textArb, limitsArb, artifactArb, (text, limits, artifact) => {
				const parts = projectParts(text, limits, artifact);
				const p = parts.projection;
				if (!p.truncated) return;
				const whole = stored(text);
				const lines = whole.split("\n");
				const last = p.firstOmittedLine! + p.omittedLines - 1;
				const pages = lines.slice(p.firstOmittedLine! - 1, last).join("\n");
				const tailStartsLine = text[parts.tailStart - 1] === "\n";
				expect(reconstruct(parts.head, pages, parts.tail, tailStartsLine)).toBe(whole);
			}),
			RUNS,
		);
	});

	it("gives the head about headShare of the body", () => {
		fc.assert(
			fc.property(textArb, limitsArb, artifactArb, (text, limits, artifact) => {
				const parts = projectParts(text, limits, artifact);
				if (!parts.projection.truncated) return;
				const share = parts.limits.headShare;
				const { headBytes, tailBytes, headLines, tailLines } = parts.budget;
				expect(headBytes).toBe(Math.floor((headBytes + tailBytes) * share));
				expect(headLines).toBe(Math.floor((headLines + tailLines) * share));
				expect(share).toBe(limits.headShare ?? 0.75);
			}),
			RUNS,
		);
	});
});

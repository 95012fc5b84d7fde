/**
 * The short answers of the projection: a text that fits comes back verbatim, and a short surface (a title,
 * a reason, a brief) is clipped to its longest prefix within both limits, then a mark. See projection.ts
 * for the rules.
 */
import { advanceByBytes, countNewlines, detached, utf8ByteLength } from "../text/utf8.ts";
import type { Limits } from "./limits.ts";
import { CLIP_MARK } from "./prompt.ts";
import type { Projection, ProjectOptions } from "./types.ts";

/** UTF-8 bytes of CLIP_MARK. */
export const CLIP_MARK_BYTES = 3;

/** Sizes of a whole text: UTF-8 bytes and lines as Pi's read counts them. */
export interface Totals {
	bytes: number;
	lines: number;
}

export function verbatim(text: string, lim: Limits, totals: Totals): Projection {
	return {
		text,
		truncated: false,
		clipped: false,
		totalBytes: totals.bytes,
		totalLines: totals.lines,
		omittedBytes: 0,
		omittedLines: 0,
		headEnd: text.length,
		tailStart: text.length,
		head: text,
		tail: "",
		marker: "",
		footer: "",
		maxBytes: lim.maxBytes,
		maxLines: lim.maxLines,
		headShare: lim.headShare,
		headBudgetBytes: 0,
		headBudgetLines: 0,
		tailBudgetBytes: 0,
		tailBudgetLines: 0,
		shownItems: 0,
		omittedItems: 0,
		entries: [],
	};
}

/** End of the longest prefix of `text` within `maxBytes` and `maxLines` whole lines (a cut line stays partial). */
export function prefixEnd(text: string, maxBytes: number, maxLines: number): number {
	if (maxLines <= 0) return 0;
	let end = advanceByBytes(text, 0, Math.max(0, maxBytes)).end;
	let at = -1;
	for (let k = 0; k < maxLines; k++) {
		at = text.indexOf("\n", at + 1);
		if (at === -1) break;
	}
	if (at !== -1 && at < end) end = at;
	return end;
}

/** The bytes a clipped prefix may take before CLIP_MARK (all of them when the mark does not fit). */
function markBudget(lim: Limits): number {
	return lim.maxBytes >= CLIP_MARK_BYTES ? lim.maxBytes - CLIP_MARK_BYTES : lim.maxBytes;
}

/** A clipped prefix with its mark (when the mark fits). */
function marked(kept: string, lim: Limits): string {
	return lim.maxBytes >= CLIP_MARK_BYTES ? `${kept}${CLIP_MARK}` : kept;
}

/**
 * The text of `clip(text, lim, totals)` (no caller's marker) for a text that does not fit `lim`, without the rest
 * of its projection: for a caller that clips many short texts (the notable section's items).
 */
export function clippedText(text: string, lim: Limits): string {
	return marked(text.slice(0, prefixEnd(text, markBudget(lim), lim.maxLines)), lim);
}

/**
 * A clipped surface: the longest prefix within both limits that leaves room for CLIP_MARK, then the mark (a
 * budget under 3 bytes gets the prefix alone); with the caller's `marker`, the prefix keeps whole lines and
 * the marker takes its own last line ("… and 5 more"). The prefix never ends inside a surrogate pair; it is
 * shown as the text has it (a clipped surface quotes names, reasons and lists, which no artifact matches).
 */
export function clip(text: string, lim: Limits, totals: Totals, marker?: ProjectOptions["marker"]): Projection {
	let end: number;
	let budgetBytes: number;
	let budgetLines: number;
	if (marker) {
		const worst = utf8ByteLength(marker(totals.lines, totals.bytes)) + 1;
		budgetBytes = Math.max(0, lim.maxBytes - worst);
		budgetLines = lim.maxLines - 1;
		end = prefixEnd(text, budgetBytes, budgetLines);
	} else {
		budgetBytes = markBudget(lim);
		budgetLines = lim.maxLines;
		end = prefixEnd(text, budgetBytes, budgetLines);
	}
	const kept = detached(text.slice(0, end)); // a copy: a slice would keep all of `text` alive with the projection
	const keptLines = end === 0 ? 0 : countNewlines(kept) + 1;
	const partial = end < text.length && text.charCodeAt(end) !== 10;
	const omittedLines = totals.lines - keptLines + (partial && keptLines > 0 ? 1 : 0);
	const omittedBytes = totals.bytes - utf8ByteLength(kept);
	let out: string;
	let shownMarker = "";
	if (marker) {
		shownMarker = marker(omittedLines, omittedBytes);
		out = kept.length > 0 ? `${kept}\n${shownMarker}` : shownMarker;
	} else out = marked(kept, lim);
	return {
		...verbatim(text, lim, totals),
		text: out,
		truncated: true,
		clipped: true,
		omittedBytes,
		omittedLines,
		firstOmittedLine: keptLines + (partial && keptLines > 0 ? 0 : 1),
		headEnd: end,
		head: kept,
		marker: shownMarker,
		headBudgetBytes: budgetBytes,
		headBudgetLines: budgetLines,
	};
}

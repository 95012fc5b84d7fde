/**
 * The cuts of the projection (see projection.ts for the rules): where the head ends, where the tail
 * starts, and how many lines one read of the artifact returns whole. Forward searches only, on windows
 * of the text: V8's indexOf is fast, lastIndexOf crawls, and nothing here scans the whole text.
 */
import { advanceByBytes, afterNthNewlineFromEnd, rangeByteLength, retreatByBytes } from "../text/utf8.ts";

/** What one call of Pi's read returns at most (its DEFAULT_MAX_BYTES, 50 KiB); a drift test pins it. */
export const READ_PAGE_MAX_BYTES = 50 * 1024;
/** Lines one call of Pi's read returns at most (its DEFAULT_MAX_LINES); a drift test pins it. */
export const READ_PAGE_MAX_LINES = 2000;
const NEWLINE_CODE = 10;

/** UTF-8 measurements of index ranges of one text (see utf8.ts for the rules). */
export interface ByteMeter {
	/** Bytes of text[start, end). */
	range(text: string, start: number, end: number): number;
	/** Longest prefix of text[start, limit) within maxBytes. */
	advance(text: string, start: number, maxBytes: number, limit: number): { end: number; bytes: number };
	/** Longest suffix of text[floor, end) within maxBytes. */
	retreat(text: string, end: number, maxBytes: number, floor: number): { start: number; bytes: number };
}

/** Any text: measured natively on small slices. */
export const UTF8_METER: ByteMeter = { range: rangeByteLength, advance: advanceByBytes, retreat: retreatByBytes };

/** An all-ASCII text: one byte per unit, nothing to measure (and no surrogate pair to split). */
export const ASCII_METER: ByteMeter = {
	range: (_text, start, end) => Math.max(0, end - start),
	advance: (_text, start, maxBytes, limit) => {
		const end = Math.max(start, Math.min(limit, start + Math.max(0, maxBytes)));
		return { end, bytes: end - start };
	},
	retreat: (_text, end, maxBytes, floor) => {
		const start = Math.min(end, Math.max(floor, end - Math.max(0, maxBytes)));
		return { start, bytes: end - start };
	},
};

/**
 * The meter for a text of `totalBytes` UTF-8 bytes: every non-ASCII unit takes at least 2 bytes (a lone
 * surrogate 3), so bytes === units exactly when the text is all ASCII; the total is measured anyway.
 */
export function meterFor(text: string, totalBytes: number): ByteMeter {
	return totalBytes === text.length ? ASCII_METER : UTF8_METER;
}

/** Where the head ends, where the line it ends in starts, and its UTF-8 bytes (measured once, reused). */
export interface HeadCut {
	/** The head is text[0, end). */
	end: number;
	/** Start of the line holding the first omitted character (end itself when the head ends after "\n"). */
	lineStart: number;
	/** UTF-8 bytes of the head. */
	bytes: number;
}

/** Head end: the byte- and line-limited prefix, moved back to a line boundary when that keeps half. */
export function cutHead(text: string, m: ByteMeter, budgetBytes: number, budgetLines: number): HeadCut {
	if (budgetBytes <= 0 || budgetLines <= 0) return { end: 0, lineStart: 0, bytes: 0 };
	// Every UTF-16 unit is at least one byte, so the head lies within the first budgetBytes units: the
	// line limit is found there first, then bytes are measured only up to it.
	const window = text.slice(0, Math.min(text.length, budgetBytes));
	let seen = 0;
	let lastNewline = -1;
	for (let at = window.indexOf("\n"); at !== -1 && seen < budgetLines; at = window.indexOf("\n", at + 1)) {
		seen++;
		lastNewline = at;
	}
	const byLines = seen === budgetLines ? lastNewline + 1 : -1;
	const { end, bytes } = m.advance(text, 0, budgetBytes, byLines === -1 ? text.length : byLines);
	if (end === 0 || text.charCodeAt(end - 1) === NEWLINE_CODE) return { end, lineStart: end, bytes };
	// The forward scan saw every newline before the cut unless it went past it (wide characters); then a
	// forward scan of the window up to the cut finds it (never lastIndexOf: it crawls backwards over a long line).
	const newline = lastNewline < end ? lastNewline : lastNewlineBefore(window, end);
	if (newline === -1) return { end, lineStart: 0, bytes };
	const lineBytes = m.range(text, 0, newline + 1);
	if (lineBytes * 2 >= budgetBytes) return { end: newline + 1, lineStart: newline + 1, bytes: lineBytes };
	return { end, lineStart: newline + 1, bytes };
}

/** Index of the last "\n" in s[0, end), by forward search (fast in V8), or -1. */
function lastNewlineBefore(s: string, end: number): number {
	const range = s.slice(0, end);
	let last = -1;
	for (let at = range.indexOf("\n"); at !== -1; at = range.indexOf("\n", at + 1)) last = at;
	return last;
}

/** Tail start (>= floor) and its UTF-8 bytes: the byte- and line-limited suffix, moved on to a line start when that keeps half. */
export function cutTail(
	text: string,
	m: ByteMeter,
	floor: number,
	budgetBytes: number,
	budgetLines: number,
): { start: number; bytes: number } {
	const n = text.length;
	if (budgetBytes <= 0 || budgetLines <= 0) return { start: n, bytes: 0 };
	// A tail ending without "\n" shows one line more than it has newlines.
	const newlinesAllowed = budgetLines - (text.charCodeAt(n - 1) === NEWLINE_CODE ? 0 : 1);
	const byLines = afterNthNewlineFromEnd(text, newlinesAllowed + 1, Math.max(floor, n - budgetBytes), n);
	const tail = m.retreat(text, n, budgetBytes, byLines === -1 ? floor : Math.max(floor, byLines));
	const cut = tail.start;
	if (cut > 0 && cut < n && text.charCodeAt(cut - 1) !== NEWLINE_CODE) {
		const newline = text.indexOf("\n", cut);
		if (newline !== -1) {
			const bytes = m.range(text, newline + 1, n);
			if (bytes * 2 >= budgetBytes) return { start: newline + 1, bytes };
		}
	}
	return tail;
}

/** Lines from `lineStart` that one read returns whole (>= 1), and whether the first line is too long for it. */
export function readPage(
	text: string,
	m: ByteMeter,
	lineStart: number,
	maxLines: number,
): { limit: number; longLine: boolean } {
	const n = text.length;
	const windowEnd = Math.min(n, lineStart + READ_PAGE_MAX_BYTES + 1); // a longer range is surely too big
	const window = text.slice(lineStart, windowEnd);
	// Where each of the first lines ends in the window; a last line the window cuts off is not one of them (it
	// surely does not fit). k lines joined by "\n" are exactly window[0, ends[k - 1]).
	const ends: number[] = [];
	for (let pos = 0; ends.length < maxLines; ) {
		const newline = window.indexOf("\n", pos);
		const end = newline !== -1 ? newline : windowEnd === n ? window.length : -1;
		if (end === -1) break;
		ends.push(end);
		if (newline === -1) break;
		pos = newline + 1;
	}
	// The most lines whose bytes fit one read (more lines never take fewer bytes): a line's bytes are at least its
	// units, so lines ending past one read's bytes never fit; the rest are measured at once, and while they are
	// over, the last line (with the "\n" before it) is measured and taken off. An ASCII window fits at once.
	let lines = 0;
	while (lines < ends.length && ends[lines] <= READ_PAGE_MAX_BYTES) lines++;
	if (m !== ASCII_METER && lines > 0) {
		let bytes = m.range(window, 0, ends[lines - 1]);
		while (lines > 0 && bytes > READ_PAGE_MAX_BYTES) {
			bytes -= m.range(window, lines > 1 ? ends[lines - 2] : 0, ends[lines - 1]);
			lines--;
		}
	}
	return { limit: Math.max(1, lines), longLine: lines === 0 };
}

/** UTF-16 index where 1-based `line` of `text` starts (the last line's start when there are fewer). */
export function lineStartIndex(text: string, line: number): number {
	let index = 0;
	for (let k = 1; k < line; k++) {
		const newline = text.indexOf("\n", index);
		if (newline === -1) break;
		index = newline + 1;
	}
	return index;
}

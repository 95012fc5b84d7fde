/**
 * Model-facing wording of the projection: the omission marker between head and tail and the footer.
 * Each line here is one line of output (no "\n"), so the projection can count what it spends.
 */
import { formatCount, plural } from "../text/format.ts";

/** Marks where a short surface clipped a text: one character, 3 UTF-8 bytes. */
export const CLIP_MARK = "…";

/** A path quoted for a POSIX shell. */
export function shellQuote(path: string): string {
	return `'${path.replaceAll("'", `'\\''`)}'`;
}

/** The line between head and tail: how much was left out. */
export function omissionMarker(omittedLines: number, omittedBytes: number): string {
	return `[… ${plural(omittedLines, "line")} (${formatCount(omittedBytes)} bytes) omitted — see the footer …]`;
}

/** What the footer needs to say where the omitted part is and how to page it. */
export interface StoredFooterFacts {
	/** UTF-8 bytes of the full text. */
	totalBytes: number;
	/** Lines of the full text as Pi's read counts them. */
	totalLines: number;
	/** Absolute path of the artifact holding the full text. */
	path: string;
	/** First and last line (1-based) that are wholly or partly omitted. */
	firstOmittedLine: number;
	lastOmittedLine: number;
	/** The read call that shows the first omitted lines. */
	readOffset: number;
	readLimit: number;
	/** Set when the first omitted line is longer than one read returns: byte paging instead. */
	longLine?: {
		/** 1-based byte position in the artifact of the first omitted byte. */
		fromByte: number;
		/** Bytes per bash page (what one read returns at most). */
		pageBytes: number;
	};
}

/** Footer when the full text is stored: totals, the omitted line range and the exact read call. */
export function storedFooter(f: StoredFooterFacts): string {
	const range =
		f.firstOmittedLine === f.lastOmittedLine
			? `line ${formatCount(f.firstOmittedLine)}`
			: `lines ${formatCount(f.firstOmittedLine)}–${formatCount(f.lastOmittedLine)}`;
	const call = `read(path=${JSON.stringify(f.path)}, offset=${f.readOffset}, limit=${f.readLimit})`;
	let text = `[Full text: ${plural(f.totalBytes, "byte", "bytes")}, ${plural(f.totalLines, "line", "lines")}. Omitted: ${range} — read with ${call}`;
	// A path with control characters cannot be pasted into a one-line shell command: read only.
	if (f.longLine && !/[\u0000-\u001f\u007f]/.test(f.path)) {
		const next = f.longLine.fromByte + f.longLine.pageBytes;
		text +=
			`; line ${formatCount(f.readOffset)} is longer than read returns,` +
			` so page it with bash: tail -c +${f.longLine.fromByte} ${shellQuote(f.path)} | head -c ${f.longLine.pageBytes}` +
			` (next page: tail -c +${next})`;
	}
	return `${text}]`;
}

/** A store error on one line: control characters become spaces (the projection then bounds its length). */
export function oneLineReason(reason: string): string {
	return String(reason)
		.replace(/[\u0000-\u001f\u007f]+/g, " ")
		.replace(/ {2,}/g, " ")
		.trim();
}

/** Said when a store failed without a reason. */
export const UNKNOWN_REASON = "unknown error";

/** Footer when the full text could not be stored: say so plainly, never print a path. `reason` is one short line. */
export function notSavedFooter(totalBytes: number, totalLines: number, reason: string): string {
	return `[Full text: ${plural(totalBytes, "byte", "bytes")}, ${plural(totalLines, "line", "lines")}, NOT saved (${reason}) — only the head and tail above are available]`;
}

/** Reason used when the caller gave no artifact at all. */
export const NO_STORE_REASON = "no artifact store was given";

/** Default marker of a list that shows only some of its items: how many are not shown. */
export function listMore(omitted: number): string {
	return `… and ${formatCount(omitted)} more`;
}

/** Heading of the notable lines a shortened log shows first. */
export const NOTABLE_HEADING = "Notable lines (L<n> is line n of the full text: read it with offset=n):";

/**
 * The heading when the full text is not stored (no shorter than one line, no longer than the other): a line
 * number would name a line of a file nobody can open, so the lines come without one.
 */
export const NOTABLE_HEADING_UNSAVED = "Notable lines (the full text is not saved, so no line numbers):";

/** One notable line: its line number (none when the full text is not stored), its text, how many identical lines it stands for. */
export function notableItem(line: number | undefined, text: string, count: number): string {
	return `${line === undefined ? "" : `L${line}: `}${text}${count > 1 ? ` (×${formatCount(count)})` : ""}`;
}

/** Closes the notable lines when some are not listed. */
export function notableMore(omitted: number): string {
	return `… and ${plural(omitted, "more notable line", "more notable lines")} (search the full text for them)`;
}

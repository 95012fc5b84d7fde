import { SURFACES } from "../surfaces.ts";
import { clipLine } from "../text/utf8.ts";

/**
 * Model-facing wording of the projection: the omission marker between head and tail and the footer.
 * Each line here is one line of output (no "\n"), so the projection can count what it spends.
 */

/** Longest store failure reason quoted in a footer, in UTF-8 bytes, "…" included (the rest is cut). */
export const MAX_REASON_BYTES = SURFACES["projection.reason"].maxBytes;

/** 37212 → "37,212": separators without locale data, so output is the same on every machine. */
export function formatCount(n: number): string {
	const digits = String(n);
	if (digits.length <= 3 || !/^\d+$/.test(digits)) return digits;
	let out = digits.slice(0, digits.length % 3 || 3);
	for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
	return out;
}

function plural(n: number, one: string, many: string): string {
	return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A path quoted for a POSIX shell. */
export function shellQuote(path: string): string {
	return `'${path.replaceAll("'", `'\\''`)}'`;
}

/** The line between head and tail: how much was left out. */
export function omissionMarker(omittedLines: number, omittedBytes: number): string {
	return `[… ${plural(omittedLines, "line", "lines")} (${formatCount(omittedBytes)} bytes) omitted — see the footer …]`;
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

/** A store error reduced to one short line (no control characters). */
export function sanitizeReason(reason: string): string {
	const oneLine = reason
		.replace(/[\u0000-\u001f\u007f]+/g, " ")
		.replace(/ {2,}/g, " ")
		.trim();
	const cut = clipLine(oneLine, MAX_REASON_BYTES);
	return cut.length > 0 ? cut : "unknown error";
}

/** Footer when the full text could not be stored: say so plainly, never print a path. */
export function notSavedFooter(totalBytes: number, totalLines: number, reason: string): string {
	return `[Full text: ${plural(totalBytes, "byte", "bytes")}, ${plural(totalLines, "line", "lines")}, NOT saved (${sanitizeReason(reason)}) — only the head and tail above are available]`;
}

/** Reason used when the caller gave no artifact at all. */
export const NO_STORE_REASON = "no artifact store was given";

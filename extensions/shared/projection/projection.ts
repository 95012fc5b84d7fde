/**
 * The one primitive that shortens text: `project(text, surface, options)`, a bounded head + tail view of a
 * long text, with a footer that says where the exact full text is stored and which `read` call shows what
 * was left out. Every place in the package that shortens model-facing text calls it with a named surface
 * from the table in ../surfaces.ts (a drift test, test/unit/projection-drift.test.ts, keeps it so).
 *
 * Rules (pinned by test/unit/projection*.test.ts and test/integration/projection-read.test.ts):
 * - Text within both limits (UTF-8 bytes and lines as Pi's read counts them) comes back verbatim, as given.
 * - Otherwise the output is head + omission marker + tail + footer, and the WHOLE output fits both limits.
 *   Limits are first raised to the minimum window (MIN_WINDOW_BYTES / MIN_WINDOW_LINES; further if a very
 *   long artifact path would leave under MIN_BODY_BYTES for the body) — except on a short surface (one whose
 *   own limits are below that window, such as a one-line title), which is clipped instead: the longest
 *   prefix within both limits that leaves room for CLIP_MARK, then the mark.
 * - The body budget is split by headShare. Each cut goes to the nearest line boundary on the kept side when
 *   that keeps at least half of the side's byte budget; otherwise it falls at a character boundary (never
 *   inside a UTF-8 sequence or a surrogate pair), so a few long lines cannot empty the view.
 * - A cut inside a line makes that line "partly omitted": firstOmittedLine is the line holding the first
 *   omitted character, and the footer's read starts there. Reconstruction: the head up to its last "\n",
 *   then lines firstOmittedLine..lastOmittedLine joined by "\n", then the tail from its first "\n" (or, when
 *   the tail starts at a line start, "\n" + the whole tail) give back the stored text exactly.
 * - The footer's read limit counts the lines from firstOmittedLine that one read returns whole (Pi's caps:
 *   50 KiB, 2000 lines), at most up to the last omitted line. When that first line alone is longer than one
 *   read returns, the footer adds a bash command (tail -c | head -c) that pages its omitted bytes exactly.
 * - Lone surrogates: the text is measured as its UTF-8 encoding, in which a lone surrogate is U+FFFD
 *   (3 bytes). The artifact stores those bytes, its name is their SHA-256, and head and tail show U+FFFD
 *   too, so everything the model sees matches the file byte for byte.
 * - Linear time, and extra memory bounded by the output size: lines are counted with indexOf, byte sizes
 *   are measured on small windows, and the text is never split into an array.
 */
import { SURFACES, type SurfaceName } from "../surfaces.ts";
import { errorText } from "../text/format.ts";
import {
	advanceByBytes,
	countLines,
	countLinesUpTo,
	countNewlines,
	lineStats,
	toWellFormed,
	utf8ByteLength,
} from "../text/utf8.ts";
import { cutHead, cutTail, meterFor, READ_PAGE_MAX_BYTES, READ_PAGE_MAX_LINES, readPage } from "./cut.ts";
import {
	CLIP_MARK,
	NO_STORE_REASON,
	notSavedFooter,
	omissionMarker,
	oneLineReason,
	type StoredFooterFacts,
	storedFooter,
	UNKNOWN_REASON,
} from "./prompt.ts";

export { READ_PAGE_MAX_BYTES, READ_PAGE_MAX_LINES } from "./cut.ts";

/** Share of the body kept at the head when neither the call nor the surface says otherwise. */
export const DEFAULT_HEAD_SHARE = 0.75;
/** Smallest view that is still readable, in UTF-8 bytes; smaller maxBytes are raised to it. */
export const MIN_WINDOW_BYTES = 1024;
/** Smallest view in lines (marker + footer + 3 head + 3 tail); smaller maxLines are raised to it. */
export const MIN_WINDOW_LINES = 8;
/** Body bytes kept at least, even when a very long artifact path makes the footer large. */
export const MIN_BODY_BYTES = 256;
/** Bytes of the "\n" after the marker plus the ones after a partial head line and a partial tail line. */
const SEPARATOR_BYTES = 3;
/** Stand-in for an unlimited budget, so shares of it stay finite. */
const UNLIMITED = Number.MAX_SAFE_INTEGER;
/** UTF-8 bytes of CLIP_MARK. */
const CLIP_MARK_BYTES = 3;

/** The limits of a surface: a table entry (../surfaces.ts) or one resolved with the user's overrides. */
export interface SurfaceLimits {
	/** UTF-8 bytes of the WHOLE output (head + marker + tail + footer). */
	readonly maxBytes: number;
	/** Lines of the whole output. */
	readonly maxLines: number;
	/** Share of the body budget for the head, 0..1 (absent: DEFAULT_HEAD_SHARE unless the call gives one). */
	readonly headShare?: number;
	/** When set, a call that gives only maxBytes gets ceil(maxBytes / bytesPerLine) lines. */
	readonly bytesPerLine?: number;
	/** A clipped surface: cut to a prefix + mark (or + the caller's marker line), never raised to the window. */
	readonly clip?: boolean;
}

/** Where the full text was (or was not) stored. */
export type ArtifactRef = { ok: true; path: string; sha256: string } | { ok: false; error: string };

/** What a sink says after storing a text. */
export type SinkResult =
	| {
			ok: true;
			/** Absolute path of the stored copy (the footer names it). */
			path: string;
			/** SHA-256 hex of the stored bytes. */
			sha256: string;
	  }
	| {
			ok: false;
			/** One line: why nothing was stored (quoted in the "NOT saved" footer). */
			error: string;
	  };

/** Stores a full text synchronously (for hooks that must not await). The artifact store implements it. */
export interface ArtifactSink {
	/** Store `text` exactly (UTF-8); never throws for storage failures, reports them. */
	put(text: string): SinkResult;
}

/** Stores a full text asynchronously. With such a sink, `project` returns a promise. */
export interface AsyncArtifactSink {
	/** Store `text` exactly (UTF-8); reports failures instead of rejecting. */
	putAsync(text: string): Promise<SinkResult>;
}

/** The projected text is lines of a longer stored text: the footer speaks of that text and its line numbers. */
export interface StoredSource {
	/** The exact text the artifact holds. */
	text: string;
	/** 1-based line of `text` (as Pi's read counts) that the projected text's first line is. */
	firstLine: number;
}

/** What a caller needs beyond a plain view; every field is optional. */
export interface ProjectOptions {
	/** UTF-8 bytes for this call (a batch allocation, a water level, the room a header leaves), at most the surface's. */
	maxBytes?: number;
	/** Lines for this call, at most the surface's (default: from maxBytes by the surface's bytesPerLine, else the surface's). */
	maxLines?: number;
	/** Head share for this call, 0..1 (default: the surface's, else DEFAULT_HEAD_SHARE). */
	headShare?: number;
	/** Stores the full text when it does not fit (called only then). An async sink makes the call return a promise. */
	sink?: ArtifactSink | AsyncArtifactSink;
	/** The full text is already stored (or failed to be): the footer names it. Ignored when `sink` is given. */
	stored?: ArtifactRef;
	/** Why nothing is stored, for the "NOT saved" footer when neither sink nor stored is given. */
	notSavedReason?: string;
	/** The text is a window of a longer stored text (a file read that starts at line 4,001): footer in its numbers. */
	source?: StoredSource;
	/** Own omission marker wording (one line); default omissionMarker. */
	marker?: (omittedLines: number, omittedBytes: number) => string;
	/** False: no footer (the caller says elsewhere where the full text is). Default true. */
	footer?: boolean;
}

/** The one result type of the projection. */
export interface Projection {
	/** What the model sees. */
	text: string;
	/** False when the text came back verbatim (and no artifact was written). */
	truncated: boolean;
	/** True when a short surface clipped the text to a prefix + CLIP_MARK (no marker, no footer). */
	clipped: boolean;
	/** UTF-8 bytes of the full text (a lone surrogate counts 3, as stored). */
	totalBytes: number;
	/** Lines of the full text as Pi's read counts them: text.split("\n").length. */
	totalLines: number;
	/** UTF-8 bytes of the full text shown in neither head nor tail. */
	omittedBytes: number;
	/** Lines wholly or partly omitted (firstOmittedLine..last omitted line); 0 when verbatim. */
	omittedLines: number;
	/** 1-based line (as Pi's read counts) of the first omitted line; undefined if not truncated. */
	firstOmittedLine?: number;
	/** The read call's offset printed in the footer (undefined when nothing was stored). */
	readOffset?: number;
	/** The read call's limit printed in the footer: lines that one read returns whole. */
	readLimit?: number;
	/** The artifact when a store was asked (absent when verbatim or when nothing was stored). */
	artifact?: ArtifactRef;
	/** The head is text[0, headEnd) (UTF-16 index); text.length when verbatim. */
	headEnd: number;
	/** The tail is text[tailStart, text.length); text.length when verbatim. */
	tailStart: number;
	/** Head as shown (lone surrogates as U+FFFD); the whole text when verbatim. */
	head: string;
	/** Tail as shown; "" when verbatim or clipped. */
	tail: string;
	/** Omission marker line; "" when verbatim or clipped. */
	marker: string;
	/** Footer line; "" when verbatim, clipped, or asked for none. */
	footer: string;
	/** UTF-8 bytes the whole output was fitted to (raised for the minimum window and very long paths). */
	maxBytes: number;
	/** Lines the whole output was fitted to. */
	maxLines: number;
	/** Share of the body given to the head, as applied (0..1). */
	headShare: number;
	/** Body bytes the head cut worked to (0 when verbatim). */
	headBudgetBytes: number;
	/** Body lines the head cut worked to (0 when verbatim). */
	headBudgetLines: number;
	/** Body bytes the tail cut worked to (0 when verbatim). */
	tailBudgetBytes: number;
	/** Body lines the tail cut worked to (0 when verbatim). */
	tailBudgetLines: number;
}

/** Limits after sanitising and combining the surface with the call. */
interface Limits {
	maxBytes: number;
	maxLines: number;
	headShare: number;
	/** The surface is below the minimum window: clip instead of projecting. */
	short: boolean;
}

function count(value: unknown): number | undefined {
	if (typeof value !== "number" || Number.isNaN(value)) return undefined;
	return Math.max(0, Math.floor(Math.min(value, UNLIMITED)));
}

function isShare(value: unknown): value is number {
	return typeof value === "number" && Number.isFinite(value);
}

/** The surface's entry: a name from the table, or limits given as an object. */
function surfaceOf(surface: SurfaceName | SurfaceLimits): SurfaceLimits {
	if (typeof surface === "string") {
		const entry: SurfaceLimits | undefined = Object.hasOwn(SURFACES, surface) ? SURFACES[surface] : undefined;
		if (!entry) throw new TypeError(`project: unknown surface ${JSON.stringify(surface)}`);
		return entry;
	}
	if (!surface || typeof surface !== "object") throw new TypeError("project: a surface name or limits is required");
	return surface;
}

/** The limits one call works to: the call narrows the surface; NaN or missing → the minimum window. */
function limitsOf(entry: SurfaceLimits, options: ProjectOptions): Limits {
	// A clipped surface with no usable limit shows nothing; any other is raised to the minimum window.
	const short = entry.clip === true;
	const surfaceBytes = count(entry.maxBytes) ?? (short ? 0 : MIN_WINDOW_BYTES);
	const surfaceLines = count(entry.maxLines) ?? (short ? 1 : MIN_WINDOW_LINES);
	const callBytes = count(options.maxBytes);
	let callLines = count(options.maxLines);
	if (callLines === undefined && callBytes !== undefined && entry.bytesPerLine && entry.bytesPerLine > 0) {
		callLines = Math.ceil(callBytes / entry.bytesPerLine);
	}
	const share = isShare(options.headShare) ? options.headShare : entry.headShare;
	const headShare = isShare(share) ? Math.min(1, Math.max(0, share)) : DEFAULT_HEAD_SHARE;
	const maxBytes = Math.min(surfaceBytes, callBytes ?? surfaceBytes);
	const maxLines = Math.min(surfaceLines, callLines ?? surfaceLines);
	if (short) return { maxBytes, maxLines: Math.max(1, maxLines), headShare, short };
	return {
		maxBytes: Math.max(MIN_WINDOW_BYTES, maxBytes),
		maxLines: Math.max(MIN_WINDOW_LINES, maxLines),
		headShare,
		short,
	};
}

interface Totals {
	bytes: number;
	lines: number;
}

/** How the footer speaks: of the projected text itself, or of the longer stored text it is a window of. */
interface Frame {
	/** Totals of the stored text. */
	totals: Totals;
	/** Stored line = projected line + lineOffset. */
	lineOffset: number;
	/** Some line of the stored text may be longer than one read returns. */
	mayHaveLongLine: boolean;
	/** The stored text, when it is not the projected text. */
	source?: string;
}

/** Wording of marker and footer for one call. */
interface Wording {
	marker: (omittedLines: number, omittedBytes: number) => string;
	footer: boolean;
	/** Path of the stored full text, or undefined when it is not stored. */
	path?: string;
	/** Why it is not stored. */
	reason: string;
}

/** The largest marker and footer this text can get, so the body budget is known before cutting. */
function worstOverhead(w: Wording, projected: Totals, frame: Frame): Totals {
	const marker = w.marker(projected.lines, projected.bytes);
	const t = frame.totals;
	let footer = "";
	if (w.footer) {
		footer =
			w.path === undefined
				? notSavedFooter(t.bytes, t.lines, w.reason)
				: storedFooter({
						totalBytes: t.bytes,
						totalLines: t.lines,
						path: w.path,
						firstOmittedLine: 1,
						lastOmittedLine: t.lines,
						readOffset: t.lines,
						readLimit: Math.min(t.lines, READ_PAGE_MAX_LINES),
						longLine: frame.mayHaveLongLine ? { fromByte: t.bytes, pageBytes: READ_PAGE_MAX_BYTES } : undefined,
					});
	}
	return {
		bytes: utf8ByteLength(marker) + utf8ByteLength(footer),
		lines: countLines(marker) + (w.footer ? countLines(footer) : 0),
	};
}

/** UTF-16 index where 1-based `line` of `text` starts (the last line's start when there are fewer). */
function lineStartIndex(text: string, line: number): number {
	let index = 0;
	for (let k = 1; k < line; k++) {
		const newline = text.indexOf("\n", index);
		if (newline === -1) break;
		index = newline + 1;
	}
	return index;
}

/** Byte paging for the footer when the stored line `line` is longer than one read returns. */
function longLineOf(frame: Frame, line: number, headBytesUsed: number, pageLong: boolean) {
	if (frame.source === undefined) {
		return pageLong ? { fromByte: headBytesUsed + 1, pageBytes: READ_PAGE_MAX_BYTES } : undefined;
	}
	const full = frame.source;
	const start = lineStartIndex(full, line);
	const end = full.indexOf("\n", start);
	if (utf8ByteLength(full.slice(start, end === -1 ? full.length : end)) <= READ_PAGE_MAX_BYTES) return undefined;
	return { fromByte: utf8ByteLength(full.slice(0, start)) + 1, pageBytes: READ_PAGE_MAX_BYTES };
}

function cut(text: string, lim: Limits, totals: Totals, w: Wording, frame: Frame, artifact?: ArtifactRef): Projection {
	const n = text.length;
	const overhead = worstOverhead(w, totals, frame);
	const maxBytes = Math.max(lim.maxBytes, overhead.bytes + SEPARATOR_BYTES + MIN_BODY_BYTES);
	const maxLines = Math.max(lim.maxLines, overhead.lines + 2);
	const bodyBytes = maxBytes - overhead.bytes - SEPARATOR_BYTES;
	const bodyLines = maxLines - overhead.lines;
	const headBytes = Math.floor(bodyBytes * lim.headShare);
	const headLines = Math.floor(bodyLines * lim.headShare);
	const m = meterFor(text, totals.bytes);
	const headCut = cutHead(text, m, headBytes, headLines);
	const headEnd = headCut.end;
	const tailCut = cutTail(text, m, headEnd, bodyBytes - headBytes, bodyLines - headLines);
	const tailStart = tailCut.start;

	const headBytesUsed = headCut.bytes;
	const omittedBytes = totals.bytes - headBytesUsed - tailCut.bytes;
	const firstOmittedLine = 1 + countNewlines(text, 0, headEnd);
	const lastOmittedLine = totals.lines - countNewlines(text, tailStart - 1, n);
	const omittedLines = lastOmittedLine - firstOmittedLine + 1;
	const marker = w.marker(omittedLines, omittedBytes);

	let footer = "";
	let readOffset: number | undefined;
	let readLimit: number | undefined;
	if (w.path !== undefined) {
		const page = readPage(text, m, headCut.lineStart, Math.min(omittedLines, READ_PAGE_MAX_LINES));
		readOffset = firstOmittedLine + frame.lineOffset;
		readLimit = page.limit;
		if (w.footer) {
			const facts: StoredFooterFacts = {
				totalBytes: frame.totals.bytes,
				totalLines: frame.totals.lines,
				path: w.path,
				firstOmittedLine: readOffset,
				lastOmittedLine: lastOmittedLine + frame.lineOffset,
				readOffset,
				readLimit,
			};
			const longLine = longLineOf(frame, readOffset, headBytesUsed, page.longLine);
			if (longLine) facts.longLine = longLine;
			footer = storedFooter(facts);
		}
	} else if (w.footer) footer = notSavedFooter(frame.totals.bytes, frame.totals.lines, w.reason);

	const ascii = totals.bytes === n; // then there is no lone surrogate to replace
	const head = ascii ? text.slice(0, headEnd) : toWellFormed(text.slice(0, headEnd));
	const tail = ascii ? text.slice(tailStart) : toWellFormed(text.slice(tailStart));
	let out = head;
	if (head.length > 0 && !head.endsWith("\n")) out += "\n";
	out += `${marker}\n${tail}`;
	if (w.footer) {
		if (tail.length > 0 && !tail.endsWith("\n")) out += "\n";
		out += footer;
	} else if (out.endsWith("\n")) out = out.slice(0, -1); // nothing follows the tail: no empty last line
	return {
		text: out,
		truncated: true,
		clipped: false,
		totalBytes: frame.totals.bytes,
		totalLines: frame.totals.lines,
		omittedBytes,
		omittedLines,
		firstOmittedLine,
		readOffset,
		readLimit,
		artifact,
		headEnd,
		tailStart,
		head,
		tail,
		marker,
		footer,
		maxBytes,
		maxLines,
		headShare: lim.headShare,
		headBudgetBytes: headBytes,
		headBudgetLines: headLines,
		tailBudgetBytes: bodyBytes - headBytes,
		tailBudgetLines: bodyLines - headLines,
	};
}

/** Line facts of a text, gathered in one indexOf pass and shared by the fit check and the cut. */
interface LineFacts {
	/** Lines as Pi's read counts them. */
	lines: number;
	/** Longest line in UTF-16 units. */
	longestLineUnits: number;
}

function lineFacts(text: string): LineFacts {
	if (typeof text !== "string") throw new TypeError(`project: text must be a string, got ${typeof text}`);
	const stats = lineStats(text);
	return { lines: stats.newlines + 1, longestLineUnits: stats.longestLineUnits };
}

/** A UTF-16 unit is at most 3 UTF-8 bytes, so shorter lines surely fit one read. */
function mayBeLong(longestLineUnits: number): boolean {
	return longestLineUnits * 3 > READ_PAGE_MAX_BYTES;
}

function verbatim(text: string, lim: Limits, totals: Totals): Projection {
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
	};
}

/** End of the longest prefix of `text` within `maxBytes` and `maxLines` whole lines (a cut line stays partial). */
function prefixEnd(text: string, maxBytes: number, maxLines: number): number {
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

/**
 * A clipped surface: the longest prefix within both limits that leaves room for CLIP_MARK, then the mark (a
 * budget under 3 bytes gets the prefix alone); with the caller's `marker`, the prefix keeps whole lines and
 * the marker takes its own last line ("… and 5 more"). The prefix never ends inside a surrogate pair; it is
 * shown as the text has it (a clipped surface quotes names, reasons and lists, which no artifact matches).
 */
function clip(text: string, lim: Limits, totals: Totals, marker?: ProjectOptions["marker"]): Projection {
	let end: number;
	let budgetBytes: number;
	let budgetLines: number;
	if (marker) {
		const worst = utf8ByteLength(marker(totals.lines, totals.bytes)) + 1;
		budgetBytes = Math.max(0, lim.maxBytes - worst);
		budgetLines = lim.maxLines - 1;
		end = prefixEnd(text, budgetBytes, budgetLines);
	} else {
		budgetBytes = lim.maxBytes >= CLIP_MARK_BYTES ? lim.maxBytes - CLIP_MARK_BYTES : lim.maxBytes;
		budgetLines = lim.maxLines;
		end = prefixEnd(text, budgetBytes, budgetLines);
	}
	const kept = text.slice(0, end);
	const keptLines = end === 0 ? 0 : countNewlines(kept) + 1;
	const partial = end < text.length && text.charCodeAt(end) !== 10;
	const omittedLines = totals.lines - keptLines + (partial && keptLines > 0 ? 1 : 0);
	const omittedBytes = totals.bytes - utf8ByteLength(kept);
	let out: string;
	let shownMarker = "";
	if (marker) {
		shownMarker = marker(omittedLines, omittedBytes);
		out = kept.length > 0 ? `${kept}\n${shownMarker}` : shownMarker;
	} else out = lim.maxBytes >= CLIP_MARK_BYTES ? `${kept}${CLIP_MARK}` : kept;
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

/** A text measured for projecting: its verbatim projection when it fits, else what the cut needs. */
interface Prepared {
	/** The answer when no store is needed (it fits, or the surface clips). */
	done?: Projection;
	lim: Limits;
	facts: LineFacts;
	/** UTF-8 bytes when the text was short enough to measure cheaply. */
	small?: number;
}

/** One line pass decides the fit; a long text is not measured here (a sink's write can report its size). */
function prepare(text: string, lim: Limits, marker?: ProjectOptions["marker"]): Prepared {
	const facts = lineFacts(text);
	const small = text.length <= lim.maxBytes ? utf8ByteLength(text) : undefined; // longer never fits
	if (small !== undefined && small <= lim.maxBytes && facts.lines <= lim.maxLines) {
		return { done: verbatim(text, lim, { bytes: small, lines: facts.lines }), lim, facts };
	}
	if (lim.short) {
		const totals = { bytes: small ?? utf8ByteLength(text), lines: facts.lines };
		return { done: clip(text, lim, totals, marker), lim, facts };
	}
	return { lim, facts, small };
}

function toRef(result: SinkResult): ArtifactRef {
	return result.ok ? { ok: true, path: result.path, sha256: result.sha256 } : { ok: false, error: result.error };
}

function wordingOf(options: ProjectOptions, artifact: ArtifactRef | undefined): Wording {
	return {
		marker: options.marker ?? omissionMarker,
		footer: options.footer !== false,
		path: artifact?.ok ? artifact.path : undefined,
		reason: sanitizeReason(
			artifact === undefined ? (options.notSavedReason ?? NO_STORE_REASON) : artifact.ok ? "" : artifact.error,
		),
	};
}

/** Longest store failure reason quoted in a footer, in UTF-8 bytes, "…" included (the rest is cut). */
export const MAX_REASON_BYTES = SURFACES["projection.reason"].maxBytes;

/** A store error reduced to one short line (no control characters), bounded by its surface. */
export function sanitizeReason(reason: string): string {
	const cut = project(oneLineReason(reason), "projection.reason").text;
	return cut.length > 0 ? cut : UNKNOWN_REASON;
}

function frameOf(options: ProjectOptions, projectedTotals: Totals, facts: LineFacts): Frame {
	const source = options.source;
	if (!source || typeof source.text !== "string") {
		return { totals: projectedTotals, lineOffset: 0, mayHaveLongLine: mayBeLong(facts.longestLineUnits) };
	}
	const stats = lineStats(source.text);
	const firstLine = Math.max(1, Math.floor(Number(source.firstLine) || 1));
	return {
		totals: { bytes: utf8ByteLength(source.text), lines: stats.newlines + 1 },
		lineOffset: firstLine - 1,
		mayHaveLongLine: mayBeLong(stats.longestLineUnits),
		source: source.text,
	};
}

/** The cut once the artifact is known. The text is measured here: no sink's own count is trusted with the limits. */
function finish(text: string, p: Prepared, options: ProjectOptions, artifact: ArtifactRef | undefined): Projection {
	const totals = { bytes: p.small ?? utf8ByteLength(text), lines: p.facts.lines };
	return cut(text, p.lim, totals, wordingOf(options, artifact), frameOf(options, totals, p.facts), artifact);
}

function isAsync(sink: ArtifactSink | AsyncArtifactSink | undefined): sink is AsyncArtifactSink {
	return typeof (sink as AsyncArtifactSink | undefined)?.putAsync === "function";
}

/**
 * The one entry point: `text` verbatim when it fits the surface (and the call's narrower limits), else head +
 * marker + tail + footer within them. The full text goes to `options.sink` only when it does not fit; a sink
 * failure never throws: the footer then says plainly the full text was NOT saved, and why.
 */
export function project(
	text: string,
	surface: SurfaceName | SurfaceLimits,
	options: ProjectOptions & { sink: AsyncArtifactSink },
): Promise<Projection>;
export function project(text: string, surface: SurfaceName | SurfaceLimits, options?: ProjectOptions): Projection;
export function project(
	text: string,
	surface: SurfaceName | SurfaceLimits,
	options: ProjectOptions = {},
): Projection | Promise<Projection> {
	const p = prepare(text, limitsOf(surfaceOf(surface), options), options.marker);
	const sink = options.sink;
	if (isAsync(sink)) {
		if (p.done) return Promise.resolve(p.done);
		return sink.putAsync(text).then(
			(stored) => finish(text, p, options, toRef(stored)),
			(error: unknown) => finish(text, p, options, { ok: false, error: errorText(error) }),
		);
	}
	if (p.done) return p.done;
	if (sink) {
		let stored: SinkResult;
		try {
			stored = sink.put(text);
		} catch (error) {
			stored = { ok: false, error: errorText(error) };
		}
		return finish(text, p, options, toRef(stored));
	}
	return finish(text, p, options, options.stored);
}

/** True when `text` fits the surface (and the call's limits) verbatim. Cheap: exits early on a long text. */
export function fitsSurface(text: string, surface: SurfaceName | SurfaceLimits, options: ProjectOptions = {}): boolean {
	const lim = limitsOf(surfaceOf(surface), options);
	if (text.length > lim.maxBytes) return false; // every UTF-16 unit is at least one UTF-8 byte
	if (countLinesUpTo(text, lim.maxLines) > lim.maxLines) return false;
	return text.length * 3 <= lim.maxBytes || utf8ByteLength(text) <= lim.maxBytes;
}

/**
 * The one primitive that shortens text: a bounded head + tail view of a long text, with a footer that says
 * where the exact full text is stored and which `read` call shows what was left out.
 *
 * Rules (pinned by test/unit/projection*.test.ts and test/integration/projection-read.test.ts):
 * - Text within both limits (UTF-8 bytes and lines as Pi's read counts them) comes back verbatim, as given.
 * - Otherwise the output is head + omission marker + tail + footer, and the WHOLE output fits both limits.
 *   Limits are first raised to the minimum window (MIN_WINDOW_BYTES / MIN_WINDOW_LINES; further if a very
 *   long artifact path would leave under MIN_BODY_BYTES for the body).
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
import type { ArtifactKind, ArtifactStore, PutFailure, PutResult } from "./artifact-store.ts";
import { NO_STORE_REASON, notSavedFooter, omissionMarker, type StoredFooterFacts, storedFooter } from "./prompt.ts";
import {
	advanceByBytes,
	afterNthNewlineFromEnd,
	countLinesUpTo,
	countNewlines,
	lineStats,
	rangeByteLength,
	retreatByBytes,
	toWellFormed,
	utf8ByteLength,
} from "./utf8.ts";

export const DEFAULT_HEAD_SHARE = 0.75;
/** Smallest view that is still readable, in UTF-8 bytes; smaller maxBytes are raised to it. */
export const MIN_WINDOW_BYTES = 1024;
/** Smallest view in lines (marker + footer + 3 head + 3 tail); smaller maxLines are raised to it. */
export const MIN_WINDOW_LINES = 8;
/** Body bytes kept at least, even when a very long artifact path makes the footer large. */
export const MIN_BODY_BYTES = 256;
/** What one call of Pi's read returns at most (its DEFAULT_MAX_BYTES, 50 KiB); a drift test pins it. */
export const READ_PAGE_MAX_BYTES = 50 * 1024;
/** Lines one call of Pi's read returns at most (its DEFAULT_MAX_LINES); a drift test pins it. */
export const READ_PAGE_MAX_LINES = 2000;
/** Bytes of the "\n" after the marker plus the ones after a partial head line and a partial tail line. */
const SEPARATOR_BYTES = 3;
/** Stand-in for an unlimited budget, so shares of it stay finite. */
const UNLIMITED = Number.MAX_SAFE_INTEGER;
const NEWLINE_CODE = 10;

export interface ProjectionLimits {
	/** UTF-8 bytes of the WHOLE projection (head + marker + tail + footer). */
	maxBytes: number;
	/** Lines of the whole projection. */
	maxLines: number;
	/** Share of the body budget for the head, 0..1 (default 0.75; command logs 0.4). */
	headShare?: number;
}

/** Where the full text was (or was not) stored. */
export type ArtifactRef = { ok: true; path: string; sha256: string } | { ok: false; error: string };

export interface Projection {
	/** What the model sees. */
	text: string;
	/** False when the text came back verbatim (and no artifact was written). */
	truncated: boolean;
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
	/** The artifact when stored (absent when verbatim). */
	artifact?: ArtifactRef;
}

/** Limits after sanitising and raising to the minimum window. */
export interface EffectiveLimits {
	/** UTF-8 bytes the whole output may use. */
	maxBytes: number;
	/** Lines the whole output may use. */
	maxLines: number;
	/** Share of the body for the head, clamped to 0..1. */
	headShare: number;
}

/** A projection with the pieces it was built from (for tests and callers that lay out text themselves). */
export interface ProjectionParts {
	/** The result itself. */
	projection: Projection;
	/** The head is text[0, headEnd) (UTF-16 index). */
	headEnd: number;
	/** The tail is text[tailStart, text.length). */
	tailStart: number;
	/** Head as shown (lone surrogates as U+FFFD); the whole text when verbatim. */
	head: string;
	/** Tail as shown; "" when verbatim. */
	tail: string;
	/** Omission marker line; "" when verbatim. */
	marker: string;
	/** Footer line; "" when verbatim. */
	footer: string;
	/** The limits the output actually fits (raised for the minimum window and very long paths). */
	limits: EffectiveLimits;
	/** Body budgets the cuts worked to (all 0 when verbatim). */
	budget: { headBytes: number; headLines: number; tailBytes: number; tailLines: number };
}

function sanitizeCount(value: unknown, minimum: number): number {
	if (typeof value !== "number" || Number.isNaN(value)) return minimum;
	return Math.max(minimum, Math.floor(Math.min(value, UNLIMITED)));
}

/** Limits as applied: NaN or missing → the minimum window, below the minimum → raised, share clamped. */
export function effectiveLimits(limits: ProjectionLimits): EffectiveLimits {
	const share = limits?.headShare;
	return {
		maxBytes: sanitizeCount(limits?.maxBytes, MIN_WINDOW_BYTES),
		maxLines: sanitizeCount(limits?.maxLines, MIN_WINDOW_LINES),
		headShare:
			typeof share === "number" && Number.isFinite(share) ? Math.min(1, Math.max(0, share)) : DEFAULT_HEAD_SHARE,
	};
}

/** True when `text` fits both (effective) limits verbatim. Cheap: exits early on a long text. */
export function fitsVerbatim(text: string, limits: ProjectionLimits): boolean {
	const lim = effectiveLimits(limits);
	if (text.length > lim.maxBytes) return false; // every UTF-16 unit is at least one UTF-8 byte
	if (countLinesUpTo(text, lim.maxLines) > lim.maxLines) return false;
	return text.length * 3 <= lim.maxBytes || utf8ByteLength(text) <= lim.maxBytes;
}

function lineCount(s: string): number {
	return countNewlines(s) + 1;
}

/** Head end: the byte- and line-limited prefix, moved back to a line boundary when that keeps half. */
function cutHead(text: string, budgetBytes: number, budgetLines: number): number {
	if (budgetBytes <= 0 || budgetLines <= 0) return 0;
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
	let cut = advanceByBytes(text, 0, budgetBytes, byLines === -1 ? text.length : byLines).end;
	if (cut > 0 && text.charCodeAt(cut - 1) !== NEWLINE_CODE) {
		// The forward scan saw every newline before the cut unless it went past it (wide characters).
		const newline = lastNewline < cut ? lastNewline : text.lastIndexOf("\n", cut - 1);
		if (newline !== -1 && rangeByteLength(text, 0, newline + 1) * 2 >= budgetBytes) cut = newline + 1;
	}
	return cut;
}

/** Tail start (>= floor): the byte- and line-limited suffix, moved on to a line start when that keeps half. */
function cutTail(text: string, floor: number, budgetBytes: number, budgetLines: number): number {
	const n = text.length;
	if (budgetBytes <= 0 || budgetLines <= 0) return n;
	// A tail ending without "\n" shows one line more than it has newlines.
	const newlinesAllowed = budgetLines - (text.charCodeAt(n - 1) === NEWLINE_CODE ? 0 : 1);
	const byLines = afterNthNewlineFromEnd(text, newlinesAllowed + 1, Math.max(floor, n - budgetBytes), n);
	let cut = retreatByBytes(text, n, budgetBytes, byLines === -1 ? floor : Math.max(floor, byLines)).start;
	if (cut > 0 && cut < n && text.charCodeAt(cut - 1) !== NEWLINE_CODE) {
		const newline = text.indexOf("\n", cut);
		if (newline !== -1 && rangeByteLength(text, newline + 1, n) * 2 >= budgetBytes) cut = newline + 1;
	}
	return cut;
}

/** Lines from `lineStart` that one read returns whole (>= 1), and whether the first line is too long for it. */
function readPage(text: string, lineStart: number, maxLines: number): { limit: number; longLine: boolean } {
	const n = text.length;
	const windowEnd = Math.min(n, lineStart + READ_PAGE_MAX_BYTES + 1); // a longer range is surely too big
	const window = text.slice(lineStart, windowEnd);
	let lines = 0;
	let bytes = 0;
	let pos = 0;
	while (lines < maxLines) {
		const newline = window.indexOf("\n", pos);
		const end = newline !== -1 ? newline : windowEnd === n ? window.length : -1;
		const add = end === -1 ? Number.POSITIVE_INFINITY : rangeByteLength(window, pos, end) + (lines > 0 ? 1 : 0);
		if (bytes + add > READ_PAGE_MAX_BYTES) break;
		bytes += add;
		lines++;
		if (newline === -1) break;
		pos = newline + 1;
	}
	return { limit: Math.max(1, lines), longLine: lines === 0 };
}

interface Totals {
	bytes: number;
	lines: number;
}

/** The largest marker and footer this text can get, so the body budget is known before cutting. */
function worstOverhead(path: string | undefined, reason: string, totals: Totals, longLine: boolean): Totals {
	const marker = omissionMarker(totals.lines, totals.bytes);
	const footer =
		path === undefined
			? notSavedFooter(totals.bytes, totals.lines, reason)
			: storedFooter({
					totalBytes: totals.bytes,
					totalLines: totals.lines,
					path,
					firstOmittedLine: 1,
					lastOmittedLine: totals.lines,
					readOffset: totals.lines,
					readLimit: Math.min(totals.lines, READ_PAGE_MAX_LINES),
					longLine: longLine ? { fromByte: totals.bytes, pageBytes: READ_PAGE_MAX_BYTES } : undefined,
				});
	return { bytes: utf8ByteLength(marker) + utf8ByteLength(footer), lines: lineCount(marker) + lineCount(footer) };
}

function cut(
	text: string,
	lim: EffectiveLimits,
	totals: Totals,
	artifact: ArtifactRef | undefined,
	mayHaveLongLine: boolean,
): ProjectionParts {
	const n = text.length;
	const path = artifact?.ok ? artifact.path : undefined;
	const reason = artifact === undefined ? NO_STORE_REASON : artifact.ok ? "" : artifact.error;
	const overhead = worstOverhead(path, reason, totals, mayHaveLongLine);
	const maxBytes = Math.max(lim.maxBytes, overhead.bytes + SEPARATOR_BYTES + MIN_BODY_BYTES);
	const maxLines = Math.max(lim.maxLines, overhead.lines + 2);
	const bodyBytes = maxBytes - overhead.bytes - SEPARATOR_BYTES;
	const bodyLines = maxLines - overhead.lines;
	const headBytes = Math.floor(bodyBytes * lim.headShare);
	const headLines = Math.floor(bodyLines * lim.headShare);
	const headEnd = cutHead(text, headBytes, headLines);
	const tailStart = cutTail(text, headEnd, bodyBytes - headBytes, bodyLines - headLines);

	const headBytesUsed = rangeByteLength(text, 0, headEnd);
	const omittedBytes = totals.bytes - headBytesUsed - rangeByteLength(text, tailStart, n);
	const firstOmittedLine = 1 + countNewlines(text, 0, headEnd);
	const lastOmittedLine = totals.lines - countNewlines(text, tailStart - 1, n);
	const omittedLines = lastOmittedLine - firstOmittedLine + 1;
	const marker = omissionMarker(omittedLines, omittedBytes);

	let footer: string;
	let readOffset: number | undefined;
	let readLimit: number | undefined;
	if (path !== undefined) {
		const lineStart = headEnd === 0 ? 0 : text.lastIndexOf("\n", headEnd - 1) + 1;
		const page = readPage(text, lineStart, Math.min(omittedLines, READ_PAGE_MAX_LINES));
		readOffset = firstOmittedLine;
		readLimit = page.limit;
		const facts: StoredFooterFacts = {
			totalBytes: totals.bytes,
			totalLines: totals.lines,
			path,
			firstOmittedLine,
			lastOmittedLine,
			readOffset,
			readLimit,
		};
		if (page.longLine) facts.longLine = { fromByte: headBytesUsed + 1, pageBytes: READ_PAGE_MAX_BYTES };
		footer = storedFooter(facts);
	} else footer = notSavedFooter(totals.bytes, totals.lines, reason);

	const head = toWellFormed(text.slice(0, headEnd));
	const tail = toWellFormed(text.slice(tailStart));
	let out = head;
	if (head.length > 0 && !head.endsWith("\n")) out += "\n";
	out += `${marker}\n${tail}`;
	if (tail.length > 0 && !tail.endsWith("\n")) out += "\n";
	out += footer;
	return {
		projection: {
			text: out,
			truncated: true,
			totalBytes: totals.bytes,
			totalLines: totals.lines,
			omittedBytes,
			omittedLines,
			firstOmittedLine,
			readOffset,
			readLimit,
			artifact,
		},
		headEnd,
		tailStart,
		head,
		tail,
		marker,
		footer,
		limits: { maxBytes, maxLines, headShare: lim.headShare },
		budget: { headBytes, headLines, tailBytes: bodyBytes - headBytes, tailLines: bodyLines - headLines },
	};
}

/** projectText with the pieces it was built from. Pure. */
export function projectParts(
	text: string,
	limits: ProjectionLimits,
	artifact: ArtifactRef | undefined,
): ProjectionParts {
	if (typeof text !== "string") throw new TypeError(`projectText: text must be a string, got ${typeof text}`);
	const lim = effectiveLimits(limits);
	const stats = lineStats(text);
	const totals = { bytes: utf8ByteLength(text), lines: stats.newlines + 1 };
	if (totals.bytes <= lim.maxBytes && totals.lines <= lim.maxLines) {
		return {
			projection: {
				text,
				truncated: false,
				totalBytes: totals.bytes,
				totalLines: totals.lines,
				omittedBytes: 0,
				omittedLines: 0,
			},
			headEnd: text.length,
			tailStart: text.length,
			head: text,
			tail: "",
			marker: "",
			footer: "",
			limits: lim,
			budget: { headBytes: 0, headLines: 0, tailBytes: 0, tailLines: 0 },
		};
	}
	// Footer space for the bash paging hint is reserved only when some line may be too long for one read
	// (a UTF-16 unit is at most 3 UTF-8 bytes, so shorter lines surely fit).
	return cut(text, lim, totals, artifact, stats.longestLineUnits * 3 > READ_PAGE_MAX_BYTES);
}

/** Pure: cut `text` to fit `limits` given where its full text lives. No I/O. */
export function projectText(text: string, limits: ProjectionLimits, artifact: ArtifactRef | undefined): Projection {
	return projectParts(text, limits, artifact).projection;
}

function toRef(result: PutResult | PutFailure): ArtifactRef {
	return result.ok ? { ok: true, path: result.path, sha256: result.sha256 } : { ok: false, error: result.error };
}

function errorText(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/**
 * The one entry point callers use: verbatim if it fits; otherwise store the full text
 * (store.put) and project with the artifact's path in the footer. Never throws for
 * store failures: the footer then says plainly the full text was NOT saved.
 */
export async function projectResult(
	text: string,
	limits: ProjectionLimits,
	sink: { store: ArtifactStore; kind: ArtifactKind },
): Promise<Projection> {
	if (fitsVerbatim(text, limits)) return projectText(text, limits, undefined);
	let ref: ArtifactRef;
	try {
		ref = toRef(await sink.store.put(sink.kind, text));
	} catch (error) {
		ref = { ok: false, error: errorText(error) };
	}
	return projectText(text, limits, ref);
}

/** projectResult for hooks that must stay synchronous. */
export function projectResultSync(
	text: string,
	limits: ProjectionLimits,
	sink: { store: ArtifactStore; kind: ArtifactKind },
): Projection {
	if (fitsVerbatim(text, limits)) return projectText(text, limits, undefined);
	let ref: ArtifactRef;
	try {
		ref = toRef(sink.store.putSync(sink.kind, text));
	} catch (error) {
		ref = { ok: false, error: errorText(error) };
	}
	return projectText(text, limits, ref);
}

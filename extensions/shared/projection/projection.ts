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
import { type ArtifactKind, ArtifactStore, type PutFailure, type PutResult } from "../store/artifact-store.ts";
import { countLinesUpTo, countNewlines, lineStats, toWellFormed, utf8ByteLength } from "../text/utf8.ts";
import { cutHead, cutTail, meterFor, READ_PAGE_MAX_BYTES, READ_PAGE_MAX_LINES, readPage } from "./cut.ts";
import { NO_STORE_REASON, notSavedFooter, omissionMarker, type StoredFooterFacts, storedFooter } from "./prompt.ts";

export { READ_PAGE_MAX_BYTES, READ_PAGE_MAX_LINES } from "./cut.ts";

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
	const marker = omissionMarker(omittedLines, omittedBytes);

	let footer: string;
	let readOffset: number | undefined;
	let readLimit: number | undefined;
	if (path !== undefined) {
		const page = readPage(text, m, headCut.lineStart, Math.min(omittedLines, READ_PAGE_MAX_LINES));
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

	const ascii = totals.bytes === n; // then there is no lone surrogate to replace
	const head = ascii ? text.slice(0, headEnd) : toWellFormed(text.slice(0, headEnd));
	const tail = ascii ? text.slice(tailStart) : toWellFormed(text.slice(tailStart));
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

/** Line facts of a text, gathered in one indexOf pass and shared by the fit check and the cut. */
interface LineFacts {
	/** Lines as Pi's read counts them. */
	lines: number;
	/** Longest line in UTF-16 units. */
	longestLineUnits: number;
}

function lineFacts(text: string): LineFacts {
	if (typeof text !== "string") throw new TypeError(`projectText: text must be a string, got ${typeof text}`);
	const stats = lineStats(text);
	return { lines: stats.newlines + 1, longestLineUnits: stats.longestLineUnits };
}

function verbatim(text: string, lim: EffectiveLimits, totals: Totals): ProjectionParts {
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

/** The cut once the totals are known. */
function cutMeasured(text: string, lim: EffectiveLimits, facts: LineFacts, bytes: number, artifact?: ArtifactRef) {
	// Footer space for the bash paging hint is reserved only when some line may be too long for one read
	// (a UTF-16 unit is at most 3 UTF-8 bytes, so shorter lines surely fit).
	return cut(text, lim, { bytes, lines: facts.lines }, artifact, facts.longestLineUnits * 3 > READ_PAGE_MAX_BYTES);
}

/** projectText with the pieces it was built from. Pure. One line pass and one UTF-8 length pass. */
export function projectParts(
	text: string,
	limits: ProjectionLimits,
	artifact: ArtifactRef | undefined,
): ProjectionParts {
	const facts = lineFacts(text);
	const lim = effectiveLimits(limits);
	const bytes = utf8ByteLength(text);
	if (bytes <= lim.maxBytes && facts.lines <= lim.maxLines) return verbatim(text, lim, { bytes, lines: facts.lines });
	return cutMeasured(text, lim, facts, bytes, artifact);
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

/** A text measured for storing: its verbatim projection when it fits, else what the cut needs. */
interface Prepared {
	/** The verbatim projection when the text fits (then nothing is stored). */
	fits?: Projection;
	lim: EffectiveLimits;
	facts: LineFacts;
	/** UTF-8 bytes when the text was short enough to measure cheaply. */
	small?: number;
}

/** One line pass decides the fit; a long text is not measured here (the store's write reports its size). */
function prepare(text: string, limits: ProjectionLimits): Prepared {
	const facts = lineFacts(text);
	const lim = effectiveLimits(limits);
	const small = text.length <= lim.maxBytes ? utf8ByteLength(text) : undefined; // longer never fits
	if (small !== undefined && small <= lim.maxBytes && facts.lines <= lim.maxLines) {
		return { fits: verbatim(text, lim, { bytes: small, lines: facts.lines }).projection, lim, facts };
	}
	return { lim, facts, small };
}

function finish(text: string, p: Prepared, store: ArtifactStore, stored: PutResult | PutFailure): Projection {
	// Our store's count of the bytes it wrote is the text's UTF-8 size (it encodes the text to hash and write
	// it), which saves a pass over a long text; any other store's count is not trusted: the count also
	// decides whether the text is all ASCII, and a wrong one could overflow the limits.
	const trusted = stored.ok && store instanceof ArtifactStore && stored.bytes >= text.length;
	const bytes = trusted ? stored.bytes : (p.small ?? utf8ByteLength(text));
	return cutMeasured(text, p.lim, p.facts, bytes, toRef(stored)).projection;
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
	const p = prepare(text, limits);
	if (p.fits) return p.fits;
	let stored: PutResult | PutFailure;
	try {
		stored = await sink.store.put(sink.kind, text);
	} catch (error) {
		stored = { ok: false, error: errorText(error) };
	}
	return finish(text, p, sink.store, stored);
}

/** projectResult for hooks that must stay synchronous. */
export function projectResultSync(
	text: string,
	limits: ProjectionLimits,
	sink: { store: ArtifactStore; kind: ArtifactKind },
): Projection {
	const p = prepare(text, limits);
	if (p.fits) return p.fits;
	let stored: PutResult | PutFailure;
	try {
		stored = sink.store.putSync(sink.kind, text);
	} catch (error) {
		stored = { ok: false, error: errorText(error) };
	}
	return finish(text, p, sink.store, stored);
}

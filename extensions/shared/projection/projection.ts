/**
 * The one primitive that shortens text: `project(text, surface, options)`, a bounded head + tail view of a
 * long text, with a footer that says where the exact full text is stored and which `read` call shows what
 * was left out. Every place in the package that shortens model-facing text calls it with a named surface
 * from the table in ../surfaces.ts (a drift test, test/unit/projection-drift.test.ts, keeps it so).
 *
 * Given a list instead of a text, `project(items, surface, options)` caps the list: whole items as many as fit,
 * then "… and N more" with the exact count (list.ts has its one rule). Types are in types.ts, the limits in
 * limits.ts, the verbatim and clipped answers in clip.ts, the cuts in cut.ts, all wording in prompt.ts.
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
 * - A projection never keeps the text it was cut from alive: what it cuts out of it (head, tail, a clipped
 *   prefix, a clipped list item) is a copy, not a slice (which would hold the whole text). A text or list item
 *   shown whole is returned as the caller gave it.
 */
import type { SurfaceName } from "../surfaces.ts";
import { errorText } from "../text/format.ts";
import { countLines, countNewlines, detached, lineStats, toWellFormed, utf8ByteLength } from "../text/utf8.ts";
import { clip, type Totals, verbatim } from "./clip.ts";
import {
	cutHead,
	cutTail,
	lineStartIndex,
	meterFor,
	READ_PAGE_MAX_BYTES,
	READ_PAGE_MAX_LINES,
	readPage,
} from "./cut.ts";
import { type Limits, limitsOf, MIN_BODY_BYTES, surfaceOf } from "./limits.ts";
import { projectList } from "./list.ts";
import {
	NO_STORE_REASON,
	notSavedFooter,
	omissionMarker,
	oneLineReason,
	type StoredFooterFacts,
	storedFooter,
	UNKNOWN_REASON,
} from "./prompt.ts";
import type {
	ArtifactRef,
	ArtifactSink,
	AsyncArtifactSink,
	ListOptions,
	MeasuredText,
	Projection,
	ProjectOptions,
	SinkResult,
	SurfaceLimits,
} from "./types.ts";
import { layoutWindow, type WindowOption } from "./window.ts";

export { READ_PAGE_MAX_BYTES, READ_PAGE_MAX_LINES } from "./cut.ts";
export { DEFAULT_HEAD_SHARE, fitsSurface, MIN_BODY_BYTES, MIN_WINDOW_BYTES, MIN_WINDOW_LINES } from "./limits.ts";
// Every type of the contract, so callers import the projection from this one module.
export type * from "./types.ts";
export type { WindowOption, WindowPlace } from "./window.ts";

/** Bytes of the "\n" after the marker plus the ones after a partial head line and a partial tail line. */
const SEPARATOR_BYTES = 3;

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

/** Most times a cut is made again in a smaller body when its footer took more than its worst case (see cut). */
const MAX_RECUTS = 4;

/**
 * Head + marker + tail + footer within the limits. The marker's and the footer's room is reserved from their
 * longest wording for this text (worstOverhead), but a footer's numbers can take a byte or two more than that:
 * the worst case names lines "1–<last>", and a first omitted line with as many digits as the last one does not
 * shrink the read call's offset and limit enough to make up for it ("lines 10–31 … offset=10, limit=22" is one
 * byte longer than "lines 1–32 … offset=32, limit=32"). Then the body is cut again, smaller by what the view
 * went over; a view within its limits is never cut again.
 */
function cut(text: string, lim: Limits, totals: Totals, w: Wording, frame: Frame, artifact?: ArtifactRef): Projection {
	let spare = 0;
	let p = cutBody(text, lim, totals, w, frame, artifact, spare);
	for (let k = 0; k < MAX_RECUTS; k++) {
		const over = utf8ByteLength(p.text) - p.maxBytes;
		if (over <= 0) break;
		spare += over;
		p = cutBody(text, lim, totals, w, frame, artifact, spare);
	}
	return p;
}

/** The cut with `spare` bytes of the body left unused. */
function cutBody(
	text: string,
	lim: Limits,
	totals: Totals,
	w: Wording,
	frame: Frame,
	artifact: ArtifactRef | undefined,
	spare: number,
): Projection {
	const n = text.length;
	const overhead = worstOverhead(w, totals, frame);
	const maxBytes = Math.max(lim.maxBytes, overhead.bytes + SEPARATOR_BYTES + MIN_BODY_BYTES);
	const maxLines = Math.max(lim.maxLines, overhead.lines + 2);
	const bodyBytes = Math.max(0, maxBytes - overhead.bytes - SEPARATOR_BYTES - spare);
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
	// Copies (detached): a slice holds all of the text it was cut from, and a projection outlives its text (a stub
	// of a 64 MiB output stays in the session). Head and tail are the output's size, so the copy costs little.
	const head = detached(ascii ? text.slice(0, headEnd) : toWellFormed(text.slice(0, headEnd)));
	const tail = detached(ascii ? text.slice(tailStart) : toWellFormed(text.slice(tailStart)));
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
		shownItems: 0,
		omittedItems: 0,
		entries: [],
	};
}

/** Line facts of a text, gathered in one indexOf pass and shared by the fit check and the cut. */
interface LineFacts {
	/** Lines as Pi's read counts them. */
	lines: number;
	/** Some line may be longer than one read returns (mayBeLong). */
	longLine: boolean;
}

/** `measured`: the caller's sizes of this text, when it has them. */
function lineFacts(text: string, measured?: MeasuredText): LineFacts {
	if (typeof text !== "string") throw new TypeError(`project: text must be a string, got ${typeof text}`);
	if (measured) return { lines: measured.lines, longLine: measured.longLine };
	const stats = lineStats(text);
	return { lines: stats.newlines + 1, longLine: mayBeLong(stats.longestLineUnits) };
}

/**
 * A text's UTF-8 bytes, lines and whether a line may be longer than one read, in two passes: given to project()
 * (`measured`) by a caller that projects the same long text several times, so that no call measures it again.
 * `bytes`: the text's UTF-8 size when the caller has it from encoding the text itself (the store's write);
 * `lines`: its lines as Pi's read counts them when the caller counted them (a notable-line scan of it). With
 * both, nothing passes over the whole text: the long-line check steps from line end to line end a read's worth
 * at a time (longerLineThan).
 */
export function measureText(text: string, bytes?: number, lines?: number): MeasuredText {
	const size = bytes ?? utf8ByteLength(text);
	if (lines !== undefined) return { text, bytes: size, lines, longLine: longerLineThan(text, SURE_LINE_UNITS) };
	const stats = lineStats(text);
	return { text, bytes: size, lines: stats.newlines + 1, longLine: mayBeLong(stats.longestLineUnits) };
}

/** A UTF-16 unit is at most 3 UTF-8 bytes, so shorter lines surely fit one read. */
function mayBeLong(longestLineUnits: number): boolean {
	return longestLineUnits * 3 > READ_PAGE_MAX_BYTES;
}

/** The most UTF-16 units a line may have and surely fit one read (mayBeLong is false up to it). */
const SURE_LINE_UNITS = Math.floor(READ_PAGE_MAX_BYTES / 3);

/**
 * Whether some line of `text` has more than `units` UTF-16 units. From a line's start it looks back from
 * `units` ahead for the last "\n": none means the line is longer; else every line up to it is not, and the
 * next starts after it. A log of short lines costs about one line's units per `units` of text, not a pass.
 */
export function longerLineThan(text: string, units: number): boolean {
	let start = 0; // always a line's start
	while (text.length - start > units) {
		const newline = text.lastIndexOf("\n", start + units);
		if (newline < start) return true;
		start = newline + 1;
	}
	return false;
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

/**
 * One line pass decides the fit; a long text is not measured here (a sink's write can report its size). A text
 * the caller measured (`measured`) is not passed over at all.
 */
function prepare(text: string, lim: Limits, options: ProjectOptions): Prepared {
	const measured = options.measured?.text === text ? options.measured : undefined;
	const facts = lineFacts(text, measured);
	// Longer never fits (every UTF-16 unit is at least one byte): not measured then, unless it was already.
	const small = measured ? measured.bytes : text.length <= lim.maxBytes ? utf8ByteLength(text) : undefined;
	const marker = options.marker;
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
export const MAX_REASON_BYTES = surfaceOf("projection.reason").maxBytes;

/** A store error reduced to one short line (no control characters), bounded by its surface. */
export function sanitizeReason(reason: string): string {
	const cut = project(oneLineReason(reason), "projection.reason").text;
	return cut.length > 0 ? cut : UNKNOWN_REASON;
}

function frameOf(options: ProjectOptions, projectedTotals: Totals, facts: LineFacts): Frame {
	const source = options.source;
	if (!source || typeof source.text !== "string") {
		return { totals: projectedTotals, lineOffset: 0, mayHaveLongLine: facts.longLine };
	}
	const m = options.measured?.text === source.text ? options.measured : measureText(source.text);
	const firstLine = Math.max(1, Math.floor(Number(source.firstLine) || 1));
	return {
		totals: { bytes: m.bytes, lines: m.lines },
		lineOffset: firstLine - 1,
		mayHaveLongLine: m.longLine,
		source: source.text,
	};
}

/**
 * The cut once the artifact is known. The text is measured here (or was, by the caller: `measured`): no sink's own
 * count is trusted with the limits.
 */
function finish(text: string, p: Prepared, options: ProjectOptions, artifact: ArtifactRef | undefined): Projection {
	const totals = { bytes: p.small ?? utf8ByteLength(text), lines: p.facts.lines };
	return cut(text, p.lim, totals, wordingOf(options, artifact), frameOf(options, totals, p.facts), artifact);
}

function isList(value: unknown): value is readonly string[] {
	return Array.isArray(value);
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
	items: readonly string[],
	surface: SurfaceName | SurfaceLimits,
	options?: ListOptions,
): Projection;
export function project(
	text: string,
	surface: SurfaceName | SurfaceLimits,
	options: ProjectOptions & { sink: AsyncArtifactSink },
): Promise<Projection>;
export function project(text: string, surface: SurfaceName | SurfaceLimits, options?: ProjectOptions): Projection;
export function project(
	text: string | readonly string[],
	surface: SurfaceName | SurfaceLimits,
	options: ProjectOptions & ListOptions = {},
): Projection | Promise<Projection> {
	if (isList(text)) return projectList(text, limitsOf({ ...surfaceOf(surface), clip: true }, options), options);
	if (options.window) return windowed(text, surface, options, options.window);
	const p = prepare(text, limitsOf(surfaceOf(surface), options), options);
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

/** The window option: the numbered window projected within what its heading leaves, the heading on top. */
function windowed(
	text: string,
	surface: SurfaceName | SurfaceLimits,
	options: ProjectOptions,
	option: WindowOption,
): Projection | Promise<Projection> {
	const w = layoutWindow(text, option);
	const heading = option.heading ? option.heading(w.place) : "";
	const lim = limitsOf(surfaceOf(surface), options);
	const spent =
		heading === "" ? { bytes: 0, lines: 0 } : { bytes: utf8ByteLength(heading) + 1, lines: countLines(heading) };
	const source = options.source && { ...options.source, firstLine: options.source.firstLine + w.firstTextLine - 1 };
	const inner = project(w.numbered, surface, {
		...options,
		window: undefined,
		maxBytes: Math.max(1, (options.maxBytes ?? lim.maxBytes) - spent.bytes),
		maxLines: Math.max(1, (options.maxLines ?? lim.maxLines) - spent.lines),
		source,
	});
	const framed = (p: Projection): Projection => (heading === "" ? p : { ...p, text: `${heading}\n${p.text}` });
	return inner instanceof Promise ? inner.then(framed) : framed(inner);
}

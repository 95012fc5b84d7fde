/**
 * A log shortened with its notable lines first: `projectLog(text, surface, options)` is `project(text,
 * surface, options)` for command, test and build output. When the text does not fit and the notable-line
 * scan (../text/notable.ts) finds something, the view is
 *
 *     Notable lines (L<n> is line n of the full text: read it with offset=n):
 *     L812: FAILED tests/test_io.py::test_read - AssertionError (×3)
 *     … and 4 more notable lines (search the full text for them)
 *     <head> [… omitted …] <tail> [footer]
 *
 * all within the SAME surface's byte and line limits: the notable section takes at most the `notable.lines`
 * surface's share (its headShare) of them and its own caps, each line clipped to `notable.line`, listed
 * through project()'s list mode; head and tail get the rest through project() itself. When nothing notable is
 * found, or the text fits, the result is exactly project()'s. Lines are picked by priority (how the run ended,
 * then failures from the earliest, then other summaries, then context) and shown in line order.
 */
import type { SurfaceName } from "../surfaces.ts";
import { type NotableLine, type NotableScan, scanNotable } from "../text/notable.ts";
import { countLines, utf8ByteLength } from "../text/utf8.ts";
import { type Limits, limitsOf, MIN_WINDOW_BYTES, MIN_WINDOW_LINES, surfaceOf } from "./limits.ts";
import { project } from "./projection.ts";
import { NOTABLE_HEADING, NOTABLE_HEADING_UNSAVED, notableItem, notableMore } from "./prompt.ts";
import type { AsyncArtifactSink, Projection, ProjectOptions, SurfaceLimits } from "./types.ts";

/** Options of projectLog: project()'s, plus a scan already made of the same text. */
export interface LogOptions extends ProjectOptions {
	/** The scan of `text` when the caller has it (else projectLog scans). */
	scan?: NotableScan;
	/** The surface of the notable section (its caps, and its head share: its share of the log's limits); default `notable.lines`. */
	section?: SurfaceName;
}

/** What projectLog adds to a projection. */
export interface LogProjection extends Projection {
	/** The notable lines listed first (none when the view is project()'s own). */
	notable: readonly NotableLine[];
	/** Notable lines the scan found that the view does not list (counted in the section's last line). */
	notableOmitted: number;
}

/** Bytes the head + tail view keeps beyond the minimum window, so a long footer path never crowds it out. */
const REST_MARGIN_BYTES = 512;

/** The notable section at the given limits: the heading, the lines that fit by priority, the count of the rest. */
interface Section {
	/** The listed lines without the heading. */
	list: string;
	/** The same lines without their line numbers (for a view whose full text is not stored). */
	unnumbered: string;
	text: string;
	bytes: number;
	lines: number;
	shown: NotableLine[];
	omitted: number;
}

/** Scan lines in the scan's priority order. */
function byPriority(lines: readonly NotableLine[]): NotableLine[] {
	return [...lines].sort((a, b) => a.rank - b.rank);
}

function itemOf(l: NotableLine, lineOffset: number | undefined): string {
	const line = lineOffset === undefined ? undefined : l.line + lineOffset;
	return project(notableItem(line, l.text, l.count), "notable.line").text;
}

/** The longest priority prefix whose lines, in line order, fit the section's limits with the count of the rest. */
function section(scan: NotableScan, maxBytes: number, maxLines: number, lineOffset: number, heading: string): Section {
	const ranked = byPriority(scan.lines);
	const headingBytes = utf8ByteLength(heading) + 1;
	const headingLines = countLines(heading);
	const limits: SurfaceLimits = {
		maxBytes: Math.max(0, maxBytes - headingBytes),
		maxLines: Math.max(0, maxLines - headingLines),
		clip: true,
	};
	const listOf = (shown: NotableLine[], omitted: number, offset: number | undefined) => {
		const items = shown.map((l) => itemOf(l, offset));
		if (omitted > 0) items.push(notableMore(omitted));
		return project(items, limits);
	};
	const attempt = (k: number) => {
		const shown = ranked.slice(0, k).sort((a, b) => a.line - b.line);
		const omitted = ranked.length - k + scan.dropped;
		const listed = listOf(shown, omitted, lineOffset);
		return { shown, omitted, listed, fits: !listed.truncated };
	};
	// The largest k that fits (fitting is monotone in k: fewer lines and a larger count still fit, in practice).
	let lo = 0;
	let hi = ranked.length;
	while (lo < hi) {
		const mid = Math.ceil((lo + hi) / 2);
		if (attempt(mid).fits) lo = mid;
		else hi = mid - 1;
	}
	const best = attempt(lo);
	if (lo === 0 || !best.fits) return { list: "", unnumbered: "", text: "", bytes: 0, lines: 0, shown: [], omitted: 0 };
	const text = `${heading}\n${best.listed.text}`;
	const list = best.listed.text;
	// Each item only loses its number: the same items fit the same limits.
	const unnumbered = listOf(best.shown, best.omitted, undefined).text;
	const sizes = { bytes: utf8ByteLength(text), lines: countLines(text) };
	return { list, unnumbered, text, ...sizes, shown: best.shown, omitted: best.omitted };
}

/** The section's limits inside the log surface's: its share and caps, leaving head + tail a readable window. */
function sectionLimits(lim: Limits, name: SurfaceName): { maxBytes: number; maxLines: number } {
	const own = surfaceOf(name);
	const share = own.headShare ?? 0.5;
	return {
		maxBytes: Math.min(
			own.maxBytes,
			Math.floor(lim.maxBytes * share),
			lim.maxBytes - MIN_WINDOW_BYTES - REST_MARGIN_BYTES,
		),
		maxLines: Math.min(own.maxLines, Math.floor(lim.maxLines * share), lim.maxLines - MIN_WINDOW_LINES - 2),
	};
}

function plain(p: Projection): LogProjection {
	return { ...p, notable: [], notableOmitted: 0 };
}

/** The limits projectLog works in and its notable section's caps; undefined when it would not scan at all. */
function scanPlan(
	text: string,
	surface: SurfaceName | SurfaceLimits,
	options: LogOptions,
): { lim: Limits; caps: { maxBytes: number; maxLines: number } } | undefined {
	if (typeof text !== "string" || options.window) return undefined;
	const entry = surfaceOf(surface);
	if (entry.clip) return undefined;
	const lim = limitsOf(entry, options);
	// Text that fits comes back verbatim: no scan needed to know that.
	if (text.length <= lim.maxBytes && utf8ByteLength(text) <= lim.maxBytes && countLines(text) <= lim.maxLines) {
		return undefined;
	}
	const caps = sectionLimits(lim, options.section ?? "notable.lines");
	if (caps.maxBytes <= 0 || caps.maxLines <= 1) return undefined;
	return { lim, caps };
}

/**
 * The `maxLines` projectLog(text, surface, options) scans with, or undefined when it would not scan: a caller
 * that scans before it has everything the projection needs (the artifact's name) passes that scan as `scan`.
 */
export function logScanLines(
	text: string,
	surface: SurfaceName | SurfaceLimits,
	options: LogOptions = {},
): number | undefined {
	return scanPlan(text, surface, options)?.caps.maxLines;
}

/**
 * A log's projection: notable lines first, then project()'s head + tail, within the surface's limits (see the
 * module comment). Returns a promise exactly when project() would (an async sink).
 */
export function projectLog(
	text: string,
	surface: SurfaceName | SurfaceLimits,
	options: LogOptions & { sink: AsyncArtifactSink },
): Promise<LogProjection>;
export function projectLog(text: string, surface: SurfaceName | SurfaceLimits, options?: LogOptions): LogProjection;
export function projectLog(
	text: string,
	surface: SurfaceName | SurfaceLimits,
	options: LogOptions = {},
): LogProjection | Promise<LogProjection> {
	const { scan: given, section: _section, ...projectOptions } = options;
	const whole = () => {
		const p = project(text, surface, projectOptions);
		return p instanceof Promise ? p.then(plain) : plain(p);
	};
	const planned = scanPlan(text, surface, options);
	if (!planned) return whole();
	const { lim, caps } = planned;
	const scan = given ?? scanNotable(text, { maxLines: caps.maxLines });
	if (scan.lines.length === 0) return whole();
	const lineOffset = Math.max(0, Math.floor(Number(projectOptions.source?.firstLine) || 1) - 1);
	const sec = section(scan, caps.maxBytes, caps.maxLines, lineOffset, NOTABLE_HEADING);
	if (sec.text === "") return whole();

	const rest = {
		...projectOptions,
		maxBytes: lim.maxBytes - sec.bytes - 1,
		maxLines: lim.maxLines - sec.lines,
	};
	const combine = (inner: Projection): LogProjection | undefined => {
		// The inner view was raised past what the section left (a very long path): no room for the section.
		if (!inner.truncated || utf8ByteLength(inner.text) > rest.maxBytes || countLines(inner.text) > rest.maxLines) {
			return undefined;
		}
		// Without a stored artifact there is nothing to read at offset=n: no line numbers, a heading that says why.
		const saved = inner.readOffset !== undefined;
		const view = saved
			? `${NOTABLE_HEADING}\n${sec.list}\n${inner.text}`
			: `${NOTABLE_HEADING_UNSAVED}\n${sec.unnumbered}\n${inner.text}`;
		return { ...inner, text: view, notable: sec.shown, notableOmitted: sec.omitted };
	};
	const inner = project(text, surface, rest);
	if (inner instanceof Promise) {
		return inner.then(
			(p) => combine(p) ?? plain(project(text, surface, { ...projectOptions, sink: undefined, stored: p.artifact })),
		);
	}
	return (
		combine(inner) ?? plain(project(text, surface, { ...projectOptions, sink: undefined, stored: inner.artifact }))
	);
}

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
 * all within the SAME surface's byte and line limits. Head and tail are laid out first, through project()
 * itself, in what the section's caps leave them: the `notable.failing` surface's when the scan found failures
 * (the section takes most of the view and the head NOTABLE_FAILING_HEAD_SHARE of the rest: a log's head is
 * command echo and set-up), else the `notable.lines` surface's (or the caller's `section`). The section then
 * lists, through project()'s list mode, the lines that fit by priority (how the run ended, failures, other
 * summaries, context), each clipped to `notable.line` and shown in line order, leaving out the lines head or
 * tail show whole (a line that stands for folded repeats stays). Room the section leaves goes back to head and
 * tail, and the section drops what they then show. When nothing notable is found, or the text fits, the
 * result is exactly project()'s.
 */
import { NOTABLE_FAILING_HEAD_SHARE, type SurfaceName } from "../surfaces.ts";
import { type NotableLine, type NotableScan, scanNotable } from "../text/notable.ts";
import { countLines, countNewlines, utf8ByteLength } from "../text/utf8.ts";
import { clippedText } from "./clip.ts";
import { type Limits, limitsOf, MIN_WINDOW_BYTES, MIN_WINDOW_LINES, surfaceOf } from "./limits.ts";
import { measureText, project } from "./projection.ts";
import { NOTABLE_HEADING, NOTABLE_HEADING_UNSAVED, notableItem, notableMore } from "./prompt.ts";
import type { AsyncArtifactSink, Projection, ProjectOptions, SurfaceLimits } from "./types.ts";

/** Options of projectLog: project()'s, plus a scan already made of the same text. */
export interface LogOptions extends ProjectOptions {
	/** The scan of `text` when the caller has it (else projectLog scans). */
	scan?: NotableScan;
	/** The surface of the notable section (its caps, and its head share: its share of the log's limits); default `notable.lines`. */
	section?: SurfaceName;
	/**
	 * Bytes and lines the view may add, all of them for its notable section, when the scan found failures and
	 * the section at the surface's limits leaves some of the lines it kept out (the section overflows).
	 */
	grow?: { maxBytes: number; maxLines: number };
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
/** The same when the section takes most of the view (a failing log): the plain layout is the fallback. */
const FAILING_REST_MARGIN_BYTES = 256;
/** Room the section leaves unused (lines head and tail show, nothing to take their place) that head + tail take back. */
const WIDEN_BYTES = 256;

/** The notable section at the given limits: the heading, the lines that fit by priority, the count of the rest. */
interface Section {
	/** The listed lines without the heading. */
	list: string;
	/** The same lines without their line numbers (for a view whose full text is not stored), made when asked for. */
	unnumbered(): string;
	text: string;
	bytes: number;
	lines: number;
	shown: NotableLine[];
	omitted: number;
}

const EMPTY: Section = { list: "", unnumbered: () => "", text: "", bytes: 0, lines: 0, shown: [], omitted: 0 };

/** The `notable.line` surface's limits: an item longer (or of more lines) is clipped. */
const ITEM = limitsOf(surfaceOf("notable.line"), {});

function itemOf(l: NotableLine, lineOffset: number | undefined): string {
	const line = lineOffset === undefined ? undefined : l.line + lineOffset;
	const item = notableItem(line, l.text, l.count);
	// What project(item, "notable.line") gives, without its call: the item verbatim when it fits (one line
	// within the bytes; else measured as project() measures it), else its clipped text.
	if (item.length <= ITEM.maxBytes && !item.includes("\n") && utf8ByteLength(item) <= ITEM.maxBytes) return item;
	if (!ITEM.short || (utf8ByteLength(item) <= ITEM.maxBytes && countLines(item) <= ITEM.maxLines)) {
		return project(item, "notable.line").text;
	}
	return clippedText(item, ITEM);
}

/** A notable line's item as a section lists it, with what it spends (UTF-8 bytes, newlines). */
interface Item {
	text: string;
	bytes: number;
	newlines: number;
}

/**
 * The items of one projectLog call, each made and measured once: a section is fitted several times (each layout,
 * then without what head and tail show, then grown), over the same lines.
 */
export interface SectionItems {
	/** The line's item with its number (the line plus the call's line offset). */
	numbered(l: NotableLine): Item;
	/** The same without its number (a view whose full text is not stored). */
	unnumbered(l: NotableLine): Item;
}

/** The items of the lines of one scan, numbered with `lineOffset` added. */
export function sectionItems(lineOffset: number): SectionItems {
	const made = (offset: number | undefined) => {
		const cache = new Map<NotableLine, Item>();
		return (l: NotableLine): Item => {
			let item = cache.get(l);
			if (item === undefined) {
				const text = itemOf(l, offset);
				item = { text, bytes: utf8ByteLength(text), newlines: countNewlines(text) };
				cache.set(l, item);
			}
			return item;
		};
	};
	return { numbered: made(lineOffset), unnumbered: made(undefined) };
}

/**
 * The longest priority prefix of `ranked` whose lines, in line order, fit the limits with the count of the
 * rest; `dropped`: notable lines the scan found and did not keep (counted with the rest). Whether k lines fit is
 * counted from the items' sizes (the list's rule: bytes, lines and entries, one "\n" between entries), so the
 * search projects the list once, for the lines it keeps.
 */
export function section(
	ranked: readonly NotableLine[],
	dropped: number,
	maxBytes: number,
	maxLines: number,
	heading: string,
	items: SectionItems,
): Section {
	const headingBytes = utf8ByteLength(heading) + 1;
	const headingLines = countLines(heading);
	const limits: SurfaceLimits = {
		maxBytes: Math.max(0, maxBytes - headingBytes),
		maxLines: Math.max(0, maxLines - headingLines),
		clip: true,
	};
	// What project(items, limits) works to, and what the k best items spend (their order does not change a sum).
	const lim = limitsOf(limits, {});
	const bytes = [0];
	const newlines = [0];
	for (let k = 0; k < ranked.length; k++) {
		const item = items.numbered(ranked[k]);
		bytes.push(bytes[k] + item.bytes);
		newlines.push(newlines[k] + item.newlines);
	}
	/** The list of the k best lines and the count of the rest fits whole (project(items, limits) keeps it all). */
	const fits = (k: number) => {
		const omitted = ranked.length - k + dropped;
		const more = omitted > 0 ? notableMore(omitted) : "";
		const entries = k + (omitted > 0 ? 1 : 0);
		const gaps = Math.max(0, entries - 1);
		const spentBytes = bytes[k] + (omitted > 0 ? utf8ByteLength(more) : 0) + gaps;
		const spentNewlines = newlines[k] + (omitted > 0 ? countNewlines(more) : 0) + gaps;
		return spentBytes <= lim.maxBytes && spentNewlines + 1 <= lim.maxLines && entries <= lim.maxLines;
	};
	// The largest k that fits (fitting is monotone in k: fewer lines and a larger count still fit, in practice).
	let lo = 0;
	let hi = ranked.length;
	while (lo < hi) {
		const mid = Math.ceil((lo + hi) / 2);
		if (fits(mid)) lo = mid;
		else hi = mid - 1;
	}
	if (lo === 0) return EMPTY;
	const shown = ranked.slice(0, lo).sort((a, b) => a.line - b.line);
	const omitted = ranked.length - lo + dropped;
	const listOf = (item: (l: NotableLine) => Item) => {
		const texts = shown.map((l) => item(l).text);
		if (omitted > 0) texts.push(notableMore(omitted));
		return project(texts, limits);
	};
	const listed = listOf(items.numbered);
	if (listed.truncated) return EMPTY;
	const text = `${heading}\n${listed.text}`;
	const list = listed.text;
	// Each item only loses its number: the same items fit the same limits.
	const unnumbered = () => listOf(items.unnumbered).text;
	const sizes = { bytes: utf8ByteLength(text), lines: countLines(text) };
	return { list, unnumbered, text, ...sizes, shown, omitted };
}

/** The section's limits inside the log surface's: its share and caps, leaving head + tail a readable window. */
function sectionLimits(
	lim: Limits,
	name: SurfaceName,
	restMarginBytes: number,
): { maxBytes: number; maxLines: number } {
	const own = surfaceOf(name);
	const share = own.headShare ?? 0.5;
	return {
		maxBytes: Math.min(
			own.maxBytes,
			Math.floor(lim.maxBytes * share),
			lim.maxBytes - MIN_WINDOW_BYTES - restMarginBytes,
		),
		maxLines: Math.min(own.maxLines, Math.floor(lim.maxLines * share), lim.maxLines - MIN_WINDOW_LINES - 2),
	};
}

function plain(p: Projection): LogProjection {
	return { ...p, notable: [], notableOmitted: 0 };
}

/** A notable line that claims a failure: a failure (or its context) or a summary that reports failures. */
const claimsFailure = (l: NotableLine) => l.kind !== "summary" || l.failing;

/**
 * How a log's view is laid out: the notable section's caps, and the head share of head + tail. A log whose
 * scan found failures gives its section the `notable.failing` surface (most of the view: a log's head is
 * command echo and set-up) and its head `NOTABLE_FAILING_HEAD_SHARE` of what head + tail get; else the
 * `notable.lines` surface and the caller's head share. A caller that names a section keeps it.
 */
interface Layout {
	caps: { maxBytes: number; maxLines: number };
	headShare?: number;
}

function layouts(lim: Limits, options: LogOptions, failing: boolean): Layout[] {
	const plainLayout: Layout = { caps: sectionLimits(lim, options.section ?? "notable.lines", REST_MARGIN_BYTES) };
	if (options.section || !failing) return [plainLayout];
	// The failing layout first; when head + tail would not fit what it leaves them (a very long footer
	// path), the plain one.
	return [
		{ caps: sectionLimits(lim, "notable.failing", FAILING_REST_MARGIN_BYTES), headShare: NOTABLE_FAILING_HEAD_SHARE },
		plainLayout,
	];
}

/** Pure: the grown limits of a view whose failing section overflows (`grow` added), undefined without `grow`. */
function grownLimits(lim: Limits, grow: LogOptions["grow"]): Limits | undefined {
	const by = {
		maxBytes: Math.max(0, Math.floor(grow?.maxBytes ?? 0)),
		maxLines: Math.max(0, Math.floor(grow?.maxLines ?? 0)),
	};
	if (by.maxBytes === 0 && by.maxLines === 0) return undefined;
	return { ...lim, maxBytes: lim.maxBytes + by.maxBytes, maxLines: lim.maxLines + by.maxLines };
}

/** The failing layout of a view grown by `grow` from `lim`: all that was added goes to its section's caps. */
function grownLayouts(lim: Limits, grow: NonNullable<LogOptions["grow"]>): Layout[] {
	const caps = sectionLimits(lim, "notable.failing", FAILING_REST_MARGIN_BYTES);
	const by = { maxBytes: Math.max(0, Math.floor(grow.maxBytes)), maxLines: Math.max(0, Math.floor(grow.maxLines)) };
	return [
		{
			caps: { maxBytes: caps.maxBytes + by.maxBytes, maxLines: caps.maxLines + by.maxLines },
			headShare: NOTABLE_FAILING_HEAD_SHARE,
		},
	];
}

/** The limits projectLog works in, and the most lines its section may list; undefined when it would not scan. */
function scanPlan(
	text: string,
	surface: SurfaceName | SurfaceLimits,
	options: LogOptions,
): { lim: Limits; scanLines: number } | undefined {
	if (typeof text !== "string" || options.window) return undefined;
	const entry = surfaceOf(surface);
	if (entry.clip) return undefined;
	const lim = limitsOf(entry, options);
	// Text that fits comes back verbatim: no scan needed to know that.
	if (text.length <= lim.maxBytes && utf8ByteLength(text) <= lim.maxBytes && countLines(text) <= lim.maxLines) {
		return undefined;
	}
	const grown = options.section ? undefined : grownLimits(lim, options.grow);
	const caps = [
		...layouts(lim, options, false),
		...layouts(lim, options, true),
		...(grown && options.grow ? grownLayouts(lim, options.grow) : []),
	].map((l) => l.caps);
	const usable = caps.filter((c) => c.maxBytes > 0 && c.maxLines > 1);
	if (usable.length === 0) return undefined;
	return { lim, scanLines: Math.max(...usable.map((c) => c.maxLines)) };
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
	return scanPlan(text, surface, options)?.scanLines;
}

/** The lines of `text` a head + tail view shows whole: 1..headLast and tailFirst..totalLines. */
function shownWhole(text: string, p: Projection): { headLast: number; tailFirst: number } {
	let headLast = 0;
	for (let i = text.indexOf("\n"); i !== -1 && i < p.headEnd; i = text.indexOf("\n", i + 1)) headLast++;
	const tailLines = countLines(text.slice(p.tailStart));
	const whole = p.tailStart === 0 || text.charCodeAt(p.tailStart - 1) === 10;
	return { headLast, tailFirst: p.totalLines - tailLines + (whole ? 1 : 2) };
}

/** Whether `wider` still shows the log's first line whole in its head and last line whole in its tail where `view` did. */
function keepsEnds(text: string, view: Projection, wider: Projection): boolean {
	const firstEnd = text.indexOf("\n");
	const firstLine = firstEnd === -1 ? text.length : firstEnd;
	if (view.headEnd >= firstLine && wider.headEnd < firstLine) return false;
	const lastStart = text.lastIndexOf("\n", text.length - 2) + 1;
	return !(view.tailStart <= lastStart && wider.tailStart > lastStart);
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
	const { scan: given, section: _section, grow: _grow, ...callOptions } = options;
	const whole = () => {
		const p = project(text, surface, callOptions);
		return p instanceof Promise ? p.then(plain) : plain(p);
	};
	const planned = scanPlan(text, surface, options);
	if (!planned) return whole();
	const scan = given ?? scanNotable(text, { maxLines: planned.scanLines });
	if (scan.lines.length === 0) return whole();
	// Head + tail are projected more than once below: the text is measured once for all of them.
	const measured = callOptions.measured?.text === text ? callOptions.measured : measureText(text);
	const projectOptions: ProjectOptions = { ...callOptions, measured };
	const lineOffset = Math.max(0, Math.floor(Number(projectOptions.source?.firstLine) || 1) - 1);
	const ranked = [...scan.lines].sort((a, b) => a.rank - b.rank);
	const items = sectionItems(lineOffset);
	const failing = scan.lines.some(claimsFailure);
	const usable = (all: Layout[]) => all.filter((l) => l.caps.maxBytes > 0 && l.caps.maxLines > 1);

	/**
	 * The view within `lim` by the first of `candidates` whose head + tail fit, else project()'s own (with the
	 * artifact `first` already has); undefined when no layout has a section to show.
	 */
	const viewIn = (
		lim: Limits,
		candidates: Layout[],
		again?: { sink: undefined; stored: Projection["artifact"] },
	): LogProjection | Promise<LogProjection> | undefined => {
		const unseen = (p: Projection) => {
			const { headLast, tailFirst } = shownWhole(text, p);
			// A folded line stands for more than the one copy head or tail shows: it stays.
			return ranked.filter((l) => l.count > 1 || (l.line > headLast && l.line < tailFirst));
		};
		/** A layout's section before head + tail are known: every line the scan kept, within the layout's caps. */
		const sizedOnes: Section[] = [];
		const sized = (i: number) => {
			const caps = candidates[i].caps;
			sizedOnes[i] ??= section(ranked, scan.dropped, caps.maxBytes, caps.maxLines, NOTABLE_HEADING, items);
			return sizedOnes[i];
		};
		const restOf = (i: number) => ({
			...projectOptions,
			...(candidates[i].headShare === undefined ? {} : { headShare: candidates[i].headShare }),
			maxBytes: lim.maxBytes - sized(i).bytes - 1,
			maxLines: lim.maxLines - sized(i).lines,
		});
		/**
		 * Layout i: head + tail in what its section leaves them, then the section within the same size without the
		 * lines head and tail show whole (other lines take their room). Undefined when head + tail do not fit what
		 * the section leaves (a very long footer path).
		 */
		const lay = (i: number, given: Projection): LogProjection | undefined => {
			let inner = given;
			const r = restOf(i);
			if (!inner.truncated || utf8ByteLength(inner.text) > r.maxBytes || countLines(inner.text) > r.maxLines) {
				return undefined;
			}
			// The section takes what head + tail leave (their cuts at line ends leave some of their room).
			const left = {
				bytes: lim.maxBytes - utf8ByteLength(inner.text) - 1,
				lines: lim.maxLines - countLines(inner.text),
			};
			let sec = section(unseen(inner), scan.dropped, left.bytes, left.lines, NOTABLE_HEADING, items);
			if (sec.text === "") return undefined;
			if (left.bytes - sec.bytes > WIDEN_BYTES) {
				// Head and tail showed lines the section no longer lists, and nothing took their room: head + tail
				// take it (one more projection), and the section drops what they now show.
				const room = { maxBytes: lim.maxBytes - sec.bytes - 1, maxLines: lim.maxLines - sec.lines };
				const wider = project(text, surface, { ...r, ...room, sink: undefined, stored: inner.artifact }) as Projection;
				const fits = utf8ByteLength(wider.text) <= room.maxBytes && countLines(wider.text) <= room.maxLines;
				const narrower = fits && section(unseen(wider), scan.dropped, sec.bytes, sec.lines, NOTABLE_HEADING, items);
				if (narrower && narrower.text !== "") {
					inner = wider;
					sec = narrower;
				}
			}
			// Without a stored artifact there is nothing to read at offset=n: no line numbers, a heading that says why.
			const saved = inner.readOffset !== undefined;
			const view = saved
				? `${NOTABLE_HEADING}\n${sec.list}\n${inner.text}`
				: `${NOTABLE_HEADING_UNSAVED}\n${sec.unnumbered()}\n${inner.text}`;
			return { ...inner, text: view, notable: sec.shown, notableOmitted: sec.omitted };
		};
		const rest = (first: Projection): LogProjection => {
			const next = { sink: undefined, stored: first.artifact };
			for (let i = 0; i < candidates.length; i++) {
				const inner = i === 0 ? first : (project(text, surface, { ...restOf(i), ...next }) as Projection);
				const laid = lay(i, inner);
				if (laid) return laid;
			}
			return plain(project(text, surface, { ...projectOptions, ...next }));
		};
		if (candidates.length === 0 || sized(0).text === "") return undefined;
		const first = project(text, surface, { ...restOf(0), ...(again ?? {}) });
		return first instanceof Promise ? first.then(rest) : rest(first);
	};

	const normal = viewIn(planned.lim, usable(layouts(planned.lim, options, failing)));
	if (normal === undefined) return whole();
	const grown = failing && !options.section ? grownLimits(planned.lim, options.grow) : undefined;
	if (!grown || !options.grow) return normal;
	// (grown: the most the view may take; what it takes is what the failures it left out need.)
	const grow = options.grow;
	/**
	 * A failing log whose section left failures out (not context, not a passing summary, not a line head or tail
	 * shows): the same view in limits grown by what their items take, at most `grow`, when it lists more.
	 */
	const overflowing = (view: LogProjection): LogProjection => {
		if (view.notable.length === 0 || view.notableOmitted === 0) return view;
		const listed = new Set(view.notable.map((l) => l.line));
		const { headLast, tailFirst } = shownWhole(text, view);
		const missing = ranked.filter(
			(l) =>
				!listed.has(l.line) &&
				l.kind !== "context" &&
				claimsFailure(l) &&
				(l.count > 1 || (l.line > headLast && l.line < tailFirst)),
		);
		if (missing.length === 0) return view;
		const need = missing.reduce((sum, l) => sum + items.numbered(l).bytes + 1, 0);
		const by = {
			maxBytes: Math.min(Math.max(0, Math.floor(grow.maxBytes)), need),
			maxLines: Math.min(Math.max(0, Math.floor(grow.maxLines)), missing.length),
		};
		const limits = grownLimits(planned.lim, by);
		if (!limits) return view;
		const again = { sink: undefined, stored: view.artifact };
		const wider = viewIn(limits, usable(grownLayouts(planned.lim, by)), again) as LogProjection | undefined;
		if (!wider || wider.notable.length <= view.notable.length) return view;
		// Growth takes its lines from what its bytes pay for and from head and tail, but never the log's first or last line.
		return keepsEnds(text, view, wider) ? wider : view;
	};
	return normal instanceof Promise ? normal.then(overflowing) : overflowing(normal);
}

/**
 * projectLog's notable-section fitting as it was before its items were measured once (issue 32 item 4): a binary
 * search that projects the list of the k best lines again for every k it tries, each line's item made again each
 * time. Kept verbatim (only the export and the items' offset argument differ) as the reference that
 * projection-log-section.property.test.ts compares section() in extensions/shared/projection/log.ts against:
 * the faster fitting must return exactly this. Test code only.
 */
import { project } from "../../extensions/shared/projection/projection.ts";
import { notableItem, notableMore } from "../../extensions/shared/projection/prompt.ts";
import type { SurfaceLimits } from "../../extensions/shared/projection/types.ts";
import type { NotableLine } from "../../extensions/shared/text/notable.ts";
import { countLines, utf8ByteLength } from "../../extensions/shared/text/utf8.ts";

export interface ReferenceSection {
	list: string;
	unnumbered: string;
	text: string;
	bytes: number;
	lines: number;
	shown: NotableLine[];
	omitted: number;
}

const EMPTY: ReferenceSection = { list: "", unnumbered: "", text: "", bytes: 0, lines: 0, shown: [], omitted: 0 };

function itemOf(l: NotableLine, lineOffset: number | undefined): string {
	const line = lineOffset === undefined ? undefined : l.line + lineOffset;
	return project(notableItem(line, l.text, l.count), "notable.line").text;
}

export function referenceSection(
	ranked: readonly NotableLine[],
	dropped: number,
	maxBytes: number,
	maxLines: number,
	lineOffset: number,
	heading: string,
): ReferenceSection {
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
		const omitted = ranked.length - k + dropped;
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
	if (lo === 0 || !best.fits) return EMPTY;
	const text = `${heading}\n${best.listed.text}`;
	const list = best.listed.text;
	// Each item only loses its number: the same items fit the same limits.
	const unnumbered = listOf(best.shown, best.omitted, undefined).text;
	const sizes = { bytes: utf8ByteLength(text), lines: countLines(text) };
	return { list, unnumbered, text, ...sizes, shown: best.shown, omitted: best.omitted };
}

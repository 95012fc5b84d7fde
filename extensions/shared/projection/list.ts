/**
 * The list mode of the projection, `project(items, surface, options)`: the one way the package caps a list
 * the model reads (models named in an error, index rows, changed files, validator errors). One rule:
 *
 * - Entries are the shown items and the marker ("… and 5 more", or the caller's wording). The whole output
 *   fits the surface's UTF-8 bytes and lines, and it has at most maxLines entries, so a list written on one
 *   line ("a, b … and 5 more") is capped in items by the same number that caps a list of lines.
 * - When every item fits, every item is shown and there is no marker. So the marker never stands for one
 *   item that would fit in its place: "… and 1 more" appears only when that item is longer than the marker.
 * - Otherwise the longest run of whole items from the start is shown, then the marker, which counts the
 *   items not shown exactly.
 * - When not even the first item fits whole before the marker, its longest prefix that fits is shown with
 *   CLIP_MARK ("…") and counts as shown (of two items, the second then takes the marker's place when it fits
 *   there); when no character of it fits, the marker stands alone.
 * - When not even the marker fits, the output is CLIP_MARK alone (nothing under 3 bytes), and
 *   `omittedItems` still says how many were left out.
 * - A marker wording that returns "" (a cap that counts nothing) takes no entry.
 * - Items are shown as given, never reordered; the caller sorts them first.
 */
import { countNewlines, detached, utf8ByteLength } from "../text/utf8.ts";
import { CLIP_MARK_BYTES, prefixEnd, verbatim } from "./clip.ts";
import type { Limits } from "./limits.ts";
import { CLIP_MARK, listMore } from "./prompt.ts";
import type { ListOptions, Projection } from "./types.ts";

/** What one candidate output spends: UTF-8 bytes, newlines, entries. */
interface Spend {
	bytes: number;
	newlines: number;
	entries: number;
}

function fits(s: Spend, lim: Limits): boolean {
	return s.bytes <= lim.maxBytes && s.newlines + 1 <= lim.maxLines && s.entries <= lim.maxLines;
}

/** One list call: its items joined, their totals, and how entries are glued. */
interface ListCall {
	items: readonly string[];
	whole: string;
	totals: { bytes: number; lines: number };
	lim: Limits;
	separator: string;
	joiner: string;
}

/** The list at `lim` (the surface's own limits: a list is never raised to the projection's minimum window). */
export function projectList(input: readonly string[], lim: Limits, options: ListOptions): Projection {
	const items = input.map((item) => (typeof item === "string" ? item : String(item)));
	const separator = typeof options.separator === "string" ? options.separator : "\n";
	const joiner = typeof options.markerSeparator === "string" ? options.markerSeparator : separator;
	const more = options.more ?? listMore;
	const n = items.length;
	const sep = { bytes: utf8ByteLength(separator), newlines: countNewlines(separator) };
	const join = { bytes: utf8ByteLength(joiner), newlines: countNewlines(joiner) };

	// Prefix sums: what the first k whole items, joined, spend.
	const bytes = [0];
	const newlines = [0];
	for (let k = 0; k < n; k++) {
		const gap = k > 0 ? 1 : 0;
		bytes.push(bytes[k] + utf8ByteLength(items[k]) + gap * sep.bytes);
		newlines.push(newlines[k] + countNewlines(items[k]) + gap * sep.newlines);
	}
	const whole = items.join(separator);
	const call: ListCall = { items, whole, totals: { bytes: bytes[n], lines: newlines[n] + 1 }, lim, separator, joiner };
	if (fits({ bytes: bytes[n], newlines: newlines[n], entries: n }, lim)) return listed(call, n, "");

	/** What k whole items and the marker for the rest spend. */
	const spendOf = (k: number, marker: string): Spend => {
		if (marker === "") return { bytes: bytes[k], newlines: newlines[k], entries: k };
		const glue = k > 0 ? join : { bytes: 0, newlines: 0 };
		return {
			bytes: bytes[k] + glue.bytes + utf8ByteLength(marker),
			newlines: newlines[k] + glue.newlines + countNewlines(marker),
			entries: k + 1,
		};
	};
	let k = Math.min(n - 1, lim.maxLines); // fits() turns away more entries than lines
	while (k > 0 && bytes[k] > lim.maxBytes) k--; // the items alone are already too long
	for (; k > 0; k--) {
		const marker = more(n - k);
		if (fits(spendOf(k, marker), lim)) return listed(call, k, marker);
	}

	// Not one whole item fits: part of the first one, when some of it fits before the rest. Of two items the
	// second is shown whole in the marker's place when that leaves part of the first (it never reads "1 more").
	const tries: Array<{ shown: number; rest: string; spend: Spend; glue: { bytes: number; newlines: number } }> = [];
	if (n === 2) {
		const second = { bytes: bytes[2] - bytes[1] - sep.bytes, newlines: newlines[2] - newlines[1] - sep.newlines };
		tries.push({ shown: 2, rest: "", spend: { ...second, entries: 1 }, glue: sep });
	}
	if (n > 0) {
		const rest = n > 1 ? more(n - 1) : "";
		tries.push({ shown: 1, rest, spend: spendOf(0, rest), glue: rest === "" ? { bytes: 0, newlines: 0 } : join });
	}
	for (const t of tries) {
		const roomBytes = lim.maxBytes - t.spend.bytes - t.glue.bytes - CLIP_MARK_BYTES;
		const roomLines = lim.maxLines - t.spend.newlines - t.glue.newlines;
		if (t.spend.entries + 1 > lim.maxLines || roomBytes <= 0 || roomLines <= 0) continue;
		const end = prefixEnd(items[0], roomBytes, roomLines);
		if (end > 0) return listed(call, t.shown, t.rest, end);
	}
	const marker = more(n);
	if (marker !== "" && fits(spendOf(0, marker), lim)) return listed(call, 0, marker);
	const mark = lim.maxBytes >= CLIP_MARK_BYTES ? CLIP_MARK : "";
	return { ...listed(call, 0, ""), text: mark, entries: mark === "" ? [] : [mark] };
}

/**
 * The projection that shows the first `shown` items whole (or, with `clippedEnd`, the first item's first
 * `clippedEnd` UTF-16 units and CLIP_MARK), then `marker` for the rest.
 */
function listed(c: ListCall, shown: number, marker: string, clippedEnd?: number): Projection {
	const base = verbatim(c.whole, c.lim, c.totals);
	const n = c.items.length;
	if (shown === n && clippedEnd === undefined) return { ...base, shownItems: n, entries: c.items };
	const partial = clippedEnd !== undefined;
	const entries = partial
		? [`${detached(c.items[0].slice(0, clippedEnd))}${CLIP_MARK}`, ...c.items.slice(1, shown)]
		: c.items.slice(0, shown);
	// The head is the prefix of the joined list shown as it is there: whole items and the separators between
	// them, or the clipped first item's kept part.
	let headEnd = clippedEnd ?? Math.max(0, shown - 1) * c.separator.length;
	if (!partial) for (const item of entries) headEnd += item.length;
	// A copy: a slice would keep all of the joined list alive with the projection.
	const head = detached(c.whole.slice(0, headEnd));
	const shownText = entries.join(c.separator);
	const text = marker === "" ? shownText : shown > 0 ? `${shownText}${c.joiner}${marker}` : marker;
	const alsoShown = partial && shown > 1 ? utf8ByteLength(c.separator) + utf8ByteLength(c.items[1]) : 0;
	const headLines = headEnd === 0 ? 0 : countNewlines(head) + 1;
	return {
		...base,
		text,
		truncated: true,
		clipped: true,
		omittedBytes: c.totals.bytes - utf8ByteLength(head) - alsoShown,
		omittedLines: !partial
			? c.totals.lines - headLines
			: shown === 1
				? c.totals.lines - headLines + 1
				: countNewlines(c.items[0]) - headLines + 2,
		firstOmittedLine: headLines + (partial ? 0 : 1),
		headEnd,
		head,
		marker,
		shownItems: shown,
		omittedItems: n - shown,
		entries: marker === "" ? entries : [...entries, marker],
	};
}

/**
 * The fallback body of a stub: a type-aware excerpt of the output. Every cut and every layout goes
 * through the projection primitive with the kind's head share: the small index chosen by rule (files
 * with match counts, entry kinds) is a list of it, file content its window option (the requested
 * range or the middle third, numbered with the file's lines), and a command's log leads with its
 * notable lines (projectLog: the failures and summaries from anywhere in it, with their line numbers). Pure: the only file a stub names is the
 * stored output, and every read call in it addresses that file's lines.
 */
import { projectLog } from "../shared/projection/log.ts";
import {
	type ArtifactRef,
	type MeasuredText,
	project,
	type SurfaceLimits,
	type WindowPlace,
} from "../shared/projection/projection.ts";
import { SURFACES } from "../shared/surfaces.ts";
import type { NotableScan } from "../shared/text/notable.ts";
import type { OutputClass } from "./classify.ts";
import { fileWindowContext, listingIndexHeader, moreIndexRows, readNoticeLine, searchIndexHeader } from "./prompt.ts";

/** Most index rows (files or kinds) shown before "… and N more" (when more than one row would be left out). */
export const MAX_INDEX_ROWS = SURFACES["toolArtifacts.indexRows"].maxLines - 1;

/** A `grep`/`rg` match line: `path:line:text` (context lines, `path-line-text`, are not counted). */
const GREP_LINE = /^(.+?):(\d+):/;

/** One file of a search result. */
export interface SearchFileRow {
	file: string;
	/** Matching lines seen for this file. */
	matches: number;
	/** Smallest and largest line number seen. */
	firstLine: number;
	lastLine: number;
}

/** Pure: group grep/rg matches by file (in order of first appearance); other lines are ignored. */
export function indexSearchResults(text: string): SearchFileRow[] {
	const rows = new Map<string, SearchFileRow>();
	for (const line of text.split("\n")) {
		const m = GREP_LINE.exec(line);
		if (!m) continue;
		const file = m[1];
		const n = Number(m[2]);
		const row = rows.get(file);
		if (row) {
			row.matches++;
			row.firstLine = Math.min(row.firstLine, n);
			row.lastLine = Math.max(row.lastLine, n);
		} else rows.set(file, { file, matches: 1, firstLine: n, lastLine: n });
	}
	return [...rows.values()];
}

/** Pure: the search index as lines (largest files first, within toolArtifacts.indexRows). Empty when nothing parsed. */
export function renderSearchIndex(rows: readonly SearchFileRow[]): string[] {
	if (rows.length === 0) return [];
	const total = rows.reduce((sum, r) => sum + r.matches, 0);
	const sorted = [...rows].sort((a, b) => b.matches - a.matches || (a.file < b.file ? -1 : 1));
	const all = sorted.map((r) => `  ${r.file}: ${r.matches} (lines ${r.firstLine}-${r.lastLine})`);
	const shown = project(all, "toolArtifacts.indexRows", { more: (n) => moreIndexRows(n, "file") });
	return [searchIndexHeader(rows.length, total), ...shown.entries];
}

/** Pure: the kind of one listing entry: "directory", an extension like ".ts", or "no extension". */
export function entryKind(entry: string): string {
	const trimmed = entry.trim();
	if (trimmed.endsWith("/")) return "directory";
	const base = trimmed.slice(trimmed.lastIndexOf("/") + 1);
	const dot = base.lastIndexOf(".");
	return dot > 0 ? base.slice(dot).toLowerCase() : "no extension";
}

/** Pure: a listing's entries counted by kind (most common first, within toolArtifacts.indexRows). */
export function renderListingIndex(text: string): string[] {
	const counts = new Map<string, number>();
	let entries = 0;
	for (const line of text.split("\n")) {
		if (line.trim().length === 0 || line.startsWith("[")) continue;
		entries++;
		const kind = entryKind(line);
		counts.set(kind, (counts.get(kind) ?? 0) + 1);
	}
	if (entries === 0) return [];
	const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
	const all = sorted.map(([kind, n]) => `  ${kind}: ${n}`);
	const shown = project(all, "toolArtifacts.indexRows", { more: (n) => moreIndexRows(n, "kind") });
	return [listingIndexHeader(entries), ...shown.entries];
}

/** Pi's read appends one of these notices after a blank line; it is not file content. */
const READ_NOTICE = /\n\n\[(?:Showing lines \d+-\d+ of \d+|\d+ more lines in file|Line \d+ is )[^\n]*\]$/;

/** A file result split into its content and Pi's trailing read notice (kept as is; not file content). */
export function splitReadNotice(text: string): { body: string; notice: string } {
	const notice = READ_NOTICE.exec(text);
	return notice ? { body: text.slice(0, notice.index), notice: notice[0].trim() } : { body: text, notice: "" };
}

/** What the excerpt needs. */
export interface ExcerptInput {
	kind: OutputClass;
	/** The full output (what the artifact holds). */
	text: string;
	/** The call's arguments (for file content: offset/limit). */
	args: Record<string, unknown>;
	/** The stub's surface for this kind (toolArtifacts.stub.<kind>, with the user's stub limits). */
	surface: SurfaceLimits;
	/** Budget of the whole excerpt: what the stub's header and notes leave of the surface. */
	maxBytes: number;
	maxLines: number;
	/** Where the full output is. */
	artifact: ArtifactRef;
	/** For a command's log: its notable-line scan when the caller already made it at projectLog's limits (logScanLines). */
	scan?: NotableScan;
	/** For a command's log: what it may add to its notable section when the section overflows (projectLog's `grow`). */
	grow?: { maxBytes: number; maxLines: number };
	/** The sizes of `text` when the caller measured it (measureText): no projection of it measures it again. */
	measured?: MeasuredText;
}

/** Pure: the excerpt body. */
export function buildExcerpt(input: ExcerptInput): string {
	const prefix: string[] = [];
	if (input.kind === "file") {
		// The window (the requested range, else the middle third) is the projection's window option; the
		// footer speaks of the stored output: its totals, and omitted lines and read call in its numbers.
		const offset = typeof input.args.offset === "number" && input.args.offset >= 1 ? Math.floor(input.args.offset) : 1;
		const ranged = typeof input.args.offset === "number" || typeof input.args.limit === "number";
		const { body, notice } = splitReadNotice(input.text);
		const heading = (place: WindowPlace) =>
			[fileWindowContext(place), ...(notice ? [readNoticeLine(notice)] : [])].join("\n");
		return project(body, input.surface, {
			maxBytes: input.maxBytes,
			maxLines: input.maxLines,
			stored: input.artifact,
			source: input.artifact.ok ? { text: input.text, firstLine: 1 } : undefined,
			measured: input.measured,
			window: { firstNumber: offset, span: ranged ? "all" : "middle", heading },
		}).text;
	}
	if (input.kind === "search") prefix.push(...renderSearchIndex(indexSearchResults(input.text)));
	if (input.kind === "listing") prefix.push(...renderListingIndex(input.text));
	// A command's log leads with its notable lines (what failed, how the run ended), then head and tail.
	const options = { ...remaining(input, prefix), stored: input.artifact, measured: input.measured };
	const shown =
		input.kind === "command"
			? projectLog(input.text, input.surface, { ...options, scan: input.scan, grow: input.grow })
			: project(input.text, input.surface, options);
	return [...prefix, shown.text].join("\n");
}

/** The budget left for the projected part after the prefix lines. */
function remaining(input: ExcerptInput, prefix: readonly string[]): { maxBytes: number; maxLines: number } {
	const prefixBytes = prefix.reduce((sum, line) => sum + Buffer.byteLength(line, "utf8") + 1, 0);
	return {
		maxBytes: Math.max(1, input.maxBytes - prefixBytes),
		maxLines: Math.max(1, input.maxLines - prefix.length),
	};
}

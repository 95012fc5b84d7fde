/**
 * `recall_artifact`: page or search one stored tool output. Decisions and formatting are pure; the
 * I/O is reading the artifact the store resolved (never a path from model text), listing the store's
 * directory to explain an id that did not resolve, and the search worker (search-worker.ts).
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { headroomDetails } from "../shared/host/details.ts";
import { project } from "../shared/projection/projection.ts";
import type { ArtifactStore } from "../shared/store/artifact-store.ts";
import { SURFACES, type SurfaceBudget } from "../shared/surfaces.ts";
import { TOOL_OUTPUT_KIND } from "./artifacts.ts";
import {
	RECALL_ERRORS,
	RECALL_GROUP_SEPARATOR,
	recallContinue,
	recallPageHeader,
	recallSearchContinue,
	recallSearchHeader,
} from "./prompt.ts";
import { LINE_MAX_CHARS, READ_CHUNK_BYTES, readLines } from "./search-lines.js";
import { runSearch, type SearchHit, type SearchOutcome } from "./search-worker.ts";
import { artifactId } from "./stub.ts";

/** Lines a page shows when no limit is given. */
export const RECALL_DEFAULT_LIMIT_LINES = 400;
/** Longest pattern accepted, in characters (long patterns are where pathological backtracking hides). */
export const RECALL_MAX_PATTERN_CHARS = 500;
/** Most matching lines listed by one search. */
export const RECALL_MAX_MATCHES = 500;
/** Most context lines around each match. */
export const RECALL_MAX_CONTEXT_LINES = 20;
/** Accepted ids: hex only (no paths, no dots, no slashes), as the store's resolve expects. */
export const ARTIFACT_ID_PATTERN = /^[0-9a-f]{8,64}$/;

/** The tool's parameters after schema validation. */
export interface RecallParams {
	id: string;
	offset?: number;
	limit?: number;
	pattern?: string;
	context?: number;
	ignoreCase?: boolean;
}

/** A recall answer before bounding: text for the model, or an error that says what to do. */
export type RecallAnswer = { ok: true; text: string } | { ok: false; error: string };

/** Pure: check parameters that do not need the artifact. */
export function validateRecall(params: RecallParams): { ok: true } | { ok: false; error: string } {
	const id = params.id.trim().toLowerCase();
	if (!ARTIFACT_ID_PATTERN.test(id)) return { ok: false, error: RECALL_ERRORS.badId(params.id) };
	// offset goes with pattern (where the search starts, to go on past the match cap); limit pages only.
	if (params.pattern !== undefined && params.limit !== undefined) {
		return { ok: false, error: RECALL_ERRORS.bothModes };
	}
	if (params.pattern !== undefined) {
		const compiled = compilePattern(params.pattern, params.ignoreCase === true);
		if (!compiled.ok) return compiled;
	}
	return { ok: true };
}

/** Pure: compile the model's regular expression, or say why not. */
export function compilePattern(
	pattern: string,
	ignoreCase: boolean,
): { ok: true; regex: RegExp } | { ok: false; error: string } {
	if (pattern.length > RECALL_MAX_PATTERN_CHARS)
		return { ok: false, error: RECALL_ERRORS.patternTooLong(RECALL_MAX_PATTERN_CHARS) };
	try {
		return { ok: true, regex: new RegExp(pattern, ignoreCase ? "iu" : "u") };
	} catch (unicodeError) {
		try {
			// Patterns written for grep often have escapes the u flag rejects ("\-"); accept them without it.
			return { ok: true, regex: new RegExp(pattern, ignoreCase ? "i" : "") };
		} catch {
			return { ok: false, error: RECALL_ERRORS.badPattern((unicodeError as Error).message) };
		}
	}
}

/** Pure: lines offset..offset+limit-1 (1-based, as Pi's read counts) with a header and a continuation hint. */
export function pageArtifact(text: string, id: string, offset = 1, limit = RECALL_DEFAULT_LIMIT_LINES): RecallAnswer {
	const lines = text.split("\n");
	const total = lines.length;
	const first = Math.max(1, Math.floor(offset));
	if (first > total) return { ok: false, error: RECALL_ERRORS.offsetPastEnd(first, total) };
	const count = Math.max(1, Math.floor(limit));
	const last = Math.min(total, first + count - 1);
	const out = [recallPageHeader(id, first, last, total), ...lines.slice(first - 1, last)];
	if (last < total) out.push(recallContinue(last + 1, total));
	return { ok: true, text: out.join("\n") };
}

/** Pure: a search's rows under their header (`start`: its first line), and where to go on when capped. */
export function searchAnswer(id: string, pattern: string, hit: SearchHit, start = 1): RecallAnswer {
	if (start > hit.total) return { ok: false, error: RECALL_ERRORS.offsetPastEnd(start, hit.total) };
	const out = [recallSearchHeader(id, pattern, { ...hit, lineMaxChars: LINE_MAX_CHARS }, start), ...hit.rows];
	if (hit.capped) out.push(recallSearchContinue(hit.matches, hit.lastMatch));
	return { ok: true, text: out.join("\n") };
}

/** Pure: a failed search in words. */
export function searchFailureText(outcome: Exclude<SearchOutcome, { ok: true }>): string {
	switch (outcome.code) {
		case "timeout":
			return RECALL_ERRORS.searchTimeout(outcome.timeoutMs);
		case "aborted":
			return RECALL_ERRORS.searchAborted;
		case "unreadable":
			return RECALL_ERRORS.unreadable(outcome.errno);
		case "failed":
			return RECALL_ERRORS.searchFailed;
		case "busy":
			return RECALL_ERRORS.searchBusy(outcome.running, outcome.queued);
	}
}

/**
 * Search a stored artifact in a worker (bounded in time): lines matching `regex` from line `offset`
 * (1-based, default 1) on, numbered like grep -n.
 */
export async function searchStored(
	path: string,
	id: string,
	pattern: string,
	regex: RegExp,
	context = 0,
	options: { timeoutMs?: number; signal?: AbortSignal; offset?: number } = {},
): Promise<RecallAnswer> {
	const start = Math.max(1, Math.floor(options.offset ?? 1));
	const outcome = await runSearch(
		{
			path,
			source: regex.source,
			flags: regex.flags,
			context: Math.max(0, Math.min(RECALL_MAX_CONTEXT_LINES, Math.floor(context))),
			maxMatches: RECALL_MAX_MATCHES,
			separator: RECALL_GROUP_SEPARATOR,
			start,
		},
		{ timeoutMs: options.timeoutMs, signal: options.signal },
	);
	return outcome.ok ? searchAnswer(id, pattern, outcome, start) : { ok: false, error: searchFailureText(outcome) };
}

/** Characters of lines one page collects at most before it is projected (a longer page ends early, offset= goes on). */
export const RECALL_PAGE_MAX_CHARS = 4 * READ_CHUNK_BYTES;

/**
 * Page a stored artifact (read without following a symlink, never blocking on a non-file), in chunks: only the
 * page's lines are kept (at most RECALL_PAGE_MAX_CHARS; a line longer than LINE_MAX_CHARS in its first part),
 * the rest is only counted. The same answer as pageArtifact over the whole text when the page fits.
 */
export function pageStored(path: string, id: string, offset = 1, limit = RECALL_DEFAULT_LIMIT_LINES): RecallAnswer {
	const first = Math.max(1, Math.floor(offset));
	const count = Math.max(1, Math.floor(limit));
	const page: string[] = [];
	let chars = 0;
	let lineNo = 0;
	let total = 0;
	try {
		const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | (constants.O_NONBLOCK ?? 0));
		try {
			if (!fstatSync(fd).isFile()) return { ok: false, error: RECALL_ERRORS.unreadable("EINVAL") };
			const rest = readLines(fd, LINE_MAX_CHARS, (line) => {
				lineNo++;
				if (lineNo < first) return true;
				// The first line always; later ones while the page stays within its characters.
				if (page.length > 0 && chars + line.length > RECALL_PAGE_MAX_CHARS) return false;
				page.push(line);
				chars += line.length;
				return page.length < count;
			});
			total = lineNo + rest; // every line onLine saw, and those after the one it stopped at
		} finally {
			closeSync(fd);
		}
	} catch (error) {
		const errno = (error as NodeJS.ErrnoException).code;
		return { ok: false, error: RECALL_ERRORS.unreadable(typeof errno === "string" ? errno : undefined) };
	}
	if (first > total) return { ok: false, error: RECALL_ERRORS.offsetPastEnd(first, total) };
	const last = first + page.length - 1;
	const out = [recallPageHeader(id, first, last, total), ...page];
	if (last < total) out.push(recallContinue(last + 1, total));
	return { ok: true, text: out.join("\n") };
}

/** Most recent ids listed when an id is unknown. */
export const RECENT_IDS_SHOWN = SURFACES["toolArtifacts.recentIds"].maxLines;
/** The recent ids are a sample (newest first): the list mode shows what fits and counts nothing. */
const RECENT_SAMPLE = { separator: ", ", more: () => "" } as const;
/** Store entries whose age is looked up for that list at most (an error path: a huge store is not stat-ed in full). */
export const RECENT_IDS_SCAN_LIMIT = 2000;
/** A stored artifact's file name. */
const ARTIFACT_FILE = /^[0-9a-f]{64}\.txt$/;

/** One entry of the store's tool-output directory; `mtimeMs` is absent when it was not looked up. */
export interface StoreEntry {
	name: string;
	mtimeMs?: number;
}

/** Why an id did not resolve. */
export type ResolveFailure =
	| { code: "unknown"; recent: string[] }
	| { code: "ambiguous"; matches: number }
	| { code: "unavailable" };

/** Pure: why `id` (already valid hex) did not resolve, from the store directory's entries (undefined: unreadable). */
export function explainResolveFailure(id: string, entries: readonly StoreEntry[] | undefined): ResolveFailure {
	if (!entries) return { code: "unavailable" };
	const stored = entries.filter((e) => ARTIFACT_FILE.test(e.name));
	const matching = stored.filter((e) => e.name.startsWith(id)).length;
	if (matching > 1) return { code: "ambiguous", matches: matching };
	// One match the store still refused (not a regular file, unsafe directory): nothing the model can fix.
	if (matching === 1) return { code: "unavailable" };
	const recent = stored
		.filter((e): e is Required<StoreEntry> => typeof e.mtimeMs === "number")
		.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.name < b.name ? -1 : 1))
		.map((e) => artifactId(e.name.slice(0, 64)));
	// A sample of the newest ids within their surface; the rest are not counted.
	return { code: "unknown", recent: [...project(recent, "toolArtifacts.recentIds", RECENT_SAMPLE).entries] };
}

/** Pure: a resolve failure in words. */
export function resolveFailureText(id: string, failure: ResolveFailure): string {
	if (failure.code === "unknown") return RECALL_ERRORS.unknownId(id, failure.recent);
	if (failure.code === "ambiguous") return RECALL_ERRORS.ambiguousId(id, failure.matches);
	return RECALL_ERRORS.storeUnavailable;
}

/** The store directory's entries (names; ages when few), or undefined when it is missing, a symlink or unreadable. */
export function listStoreEntries(dir: string): StoreEntry[] | undefined {
	try {
		if (!lstatSync(dir).isDirectory()) return undefined;
		const names = readdirSync(dir).filter((name) => ARTIFACT_FILE.test(name));
		if (names.length > RECENT_IDS_SCAN_LIMIT) return names.map((name) => ({ name }));
		return names.map((name) => {
			try {
				return { name, mtimeMs: lstatSync(join(dir, name)).mtimeMs };
			} catch {
				return { name };
			}
		});
	} catch {
		return undefined;
	}
}

/** Resolve a (validated) id to a stored tool output, or say in words why not and what to do. */
export function resolveForRecall(
	store: ArtifactStore,
	id: string,
): { ok: true; path: string; sha256: string } | { ok: false; error: string } {
	const resolved = store.resolve(id, TOOL_OUTPUT_KIND);
	if (resolved.ok) return { ok: true, path: resolved.path, sha256: resolved.sha256 };
	const failure = explainResolveFailure(id, listStoreEntries(store.dirFor(TOOL_OUTPUT_KIND)));
	return { ok: false, error: resolveFailureText(id, failure) };
}

/**
 * The tool's answer: the page or the search result of one stored output, projected on `surface` (a
 * longer answer is stored too). Throws an error saying what to do next on bad input or an unknown id.
 */
export async function recallArtifact(
	store: ArtifactStore,
	params: RecallParams,
	surface: SurfaceBudget,
	signal: AbortSignal | undefined,
) {
	const valid = validateRecall(params);
	if (!valid.ok) throw new Error(valid.error);
	const id = params.id.trim().toLowerCase();
	const resolved = resolveForRecall(store, id);
	if (!resolved.ok) throw new Error(resolved.error);
	let answer: RecallAnswer;
	if (params.pattern !== undefined) {
		const compiled = compilePattern(params.pattern, params.ignoreCase === true);
		if (!compiled.ok) throw new Error(compiled.error);
		answer = await searchStored(resolved.path, id, params.pattern, compiled.regex, params.context ?? 0, {
			signal,
			offset: params.offset,
		});
	} else answer = pageStored(resolved.path, id, params.offset, params.limit);
	if (!answer.ok) throw new Error(answer.error);
	const projection = await project(answer.text, surface, { sink: store.asyncSink(TOOL_OUTPUT_KIND) });
	const artifacts = [resolved.path];
	if (projection.artifact?.ok) artifacts.push(projection.artifact.path);
	return {
		content: [{ type: "text" as const, text: projection.text }],
		details: { headroom: headroomDetails({ artifacts }), id, sha256: resolved.sha256 },
	};
}

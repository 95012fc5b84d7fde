/**
 * Every piece of model-facing wording of the tool-artifacts extension, in one place so it is
 * reviewed together and pinned by tests. Nothing here decides anything: callers pass the facts.
 */
import { sanitizeReason, type WindowPlace } from "../shared/projection/projection.ts";
import { plural } from "../shared/text/format.ts";
import type { OutputClass } from "./classify.ts";
import type { FullOutputFailure } from "./full-output.ts";
import { RECALL_SEARCH_TIMEOUT_MS } from "./search-worker.ts";

/** Name of the tool that reads or searches a stored artifact. */
export const RECALL_TOOL_NAME = "recall_artifact";

/** Said after the line count when the stored text ends with a newline. */
const LAST_LINE_EMPTY = "(the last one empty)";

/** "1 line", "37,212 lines": counts in prose carry separators, as the projection's own footer prints them. */
const counted = plural;

/**
 * First line of every stub. It comes first because Pi's compaction keeps only a tool result's opening.
 * Lines are counted as Pi's read counts them (its offsets address them), so text ending in "\n" has an
 * empty last line; the header says so, or `seq 1 200000` would look like 200,001 numbers.
 */
export function stubHeader(id: string, tool: string, bytes: number, lines: number, lastLineEmpty: boolean): string {
	const empty = lastLineEmpty ? ` ${LAST_LINE_EMPTY}` : "";
	return `[Artifact ${id} | ${tool} | ${counted(bytes, "byte", "bytes")}, ${counted(lines, "line", "lines")}${empty}]`;
}

/** Last line of every stub: where the full text is and the two ways to get at it. */
export function stubFooter(path: string, id: string): string {
	return `[Full output stored: ${path} — page it with read (offset/limit) or search it with ${RECALL_TOOL_NAME}("${id}")]`;
}

/**
 * Matches a stub's first line; used to recognise stubs already made (never shorten twice) and to read
 * its facts. Groups: id, tool, bytes and lines (digits with "," separators), and the empty-last-line note.
 */
export const STUB_HEADER_PATTERN =
	/^\[Artifact ([0-9a-f]{8,64}) \| ([^|\n]+) \| (\d{1,3}(?:,\d{3})*) bytes?, (\d{1,3}(?:,\d{3})*) lines?( \(the last one empty\))?\]$/;
/** Matches a stub's last line. */
export const STUB_FOOTER_PATTERN =
	/^\[Full output stored: .+ — page it with read \(offset\/limit\) or search it with recall_artifact\("[0-9a-f]{8,64}"\)\]$/;

/**
 * First line of a stub whose output the store could not keep. It says so first (compaction keeps a
 * result's opening), with the size of what was not stored.
 */
export function unstoredStubHeader(tool: string, bytes: number, lines: number, lastLineEmpty: boolean): string {
	const empty = lastLineEmpty ? ` ${LAST_LINE_EMPTY}` : "";
	return `[Tool output NOT stored | ${tool} | ${counted(bytes, "byte", "bytes")}, ${counted(lines, "line", "lines")}${empty}]`;
}

/**
 * Last line of a stub whose output the store could not keep: why, and what the model can do. With
 * Pi's full-output file (bash saved one) the omitted part is still one read away there; without it
 * only the excerpt is left, and re-running the command narrower is the way to the rest.
 */
export function unstoredStubFooter(reason: string, fullOutputFile?: string): string {
	const why = `[Full output NOT stored (the artifact store failed: ${sanitizeReason(reason)})`;
	if (fullOutputFile) {
		return `${why} — Pi's full-output file still holds it: ${fullOutputFile} — page it with read (offset/limit) while it exists]`;
	}
	return `${why} — only the excerpt above is left; re-run the tool with narrower output (a filter, a range) to see more]`;
}

/** Matches the first line of a stub whose output was not stored. */
export const UNSTORED_STUB_HEADER_PATTERN =
	/^\[Tool output NOT stored \| ([^|\n]+) \| (\d{1,3}(?:,\d{3})*) bytes?, (\d{1,3}(?:,\d{3})*) lines?( \(the last one empty\))?\]$/;
/** Matches the last line of a stub whose output was not stored. */
export const UNSTORED_STUB_FOOTER_PATTERN = /^\[Full output NOT stored \(the artifact store failed: .+\) — .+\]$/;

/** Why bash's complete output is gone, in words (the facts come from full-output.ts). */
export function fullOutputFailureText(failure: FullOutputFailure): string {
	switch (failure.code) {
		case "deleted":
			return "its temp file was deleted";
		case "symlink":
			return "its temp file is a symlink and was not followed";
		case "not-a-file":
			return "its temp file is not a regular file";
		case "too-large":
			return `its temp file is larger than ${counted(failure.maxBytes, "byte", "bytes")}`;
		case "mismatch":
			return "its temp file does not match the output shown";
		case "unreadable":
			return `its temp file cannot be read${failure.errno ? ` (${failure.errno})` : ""}`;
		case "no-file":
			return "the tool kept no full-output file";
	}
}

/** Said in the stub when bash's complete output could not be recovered. */
export function partialOutputNote(shownBytes: number, failure: FullOutputFailure): string {
	return `[Note: the complete output no longer exists (${fullOutputFailureText(failure)}); the artifact holds only the ${counted(shownBytes, "byte", "bytes")} the tool returned.]`;
}

/** Said in the stub when the summary model did not deliver; the excerpt follows. */
export function summaryFailedNote(reason: string): string {
	return `[Summary unavailable (${reason}); excerpt of the output follows.]`;
}

/** Heads a model's summary (after the verbatim excerpt), so the reader knows it is not verbatim. */
export function summaryLabel(model: string): string {
	return `Summary (by ${model}; verbatim text is in the artifact):`;
}

/** Said in the stub when the scan found failures and the model's summary mentions none. */
export const SUMMARY_DISAGREES_NOTE =
	"[Note: the summary and the verbatim lines disagree: the scan found failures (in the excerpt below) that the summary does not mention. Trust the verbatim lines and the artifact.]";

/** Heads the body of a fallback excerpt. */
export const EXCERPT_LABEL = "Excerpt:";

/**
 * For file content: one sentence on what lies before and after the verbatim window, in the file's
 * line numbers; when the read started past line 1, how those map to the stored output's lines.
 */
export function fileWindowContext(info: WindowPlace): string {
	const before =
		info.firstShown > info.firstLine
			? `lines ${info.firstLine}-${info.firstShown - 1} (${counted(info.beforeBytes, "byte", "bytes")}) come before`
			: "nothing comes before";
	const after =
		info.lastShown < info.lastLine
			? `lines ${info.lastShown + 1}-${info.lastLine} (${counted(info.afterBytes, "byte", "bytes")}) come after`
			: "nothing comes after";
	const shift = info.firstLine - 1;
	const mapping = shift > 0 ? ` File line N is line N-${shift} of the stored output.` : "";
	return `Showing file lines ${info.firstShown}-${info.lastShown} verbatim (numbered); ${before}, ${after}.${mapping}`;
}

/** Pi's read notice kept from a file result: it is about the source file, not the stored output. */
export function readNoticeLine(notice: string): string {
	return `The read tool's note about the source file (not the stored output): ${notice}`;
}

/** Between head and tail of a summary cut to fit the stub (the summary itself is not stored). */
export function summaryCutMarker(omittedLines: number, omittedBytes: number): string {
	return `[… ${counted(omittedLines, "line", "lines")} (${counted(omittedBytes, "byte", "bytes")}) of the summary cut to fit; the verbatim output is in the artifact …]`;
}

/** Said (to the summary model) where the call's arguments were cut: they are not stored anywhere. */
export const ARGS_NOT_STORED = "the arguments are not stored";

/** For search results: the header of the per-file match index. */
export function searchIndexHeader(files: number, matches: number): string {
	return `Matches by file (${counted(matches, "matching line", "matching lines")} in ${counted(files, "file", "files")}):`;
}

/** For directory listings: the header of the per-kind count. */
export function listingIndexHeader(entries: number): string {
	return `Entries by kind (${counted(entries, "entry", "entries")}):`;
}

/** Last row of an index that lists only some of its rows: how many files (or kinds) are not listed. */
export function moreIndexRows(omitted: number, noun: "file" | "kind"): string {
	return `  … and ${plural(omitted, `more ${noun}`)}`;
}

/** What each kind of output asks of the summary model. */
const CLASS_INSTRUCTIONS: Record<OutputClass, string> = {
	command:
		"This is the output of a shell command or build. Quote every error, failure, warning that matters, " +
		"stack-trace head and exit code verbatim. Say whether the command succeeded. Name the files and tests involved.",
	search:
		"These are search results. Group them by file; for each file give the line numbers and a short quote of " +
		"the most relevant matches. State the total number of matches and files.",
	listing:
		"This is a directory listing. Group the entries by kind (directories, source files by language, config, " +
		"build output, other) with counts, and name the entries that look most relevant.",
	structured:
		"This is structured data. List the top-level keys or records, names, versions and identifiers, and any " +
		"values that look like errors or limits. Keep exact spellings.",
	web:
		"This is web content. Give the main facts, figures and dates, and quote the key sentences verbatim with " +
		"their headings. Leave out navigation, ads and boilerplate.",
	file:
		"This is file content. Reproduce verbatim, with line numbers, the range that was asked for, or the middle " +
		"third of the text when no range was asked for; then add one or two sentences on what lies before and after.",
	unknown:
		"Summarise the key facts, identifiers, numbers and any errors. Quote exact strings verbatim where they matter.",
};

/** System prompt of the summary call. */
export function summarySystemPrompt(kind: OutputClass): string {
	return [
		"You condense one tool result for a coding agent that cannot see the full output.",
		CLASS_INSTRUCTIONS[kind],
		"Be factual and dense; no preamble, no advice, no speculation. The full output stays available to the agent, " +
			"so mention where in it (line numbers) the important parts are.",
	].join("\n");
}

/** User message of the summary call: the call and its (possibly head+tail) output. */
export function summaryUserPrompt(info: {
	tool: string;
	args: string;
	output: string;
	cut: boolean;
	notable?: boolean;
}): string {
	const heading = !info.cut
		? "Output:"
		: info.notable
			? "Output (first its notable lines from anywhere in it, each with its line number, then head and tail; the middle was cut to fit):"
			: "Output (head and tail; the middle was cut to fit):";
	return [`Tool: ${info.tool}`, `Arguments: ${info.args}`, heading, "<output>", info.output, "</output>"].join("\n");
}

/** Why a summary was not used, in words for the stub note. */
export const SUMMARY_FAILURE = {
	timeout: (ms: number) => `no answer within ${Math.round(ms / 100) / 10} s`,
	http: (message: string) => `model error: ${message}`,
	empty: "the model's reply was empty or unreadable",
	aborted: "aborted",
	noModel: "no summary model available",
} as const;

/** Description of the recall tool, for the model. */
export const RECALL_DESCRIPTION =
	"Read or search one stored tool-output artifact by its id (the hex after 'Artifact' in a stub). " +
	"Give offset/limit (1-based lines) to page, or pattern (a JavaScript regular expression, matched per line) " +
	"with optional context lines to search (offset then sets the line the search starts at). " +
	"Output is bounded; it says how to get the rest.";

/** Parameter descriptions of the recall tool. */
export const RECALL_PARAMS = {
	id: "Artifact id from a stub's first line (hex, 8-64 characters).",
	offset: "First line to show, 1-based (default 1); with pattern, the line the search starts at.",
	limit: "Number of lines to show.",
	pattern:
		"Regular expression matched against each line; matching lines are shown with their line numbers. " +
		`A search is stopped after ${RECALL_SEARCH_TIMEOUT_MS / 1000} s, so avoid nested repetition such as (a+)+.`,
	context: "Lines of context to show before and after each match (default 0, at most 20).",
	ignoreCase: "Match the pattern case-insensitively.",
} as const;

/** Errors the recall tool returns; each says what to do next. */
export const RECALL_ERRORS = {
	badId: (id: string) =>
		`Invalid artifact id ${JSON.stringify(id)}: ids are 8-64 hex characters, e.g. the 12-hex id in a stub's first line [Artifact 1a2b3c4d5e6f | …].`,
	unknownId: (id: string, recent: readonly string[]) =>
		`Unknown artifact id ${JSON.stringify(id)}; ids are the 12-hex ids in stub headers, e.g. [Artifact 1a2b3c4d5e6f | …].` +
		(recent.length > 0 ? ` Most recent ids: ${recent.join(", ")}.` : " No tool output is stored yet."),
	ambiguousId: (id: string, matches: number) =>
		`Artifact id ${JSON.stringify(id)} matches ${matches} stored outputs; give more of its hex characters (the stub header has 12).`,
	storeUnavailable:
		"The artifact store cannot be read right now, so no artifact can be recalled; use read on the path in the stub instead.",
	badPattern: (message: string) =>
		// The engine's message already starts "Invalid regular expression: " (V8 and JavaScriptCore): said once.
		`Invalid regular expression: ${message.replace(/^Invalid regular expression:\s*/i, "")}. Escape special characters such as ( [ . * + ? with a backslash.`,
	patternTooLong: (max: number) => `Pattern too long (more than ${max} characters); use a shorter expression.`,
	bothModes:
		"limit pages lines and cannot be combined with pattern; with pattern, give offset alone to start the search at that line.",
	offsetPastEnd: (offset: number, total: number) =>
		`Offset ${offset} is past the end of the artifact (${total} lines); use an offset from 1 to ${total}.`,
	unreadable: (errno: string | undefined) =>
		`The artifact could not be read${errno ? ` (${errno})` : ""}; use read on the path in the stub instead.`,
	searchTimeout: (ms: number) =>
		`The search was stopped after ${Math.round(ms / 100) / 10} s: the pattern takes too long (nested quantifiers such as (a+)+ or (.*)* backtrack without end). Simplify it: drop nested repetition, anchor it, or search for a fixed substring.`,
	searchAborted: "The search was cancelled.",
	searchFailed: "The search could not be run; try again, or page the artifact with offset/limit.",
	searchBusy: (running: number, queued: number) =>
		`The search was not run: ${running} searches are running and ${queued} more are waiting (the most at once); ` +
		"try again when they are done.",
} as const;

/** Header line of a recall page. */
export function recallPageHeader(id: string, first: number, last: number, total: number): string {
	return `[Artifact ${id}: lines ${first}-${last} of ${total}]`;
}

/** Trailer of a recall page when more lines follow. */
export function recallContinue(next: number, total: number): string {
	return `[${total - next + 1} more lines. Use offset=${next} to continue.]`;
}

/** Header line of a recall search; `start` is the line the search began at. */
export function recallSearchHeader(
	id: string,
	pattern: string,
	hit: { matches: number; total: number; capped: boolean; longLines?: number; lineMaxChars?: number },
	start: number,
): string {
	const count = `${hit.capped ? "first " : ""}${hit.matches} matching ${hit.matches === 1 ? "line" : "lines"}`;
	const scope = start > 1 ? `lines ${start}-${hit.total} of ${hit.total}` : `${hit.total} lines`;
	const long = hit.longLines
		? `; ${hit.longLines} ${hit.longLines === 1 ? "line" : "lines"} longer than ${hit.lineMaxChars} characters searched and shown in their first ${hit.lineMaxChars}`
		: "";
	return `[Artifact ${id}: ${count} for /${pattern}/ in ${scope}${long}; "N:" marks a match, "N-" context]`;
}

/** Last line of a search stopped at the match cap: exactly where to go on. */
export function recallSearchContinue(matches: number, lastMatch: number): string {
	return `[Stopped after ${matches} matches at line ${lastMatch}; search again with offset=${lastMatch + 1}, or narrow the pattern.]`;
}

/** Separator between non-adjacent groups of search output, as grep prints it. */
export const RECALL_GROUP_SEPARATOR = "--";

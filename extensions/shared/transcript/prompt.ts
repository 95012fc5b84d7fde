/**
 * Model-facing wording for transcripts: the omission index (shared by context-trim's marker and
 * a forked child's narration) and the narration itself. Pinned by test/unit/narrate*.test.ts.
 *
 * Framing follows the session's shape: hand-off wording appears only where a fork happened; a
 * child that starts fresh owns its work from its first turn and is never told otherwise.
 */

import { project } from "../projection/projection.ts";
import { SURFACES } from "../surfaces.ts";
import { formatCount, plural } from "../text/format.ts";
import type { OmissionIndex } from "./omission.ts";

/**
 * How much of the index to print; the renderers step these down until the text fits. Each list goes
 * through the projection's list mode within its surface (transcript.index*), these counts narrowing it.
 */
export interface IndexDetail {
	/** Tools listed by name before the rest are counted. */
	tools: number;
	/** Brief arguments per listed tool. */
	briefs: number;
	/** Files listed before the rest are counted. */
	files: number;
	/** Shortened texts listed before the rest are counted. */
	shortened: number;
}

/** Full detail: what each list's surface holds before it counts the rest. */
export const FULL_DETAIL: IndexDetail = {
	tools: SURFACES["transcript.indexTools"].maxLines - 1,
	briefs: SURFACES["transcript.briefsPerTool"].maxLines,
	files: SURFACES["transcript.indexFiles"].maxLines - 1,
	shortened: SURFACES["transcript.indexShortened"].maxLines - 1,
};

/** Progressively smaller details, for fitting a marker into its token reserve. */
export const DETAIL_STEPS: IndexDetail[] = [
	FULL_DETAIL,
	{ tools: 8, briefs: 2, files: 10, shortened: 4 },
	{ tools: 6, briefs: 1, files: 5, shortened: 2 },
	{ tools: 4, briefs: 0, files: 2, shortened: 1 },
	{ tools: 0, briefs: 0, files: 0, shortened: 0 },
];

const n = formatCount;

/** An inline list of the index: items joined by commas, then the count of the rest after one more comma. */
const INDEX_LIST = { separator: ", ", markerSeparator: ", " } as const;

/** `bash ×12 (npm test; git status), read ×7` */
function toolsLine(index: OmissionIndex, detail: IndexDetail): string | undefined {
	if (index.tools.length === 0) return undefined;
	const named = index.tools.map((t) => {
		const briefs =
			detail.briefs > 0
				? project(t.briefs, "transcript.briefsPerTool", { maxLines: detail.briefs, separator: "; ", more: () => "" })
						.text
				: "";
		return `${t.name} ×${t.count}${briefs.length > 0 ? ` (${briefs})` : ""}`;
	});
	const listed = project(named, "transcript.indexTools", {
		...INDEX_LIST,
		maxLines: detail.tools + 1,
		more: (rest) => plural(rest, "more tool"),
	});
	return `Tool calls left out: ${listed.text}`;
}

function filesLine(index: OmissionIndex, detail: IndexDetail): string | undefined {
	if (index.files.length === 0) return undefined;
	const listed = project(index.files, "transcript.indexFiles", {
		...INDEX_LIST,
		maxLines: detail.files + 1,
		more: (rest) => `and ${n(rest)} more`,
	});
	return `Files those calls touched: ${listed.text}`;
}

function shortenedLine(index: OmissionIndex, detail: IndexDetail): string | undefined {
	if (index.shortened.length === 0) return undefined;
	const named = index.shortened.map((s) => {
		const what =
			s.role === "toolResult" ? `${s.toolName ?? "tool"} result` : s.toolName ? `${s.toolName} call` : s.role;
		return `${what} (${n(s.originalBytes)} → ${n(s.keptBytes)} bytes)`;
	});
	const listed = project(named, "transcript.indexShortened", {
		...INDEX_LIST,
		maxLines: detail.shortened + 1,
		more: (rest) => `${n(rest)} more`,
	});
	return `Shown only as head and tail (the cut is marked inside each; a log's notable lines come first): ${listed.text}`;
}

/** The index lines: what was left out, which tools with brief arguments, files touched, what was shortened. */
export function formatOmissionIndex(index: OmissionIndex, detail: IndexDetail = FULL_DETAIL): string[] {
	const lines: string[] = [];
	if (index.messages > 0) {
		const parts: string[] = [];
		if (index.userMessages > 0) parts.push(`${n(index.userMessages)} from the user`);
		if (index.assistantMessages > 0) parts.push(`${n(index.assistantMessages)} assistant replies`);
		const kinds = parts.length > 0 ? ` (${parts.join(", ")})` : "";
		lines.push(`Left out: ${n(index.messages)} messages${kinds}, about ${n(index.tokens)} tokens.`);
	}
	for (const line of [toolsLine(index, detail), filesLine(index, detail), shortenedLine(index, detail)]) {
		if (line) lines.push(line);
	}
	return lines;
}

/** Where the full transcript is, or plainly that there is none. */
export function transcriptWhere(sessionFile: string | undefined): string {
	return sessionFile
		? `The full transcript, word for word, is in the session file ${sessionFile} (JSON lines; read or grep it for a detail).`
		: "This session is not saved to a file, so the left-out part cannot be re-read; re-run a tool if you need a detail.";
}

// ---- narration (a forked child's starting context) ----

/** Opening of a forked child's context: owner framing, said only where a fork really happened. */
export function forkIntro(sessionFile: string | undefined): string {
	return [
		"You are continuing a session that the parent agent started. Below is that session's history, narrated: " +
			"lines in square brackets report what the user said and what the parent did — calls it made and the results " +
			"it saw. You did not make those calls; their results are real and you may rely on them.",
		"This work is yours; continue it. Do not recap the history or review it as someone else's work unless asked.",
		sessionFile ? `The parent's session file holds the complete record: ${sessionFile}` : undefined,
	]
		.filter(Boolean)
		.join("\n");
}

/** Closing of a forked child's context: the task it owns now. */
export function forkTask(task: string): string {
	return `[end of the parent's history]\n\nYour task now:\n${task}`;
}

/** Framing for a child's system prompt: hand-off wording only when it was forked. */
export function ownerFraming(shape: { forked: boolean }): string {
	return shape.forked
		? "The history you were given is the parent's session up to now; this work is yours; continue it."
		: "This task is yours from the start; every turn in this conversation is your own work.";
}

export const narration = {
	user: (text: string) => `[user said]\n${text}`,
	assistant: (text: string) => `[parent said]\n${text}`,
	call: (name: string, argsJson: string) => `[parent called ${name}(${argsJson})]`,
	result: (text: string, isError: boolean) => `[${isError ? "error result" : "result"}: ${text}]`,
	note: (kind: string, text: string) => `[${kind} note]\n${text}`,
	userBash: (command: string, output: string) => `[user ran !${command}]\n[result: ${output}]`,
	summary: (text: string) => `[summary of the earlier session]\n${text}`,
	omission: (lines: string[], where: string) =>
		`[part of the parent's history is left out here, under the same rule the parent's own view follows]\n${[
			...lines,
			where,
		].join("\n")}`,
};

/**
 * Wording of the checkable children a model reads: isolated ones (worktree, what changed, the patch,
 * subagent_cleanup) and structured ones (output_schema, its correction turn and verdict). Split from
 * prompt.ts, which holds the wording every tool shares; pinned by test/unit/subagents-*.test.ts.
 */

import { project } from "../../shared/projection/projection.ts";
import { SURFACES } from "../../shared/surfaces.ts";
import { shortHash } from "../../shared/text/format.ts";
import { stripControls } from "../../shared/text/sanitize.ts";
import { utf8ByteLength } from "../../shared/text/utf8.ts";
import { formatCount, plural } from "../domain/format.ts";
import type { ChildRecord } from "../domain/records.ts";
import { label } from "./common.ts";

/** Hex digits of a commit id as the results show it (as git log --abbrev=12 would). */
const COMMIT_ID_HEX = 12;

export function notARepositoryError(reason: string): string {
	return (
		`isolation "worktree" is not possible: ${reason}. No child was started. ` +
		"Spawn without isolation (it then works in your tree), or run git init and commit first."
	);
}

export function worktreeFailedError(reason: string): string {
	return `isolation "worktree" failed: ${reason}. No child was started; fix that or spawn without isolation.`;
}

export function badIsolationError(value: string): string {
	return `Unknown isolation ${JSON.stringify(value)}; use "worktree" or "none".`;
}

export function badOutputSchemaError(reason: string): string {
	return `output_schema cannot be used: ${reason}. No child was started; pass a JSON Schema object.`;
}

/** Spawn-result sentence of an isolated child: where it works and what it does not see. */
export function isolationNote(w: {
	path: string;
	branch: string;
	base: string;
	repoTop: string;
	parentUncommitted: number;
}): string {
	const carried =
		w.parentUncommitted > 0
			? `Your ${plural(w.parentUncommitted, "uncommitted change")} (staged, unstaged or untracked) are NOT in it: commit first if the child needs them.`
			: "Your working tree had no uncommitted changes, so the child sees exactly your files.";
	return (
		`Isolated: it works in a new git worktree ${w.path} on branch ${w.branch}, created from HEAD ${shortHash(w.base, COMMIT_ID_HEX)} ` +
		`of ${w.repoTop}. ${carried} Your tree and index are not touched; its result starts with what it changed.`
	);
}

export function structuredNote(): string {
	return "Its answer must end with JSON valid against output_schema (one correction turn); you get the validated JSON.";
}

/** Appended to a structured child's task: the schema it must answer with. */
export function outputSchemaInstruction(schemaText: string): string {
	return (
		"\n\n---\nAnswer format (required): end your final message with one JSON value that validates against this " +
		"JSON Schema — as a ```json fenced block or bare JSON, as the very last thing in the message, nothing after it:\n" +
		"```json\n" +
		schemaText +
		"\n```"
	);
}

/** The one correction turn: what failed, and the schema again. */
export function outputSchemaCorrection(found: boolean, errors: string[], schemaText: string): string {
	const what = found
		? `Your final JSON does not validate against the required JSON Schema:\n${errors.map((e) => `- ${e}`).join("\n")}`
		: "Your final message does not end with a JSON value.";
	return (
		`${what}\nReply now with only the corrected JSON value (no prose), valid against this schema:\n` +
		"```json\n" +
		schemaText +
		"\n```"
	);
}

/** Reminder added to subagent_send's text for a structured child starting another run. */
export const OUTPUT_SCHEMA_REMINDER =
	"\n\n(As before: end your final message with one JSON value valid against the output schema of your task.)";

export const VERDICT_VALID = "output valid";
export const VERDICT_INVALID = "output INVALID";

/** An output_schema pattern that did not finish matching the answer's strings in time (a catastrophic pattern). */
export function patternTimedOut(pattern: string, timeoutMs: number): string {
	return `the pattern ${JSON.stringify(pattern)} did not finish matching within ${timeoutMs} ms (it backtracks catastrophically); rewrite it without nested quantifiers`;
}

/** The pattern check could not run (its worker did not start). */
export function patternProbeFailed(): string {
	return "the output_schema patterns could not be checked (the checking thread failed); the answer is not validated";
}

/** Body of a structured result that never complied: the errors, then the raw answer. */
export function invalidOutputText(reasons: string[], corrections: number, raw: string): string {
	const after = corrections > 0 ? "after one correction turn" : "and the correction turn could not run";
	return (
		`Invalid structured output: the answer does not end with JSON valid against output_schema ${after}.\n` +
		`Errors:\n${reasons.map((e) => `- ${e}`).join("\n")}\n\nRaw answer:\n${raw}`
	);
}

export const NO_JSON_FOUND = "the answer does not end with a JSON value";

export function correctionFailed(error: string): string {
	return `the correction turn failed: ${error}`;
}

type ChangedFile = { path: string; status: "added" | "modified" | "deleted"; added?: number; removed?: number };

/** Most changed files listed in a result before the rest are counted; the patch has them all. */
export const CHANGED_FILES_SHOWN = SURFACES["subagents.changedFiles"].maxLines - 1;
/** Longest line of one changed file, in UTF-8 bytes (a very long path is clipped; the patch has it whole). */
const CHANGED_FILE_LINE_BYTES = Math.floor(
	SURFACES["subagents.changedFiles"].maxBytes / SURFACES["subagents.changedFiles"].maxLines,
);

/** The last line of the changed files when some are not listed. */
function moreChangedFiles(omitted: number): string {
	return `  … and ${plural(omitted, "more file")} (all in the patch)`;
}

function fileLine(f: ChangedFile): string {
	const mark = f.status === "added" ? "A" : f.status === "deleted" ? "D" : "M";
	const counts = f.added === undefined ? "binary" : `+${formatCount(f.added)} −${formatCount(f.removed ?? 0)}`;
	const tail = ` (${counts})`;
	return `  ${mark} ${project(stripControls(f.path).replace(/[\n\t]/g, " "), "subagents.changedFiles", { maxBytes: CHANGED_FILE_LINE_BYTES - 4 - utf8ByteLength(tail), maxLines: 1 }).text}${tail}`;
}

/** First lines of an isolated child's result: what changed, where, and how to take it. */
export function changesText(o: {
	id: string;
	worktree: string;
	branch: string;
	base: string;
	repoTop: string;
	files: ChangedFile[];
	commits: number;
	patch: { ok: true; path: string } | { ok: false; error: string } | undefined;
}): string {
	const added = o.files.reduce((n, f) => n + (f.added ?? 0), 0);
	const removed = o.files.reduce((n, f) => n + (f.removed ?? 0), 0);
	const lines = [
		`Changes in worktree ${o.worktree} (branch ${o.branch}, from ${shortHash(o.base, COMMIT_ID_HEX)}): ` +
			`${plural(o.files.length, "file")} changed, +${formatCount(added)} −${formatCount(removed)}` +
			(o.commits > 0 ? `, ${plural(o.commits, "commit")} on the branch` : "") +
			".",
	];
	if (o.files.length > 0) {
		lines.push(project(o.files.map(fileLine), "subagents.changedFiles", { more: moreChangedFiles }).text);
	}
	if (o.patch?.ok) {
		lines.push(
			`Patch of everything it changed (untracked files included): ${o.patch.path} — read it, or take it with ` +
				`git -C ${o.repoTop} apply ${o.patch.path} (add --check to try first).`,
		);
	} else {
		const why = o.patch ? `the patch could not be stored (${o.patch.error})` : "no patch was stored";
		lines.push(
			`${why}; see the changes with git -C ${o.worktree} status and git -C ${o.worktree} diff ${shortHash(o.base, COMMIT_ID_HEX)}.`,
		);
	}
	lines.push(`The worktree is kept until you remove it: subagent_cleanup(ids=["${o.id}"]).`);
	return lines.join("\n");
}

export function noChangesText(worktree: string, removed: { ok: true } | { ok: false; error: string }): string {
	return removed.ok
		? `No changes in its worktree; the worktree ${worktree} and its branch were removed.`
		: `No changes in its worktree, but removing ${worktree} failed (${removed.error}); it is kept.`;
}

export function changesUnknownText(worktree: string, error: string): string {
	return `Could not determine what it changed (${error}); its worktree ${worktree} is kept. Inspect it with git -C ${worktree} status.`;
}

export const PATCH_NOT_UTF8 =
	"it holds bytes that are not UTF-8 (a file in another encoding), and the artifact store keeps text only";

export function concludeFailedNote(error: unknown): string {
	return `[could not summarise this child's changes: ${error instanceof Error ? error.message : String(error)}]`;
}

export function recreatedWorktreeNote(path: string, base: string): string {
	return `its worktree ${path} was re-created from HEAD ${shortHash(base, COMMIT_ID_HEX)}`;
}

export const CLEANUP_NOTHING = "No ids given: pass the ids of isolated children to remove their worktrees.";

export function cleanupLine(
	c: Pick<ChildRecord, "id" | "name">,
	outcome:
		| { kind: "removed"; why: "no-changes" | "in-tree" | "discarded"; files: number; patchPath?: string }
		| { kind: "kept"; files: number; patchPath?: string; repoTop: string }
		| { kind: "not-isolated" | "already-removed" | "running" }
		| { kind: "failed"; error: string },
): string {
	switch (outcome.kind) {
		case "removed": {
			const why =
				outcome.why === "no-changes"
					? "it had no changes"
					: outcome.why === "in-tree"
						? "its changes are in your working tree"
						: `discarded ${plural(outcome.files, "changed file")} as asked`;
			const patch = outcome.patchPath ? `; its patch stays at ${outcome.patchPath}` : "";
			return `${label(c)}: worktree and branch removed (${why})${patch}.`;
		}
		case "kept":
			return (
				`${label(c)}: kept — its changes (${plural(outcome.files, "file")}) are not in your working tree yet. ` +
				(outcome.patchPath
					? `Apply ${outcome.patchPath} with git -C ${outcome.repoTop} apply, `
					: "Merge its branch ") +
				"then clean up again, or pass discard: true to remove it anyway."
			);
		case "not-isolated":
			return `${label(c)}: not isolated; nothing to remove.`;
		case "already-removed":
			return `${label(c)}: its worktree was already removed.`;
		case "running":
			return `${label(c)}: still running; cancel it or wait for it first.`;
		case "failed":
			return `${label(c)}: could not clean up: ${outcome.error}`;
	}
}

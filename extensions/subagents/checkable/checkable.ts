/**
 * The run steps of checkable children. Isolated: before a run the worktree is re-created if it was removed;
 * after it, what changed leads the result and the patch goes to the artifact store; an unchanged worktree is
 * removed. Structured: the answer is checked against output_schema, with exactly one correction turn.
 */
import type { ArtifactStore } from "../../shared/store/artifact-store.ts";
import type { ChangesOutcome } from "../domain/result-extras.ts";
import {
	changesText,
	changesUnknownText,
	correctionFailed,
	invalidOutputText,
	NO_JSON_FOUND,
	noChangesText,
	notARepositoryError,
	outputSchemaCorrection,
	PATCH_NOT_UTF8,
	recreatedWorktreeNote,
	VERDICT_INVALID,
	VERDICT_VALID,
} from "../prompt/checkable.ts";
import {
	captureChanges,
	createWorktree,
	type GitOptions,
	probeRepository,
	removeWorktree,
	type Worktree,
	worktreeExists,
} from "./isolation.ts";
import type { Reviewed, RunSteps } from "./run-steps.ts";
import { checkAnswerBounded, type OutputSchema } from "./schema.ts";

export interface IsolationStepOptions extends GitOptions {
	/** Child id (for the cleanup hint). */
	id: string;
	/** The child's worktree; updated in place when it is re-created. */
	worktree: Worktree;
	/** Where patches go. */
	store: ArtifactStore;
	/** Folder of all worktrees and the agent dir above it (to re-create one). */
	root: string;
	trustedRoot: string;
	/** Folder and branch name of this child's worktree. */
	name: string;
}

/** Capture, store and word what an isolated child changed; remove its worktree when it changed nothing. */
export async function reportChanges(
	o: Pick<IsolationStepOptions, "id" | "worktree" | "store" | "git">,
): Promise<{ text: string; outcome: ChangesOutcome }> {
	const w = o.worktree;
	const base = { worktree: w.path, branch: w.branch, base: w.base, files: [], commits: 0 };
	let changes: Awaited<ReturnType<typeof captureChanges>>;
	try {
		changes = await captureChanges(w, o);
	} catch (error) {
		const message = (error as Error).message;
		return { text: changesUnknownText(w.path, message), outcome: { ...base, kept: true, error: message } };
	}
	if (changes.files.length === 0 && changes.commits === 0) {
		try {
			await removeWorktree(w, o);
			return { text: noChangesText(w.path, { ok: true }), outcome: { ...base, kept: false } };
		} catch (error) {
			const message = (error as Error).message;
			return {
				text: noChangesText(w.path, { ok: false, error: message }),
				outcome: { ...base, kept: true, error: message },
			};
		}
	}
	let patch: { ok: true; path: string } | { ok: false; error: string } | undefined;
	if (!changes.patchIsUtf8) patch = { ok: false, error: PATCH_NOT_UTF8 };
	else if (changes.patch.length > 0) {
		const put = await o.store.put("subagent-results", changes.patch);
		patch = put.ok ? { ok: true, path: put.path } : { ok: false, error: put.error };
	}
	const outcome: ChangesOutcome = {
		...base,
		kept: true,
		files: changes.files,
		commits: changes.commits,
		patchPath: patch?.ok ? patch.path : undefined,
		error: patch && !patch.ok ? patch.error : undefined,
	};
	const text = changesText({
		id: o.id,
		worktree: w.path,
		branch: w.branch,
		base: w.base,
		repoTop: w.repoTop,
		files: changes.files,
		commits: changes.commits,
		patch,
	});
	return { text, outcome };
}

export function isolationSteps(o: IsolationStepOptions): RunSteps {
	let recreated: string | undefined;
	return {
		async beforeRun() {
			if (worktreeExists(o.worktree)) return;
			// Removed after an earlier run that changed nothing (or by subagent_cleanup): start again from HEAD.
			const probe = await probeRepository(o.worktree.repoTop, o);
			if (!probe.ok) throw new Error(notARepositoryError(probe.reason));
			const fresh = await createWorktree({ ...o, repo: { ...probe.repo, relCwd: "" } });
			Object.assign(o.worktree, { ...fresh, cwd: o.worktree.cwd });
			recreated = recreatedWorktreeNote(fresh.path, fresh.base);
		},
		async conclude(_state, result): Promise<Reviewed> {
			const report = await reportChanges(o);
			const note = recreated ? `(${recreated}.) ` : "";
			recreated = undefined;
			return { ...result, text: `${note}${report.text}\n\n${result.text}`, extras: { changes: report.outcome } };
		},
	};
}

/** A valid structured answer, after `corrections` correction turns. */
function valid(raw: string, value: unknown, corrections: number): Reviewed {
	return { text: raw, verdict: VERDICT_VALID, extras: { structured: { status: "valid", value, corrections } } };
}

/** Checks the answer against the schema; one correction turn through `ask`; invalid after that. */
export function structuredSteps(schema: OutputSchema): RunSteps {
	return {
		async review(answer, ask): Promise<Reviewed> {
			const first = await checkAnswerBounded(schema, answer);
			if (first.ok) {
				return valid(first.raw, first.value, 0);
			}
			const firstReasons = first.found ? first.errors : [NO_JSON_FOUND];
			const again = await ask(outputSchemaCorrection(first.found, first.errors, schema.text));
			if (!again.ok) {
				const reasons = [...firstReasons, correctionFailed(again.error)];
				return invalid(reasons, 0, answer, first.found ? first.value : undefined);
			}
			const second = await checkAnswerBounded(schema, again.text);
			if (second.ok) {
				return valid(second.raw, second.value, 1);
			}
			const reasons = second.found ? second.errors : [NO_JSON_FOUND];
			return invalid(reasons, 1, again.text, second.found ? second.value : undefined);
		},
	};
}

function invalid(errors: string[], corrections: number, raw: string, value: unknown): Reviewed {
	return {
		text: invalidOutputText(errors, corrections, raw),
		verdict: VERDICT_INVALID,
		extras: {
			structured: { status: "invalid", errors, corrections, ...(value !== undefined ? { value } : {}) },
		},
	};
}

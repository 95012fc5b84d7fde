/**
 * Model-facing wording of pipelines (`after`): the spawn parameters, errors at spawn, why a child was
 * skipped, how its inputs are introduced in its task, and the one line a relayed result takes in the parent.
 */
import type { ChildRecord, ChildState } from "../domain/records.ts";
import type { AfterProblem, FailedInput, NotRestorable } from "../pipeline/graph.ts";

/** subagent_spawn's `after` and `after_failed` parameters (terse: every request carries them). */
export const SPAWN_AFTER_PARAM = "Start after these children (ids or names) settle; their results open its task";
export const SPAWN_AFTER_FAILED_PARAM = "If an input did not complete: skip (default) or run anyway";

const listKnown = (known: Array<{ id: string; name: string }>) =>
	known.length === 0
		? "this session has no children yet"
		: `known: ${known.map((k) => `${k.id} (${k.name})`).join(", ")}`;

/** Why a spawn's `after` was refused; nothing was started. */
export function afterProblemError(problem: AfterProblem): string {
	switch (problem.kind) {
		case "unknown":
			return (
				`after names no child of this session: ${problem.refs.join(", ")}; ${listKnown(problem.known)}. ` +
				"Spawn the inputs first (in the same message is fine), then name their ids or names. Nothing was started."
			);
		case "ambiguous":
			return `after: the name ${problem.ref} belongs to ${problem.ids.join(", ")}; name one by id. Nothing was started.`;
		case "cycle":
			return `after would make a cycle (${problem.path.join(" → ")}); a child cannot wait for itself. Nothing was started.`;
		case "too-deep":
			return (
				`after would make a pipeline of ${problem.stages} stages; at most ${problem.max} wait at once. ` +
				"Wait for an earlier stage first, then spawn the rest. Nothing was started."
			);
	}
}

function outcomeWords(input: { id: string; name: string; state: ChildState; error?: string }): string {
	const what =
		input.state === "cancelled"
			? "was cancelled"
			: input.state === "failed"
				? "failed"
				: input.state === "skipped"
					? "was skipped"
					: input.state === "incomplete"
						? "was incomplete"
						: input.state === "budget"
							? "reached its budget"
							: input.state;
	return `${input.id} (${input.name}) ${what}${input.error ? `: ${input.error}` : ""}`;
}

/** The result of a child that never ran because an input did not complete. */
export function skippedText(failed: FailedInput[]): string {
	return `Skipped, not started: ${failed.map(outcomeWords).join("; ")}. Its inputs did not all complete (after_failed: "run" runs it anyway).`;
}

/** A waiting child's reason when an input it waited for was cancelled. */
export function inputCancelledText(inputs: string[]): string {
	return `Skipped, not started: its input ${inputs.join(", ")} was cancelled.`;
}

/** A waiting child stopped before its inputs settled because the session ended. */
export const WAITING_AT_SHUTDOWN =
	"the session ended while it waited for its inputs; it did not start (spawn it again with after)";

/** A pipeline stage's error when `pi -c` could not spawn it again (its result says why). */
export const NOT_RESTORED = "the parent's process ended while it waited for its inputs and it could not be restored";

/** A child left waiting by an earlier process that `pi -c` cannot spawn again (its result text). */
export function notRestoredText(problem: NotRestorable | { why: "spawn-failed"; error: string }): string {
	const why =
		problem.why === "not-recorded"
			? "its spawn was not recorded (an older version, or a child of a nested run)"
			: problem.why === "unknown-inputs"
				? `its input${problem.missing.length === 1 ? "" : "s"} ${problem.missing.join(", ")} ${problem.missing.length === 1 ? "is" : "are"} not in this session`
				: `spawning it again failed: ${problem.error}`;
	return `Not restored: the parent's process ended while it waited for its inputs, and ${why}. Nothing ran; spawn it again (with after) to run it.`;
}

/** Opening of a dependent's first message, before its inputs. */
export function inputsIntro(count: number): string {
	return `Your inputs: the final results of ${count === 1 ? "1 child" : `${count} children`} this task follows (each full text is one read away).`;
}

/** Header above one input's result in a dependent's first message. */
export function inputHeader(
	input: { id: string; name: string; state: ChildState; error?: string },
	bytes: number,
	path: string | undefined,
	extra: string[],
): string {
	const outcome = input.state === "completed" ? `${input.id} (${input.name}) completed` : outcomeWords(input);
	const where = path ? `full text: ${path}` : "full text not saved";
	return [`=== input ${outcome}; ${bytes} bytes; ${where}`, ...extra].join("\n");
}

/** An isolated input's worktree, as its dependent is told it (it does not share that worktree). */
export function inputWorktreeLine(branch: string, patchPath: string | undefined): string {
	return (
		`Its edits are on branch ${branch}${patchPath ? `, patch: ${patchPath}` : ""}; ` +
		"they are not in your working tree unless you apply them (git apply, or git merge the branch)."
	);
}

/** A structured input too large to include whole. */
export function structuredTooLargeLine(bytes: number, path: string | undefined): string {
	return `Its validated JSON (${bytes} bytes) is too large to include here; ${path ? `read ${path}` : "it could not be saved"}.`;
}

/** Separator before the dependent's own task. */
export const TASK_HEADING = "=== your task";

/** The one line a result takes in the parent's automatic delivery when children took it as input. */
export function relayedLine(
	child: { id: string; name: string },
	state: ChildState,
	bytes: number,
	path: string | undefined,
	consumers: string[],
): string {
	const where = path ? `full text ${path}` : "full text not saved";
	return `${child.id} (${child.name}) ${state}, ${bytes} bytes, ${where}; handed to ${consumers.join(", ")} (subagent_wait [${child.id}] shows it)`;
}

/** What a waiting child waits for, in status lines and rows. */
export function waitingFor(pending: string[]): string {
	return `waits for ${pending.join(", ")}`;
}

/** subagent_spawn's answer for a child that waits for its inputs. */
export function waitingSpawnText(c: ChildRecord, arrivalText: string): string {
	const onFail =
		c.afterFailed === "run" ? "it runs even if one did not complete" : "it is skipped if one does not complete";
	return (
		`Spawned ${c.id} (${c.name}) on ${c.model}, waiting for ${(c.after ?? []).join(", ")}: it starts when they settle, ` +
		`its task opening with their results (${onFail}). ${arrivalText}`
	);
}

/** A spawn whose after_failed is neither value. */
export function badAfterFailedError(value: unknown): string {
	return `after_failed must be "skip" or "run", not ${JSON.stringify(value)}. Nothing was started.`;
}

/** A spawn whose after is not a list of strings. */
export const BAD_AFTER_ERROR =
	'after must be a list of child ids or names, e.g. after: ["sa-1"] or after: ["scout"]. Nothing was started.';

/**
 * Optional steps around a child's runs, for the two checkable kinds of child: an isolated one (its
 * worktree is re-created before a run if it was removed, and its changes summarised after) and a
 * structured one (its answer validated against output_schema, with one correction turn). The manager
 * calls them; the steps themselves know git, the schema and the store. Several step sets compose in order.
 */
import type { ChildState } from "../domain/records.ts";
import type { ResultExtras } from "../domain/result-extras.ts";

/** A run's answer after a review step: the text the parent receives, a label for its header, extras. */
export interface Reviewed {
	text: string;
	/** Shown after the state in the result's header, e.g. "output valid". */
	verdict?: string;
	extras?: ResultExtras;
}

/** The outcome of one more prompt in the same run: the answer, or why it failed. */
export type AskOutcome = { ok: true; text: string } | { ok: false; error: string };

export interface RunSteps {
	/** Before each run starts (after the first: the worktree may have been removed); a throw fails the run. */
	beforeRun?(): Promise<void>;
	/** After a completed answer; may ask the child once more in the same run through `ask`. */
	review?(answer: string, ask: (prompt: string) => Promise<AskOutcome>): Promise<Reviewed>;
	/** After the run ended in any state: may put text first (what changed) and add extras. */
	conclude?(state: ChildState, result: Reviewed): Promise<Reviewed>;
}

/** Steps of several kinds run one after the other (review and conclude each see the previous result). */
export function composeSteps(parts: RunSteps[]): RunSteps | undefined {
	if (parts.length === 0) return undefined;
	const before = parts.filter((p) => p.beforeRun);
	const reviews = parts.filter((p) => p.review);
	const concludes = parts.filter((p) => p.conclude);
	return {
		beforeRun: before.length
			? async () => {
					for (const p of before) await p.beforeRun!();
				}
			: undefined,
		review: reviews.length
			? async (answer, ask) => {
					let result: Reviewed = { text: answer };
					for (const p of reviews) {
						const next = await p.review!(result.text, ask);
						result = { ...next, extras: { ...result.extras, ...next.extras } };
					}
					return result;
				}
			: undefined,
		conclude: concludes.length
			? async (state, result) => {
					let current = result;
					for (const p of concludes) {
						const next = await p.conclude!(state, current);
						current = { ...next, extras: { ...current.extras, ...next.extras } };
					}
					return current;
				}
			: undefined,
	};
}

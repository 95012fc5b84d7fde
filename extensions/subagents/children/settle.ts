/**
 * How a child's run settles, exactly once: its conclude step (what an isolated child changed) when it has
 * one, then the ledger, the subscribers, the waiters, and the next queued child. No Pi imports.
 */
import type { Reviewed } from "../checkable/run-steps.ts";
import { resultKey } from "../domain/ledger.ts";
import type { ChildRecord, ChildState } from "../domain/records.ts";
import { concludeFailedNote } from "../prompt/checkable.ts";
import { failedResultText } from "../prompt/common.ts";
import type { ManagerCore } from "./core.ts";

/**
 * Settle a run once, after its conclude step (what an isolated child changed) when it has one; whoever
 * settles the run first, the step runs once and the others wait for it. Settling records the outcome once:
 * ledger, subscribers, waiters, and the next queued child.
 */
export function conclude(
	core: ManagerCore,
	child: ChildRecord,
	run: number,
	state: ChildState,
	result: Reviewed,
	error?: string,
): Promise<void> {
	const settle = (final: Reviewed): void => {
		const rt = core.runtimes.get(child.id);
		if (!rt || rt.settledRuns >= run) return;
		const text = final.text;
		rt.settledRuns = run;
		if (rt.watchdog) clearInterval(rt.watchdog);
		rt.watchdog = undefined;
		child.state = state;
		child.endedAt = core.now();
		child.error = error;
		child.finalText = text;
		core.questions.runEnded(child);
		if (rt.handle?.sessionFile) child.sessionFile = rt.handle.sessionFile;
		const key = resultKey(child.id, run);
		const settled = core.ledger.add({
			key,
			id: child.id,
			run,
			text,
			state,
			settledAt: child.endedAt,
			verdict: final.verdict,
			extras: final.extras,
		});
		rt.runDone?.();
		// The result is in the ledger either way; waiters and the queue never stall on a subscriber's failure.
		core.subscribers.publish({ type: "settled", result: settled, child });
		for (const waiter of [...core.waiters]) waiter();
		core.pump();
	};
	const rt = core.runtimes.get(child.id);
	if (!rt || rt.settledRuns >= run) return Promise.resolve();
	if (rt.concluding?.run === run) return rt.concluding.promise;
	const step = rt.steps?.conclude;
	if (!step) {
		settle(result);
		return Promise.resolve();
	}
	const promise = step(state, result)
		.catch((failure) => ({ ...result, text: `${concludeFailedNote(failure)}\n\n${result.text}` }))
		.then(settle);
	rt.concluding = { run, promise };
	return promise;
}

/** Settle with an error text first and whatever the child had produced. */
export function settleFailed(
	core: ManagerCore,
	child: ChildRecord,
	run: number,
	state: "failed" | "cancelled" | "incomplete" | "budget",
	error: string,
): Promise<void> {
	return conclude(core, child, run, state, { text: failedResultText(state, error, child.partialText) }, error);
}

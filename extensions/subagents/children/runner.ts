/**
 * The manager's driving of one run: start it through the backend, feed its events into the record, arm the
 * watchdog, review its answer, settle it; and stopping a run (cancel, watchdog, max turns, shutdown) with a
 * grace period for a run that ignores abort. What a run's events and messages mean is in child-run.ts.
 * No Pi imports.
 */
import { join, relative } from "node:path";
import type { AskInput } from "../ask/question.ts";
import { budgetVerdict } from "../budget/budget.ts";
import type { Reviewed } from "../checkable/run-steps.ts";
import { type ChildRecord, isSettled } from "../domain/records.ts";
import { budgetNotStartedReason } from "../prompt/budget.ts";
import { ABORTED, STOPPED_BEFORE_START } from "../prompt/common.ts";
import {
	applyEvent,
	budgetStopVerdict,
	maxTurnsVerdict,
	type Runtime,
	runOutcome,
	type StopReason,
	watchdogTickMs,
	watchdogVerdict,
} from "./child-run.ts";
import type { ManagerCore } from "./core.ts";
import { conclude, settleFailed } from "./settle.ts";

/** Grace period after abort() before a run that does not end is settled anyway, in milliseconds. */
export const ABORT_GRACE_MS = 5_000;

export async function runChild(core: ManagerCore, child: ChildRecord): Promise<void> {
	const rt = core.runtimes.get(child.id)!;
	// Its budget (its pipeline's, the session's) spent while it waited: it does not start.
	const spent = budgetVerdict(child, core.list(), core.limits.sessionBudget);
	if (spent) return void settleFailed(core, child, child.run, "budget", budgetNotStartedReason(spent));
	const prompt = rt.pendingPrompt ?? child.prompt;
	rt.pendingPrompt = undefined;
	child.startedAt = core.now();
	child.respawn = undefined; // it runs: a later process has its session file, not a spawn to repeat
	rt.lastActivity = core.now();
	rt.toolsInFlight = 0;
	rt.settledRun = new Promise<void>((r) => {
		rt.runDone = r;
	});
	const run = child.run;
	const stopped = (fallback: string) => {
		const reason = rt.stopReason ?? { state: "failed" as const, error: fallback };
		void settleFailed(core, child, run, reason.state, reason.error);
	};
	try {
		await rt.steps?.beforeRun?.();
		if (rt.stopReason) return stopped(STOPPED_BEFORE_START);
		const spec = {
			id: child.id,
			cwd: child.cwd,
			tools: child.tools,
			thinking: child.thinking,
			model: rt.model,
			systemAppend: rt.systemAppend,
			sessionFile: rt.resumeFile,
			exactTools: rt.exactTools,
			extensions: rt.extensions,
			...(core.questions.enabled
				? { ask: (input: AskInput, signal?: AbortSignal) => core.questions.ask(child, input, signal) }
				: {}),
			// A worktree child's folder is trusted as the same folder of its repository is.
			...(child.worktree ? { trustFrom: join(child.worktree.repoTop, relative(child.worktree.path, child.cwd)) } : {}),
		};
		rt.handle ??= await core.backend.create(spec, (event) => {
			if (applyEvent(child, rt, event, core.now()).visible) core.changed();
			const cut =
				event.type === "turn_end"
					? (budgetStopVerdict(child, rt, core.list(), core.limits.sessionBudget) ?? maxTurnsVerdict(child, rt))
					: undefined;
			if (cut) void stopChild(core, child.id, cut);
		});
		child.sessionFile = rt.handle.sessionFile ?? child.sessionFile;
		if (rt.stopReason) return stopped(STOPPED_BEFORE_START);
		child.state = "running";
		core.subscribers.publish({ type: "started", child, run });
		core.changed();
		armWatchdog(core, child, rt);
		const handle = rt.handle;
		const messages = await handle.prompt(prompt);
		if (rt.stopReason) return stopped(ABORTED);
		const outcome = runOutcome(messages, child.partialText);
		if (outcome.state !== "completed") return void settleFailed(core, child, run, outcome.state, outcome.error);
		let result: Reviewed = { text: outcome.text };
		if (rt.steps?.review) {
			result = await rt.steps.review(outcome.text, async (text) => {
				const more = runOutcome(await handle.prompt(text), "");
				return more.state === "completed" ? { ok: true, text: more.text } : { ok: false, error: more.error };
			});
			if (rt.stopReason) return stopped(ABORTED);
		}
		await conclude(core, child, run, "completed", result);
	} catch (error) {
		if (rt.stopReason) return stopped(String(error));
		settleFailed(core, child, run, "failed", error instanceof Error ? error.message : String(error));
	}
}

/** Stop a child's run (or settle it as cancelled before it started); resolves once it has settled. */
export async function stopChild(core: ManagerCore, id: string, reason: StopReason): Promise<void> {
	const child = core.mustGet(id);
	const rt = core.runtimes.get(id);
	if (isSettled(child.state) || !rt) return;
	if (child.state === "queued" || child.state === "waiting")
		return await settleFailed(core, child, child.run, "cancelled", reason.error);
	rt.stopReason ??= reason;
	const done = rt.settledRun;
	await rt.handle?.abort().catch(() => undefined);
	// A run that ignores abort is settled anyway after a grace period; nothing waits forever.
	await Promise.race([done, new Promise((r) => setTimeout(r, ABORT_GRACE_MS).unref?.())]);
	await settleFailed(core, child, child.run, reason.state, reason.error);
}

function armWatchdog(core: ManagerCore, child: ChildRecord, rt: Runtime): void {
	rt.watchdog = setInterval(() => {
		const verdict = watchdogVerdict(child, rt, core.limits, core.now());
		if (verdict) void stopChild(core, child.id, verdict);
	}, watchdogTickMs(core.limits));
	rt.watchdog.unref?.();
}

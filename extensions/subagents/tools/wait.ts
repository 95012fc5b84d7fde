/**
 * subagent_wait's handler: block until the named children (or every child with something owed) settle, one
 * of them with mode "any", the timeout, or an abort; progress on every poll tick; then hand their results out.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { clampTimerMs, MAX_TIMER_MS } from "../../shared/host/timers.ts";
import { takeQuestions } from "../ask/deliver.ts";
import { isSettled } from "../domain/records.ts";
import { waitEndedByQuestionsHeader } from "../prompt/ask.ts";
import * as P from "../prompt/common.ts";
import { type ConsumeDeps, consumeResults } from "./consume.ts";
import { type OnUpdate, reply, requireIds, type ToolReturn } from "./reply.ts";

/** subagent_wait's parameters (described to the model in TOOL_TEXT.wait). */
export interface WaitParams {
	ids?: string[];
	timeout_s?: number;
	mode?: "all" | "any";
}

export async function waitTool(
	deps: ConsumeDeps,
	params: WaitParams,
	signal: AbortSignal | undefined,
	onUpdate: OnUpdate,
	ctx: ExtensionContext,
): Promise<ToolReturn> {
	const manager = deps.children(ctx);
	let ids: string[];
	if (params.ids && params.ids.length > 0) ids = requireIds(manager, params.ids);
	else {
		if (manager.list().length === 0) return reply(P.NO_CHILDREN, { rows: [] });
		ids = manager
			.list()
			.filter((c) => !isSettled(c.state) || manager.ledger.latest(c.id)?.delivery === "pending")
			.map((c) => c.id);
		if (ids.length === 0) return reply(P.NOTHING_TO_WAIT_FOR, { rows: [] });
	}
	const mode = params.mode === "any" ? "any" : "all";
	const asked =
		typeof params.timeout_s === "number" && params.timeout_s >= 0 ? Math.round(params.timeout_s * 1000) : undefined;
	// Beyond Node's largest timer a timeout would fire at once: it is clamped, and the result says so.
	const timeoutMs = asked === undefined ? undefined : clampTimerMs(asked);
	const clamped = asked !== undefined && asked > MAX_TIMER_MS;
	const throttle = Math.max(250, deps.config().subagents.pollThrottleMs);
	const outcome = await manager.waitFor(ids, {
		mode,
		// A question from one of them ends the wait: the parent gets it at once (ask_parent).
		questions: true,
		// A child that waits for the parent's answer cannot finish without it: the wait does not sit it out.
		blockedDone: true,
		// A new question of a child not named ends the wait too: it would wait unseen behind it, and time out.
		anyQuestion: true,
		timeoutMs,
		signal,
		tickMs: throttle,
		onTick: onUpdate
			? () =>
					onUpdate(
						reply(
							P.waitProgress(
								ids.map((id) => manager.get(id)!),
								Date.now(),
							),
							{ progress: true },
						),
					)
			: undefined,
	});
	// Children that go on only with the parent's answer end the wait (children/manager.ts waitFor); a named
	// stage blocked behind an unnamed child that asks brings that child's question too.
	const blocked = outcome.timedOut || outcome.aborted ? [] : manager.blockedOnAnswer(ids);
	const stages = blocked.filter((id) => !manager.get(id)?.question);
	const asking = blocked.filter((id) => manager.get(id)?.question);
	if (stages.length > 0)
		for (const id of manager.blockedOnAnswer(manager.list().map((c) => c.id)))
			if (manager.get(id)?.question && !asking.includes(id)) asking.push(id);
	// New questions of children the wait did not name (they ended it, above).
	const unnamed = outcome.timedOut || outcome.aborted ? [] : manager.questions.undelivered().map((c) => c.id);
	for (const id of unnamed) if (!asking.includes(id)) asking.push(id);
	const result = await consumeResults(
		deps,
		ctx,
		ids,
		outcome,
		"wait",
		clamped ? Math.floor(MAX_TIMER_MS / 1000) : params.timeout_s,
	);
	const first = result.content[0];
	if (!first) return result;
	// Questions come first, each in full and framed as the child's words: a new one, and one the parent has
	// already (the child still waits for it; a compaction may have cut it from the parent's context).
	const questions = takeQuestions(manager.questions, [...ids, ...asking], true);
	if (questions) {
		first.text = `${questions.text}\n\n${first.text}`;
		result.details.questions = questions.carried.questions;
	}
	if (asking.length > 0) {
		const finished = ids.filter((id) => isSettled(manager.get(id)!.state)).length;
		const others = ids.length - finished - blocked.length;
		first.text = `${waitEndedByQuestionsHeader(asking, stages, finished, ids.length, others)}\n\n${first.text}`;
	}
	if (clamped)
		first.text = `${P.waitTimeoutClampedNote(params.timeout_s ?? 0, Math.floor(MAX_TIMER_MS / 1000))}\n${first.text}`;
	return result;
}

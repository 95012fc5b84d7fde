/**
 * subagent_wait's handler: block until the named children (or every child with something owed) settle, one
 * of them with mode "any", the timeout, or an abort; progress on every poll tick; then hand their results out.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { clampTimerMs, MAX_TIMER_MS } from "../../shared/host/timers.ts";
import { takeQuestions } from "../ask/deliver.ts";
import { questionBrief } from "../ask/question.ts";
import { isSettled } from "../domain/records.ts";
import { stillAskingLine } from "../prompt/ask.ts";
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
	const result = await consumeResults(
		deps,
		ctx,
		ids,
		outcome,
		"wait",
		clamped ? Math.floor(MAX_TIMER_MS / 1000) : params.timeout_s,
	);
	if (clamped && result.content[0]) {
		result.content[0].text = `${P.waitTimeoutClampedNote(params.timeout_s ?? 0, Math.floor(MAX_TIMER_MS / 1000))}\n${result.content[0].text}`;
	}
	// Questions come first: the new ones in full, those the parent has already as one line each.
	const seen = manager.questions.asking(ids).filter((c) => c.question?.delivered && !c.question.detached);
	const fresh = takeQuestions(manager.questions, ids);
	const lines = [
		...(fresh ? [fresh.text] : []),
		...seen.map((c) => stillAskingLine(c.id, c.name, questionBrief(c.question?.text ?? ""))),
	];
	if (lines.length > 0 && result.content[0]) {
		result.content[0].text = `${lines.join("\n")}\n\n${result.content[0].text}`;
		if (fresh) result.details.questions = fresh.carried.questions;
	}
	return result;
}

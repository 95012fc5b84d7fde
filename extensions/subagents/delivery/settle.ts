/**
 * Results in a single-shot run on Pi 1.x (`pi -p`, `--mode json`). The process exits once the parent's run
 * settles, so a child still running then would be stopped and its result would only reach `pi -c`. Pi 1.x
 * runs `agent_before_settle` handlers before it settles (and awaits them): there the parent waits for its
 * children (bounded by subagents.maxRunSeconds, Ctrl-C or shutdown stops the wait and the children with
 * their partial output kept), then appends their results as ONE message through the automatic-delivery
 * budgets, records the delivery in the same proposal, and asks for one more provider request.
 *
 * With a UI (tui, rpc) nothing here acts: the session outlives the run and agent_settled delivers as
 * before. Pi 0.73 has no such boundary (and no ctx.mode), so its single-shot behaviour stays as it was.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import {
	type BeforeSettleEvent,
	type BoundaryDraft,
	type BoundaryResult,
	singleShotMode,
} from "../../shared/host/pi-host.ts";
import { takeQuestions } from "../ask/deliver.ts";
import { ABORT_GRACE_MS, type SubagentManager } from "../children/manager.ts";
import { type ChildState, isSettled } from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import { QUESTION_MESSAGE_TYPE, questionsHeader } from "../prompt/ask.ts";
import { SETTLE_INTERRUPTED, settleCutError, settleDeliveryHeader } from "../prompt/common.ts";
import { projectOwed, RESULT_MESSAGE_TYPE } from "./delivery.ts";
import { DELIVERED_ENTRY, type DeliveredEntryData, deliveryProof } from "./persistence.ts";

/**
 * Most extra turns one prompt gets for results in a single-shot run. Children spawned in an extra turn are
 * waited for the same way, so a parent that spawns again every turn still ends: after this many deliveries
 * what still runs is stopped at exit as before (partial output kept for `pi -c`).
 */
export const SETTLE_MAX_ROUNDS = 4;
/**
 * Slack past subagents.maxRunSeconds before the wait itself stops what still runs, in milliseconds: a
 * running child is cut by its own watchdog at maxRunSeconds (and settled within ABORT_GRACE_MS); the
 * slack leaves that cut room to land first, and bounds children that were still queued.
 */
export const SETTLE_WAIT_SLACK_MS = ABORT_GRACE_MS + 2_000;
/** Exit status of a single-shot run interrupted while it waited (128 + SIGINT, as a shell reports it). */
export const SETTLE_INTERRUPTED_EXIT_CODE = 130;

/** What the boundary handler knows when it decides. */
export interface SettleInput {
	/** Pi 1.x's single-shot mode, undefined with a UI or on 0.73. */
	mode: "print" | "json" | undefined;
	/** 0 for the top-level agent (children hand their own result back; they never wait here). */
	depth: number;
	/** How the run ended ("completed" is the only one that waits). */
	outcome: BeforeSettleEvent["outcome"];
	/** The session is shutting down. */
	closing: boolean;
	/** Extra turns this prompt already got for results. */
	rounds: number;
	/** The children and their states. */
	children: ReadonlyArray<{ id: string; state: ChildState }>;
	/** Results nobody received yet. */
	pending: number;
	/** subagents.maxRunSeconds. */
	maxRunSeconds: number;
}

export type SettlePlan =
	| { act: "none"; why: "has-ui" | "child" | "closing" | "outcome" | "rounds" | "nothing" }
	| { act: "wait"; ids: string[]; timeoutMs: number }
	| { act: "deliver" };

/** Whether a single-shot run that would settle now waits for children, delivers, or lets Pi settle. */
export function planSettle(input: SettleInput): SettlePlan {
	if (!input.mode) return { act: "none", why: "has-ui" };
	if (input.depth > 0) return { act: "none", why: "child" };
	if (input.closing) return { act: "none", why: "closing" };
	if (input.outcome !== undefined && input.outcome !== "completed") return { act: "none", why: "outcome" };
	if (input.rounds >= SETTLE_MAX_ROUNDS) return { act: "none", why: "rounds" };
	const ids = input.children.filter((c) => !isSettled(c.state)).map((c) => c.id);
	if (ids.length > 0) return { act: "wait", ids, timeoutMs: input.maxRunSeconds * 1000 + SETTLE_WAIT_SLACK_MS };
	return input.pending > 0 ? { act: "deliver" } : { act: "none", why: "nothing" };
}

/** Per-instance state of the single-shot wait. */
export interface SettleState {
	/** Extra turns the current prompt got for results (reset when a prompt starts). */
	rounds: number;
	/** Stops a wait in progress (shutdown, Ctrl-C). */
	abort?: AbortController;
}

/** What the boundary handler reads: the children if any, whether the session closes, config and store. */
export type SettleDeps = Pick<SubagentServices, "depth" | "existingChildren" | "closing" | "config" | "store">;

/** Wait for the children it plans to (unless stopped), then hand every unclaimed result over. */
export async function settleSingleShot(
	deps: SettleDeps,
	state: SettleState,
	event: BeforeSettleEvent,
	ctx: ExtensionContext,
): Promise<BoundaryResult | undefined> {
	const manager = deps.existingChildren();
	if (!manager) return undefined;
	const input = (): SettleInput => ({
		mode: singleShotMode(ctx),
		depth: deps.depth,
		outcome: event.outcome,
		closing: deps.closing(),
		rounds: state.rounds,
		children: manager.list(),
		pending: manager.ledger.pending().length,
		maxRunSeconds: deps.config().subagents.maxRunSeconds,
	});
	let plan = planSettle(input());
	if (plan.act === "wait") {
		const stopped = await waitForChildren(manager, deps, state, plan.ids, plan.timeoutMs);
		if (stopped === "interrupted") return undefined; // their partial output is owed to `pi -c`
		// A child asks (ask_parent): its question goes into one more turn, where the parent can answer it.
		const asked = stopped === "asked" ? takeQuestions(manager.questions) : undefined;
		if (asked) {
			state.rounds++;
			const draft: BoundaryDraft = {
				type: "custom_message",
				customType: QUESTION_MESSAGE_TYPE,
				content: `${questionsHeader(asked.carried.questions.length)}\n${asked.text}`,
				display: true,
				details: asked.carried,
			};
			return { entries: [...(Array.isArray(event.entries) ? event.entries : []), draft], continue: true };
		}
		plan = planSettle(input());
	}
	if (plan.act !== "deliver") return undefined;
	const drafts = await deliveryDrafts(manager, deps, ctx);
	if (!drafts) return undefined;
	state.rounds++;
	return { entries: [...(Array.isArray(event.entries) ? event.entries : []), ...drafts], continue: true };
}

/**
 * Block until `ids` settle, the bound passes (what still runs is then stopped, its partial output is its
 * result) or the run is interrupted (Ctrl-C while waiting, or a shutdown: the children are stopped).
 */
async function waitForChildren(
	manager: SubagentManager,
	deps: Pick<SubagentServices, "config">,
	state: SettleState,
	ids: string[],
	timeoutMs: number,
): Promise<"settled" | "asked" | "cut" | "interrupted"> {
	const abort = new AbortController();
	state.abort = abort;
	let interrupted = false;
	// Print mode leaves SIGINT to the default (exit at once); while it waits here, Ctrl-C stops the children
	// first so their partial output is recorded. A second Ctrl-C exits at once, as before.
	const onSigint = () => {
		interrupted = true;
		process.off("SIGINT", onSigint);
		abort.abort();
	};
	process.on("SIGINT", onSigint);
	try {
		const outcome = await manager.waitFor(ids, { mode: "all", timeoutMs, signal: abort.signal, questions: true });
		const running = () => ids.filter((id) => !isSettled(manager.get(id)?.state ?? "completed"));
		if (outcome.aborted) {
			if (interrupted) {
				await manager.cancel(running(), SETTLE_INTERRUPTED);
				process.exitCode = SETTLE_INTERRUPTED_EXIT_CODE;
			}
			return "interrupted";
		}
		if (outcome.timedOut) {
			await manager.cancel(running(), settleCutError(deps.config().subagents.maxRunSeconds));
			return "cut";
		}
		return manager.questions.undelivered(ids).length > 0 ? "asked" : "settled";
	} finally {
		process.off("SIGINT", onSigint);
		if (state.abort === abort) state.abort = undefined;
	}
}

/**
 * Every unclaimed result as one message draft plus the record that it was delivered, both in Pi's one
 * proposal (committed together, in order). Claims happen before any await; a failure releases them.
 */
async function deliveryDrafts(
	manager: SubagentManager,
	deps: Pick<SubagentServices, "config" | "store">,
	ctx: ExtensionContext,
): Promise<BoundaryDraft[] | undefined> {
	const pending = manager.ledger.pending();
	if (pending.length === 0) return undefined;
	const keys = pending.map((r) => r.key);
	for (const key of keys) manager.ledger.claim(key, "auto");
	try {
		const owed = await projectOwed(manager, deps, ctx, pending, settleDeliveryHeader(pending.length));
		return [
			{
				type: "custom_message",
				customType: RESULT_MESSAGE_TYPE,
				content: owed.text,
				display: true,
				details: { ...owed.details, ...deliveryProof({ keys, by: "auto" }) },
			},
			{ type: "custom", customType: DELIVERED_ENTRY, data: { keys, by: "auto" } satisfies DeliveredEntryData },
		];
	} catch (error) {
		for (const key of keys) manager.ledger.release(key);
		console.error(`subagents: delivery before the run ends failed: ${String(error)}`);
		return undefined;
	}
}

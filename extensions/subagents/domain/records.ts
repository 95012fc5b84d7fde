/**
 * A child's record and the rows tools show of it: its lifecycle states, ids and titles, the tools a child may
 * get, which ids a call names, and the queue rule (which queued children start, a queued child's position).
 * No Pi imports, no I/O.
 */

import type { Spend } from "../../shared/budget/spend.ts";
import { project } from "../../shared/projection/projection.ts";
import { SURFACES } from "../../shared/surfaces.ts";
import type { AskedQuestion } from "../ask/types.ts";
import type { ChildBudget } from "../budget/budget.ts";
import type { Worktree } from "./result-extras.ts";

/**
 * Lifecycle of one child. A settled child (completed/incomplete/failed/cancelled) may run again via
 * subagent_send. "incomplete": the run ended early but honestly — its last reply hit the output limit,
 * it reached its maxTurns, or subagents.maxRunSeconds cut it — so its answer is partial. "interrupted": the
 * parent's process ended (crash, kill) while the run was queued or running; found on the next start from the
 * session's records, with what the child's own session file holds. "budget": it reached its budget (its own, its
 * pipeline's or the session's) and was stopped at the end of a turn, or never started; never "completed".
 */
export type ChildState =
	| "waiting"
	| "queued"
	| "starting"
	| "running"
	| "completed"
	| "incomplete"
	| "failed"
	| "cancelled"
	| "skipped"
	| "interrupted"
	| "budget";

/**
 * "waiting": spawned with `after`, it starts once every input has settled (pipeline/graph.ts decides);
 * "skipped": it never ran, because an input did not complete or was cancelled (its result says which).
 */
export const SETTLED_STATES: readonly ChildState[] = [
	"completed",
	"incomplete",
	"failed",
	"cancelled",
	"skipped",
	"interrupted",
	"budget",
];

export function isSettled(state: ChildState): boolean {
	return SETTLED_STATES.includes(state);
}

/** Built-in tools a child may be given. */
export const CHILD_TOOL_NAMES = ["read", "bash", "edit", "write", "grep", "find", "ls"] as const;

/** This extension's tools, enabled in a child only when the depth limit allows it to spawn. */
export const SUBAGENT_TOOL_NAMES = [
	"subagent_spawn",
	"subagent_wait",
	"subagent_check",
	"subagent_send",
	"subagent_cancel",
	"subagent_list",
	"subagent_cleanup",
] as const;

export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;

/** How a child's conversation starts. */
export type ContextMode = "fresh" | "fork";

/** One tool call a child made, for subagent_check. */
export interface ToolCallNote {
	/** Tool name as the child called it. */
	name: string;
	/** Arguments, compacted to one short line. */
	args: string;
	/** Whether its result was an error (undefined while it runs). */
	isError?: boolean;
}

/** Everything the parent knows about one child. Mutated only by the manager. */
export interface ChildRecord {
	/** Stable id within this parent session, e.g. "sa-3". */
	id: string;
	/** Short title (the caller's or derived from the prompt). */
	name: string;
	/** The task as given at spawn. */
	prompt: string;
	/** "provider/id" of the model it runs on. */
	model: string;
	/** Tool names enabled in the child. */
	tools: string[];
	/** The named agent it runs as, if any. */
	agent?: string;
	/** Most turns a run may take (the agent's maxTurns), if bounded. */
	maxTurns?: number;
	/** Working directory of the child. */
	cwd: string;
	/** Thinking level passed to the child, if any. */
	thinking?: string;
	/** Fresh start or narrated fork of the parent's conversation. */
	context: ContextMode;
	/** Where it is in its lifecycle. */
	state: ChildState;
	/** 1-based run number; subagent_send on a settled child starts run n+1. */
	run: number;
	/** Epoch ms of spawn. */
	createdAt: number;
	/** Order key of the queue (epoch ms of the latest spawn or re-run request, tie-broken by sequence). */
	queuedAt: number;
	/** Epoch ms the current run started (undefined while queued). */
	startedAt?: number;
	/** Epoch ms the current run settled. */
	endedAt?: number;
	/** Assistant turns completed in the current run. */
	turns: number;
	/** Context tokens the child last reported (its own context use). */
	contextTokens?: number;
	/** Context window of the child's model (tokens). */
	contextWindow?: number;
	/** Output tokens the child produced across runs. */
	outputTokens: number;
	/** Text streamed so far in the current run (all assistant text, in order). */
	partialText: string;
	/** Text of the assistant message streaming now (the live view shows it before Pi writes the message). */
	streamingText?: string;
	/** Final answer of the last settled run (last assistant message's text). */
	finalText?: string;
	/** Error text when the last run failed or was cancelled. */
	error?: string;
	/** The child's persistent session file (its ground truth). */
	sessionFile?: string;
	/** Last tool calls, newest last, bounded. */
	recentTools: ToolCallNote[];
	/** The git worktree it works in (isolation "worktree"); it may since have been removed. */
	worktree?: Worktree;
	/** True when its answers must end with JSON valid against an output_schema. */
	structured?: boolean;
	/** Children of this session whose results its task carries; it waits until they settle. */
	after?: string[];
	/** When an input did not complete: "skip" (default) settles it as skipped, "run" runs it anyway. */
	afterFailed?: AfterFailed;
	/**
	 * The spawn's own parameters (its `after` as ids), kept for a child with inputs until it starts: recorded
	 * in the session, they let `pi -c` spawn it again when an earlier process ended while it waited.
	 */
	respawn?: RecordedSpawn;
	/** Its open question to the parent (ask_parent), until answered, timed out or withdrawn (ask/desk.ts). */
	question?: AskedQuestion;
	/** What it spent over all its runs (Pi's usage of its requests). */
	spend?: Spend;
	/** Its budget: own limits and the shared account it draws from (budget/budget.ts). */
	budget?: ChildBudget;
}

/** A spawn's parameters as the spawn tool got them (cwd made absolute, `after` resolved to ids). */
export interface RecordedSpawn {
	prompt: string;
	[param: string]: unknown;
}

/** What a dependent does when an input did not complete. */
export type AfterFailed = "skip" | "run";

/** One child as the renderers receive it in tool result details (id, short title, state, …). */
export interface ChildRow {
	id: string;
	name: string;
	/** State at the time of the result. */
	state: ChildState;
	/** UTF-8 bytes of the full result, when there is one. */
	fullBytes?: number;
	/** UTF-8 bytes shown to the model for it. */
	shownBytes?: number;
	/** Artifact path, when the full text was stored. */
	artifactPath?: string;
	/** Extra words (e.g. "#2" for a queue position, "already delivered"). */
	note?: string;
	/** The named agent the child runs as, if any. */
	agent?: string;
	/** Why a failed, cancelled or incomplete run stopped (shown in one line, collapsed too). */
	reason?: string;
	/** The open question (ask_parent) the child waits on the parent to answer, in one short line. */
	question?: string;
}

/** How many tool calls subagent_check keeps per child. */
export const RECENT_TOOL_CALLS = 5;

/** Ids are "sa-<n>", n from 1, in spawn order. */
export function childId(sequence: number): string {
	return `sa-${sequence}`;
}

/** Longest child title, in UTF-8 bytes (mark included). */
export const NAME_MAX_BYTES = SURFACES["subagents.name"].maxBytes;

/** Short title from the task when the caller gave none: its first line, at most NAME_MAX_BYTES. */
export function deriveName(prompt: string, given?: string): string {
	const source = (given?.trim() || prompt.trim().split("\n")[0] || "task").replace(/\s+/g, " ");
	return project(source, "subagents.name").text;
}

/** Split requested ids into known ones (deduplicated, in request order) and unknown ones. */
export function partitionIds(requested: string[], known: string[]): { known: string[]; unknown: string[] } {
	const set = new Set(known);
	const seen = new Set<string>();
	const good: string[] = [];
	const bad: string[] = [];
	for (const raw of requested) {
		const id = raw.trim();
		if (seen.has(id)) continue;
		seen.add(id);
		(set.has(id) ? good : bad).push(id);
	}
	return { known: good, unknown: bad };
}

/** Which queued children may start now: oldest first, up to the free slots. */
export function childrenToStart(children: ChildRecord[], maxConcurrent: number): ChildRecord[] {
	const active = children.filter((c) => c.state === "running" || c.state === "starting").length;
	const free = Math.max(0, maxConcurrent - active);
	return children
		.filter((c) => c.state === "queued")
		.sort((a, b) => a.queuedAt - b.queuedAt)
		.slice(0, free);
}

/** 1-based queue position of a queued child (0 when not queued). */
export function queuePosition(children: ChildRecord[], id: string): number {
	const queued = children.filter((c) => c.state === "queued").sort((a, b) => a.queuedAt - b.queuedAt);
	return queued.findIndex((c) => c.id === id) + 1;
}

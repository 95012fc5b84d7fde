/**
 * Pure state and decisions of the subagents extension: child records and the rows tools show of them, ids,
 * model and id resolution, the queue rule and the delivery ledger. No Pi imports, no I/O.
 */
import { project } from "../shared/projection/projection.ts";
import { SURFACES } from "../shared/surfaces.ts";
import type { AskedQuestion } from "./ask/types.ts";
import type { ResultExtras, Worktree } from "./result-extras.ts";

/**
 * Lifecycle of one child. A settled child (completed/incomplete/failed/cancelled) may run again via
 * subagent_send. "incomplete": the run ended early but honestly — its last reply hit the output limit,
 * it reached its maxTurns, or subagents.maxRunSeconds cut it — so its answer is partial. "interrupted": the
 * parent's process ended (crash, kill) while the run was queued or running; found on the next start from the
 * session's records, with what the child's own session file holds.
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
	| "interrupted";

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
}

/** How many tool calls subagent_check keeps per child. */
export const RECENT_TOOL_CALLS = 5;

/** Key of one result: a child's run. */
export function resultKey(id: string, run: number): string {
	return `${id}#${run}`;
}

/** Ids are "sa-<n>", n from 1, in spawn order. */
export function childId(sequence: number): string {
	return `sa-${sequence}`;
}

/** Longest child title, in UTF-8 bytes (mark included). */
export const NAME_MAX_BYTES = SURFACES["subagents.name"].maxBytes;
/** Longest one-line brief of a tool call's arguments, in UTF-8 bytes (mark included). */
export const TOOL_ARGS_BRIEF_BYTES = SURFACES["subagents.toolArgs"].maxBytes;

/** Short title from the task when the caller gave none: its first line, at most NAME_MAX_BYTES. */
export function deriveName(prompt: string, given?: string): string {
	const source = (given?.trim() || prompt.trim().split("\n")[0] || "task").replace(/\s+/g, " ");
	return project(source, "subagents.name").text;
}

/** A status glyph per state (one character, for compact rows). */
export function statusGlyph(state: ChildState): string {
	switch (state) {
		case "waiting":
			return "⧗";
		case "queued":
			return "◷";
		case "starting":
		case "running":
			return "●";
		case "completed":
			return "✓";
		case "incomplete":
			return "◐";
		case "failed":
			return "✗";
		case "cancelled":
			return "■";
		case "skipped":
			return "⊘";
		case "interrupted":
			return "↯";
	}
}

/** "850 ms", "12.3 s", "4m 05s". */
export function formatDuration(ms: number): string {
	if (!Number.isFinite(ms) || ms < 0) return "0 ms";
	if (ms < 1000) return `${Math.round(ms)} ms`;
	if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
	const minutes = Math.floor(ms / 60_000);
	const seconds = Math.floor((ms % 60_000) / 1000);
	return `${minutes}m ${String(seconds).padStart(2, "0")}s`;
}

export { formatCount, plural } from "../shared/text/format.ts";

/** A model the registry knows. */
export interface ModelChoice {
	/** Provider id, e.g. "mock". */
	provider: string;
	/** Model id within the provider. */
	id: string;
}

export type Resolved<T> = { ok: true; value: T } | { ok: false; failure: ModelFailure };

/** Why a model spec did not resolve, with the choices to offer (ordered, not yet capped). */
export interface ModelFailure {
	/** "ambiguous": a bare id several usable models share; "no-credentials": known, but only without credentials. */
	reason: "unknown" | "ambiguous" | "no-credentials";
	/** The usable matches when ambiguous, else every usable model; session's provider first. */
	choices: string[];
	/** Providers that know the id but have no credentials configured ("no-credentials" only). */
	providers?: string[];
}

/** The models a spec is resolved against. */
export interface ModelPools {
	/** Models with credentials configured (plus the session's own model). */
	available: ModelChoice[];
	/** Every model the registry knows, credentials or not. */
	all: ModelChoice[];
	/** Provider of the session's model: listed first. */
	preferProvider?: string;
}

const keyOf = (m: ModelChoice) => `${m.provider}/${m.id}`;

/** provider/id strings, deduplicated, the preferred provider first, then in sorted order. */
export function orderChoices(models: ModelChoice[], preferProvider?: string): string[] {
	const preferred = models.filter((m) => m.provider === preferProvider).map(keyOf);
	const rest = models.filter((m) => m.provider !== preferProvider).map(keyOf);
	return [...new Set([...preferred.sort(), ...rest.sort()])];
}

/**
 * Resolve a model spec against the usable models first: an exact "provider/id", else the whole spec as
 * a bare id shared by exactly one usable model (ids may themselves contain "/"). An exact "provider/id"
 * without credentials is still accepted (an explicit choice; the child then reports the provider's
 * error). Ambiguity is judged among usable models only, so providers without a key never make a bare
 * id ambiguous.
 */
export function resolveModelSpec(spec: string, pools: ModelPools): Resolved<ModelChoice> {
	const wanted = spec.trim();
	const slash = wanted.indexOf("/");
	const exact = (m: ModelChoice) =>
		slash > 0 && m.provider === wanted.slice(0, slash) && m.id === wanted.slice(slash + 1);
	const usableExact = pools.available.find(exact);
	if (usableExact) return { ok: true, value: usableExact };
	const sameId = uniqueModels(pools.available.filter((m) => m.id === wanted));
	if (sameId.length === 1) return { ok: true, value: sameId[0] };
	if (sameId.length > 1) {
		return { ok: false, failure: { reason: "ambiguous", choices: orderChoices(sameId, pools.preferProvider) } };
	}
	const knownExact = pools.all.find(exact);
	if (knownExact) return { ok: true, value: knownExact };
	const choices = orderChoices(pools.available, pools.preferProvider);
	const known = pools.all.filter((m) => m.id === wanted);
	if (known.length > 0) {
		const providers = [...new Set(known.map((m) => m.provider))].sort();
		return { ok: false, failure: { reason: "no-credentials", choices, providers } };
	}
	return { ok: false, failure: { reason: "unknown", choices } };
}

function uniqueModels(models: ModelChoice[]): ModelChoice[] {
	const seen = new Set<string>();
	return models.filter((m) => !seen.has(keyOf(m)) && seen.add(keyOf(m)));
}

/** Most choices an error names before it counts the rest, so the error stays short with any registry. */
export const MODEL_CHOICES_SHOWN = SURFACES["subagents.modelChoices"].maxLines - 1;

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

/**
 * Who consumed a result: nobody yet, a subagent_wait, or automatic delivery; "relayed": children took it as
 * input and the parent was told so in one line; a subagent_wait on it still gives it in full.
 */
export type DeliveryState = "pending" | "wait" | "auto" | "relayed";

/** A settled run's result as the ledger keeps it. */
export interface SettledResult {
	/** resultKey(id, run). */
	key: string;
	/** Child id. */
	id: string;
	/** Run number (1-based). */
	run: number;
	/** Exact text the parent is owed (the child's answer, or error + partial output). */
	text: string;
	/** State the run settled in. */
	state: ChildState;
	/** Epoch ms the run settled. */
	settledAt: number;
	/** Who consumed it, if anyone. */
	delivery: DeliveryState;
	/** Artifact path once a projection stored the full text. */
	artifactPath?: string;
	/** Shown after the state in the result's header (e.g. "output valid"), from the run's steps. */
	verdict?: string;
	/** Structured value and worktree changes, for tool-result details. */
	extras?: ResultExtras;
}

/**
 * Exactly-once bookkeeping: a result is claimed once, by a wait or by automatic delivery.
 * JavaScript runs one callback at a time, so claim() is atomic with respect to both paths.
 */
export class DeliveryLedger {
	private readonly results = new Map<string, SettledResult>();

	add(result: Omit<SettledResult, "delivery"> & { delivery?: DeliveryState }): SettledResult {
		const existing = this.results.get(result.key);
		if (existing) return existing;
		const stored: SettledResult = { ...result, delivery: result.delivery ?? "pending" };
		this.results.set(result.key, stored);
		return stored;
	}

	get(key: string): SettledResult | undefined {
		return this.results.get(key);
	}

	/** Latest result of a child (highest run). */
	latest(id: string): SettledResult | undefined {
		let best: SettledResult | undefined;
		for (const r of this.results.values()) if (r.id === id && (!best || r.run > best.run)) best = r;
		return best;
	}

	/** Mark as consumed; false when someone already did (the caller must then not deliver it in full). */
	claim(key: string, by: Exclude<DeliveryState, "pending">): boolean {
		const r = this.results.get(key);
		if (r?.delivery !== "pending" && !(r?.delivery === "relayed" && by === "wait")) return false;
		r.delivery = by;
		return true;
	}

	/** Undo a claim whose delivery failed, so the result is offered again. */
	release(key: string): void {
		const r = this.results.get(key);
		if (r) r.delivery = "pending";
	}

	/** Results nobody consumed yet, oldest first. */
	pending(): SettledResult[] {
		return [...this.results.values()].filter((r) => r.delivery === "pending").sort((a, b) => a.settledAt - b.settledAt);
	}

	all(): SettledResult[] {
		return [...this.results.values()];
	}
}

/** Text of an assistant message's text parts (thinking and tool calls excluded). */
export function assistantText(message: unknown): string {
	if (!message || typeof message !== "object") return "";
	const m = message as { role?: string; content?: unknown };
	if (m.role !== "assistant" || !Array.isArray(m.content)) return "";
	return m.content
		.filter((p): p is { type: "text"; text: string } => !!p && p.type === "text" && typeof p.text === "string")
		.map((p) => p.text)
		.join("");
}

/** The last assistant message of a run and why it stopped. */
export function lastAssistant(messages: unknown[]): { text: string; stopReason?: string; errorMessage?: string } {
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i] as { role?: string; stopReason?: string; errorMessage?: string };
		if (m?.role === "assistant")
			return { text: assistantText(m), stopReason: m.stopReason, errorMessage: m.errorMessage };
	}
	return { text: "" };
}

/** One-line compaction of tool arguments for notes, clipped by the shared UTF-8-safe primitive. */
export function compactArgs(args: unknown, maxBytes = TOOL_ARGS_BRIEF_BYTES): string {
	let text: string;
	try {
		text = typeof args === "string" ? args : JSON.stringify(args ?? {});
	} catch {
		text = String(args);
	}
	return project(String(text).replace(/\s+/g, " "), "subagents.toolArgs", { maxBytes }).text;
}

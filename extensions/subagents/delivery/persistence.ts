/**
 * Persistence of children and results in the parent's session. Every run is recorded when it is queued
 * (before the spawn tool returns) and when it starts (with its session file); every settled run and every
 * consumption too. So a reload or resume re-offers exactly the results nobody received, and a process that
 * died with children running leaves a record of each: on the next start, a run with no settled record is
 * settled as "interrupted" with what its own session file holds (recorded once, then delivered as any result).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { checkSpend, type Spend } from "../../shared/budget/spend.ts";
import { project } from "../../shared/projection/projection.ts";
import { SURFACES } from "../../shared/surfaces.ts";
import { utf8Length } from "../../shared/text/tokens.ts";
import { type ChildBudget, checkChildBudget } from "../budget/budget.ts";
import { WORKTREES_FOLDER } from "../checkable/spawn-checkable.ts";
import { readPartialOutput, readSessionSpend } from "../children/partial-output.ts";
import { DELIVERED_ENTRY, RESULT_MESSAGE_TYPE, RUN_ENTRY, SETTLED_ENTRY } from "../domain/entries.ts";
import type { DeliveryState, SettledResult } from "../domain/ledger.ts";
import { resultKey } from "../domain/ledger.ts";
import type { AfterFailed, ChildRecord, ChildState, ContextMode, RecordedSpawn } from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import { restoreVerdict } from "../pipeline/graph.ts";
import { INTERRUPTED_BY_EXIT, interruptedResultText, missingStoredText, NEVER_STARTED } from "../prompt/common.ts";
import { NOT_RESTORED, notRestoredText } from "../prompt/pipeline.ts";
import { damagedRecordsWarning, damagedResultText, damagedWorktreeNote } from "../prompt/records.ts";
import { checkRecordText, checkWorktreeRecord } from "./record-checks.ts";

// The session entries' names (domain/entries.ts: start reads them without this module).
export { DELIVERED_ENTRY, RESULT_MESSAGE_TYPE, RUN_ENTRY, SETTLED_ENTRY };
/** Results up to this many UTF-8 bytes are kept inline in the session entry; longer ones go to the store. */
export const INLINE_ENTRY_MAX_BYTES = 64 * 1024;
/** Longest task text kept in a settled entry, in UTF-8 bytes (the child's session file has all of it). */
export const SETTLED_PROMPT_MAX_BYTES = SURFACES["subagents.settledPrompt"].maxBytes;

/** What a settled entry holds: enough to rebuild the child's row and its result. */
export interface SettledEntryData {
	/** resultKey(id, run). */
	key: string;
	/** Child id. */
	id: string;
	/** Run number of the result. */
	run: number;
	/** State the run settled in. */
	state: ChildState;
	/** Short title of the child. */
	name: string;
	/** "provider/id" it ran on. */
	model: string;
	/** Its task, clipped to SETTLED_PROMPT_MAX_BYTES. */
	prompt: string;
	/** Assistant turns of the run. */
	turns: number;
	/** Epoch ms of spawn. */
	createdAt: number;
	/** Epoch ms the run started. */
	startedAt?: number;
	/** Epoch ms the run settled. */
	endedAt?: number;
	/** The child's session file. */
	sessionFile?: string;
	/** Tool names it runs with (to resume it the same way). */
	tools?: string[];
	/** Its working directory. */
	cwd?: string;
	/** Its thinking level, if set. */
	thinking?: string;
	/** Fresh or forked start (decides its system-prompt framing on resume). */
	context?: ContextMode;
	/** The named agent it ran as, if any. */
	agent?: string;
	/** Why the run failed or was cancelled (its row shows it after a resume). */
	error?: string;
	/** UTF-8 bytes of the result text. */
	bytes: number;
	/** The result text when small enough to keep inline. */
	text?: string;
	/** SHA-256 of the stored text when not inline. */
	sha256?: string;
	/** The git worktree of an isolated child (so it can be cleaned up or resumed after a reload). */
	worktree?: ChildRecord["worktree"];
	/** Children whose results its task carries (a pipeline stage). */
	after?: string[];
	/** What it does when an input did not complete. */
	afterFailed?: AfterFailed;
	/** What it spent so far, over all its runs (read by /headroom's ledger too: shared/budget/spend.ts). */
	spend?: Spend;
	/** Its budget, if bounded. */
	budget?: ChildBudget;
}

/** What a run entry holds: the child as it was then (enough to rebuild it), and the run's phase. */
export interface RunEntryData extends Omit<SettledEntryData, "key" | "state" | "bytes" | "text" | "sha256" | "error"> {
	/** Queued (recorded before the spawn or send returns) or started (its session file is known). */
	phase: "queued" | "started";
	/** A child with inputs that has not started: its spawn's parameters, so `pi -c` can spawn it again. */
	spawn?: RecordedSpawn;
}

export interface DeliveredEntryData {
	/** Result keys consumed together. */
	keys: string[];
	/** Who consumed them. */
	by: Exclude<DeliveryState, "pending">;
}

/** Where records go: the parent's session (or the process-wide home that writes into it later). */
export interface RecordDeps {
	store: SubagentServices["store"];
	session: Pick<SubagentServices["session"], "appendEntry">;
}

export function persistSettled(deps: RecordDeps, result: SettledResult, child: ChildRecord): void {
	const bytes = utf8Length(result.text);
	const data: SettledEntryData = {
		...snapshot(child, result.run),
		key: result.key,
		state: result.state,
		error: child.error,
		bytes,
	};
	if (bytes <= INLINE_ENTRY_MAX_BYTES) data.text = result.text;
	else {
		const put = deps.store().putSync("subagent-results", result.text);
		if (put.ok) data.sha256 = put.sha256;
		else data.text = result.text; // never lose it: a large entry beats a missing result
	}
	append(deps, SETTLED_ENTRY, data, result.key);
}

/** Record a run queued or started in the parent's session (synchronously: before the tool returns). */
export function persistRun(
	deps: Pick<RecordDeps, "session">,
	child: ChildRecord,
	run: number,
	phase: RunEntryData["phase"],
): void {
	const data: RunEntryData = { ...snapshot(child, run), phase };
	if (child.respawn && child.startedAt === undefined) data.spawn = child.respawn;
	append(deps, RUN_ENTRY, data, resultKey(child.id, run));
}

function append(deps: Pick<RecordDeps, "session">, type: string, data: object, what: string): void {
	try {
		deps.session.appendEntry(type, data);
	} catch (error) {
		console.error(`subagents: could not record ${what} in the session: ${String(error)}`);
	}
}

/** The child's fields every entry keeps (the task clipped; the child's session file has all of it). */
function snapshot(child: ChildRecord, run: number): Omit<SettledEntryData, "key" | "state" | "bytes" | "error"> {
	return {
		id: child.id,
		run,
		name: child.name,
		model: child.model,
		prompt: project(child.prompt, "subagents.settledPrompt").text,
		turns: child.turns,
		createdAt: child.createdAt,
		startedAt: child.startedAt,
		endedAt: child.endedAt,
		sessionFile: child.sessionFile,
		tools: child.tools,
		cwd: child.cwd,
		thinking: child.thinking,
		context: child.context,
		...(child.agent ? { agent: child.agent } : {}),
		...(child.worktree ? { worktree: child.worktree } : {}),
		...(child.after?.length ? { after: child.after, afterFailed: child.afterFailed ?? "skip" } : {}),
		...(child.spend ? { spend: child.spend } : {}),
		...(child.budget ? { budget: child.budget } : {}),
	};
}

/**
 * What a message carrying results holds in its details: which results it carries, and how. The message is
 * the record of their delivery: a result counts as received exactly when a message carrying it is in the
 * session. A separate record written beside the message could reach the file while the message does not
 * (Pi 1.x defers a message sent as its run settles, and a signal can end the process first), and the result
 * would then be lost on the next start.
 */
export interface DeliveryProof {
	delivered: DeliveredEntryData[];
}

/** The details field that says which results a message carries (empty groups left out). */
export function deliveryProof(...groups: DeliveredEntryData[]): DeliveryProof {
	return { delivered: groups.filter((g) => g.keys.length > 0) };
}

/** The keys a message's details say it delivered (details are session input: anything malformed is ignored). */
export function provenDelivered(details: unknown): DeliveredEntryData[] {
	const groups = (details as { delivered?: unknown } | null | undefined)?.delivered;
	if (!Array.isArray(groups)) return [];
	return groups.flatMap((g) => {
		const keys = (g as { keys?: unknown })?.keys;
		if (!Array.isArray(keys)) return [];
		const by: DeliveredEntryData["by"] = (g as { by?: unknown }).by === "wait" ? "wait" : "auto";
		return [{ keys: keys.filter((k): k is string => typeof k === "string"), by }];
	});
}

/** Tools whose results carry results of children (subagent_wait, subagent_cancel). */
const CARRYING_TOOL = /^subagent_/;

/**
 * Rebuild children and results from the session; returns how many results are still owed. A run recorded
 * as queued or started with no settled record was left so by a process that ended (crash, kill): it is
 * settled here as "interrupted", with its partial output from its session file, and recorded so (once).
 * A pipeline stage that never started, with its spawn recorded and inputs this session knows, goes to
 * `waiting` instead when given (the caller spawns it again: restoreWaiting); one that cannot be is settled
 * as interrupted, saying why.
 */
export function restoreFromSession(
	deps: Pick<SubagentServices, "children" | "config" | "store" | "session">,
	ctx: ExtensionContext,
	waiting?: RunEntryData[],
): number {
	const manager = deps.children(ctx);
	const settled: SettledEntryData[] = [];
	const runs = new Map<string, RunEntryData>();
	const started = new Set<string>();
	const delivered = new Map<string, DeliveredEntryData["by"]>();
	const screen = recordScreen(deps);
	const branch = ctx.sessionManager.getBranch() as BranchEntry[];
	for (const entry of branch) {
		if (entry.type !== "custom" || !entry.data || typeof entry.data !== "object") continue;
		if (entry.customType === SETTLED_ENTRY) settled.push(screen.check(entry.data as SettledEntryData));
		else if (entry.customType === RUN_ENTRY) {
			const d = screen.check(entry.data as RunEntryData);
			if (!validId(d.id) || !Number.isInteger(d.run)) continue;
			const known = runs.get(d.id);
			if (!known || d.run >= known.run) runs.set(d.id, { ...known, ...d });
			if (d.phase === "started") started.add(resultKey(d.id, d.run));
		} else if (entry.customType === DELIVERED_ENTRY) {
			const d = entry.data as DeliveredEntryData;
			for (const key of Array.isArray(d.keys) ? d.keys : []) delivered.set(key, d.by === "wait" ? "wait" : "auto");
		}
	}
	// The messages that carried results (automatic deliveries, subagent_wait and subagent_cancel results).
	for (const entry of branch) {
		for (const group of carried(entry)) for (const key of group.keys) delivered.set(key, group.by);
	}
	const settledKeys = new Set(settled.map((d) => d.key));
	const known = new Set([...runs.keys(), ...settled.map((d) => d.id)]);
	for (const d of [...runs.values()].sort((a, b) => idNumber(a.id) - idNumber(b.id))) {
		const key = resultKey(d.id, d.run);
		if (settledKeys.has(key) || settled.some((s) => s.id === d.id && s.run > d.run)) continue;
		const stage = !started.has(key) && Array.isArray(d.after) && d.after.length > 0;
		if (!stage) {
			settled.push(screen.carry(d, interrupted(deps, d, started.has(key))));
			continue;
		}
		const verdict = restoreVerdict(d, known);
		// Inputs given up on here are settled by now (ids ascend along `after`), so a stage after them is skipped.
		if (verdict.act === "give-up")
			settled.push(screen.carry(d, interrupted(deps, d, false, notRestoredText(verdict.problem))));
		else if (waiting) waiting.push(d);
		else settled.push(screen.carry(d, interrupted(deps, d, false)));
	}
	screen.warn(ctx);
	let owed = 0;
	for (const d of settled) {
		if (!validId(d.id) || typeof d.key !== "string") continue;
		const text = screen.noted(d, d.text ?? readStored(deps, d.sha256) ?? missingStoredText(d.bytes));
		const record: ChildRecord = {
			...recordOf(deps, ctx, d),
			state: d.state,
			finalText: text,
			error: typeof d.error === "string" ? d.error : undefined,
		};
		const delivery = delivered.get(d.key) ?? "pending";
		if (delivery === "pending") owed++;
		manager.restore(record, {
			key: d.key,
			id: d.id,
			run: d.run,
			text,
			state: d.state,
			settledAt: d.endedAt ?? 0,
			delivery,
		});
	}
	return owed;
}

/**
 * Spawn again the pipeline stages restoreFromSession set aside, in id order, each under its recorded id;
 * one whose spawn fails (its agent or model gone, its cwd removed) is settled as interrupted, saying why.
 * `respawn` is the spawn tool's own path. Returns how many of them were settled so (each owed).
 */
export async function restoreWaiting(
	deps: Pick<SubagentServices, "children" | "config" | "session">,
	ctx: ExtensionContext,
	waiting: RunEntryData[],
	respawn: (params: RecordedSpawn, id: string) => Promise<unknown>,
): Promise<number> {
	let failed = 0;
	for (const d of waiting) {
		try {
			await respawn({ ...(d.spawn as RecordedSpawn), after: d.after, after_failed: d.afterFailed ?? "skip" }, d.id);
		} catch (error) {
			const why = notRestoredText({
				why: "spawn-failed",
				error: error instanceof Error ? error.message : String(error),
			});
			const data = interrupted(deps, d, false, why);
			const record: ChildRecord = {
				...recordOf(deps, ctx, data),
				state: data.state,
				finalText: why,
				error: data.error,
			};
			deps.children(ctx).restore(record, {
				key: data.key,
				id: d.id,
				run: d.run,
				text: why,
				state: data.state,
				settledAt: data.endedAt ?? 0,
				delivery: "pending",
			});
			failed++;
		}
	}
	return failed;
}

/**
 * Records are checked as strictly as fresh input (record-checks.ts): a worktree record that fails is dropped
 * (nothing is cleaned up, diffed or reused through it) and its result gets a note; a result text that is not
 * a string is replaced by a text saying so. The user is warned once per restore.
 */
function recordScreen(deps: Pick<SubagentServices, "store">) {
	let root: string;
	try {
		root = join(deps.store().root, WORKTREES_FOLDER);
	} catch {
		root = "\0no worktrees folder"; // no store, no worktrees: every worktree record fails
	}
	const notes = new WeakMap<object, string[]>();
	const problems: string[] = [];
	return {
		check<T extends { id?: unknown; worktree?: unknown; text?: unknown }>(raw: T): T {
			const d: T = { ...raw };
			const id = validId(d.id) ? d.id : "a child";
			const own: string[] = [];
			if (d.worktree !== undefined) {
				const checked = checkWorktreeRecord(d.worktree, root);
				if (checked.ok) d.worktree = checked.worktree;
				else {
					delete d.worktree;
					problems.push(`${id}'s worktree (${checked.problem})`);
					own.push(damagedWorktreeNote(id, checked.problem));
				}
			}
			const text = checkRecordText(d.text);
			if (!text.ok) {
				problems.push(`${id}'s result (${text.problem})`);
				d.text = damagedResultText(id, text.problem);
			}
			if (own.length > 0) notes.set(d, own);
			return d;
		},
		/** The notes of `from` go with `to` (a run settled here as interrupted). */
		carry<T extends object>(from: object, to: T): T {
			const own = notes.get(from);
			if (own) notes.set(to, own);
			return to;
		},
		noted(d: object, text: string): string {
			const own = notes.get(d);
			return own ? `${own.join(" ")}\n\n${text}` : text;
		},
		warn(ctx: ExtensionContext): void {
			if (problems.length === 0) return;
			const warning = damagedRecordsWarning(problems);
			try {
				if (ctx.hasUI) ctx.ui.notify(warning, "warning");
				else console.error(warning);
			} catch {
				console.error(warning);
			}
		},
	};
}

/** A session entry as restore reads it (session files are input: every field is checked before use). */
interface BranchEntry {
	type: string;
	customType?: string;
	data?: unknown;
	details?: unknown;
	message?: { role?: unknown; toolName?: unknown; details?: unknown };
}

/** What a message entry says it delivered: a result message of this extension, or a subagent tool's result. */
function carried(entry: BranchEntry): DeliveredEntryData[] {
	if (entry.type === "custom_message" && entry.customType === RESULT_MESSAGE_TYPE)
		return provenDelivered(entry.details);
	const m = entry.type === "message" ? entry.message : undefined;
	if (m?.role === "toolResult" && typeof m.toolName === "string" && CARRYING_TOOL.test(m.toolName))
		return provenDelivered(m.details);
	return [];
}

function idNumber(id: string): number {
	return Number(id.replace(/^sa-/, "")) || 0;
}

function validId(id: unknown): id is string {
	return typeof id === "string" && /^sa-\d+$/.test(id);
}

/**
 * A run the earlier process left unsettled, settled as interrupted and recorded in the session (once);
 * `why` is the result text of a pipeline stage that could not be spawned again.
 */
function interrupted(
	deps: Pick<SubagentServices, "session">,
	d: RunEntryData,
	started: boolean,
	why?: string,
): SettledEntryData {
	const partial = started ? readPartialOutput(d.sessionFile) : ({ ok: true, text: "" } as const);
	const text =
		why ?? interruptedResultText({ id: d.id, name: String(d.name ?? d.id) }, started, partial, d.sessionFile);
	const { phase: _phase, spawn: _spawn, ...rest } = d;
	// The run's spend since its start is in the child's own file (the run entry has what it had spent before).
	const fileSpend = started ? readSessionSpend(d.sessionFile) : undefined;
	const recorded = checkSpend(d.spend);
	const spend = fileSpend && fileSpend.tokens > (recorded?.tokens ?? -1) ? fileSpend : recorded;
	const data: SettledEntryData = {
		...rest,
		...(spend ? { spend } : {}),
		key: resultKey(d.id, d.run),
		state: "interrupted",
		error: started ? INTERRUPTED_BY_EXIT : why ? NOT_RESTORED : NEVER_STARTED,
		...(started ? {} : { startedAt: undefined }),
		bytes: utf8Length(text),
		text,
	};
	append(deps, SETTLED_ENTRY, data, data.key);
	return data;
}

/** A child's record from an entry (settled or run), without its outcome. */
function recordOf(
	deps: Pick<SubagentServices, "config">,
	ctx: ExtensionContext,
	d: Omit<SettledEntryData, "key" | "state" | "bytes" | "error">,
): Omit<ChildRecord, "state"> {
	return {
		id: d.id,
		name: String(d.name ?? d.id),
		prompt: String(d.prompt ?? ""),
		model: String(d.model ?? "?"),
		// Entries from before tools were recorded: the default set, as a spawn without `tools` gets.
		tools: Array.isArray(d.tools)
			? d.tools.filter((t) => typeof t === "string")
			: [...deps.config().subagents.defaultTools],
		cwd: typeof d.cwd === "string" && d.cwd.length > 0 ? d.cwd : ctx.cwd,
		thinking: typeof d.thinking === "string" ? d.thinking : undefined,
		context: d.context === "fork" ? "fork" : "fresh",
		...(typeof d.agent === "string" && d.agent.length > 0 ? { agent: d.agent } : {}),
		run: d.run,
		createdAt: d.createdAt ?? 0,
		queuedAt: d.createdAt ?? 0,
		startedAt: d.startedAt,
		endedAt: d.endedAt,
		turns: d.turns ?? 0,
		outputTokens: 0,
		partialText: "",
		sessionFile: d.sessionFile,
		recentTools: [],
		...(validWorktree(d.worktree) ? { worktree: d.worktree } : {}),
		...(Array.isArray(d.after) && d.after.length > 0
			? { after: d.after.map(String), afterFailed: d.afterFailed === "run" ? "run" : "skip" }
			: {}),
		...spentOf(d),
	};
}

/** A child's spend and budget from an entry, each only when valid (session files are input). */
function spentOf(d: { spend?: unknown; budget?: unknown }): Pick<ChildRecord, "spend" | "budget"> {
	const spend = checkSpend(d.spend);
	const budget = checkChildBudget(d.budget);
	return { ...(spend ? { spend } : {}), ...(budget ? { budget } : {}) };
}

/** A worktree record from a session entry: every field present with the right type. */
function validWorktree(w: unknown): w is NonNullable<ChildRecord["worktree"]> {
	if (!w || typeof w !== "object") return false;
	const o = w as Record<string, unknown>;
	return (
		["path", "branch", "base", "repoTop", "cwd"].every((k) => typeof o[k] === "string") &&
		typeof o.parentUncommitted === "number"
	);
}

function readStored(deps: Pick<SubagentServices, "store">, sha256: string | undefined): string | undefined {
	if (!sha256) return undefined;
	const found = deps.store().resolve(sha256, "subagent-results");
	if (!found.ok) return undefined;
	try {
		return readFileSync(found.path, "utf8");
	} catch {
		return undefined;
	}
}

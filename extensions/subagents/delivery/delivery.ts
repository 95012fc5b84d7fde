/**
 * Automatic delivery and persistence. Every settled run is recorded in the parent's session
 * (custom entry) at once, every consumption too, so a reload or resume re-offers exactly the
 * results nobody received. Delivery claims results in the ledger before any await, so a wait
 * and an automatic delivery can never both hand out the same result in full.
 */
import { readFileSync } from "node:fs";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { headroomDetails } from "../../shared/host/details.ts";
import { singleShotMode } from "../../shared/host/pi-host.ts";
import { project } from "../../shared/projection/projection.ts";
import { SURFACES } from "../../shared/surfaces.ts";
import { utf8Length } from "../../shared/text/tokens.ts";
import type { SubagentManager } from "../children/manager.ts";
import {
	type ChildRecord,
	type ChildState,
	type ContextMode,
	type DeliveryState,
	resultKey,
	type SettledResult,
} from "../domain.ts";
import { batchOptions, type Env, ensureManager, ensureStore } from "../env.ts";
import {
	autoDeliveryHeader,
	missingStoredText,
	noRoomLine,
	noRoomUnsavedLine,
	restoredNote,
	resultHeader,
} from "../prompt.ts";
import type { ChildRow } from "../view/render.ts";
import { type BatchInput, type BatchItem, type BatchOutput, projectBatch } from "./batch.ts";

/** customType of the messages that carry results to the parent. */
export const RESULT_MESSAGE_TYPE = "subagent-result";
/** Session entry written when a run settles. */
export const SETTLED_ENTRY = "subagent-settled";
/** Session entry written when results were consumed. */
export const DELIVERED_ENTRY = "subagent-delivered";
/** Results up to this many UTF-8 bytes are kept inline in the session entry; longer ones go to the store. */
export const INLINE_ENTRY_MAX_BYTES = 64 * 1024;
/** Longest task text kept in a settled entry, in UTF-8 bytes (the child's session file has all of it). */
export const SETTLED_PROMPT_MAX_BYTES = SURFACES["subagents.settledPrompt"].maxBytes;
/** Delay before an automatic delivery, in milliseconds, so children finishing together arrive together. */
export const FLUSH_DEBOUNCE_MS = 50;
/** Interval of idle polls after the parent's run ended, in milliseconds. */
export const FLUSH_POLL_MS = 25;
/** Idle polls after agent_end before giving up until the next run ends (0.73 has no agent_settled). */
export const FLUSH_POLL_ATTEMPTS = 200;

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
}

export interface DeliveredEntryData {
	/** Result keys consumed together. */
	keys: string[];
	/** Who consumed them. */
	by: Exclude<DeliveryState, "pending">;
}

export function persistSettled(env: Env, result: SettledResult, child: ChildRecord): void {
	const bytes = utf8Length(result.text);
	const data: SettledEntryData = {
		key: result.key,
		id: child.id,
		run: result.run,
		state: result.state,
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
		error: child.error,
		bytes,
		...(child.worktree ? { worktree: child.worktree } : {}),
	};
	if (bytes <= INLINE_ENTRY_MAX_BYTES) data.text = result.text;
	else {
		const put = ensureStore(env).putSync("subagent-results", result.text);
		if (put.ok) data.sha256 = put.sha256;
		else data.text = result.text; // never lose it: a large entry beats a missing result
	}
	try {
		env.pi.appendEntry(SETTLED_ENTRY, data);
	} catch (error) {
		console.error(`subagents: could not record ${result.key} in the session: ${String(error)}`);
	}
}

export function persistDelivered(env: Env, keys: string[], by: DeliveredEntryData["by"]): void {
	if (keys.length === 0) return;
	try {
		env.pi.appendEntry(DELIVERED_ENTRY, { keys, by } satisfies DeliveredEntryData);
	} catch (error) {
		console.error(`subagents: could not record delivery of ${keys.join(", ")}: ${String(error)}`);
	}
}

/** Rebuild children and results from the session; returns how many results are still owed. */
export function restoreFromSession(env: Env, ctx: ExtensionContext): number {
	const manager = ensureManager(env, ctx);
	const settled: SettledEntryData[] = [];
	const delivered = new Map<string, DeliveredEntryData["by"]>();
	for (const entry of ctx.sessionManager.getBranch() as Array<{ type: string; customType?: string; data?: unknown }>) {
		if (entry.type !== "custom" || !entry.data || typeof entry.data !== "object") continue;
		if (entry.customType === SETTLED_ENTRY) settled.push(entry.data as SettledEntryData);
		else if (entry.customType === DELIVERED_ENTRY) {
			const d = entry.data as DeliveredEntryData;
			for (const key of Array.isArray(d.keys) ? d.keys : []) delivered.set(key, d.by === "wait" ? "wait" : "auto");
		}
	}
	let owed = 0;
	for (const d of settled) {
		if (typeof d.id !== "string" || !/^sa-\d+$/.test(d.id) || typeof d.key !== "string") continue;
		const text = d.text ?? readStored(env, d.sha256) ?? missingStoredText(d.bytes);
		const record: ChildRecord = {
			id: d.id,
			name: String(d.name ?? d.id),
			prompt: String(d.prompt ?? ""),
			model: String(d.model ?? "?"),
			// Entries from before tools were recorded: the default set, as a spawn without `tools` gets.
			tools: Array.isArray(d.tools)
				? d.tools.filter((t) => typeof t === "string")
				: [...env.config.subagents.defaultTools],
			cwd: typeof d.cwd === "string" && d.cwd.length > 0 ? d.cwd : ctx.cwd,
			thinking: typeof d.thinking === "string" ? d.thinking : undefined,
			context: d.context === "fork" ? "fork" : "fresh",
			...(typeof d.agent === "string" && d.agent.length > 0 ? { agent: d.agent } : {}),
			state: d.state,
			run: d.run,
			createdAt: d.createdAt ?? 0,
			queuedAt: d.createdAt ?? 0,
			startedAt: d.startedAt,
			endedAt: d.endedAt,
			turns: d.turns ?? 0,
			outputTokens: 0,
			partialText: "",
			finalText: text,
			error: typeof d.error === "string" ? d.error : undefined,
			sessionFile: d.sessionFile,
			recentTools: [],
			...(validWorktree(d.worktree) ? { worktree: d.worktree } : {}),
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

/** A worktree record from a session entry: every field present with the right type. */
function validWorktree(w: unknown): w is NonNullable<ChildRecord["worktree"]> {
	if (!w || typeof w !== "object") return false;
	const o = w as Record<string, unknown>;
	return (
		["path", "branch", "base", "repoTop", "cwd"].every((k) => typeof o[k] === "string") &&
		typeof o.parentUncommitted === "number"
	);
}

function readStored(env: Env, sha256: string | undefined): string | undefined {
	if (!sha256) return undefined;
	const found = ensureStore(env).resolve(sha256, "subagent-results");
	if (!found.ok) return undefined;
	try {
		return readFileSync(found.path, "utf8");
	} catch {
		return undefined;
	}
}

/** A result as a batch entry: header from the child, the exact text, the one-line fallback. */
export function batchInput(manager: SubagentManager, result: SettledResult): BatchInput {
	const live = manager.get(result.id);
	const child: ChildRecord = { ...(live as ChildRecord), state: result.state };
	return {
		id: result.id,
		run: result.run,
		header: resultHeader(child, result.verdict ? `${result.state}, ${result.verdict}` : result.state, result.run),
		text: result.text,
		noRoom: (stored, bytes, lines) =>
			stored.ok ? noRoomLine(child, bytes, lines, stored.path) : noRoomUnsavedLine(child, bytes, stored.error),
	};
}

/** Remember where each result's full text went, for later "already delivered" lines. */
export function recordArtifacts(manager: SubagentManager, items: BatchItem[]): void {
	for (const item of items) {
		const r = manager.ledger.get(resultKey(item.id, item.run));
		if (r && item.artifactPath) r.artifactPath = item.artifactPath;
	}
}

export function rowsOf(manager: SubagentManager, items: BatchItem[]): ChildRow[] {
	return items.map((item) => {
		const child = manager.get(item.id);
		const r = manager.ledger.get(resultKey(item.id, item.run));
		return {
			id: item.id,
			name: child?.name ?? item.id,
			state: r?.state ?? child?.state ?? "completed",
			fullBytes: item.fullBytes,
			shownBytes: item.shownBytes,
			artifactPath: item.artifactPath,
			note: item.oneLine ? "no room: path only" : undefined,
			...(child?.agent ? { agent: child.agent } : {}),
			reason: (r?.state ?? child?.state) !== "completed" ? child?.error : undefined,
		};
	});
}

/** Structured values and worktree changes of the batch's results (for other extensions), when any has them. */
function extrasOf(manager: SubagentManager, items: BatchItem[]) {
	const results = items.flatMap((item) => {
		const extras = manager.ledger.get(resultKey(item.id, item.run))?.extras;
		return extras && (extras.structured || extras.changes) ? [{ id: item.id, run: item.run, ...extras }] : [];
	});
	return results.length > 0 ? { results } : {};
}

/** Details every projected result carries. */
export function batchDetails(manager: SubagentManager, batch: BatchOutput, extraRows: ChildRow[] = []) {
	return {
		...extrasOf(manager, batch.items),
		headroom: headroomDetails({ artifacts: batch.artifacts }),
		rows: [...rowsOf(manager, batch.items), ...extraRows],
		items: batch.items,
		allocation: {
			source: batch.allocation.source,
			reason: batch.allocation.reason,
			batchBytes: batch.allocation.batchBytes,
		},
	};
}

/**
 * Deliver every unclaimed result as one message. "trigger": only when the parent is idle, and
 * start a turn; "append": add it to the session now for the next turn (used on resume).
 * Returns false when the parent was busy (try again later).
 */
export async function deliverPending(env: Env, how: "trigger" | "append"): Promise<boolean> {
	const { ctx, manager } = env;
	if (!ctx || !manager) return true;
	let idle: boolean;
	try {
		idle = ctx.isIdle();
	} catch {
		return true; // a context from a replaced session: the new instance delivers
	}
	if (how === "trigger" && !idle) return false;
	// A top-level single-shot run on Pi 1.x delivers before it settles (settle.ts); a turn started after
	// that would race the exit. What is still owed then goes to `pi -c`.
	if (how === "trigger" && env.depth === 0 && singleShotMode(ctx)) return true;
	const pending = manager.ledger.pending();
	if (pending.length === 0) return true;
	const keys = pending.map((r) => r.key);
	for (const key of keys) manager.ledger.claim(key, "auto");
	try {
		const leading = [how === "append" ? restoredNote(pending.length) : autoDeliveryHeader(pending.length)];
		const batch = await projectBatch(
			pending.map((r) => batchInput(manager, r)),
			batchOptions(env, ctx, "autoDelivery", { leading }),
		);
		recordArtifacts(manager, batch.items);
		const message = {
			customType: RESULT_MESSAGE_TYPE,
			content: batch.text,
			display: true,
			details: batchDetails(manager, batch),
		};
		if (how === "trigger") env.pi.sendMessage(message, { deliverAs: "followUp", triggerTurn: true });
		else env.pi.sendMessage(message);
		persistDelivered(env, keys, "auto");
		return true;
	} catch (error) {
		for (const key of keys) manager.ledger.release(key);
		console.error(`subagents: automatic delivery failed, will retry: ${String(error)}`);
		return true;
	}
}

/** Try to deliver soon; with polls, keep trying while the parent is still winding down its run. */
export function scheduleFlush(env: Env, polls = 0): void {
	env.flushAttempts = Math.max(env.flushAttempts, polls);
	if (env.flushTimer) return;
	const delay = polls > 0 ? FLUSH_POLL_MS : FLUSH_DEBOUNCE_MS;
	env.flushTimer = setTimeout(() => {
		env.flushTimer = undefined;
		void deliverPending(env, "trigger").then((done) => {
			if (done) env.flushAttempts = 0;
			else if (env.flushAttempts > 0) {
				const left = env.flushAttempts - 1;
				env.flushAttempts = 0;
				scheduleFlush(env, left);
			}
		});
	}, delay);
}

export function cancelFlush(env: Env): void {
	if (env.flushTimer) clearTimeout(env.flushTimer);
	env.flushTimer = undefined;
	env.flushAttempts = 0;
}

/**
 * Persistence of results in the parent's session. Every settled run is recorded (custom entry) at once,
 * every consumption too, so a reload or resume re-offers exactly the results nobody received: on session
 * start the children and the ledger are rebuilt from those entries.
 */
import { readFileSync } from "node:fs";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { project } from "../../shared/projection/projection.ts";
import { SURFACES } from "../../shared/surfaces.ts";
import { utf8Length } from "../../shared/text/tokens.ts";
import type { ChildRecord, ChildState, ContextMode, DeliveryState, SettledResult } from "../domain.ts";
import { missingStoredText } from "../prompt.ts";
import type { SubagentServices } from "../services.ts";

/** Session entry written when a run settles. */
export const SETTLED_ENTRY = "subagent-settled";
/** Session entry written when results were consumed. */
export const DELIVERED_ENTRY = "subagent-delivered";
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
}

export interface DeliveredEntryData {
	/** Result keys consumed together. */
	keys: string[];
	/** Who consumed them. */
	by: Exclude<DeliveryState, "pending">;
}

export function persistSettled(
	deps: Pick<SubagentServices, "store" | "session">,
	result: SettledResult,
	child: ChildRecord,
): void {
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
		const put = deps.store().putSync("subagent-results", result.text);
		if (put.ok) data.sha256 = put.sha256;
		else data.text = result.text; // never lose it: a large entry beats a missing result
	}
	try {
		deps.session.appendEntry(SETTLED_ENTRY, data);
	} catch (error) {
		console.error(`subagents: could not record ${result.key} in the session: ${String(error)}`);
	}
}

export function persistDelivered(
	deps: Pick<SubagentServices, "session">,
	keys: string[],
	by: DeliveredEntryData["by"],
): void {
	if (keys.length === 0) return;
	try {
		deps.session.appendEntry(DELIVERED_ENTRY, { keys, by } satisfies DeliveredEntryData);
	} catch (error) {
		console.error(`subagents: could not record delivery of ${keys.join(", ")}: ${String(error)}`);
	}
}

/** Rebuild children and results from the session; returns how many results are still owed. */
export function restoreFromSession(
	deps: Pick<SubagentServices, "children" | "config" | "store">,
	ctx: ExtensionContext,
): number {
	const manager = deps.children(ctx);
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
		const text = d.text ?? readStored(deps, d.sha256) ?? missingStoredText(d.bytes);
		const record: ChildRecord = {
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

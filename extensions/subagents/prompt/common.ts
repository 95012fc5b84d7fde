/**
 * The sentences of the subagents extension that a model reads and every tool shares: tool descriptions,
 * parameter help, tool result texts, run errors, delivery headers and the child's system-prompt addition.
 * subagent_spawn's own description and errors are in spawn.ts, the wording of isolated and
 * structured children in checkable.ts, of pipelines in pipeline.ts, of damaged records in records.ts (all in
 * this prompt/ folder). Pinned by tests.
 */

import { formatCount, formatDuration, plural } from "../domain/format.ts";
import { type ChildRecord, queuePosition } from "../domain/records.ts";
import { ASKING_STATE, askingNote } from "./ask.ts";
import { spendSuffix } from "./budget.ts";

export const TOOL_TEXT = {
	spawn: {
		label: "Spawn subagent",
		description:
			"Start a subagent: a separate Pi agent with its own context that works on `prompt` in the background. " +
			"Returns at once with the child's id. Its final answer reaches you automatically when it finishes " +
			"(or call subagent_wait). In a single-shot run without UI (print or json mode), its result says whether your " +
			"run waits for it or you must call subagent_wait before you finish. " +
			"Long answers arrive as head + tail with the full text stored in a file you can read. " +
			"Children outlive compaction, session switches and reload; each result arrives once, in this session. " +
			"After a crash a child is reported interrupted; subagent_send resumes it.",
		snippet: "Start a background subagent on a self-contained task; its result comes back to you",
		prompt: 'The complete task for the child. It sees nothing of your conversation unless context is "fork".',
		name: "Short title shown in lists (optional).",
		model: "Model as provider/id, or a bare id if unambiguous (optional; default: your model).",
		tools: "Tool names the child may use (optional; default: read, bash, edit, write, grep, find, ls).",
		cwd: "Working directory of the child (optional; must exist; default: yours).",
		thinking: "Thinking level: off, minimal, low, medium, high, xhigh (optional).",
		context: '"fresh" (default): the child starts from the prompt alone. "fork": it starts from your conversation.',
		isolation:
			'"worktree": the child works in its own new git worktree of your repository (from HEAD, on its own branch, ' +
			"outside your tree; your uncommitted changes are not in it); its result starts with what it changed and a " +
			'patch file you can read or git apply. "none" (default): it works in your tree.',
		outputSchema:
			"A JSON Schema (object) the child's answer must end with a matching JSON value for; it is told the schema, " +
			"gets one correction turn, and you receive the validated JSON (or the errors when it never complied).",
	},
	wait: {
		label: "Wait for subagents",
		description:
			"Wait for subagents to finish and return their results. ids omitted = every child whose result you have " +
			'not received yet. mode "all" (default) waits for all, "any" for the first. A timeout returns what finished ' +
			"plus the status of the rest; the others keep running.",
		ids: 'Child ids, e.g. ["sa-1"] (optional).',
		timeout: "Give up waiting after this many seconds (optional).",
		mode: '"all" (default) or "any".',
	},
	check: {
		label: "Check subagent",
		description:
			"Status of one subagent (state, model, turns, elapsed, context use), its last tool calls and the recent end of its output.",
		id: 'Child id, e.g. "sa-1".',
	},
	send: {
		label: "Message subagent",
		description:
			"Send text to a subagent: steers it while it runs, or starts a new run on its transcript once it has settled " +
			"(also a child from before this session was resumed; the new result arrives like the first).",
		id: "Child id.",
		text: "The message for the child (not empty).",
	},
	cancel: {
		label: "Cancel subagents",
		description: "Stop subagents; returns each one's partial output.",
		ids: "Child ids to stop.",
	},
	list: {
		label: "List subagents",
		description: "One line per subagent of this session: state, title, model, elapsed.",
	},
	cleanup: {
		label: "Remove subagent worktrees",
		description:
			'Remove the git worktrees (and branches) of settled isolation "worktree" children once you have their work. ' +
			"A worktree whose changes are not in your working tree yet is kept unless discard is true; the patch file " +
			"stays in the artifact store either way.",
		ids: 'Child ids, e.g. ["sa-1"].',
		discard: "Remove even when its changes are not in your working tree (default false).",
	},
} as const;

/** Added to a child's system prompt. A fresh child owns its task from its first turn. */
export const CHILD_SYSTEM_APPEND =
	"You work on your own task in a separate session with your own tools. " +
	"Your last message is your result: write it complete and self-contained, because it is what gets reported.";

export function label(c: Pick<ChildRecord, "id" | "name">): string {
	return `${c.id} "${c.name}"`;
}

/** " as scout" for a child spawned through a named agent, "" otherwise. */
function asAgent(c: Pick<ChildRecord, "agent">): string {
	return c.agent ? ` as ${c.agent}` : "";
}

/**
 * How a result reaches the parent. "auto": with a UI the session outlives the run, so results arrive on their
 * own. Without one (print/json mode) the process ends with the parent's run, and Pi 0.73 does not await
 * extension handlers at a run's end before it exits: only subagent_wait gets a result into this run.
 * "single-shot-ephemeral": no session file either (--no-session), so nothing is kept for later.
 * "settle": Pi 1.x's print/json mode, where a run that would end while children run waits for them
 * (agent_before_settle) and gets their results for one more turn; `maxRunSeconds` bounds that wait.
 */
export type Arrival = "auto" | "single-shot" | "single-shot-ephemeral" | { settle: number };

/** How a child's result reaches the parent, in one sentence or two. */
export function arrival(c: ChildRecord, how: Arrival): string {
	const wait = `subagent_wait(ids=["${c.id}"])`;
	if (how === "auto") return `Its result arrives automatically when it finishes, or call ${wait}.`;
	if (typeof how === "object")
		return (
			`This is a single-shot run (no UI): if your run would end while it still runs, the run waits for it ` +
			`(at most ${formatDuration(how.settle * 1000)}, subagents.maxRunSeconds) and its result arrives as a ` +
			`message you answer in one more turn. Call ${wait} to use it sooner.`
		);
	const after =
		how === "single-shot"
			? "its partial output is kept and delivered when this session is continued (pi -c)."
			: "this session has no file, so its output is not kept.";
	return (
		`This is a single-shot run (no UI): call ${wait} before you finish. A child still running when your run ` +
		`ends is stopped; ${after}`
	);
}

export function spawnedText(c: ChildRecord, how: Arrival = "auto"): string {
	return (
		`Spawned ${label(c)}${asAgent(c)} on ${c.model} (tools: ${c.tools.join(", ")}; cwd: ${c.cwd}; context: ${c.context}). ` +
		`It runs in the background. ${arrival(c, how)}`
	);
}

export function queuedText(c: ChildRecord, all: ChildRecord[], maxConcurrent: number, how: Arrival = "auto"): string {
	const busy = all.filter((o) => o.state === "running" || o.state === "starting").length;
	return (
		`Queued ${label(c)}${asAgent(c)}: ${busy} of ${maxConcurrent} slots busy; position ${queuePosition(all, c.id)} in the queue. ` +
		`It starts on ${c.model} when a slot frees. ${arrival(c, how)}`
	);
}

/** One status line for a child that has no result to show here. */
export function statusLine(c: ChildRecord, now: number): string {
	if (c.state === "queued") return `${label(c)}: queued — not started yet.`;
	if (c.state === "waiting") return `${label(c)}: waiting for ${(c.after ?? []).join(", ")} — not started yet.`;
	const elapsed = formatDuration(now - (c.startedAt ?? c.createdAt));
	if (c.state === "running" || c.state === "starting") {
		// A child blocked on ask_parent is not just slow: it goes on only once it has the answer (or its time runs out).
		const blocked = c.question ? ": it waits for your answer to its question (answer with subagent_send)" : "";
		return `${label(c)}: running for ${elapsed} (${plural(c.turns, "turn")}) — not finished${blocked}.`;
	}
	return `${label(c)}: ${c.state}.`;
}

/** Header above one projected result. */
export function resultHeader(c: ChildRecord, state: string, run: number): string {
	const took = c.startedAt && c.endedAt ? ` in ${formatDuration(c.endedAt - c.startedAt)}` : "";
	const runNote = run > 1 ? `, run ${run}` : "";
	return `── ${label(c)}${asAgent(c)} ${state}${took} (${plural(c.turns, "turn")}${runNote}, ${c.model}) ──`;
}

/** A result the parent already received in full elsewhere: status and where the full text is. */
export function alreadyDeliveredLine(c: ChildRecord, by: "wait" | "auto", artifactPath: string | undefined): string {
	const where = by === "auto" ? "delivered to you automatically earlier" : "returned by an earlier subagent_wait";
	const full = artifactPath ? `full text: ${artifactPath}` : "it was shown in full there";
	return `${label(c)}: ${c.state} — ${where}; ${full}.`;
}

/** A result that got no room in this batch: its size and where to read it. */
export function noRoomLine(c: ChildRecord, bytes: number, lines: number, path: string): string {
	return (
		`${label(c)}: ${c.state} — ${formatCount(bytes)} bytes, ${formatCount(lines)} lines; no room left in this batch. ` +
		`Full text stored at ${path} — read it with read(path="${path}", offset=1, limit=${Math.min(lines, 200)}).`
	);
}

export function noRoomUnsavedLine(c: ChildRecord, bytes: number, error: string): string {
	return (
		`${label(c)}: ${c.state} — ${formatCount(bytes)} bytes; no room left in this batch and the full text could not ` +
		`be stored (${error}). Call subagent_wait(ids=["${c.id}"]) alone to receive it.`
	);
}

export function waitTimeoutHeader(seconds: number, finished: number, total: number): string {
	return `Timed out after ${seconds} s: ${finished} of ${total} finished. The others keep running.`;
}

/** A subagent_wait timeout beyond the longest timer the runtime has: the wait used that limit instead. */
export function waitTimeoutClampedNote(asked: number, limit: number): string {
	return `(timeout_s ${asked} is longer than the longest wait possible, ${limit} s (about 24.8 days); waited at most that long.)`;
}

export function waitAbortedHeader(finished: number, total: number): string {
	return `Waiting was interrupted: ${finished} of ${total} finished. The others keep running.`;
}

export const NOTHING_TO_WAIT_FOR = "No subagent results are outstanding: every child's result was already received.";
export const NO_CHILDREN = "No subagents in this session yet.";

/** subagent_wait's progress (its partial result, drawn as the wait's row while it blocks). */
export function waitProgress(children: ChildRecord[], now: number): string {
	const parts = children.map((c) => {
		if (c.state !== "running" && c.state !== "starting") return `${c.id} ${c.state}`;
		// A child that waits for the parent's answer (ask_parent) says so, as the widget and the rows do.
		return c.question ? `${c.id} ${ASKING_STATE}` : `${c.id} running ${formatDuration(now - (c.startedAt ?? now))}`;
	});
	return `Waiting for ${plural(children.length, "subagent")}: ${parts.join(", ")}`;
}

/** Heading of an automatic delivery message. */
export function autoDeliveryHeader(count: number): string {
	return count === 1
		? "[Subagent result — delivered automatically when the child finished]"
		: `[${count} subagent results — delivered automatically, together, after your run ended]`;
}

/**
 * Body of a result that failed, was cancelled or is incomplete: why, in one line, first; then what it
 * produced before it stopped.
 */
export function failedResultText(
	state: "failed" | "cancelled" | "incomplete" | "budget",
	error: string,
	partial: string,
): string {
	const head =
		state === "cancelled"
			? `Cancelled: ${error}`
			: state === "incomplete"
				? `Incomplete: ${error}`
				: state === "budget"
					? `Budget reached: ${error}`
					: `Error: ${error}`;
	partial = partial.trimEnd();
	return partial.length > 0
		? `${head}\n\nPartial output before it stopped:\n${partial}`
		: `${head}\n\n(No output before it stopped.)`;
}

export const EMPTY_PROMPT_ERROR = "prompt must not be empty: give the child its complete task.";
export const SHUT_DOWN_ERROR = "the session is shutting down; no new subagents can start.";
export const PROVIDER_ERROR = "the model provider returned an error";
export const ABORTED = "aborted";
export const STOPPED_BEFORE_START = "stopped before it started";

export const EMPTY_SEND_TEXT_ERROR =
	'text must not be empty: pass the message for the child, e.g. subagent_send(id="sa-1", text="Also cover the error paths.").';

export function restoredSendError(c: Pick<ChildRecord, "id" | "name">): string {
	return `${label(c)} ran in an earlier process and left no session file to continue from; spawn a new child with what it needs.`;
}

export function missingCwdError(c: Pick<ChildRecord, "id" | "name" | "cwd">): string {
	return `${label(c)} cannot continue: its working directory ${c.cwd} is gone; spawn a new child with what it needs.`;
}

export function missingSessionFileError(c: Pick<ChildRecord, "id" | "name">, path: string): string {
	return `${label(c)} cannot continue: its session file ${path} is gone; spawn a new child with what it needs.`;
}

export function missingStoredText(bytes: number): string {
	return `[the full text (${bytes} bytes) is no longer in the artifact store]`;
}

export const CANCELLED_BY_PARENT = "stopped by subagent_cancel";
/** Why a run the user cancelled in /subagents ended (from this session or while another one was active). */
export const CANCELLED_IN_VIEW = "cancelled by the user in /subagents";
/** Why a run found unsettled on the next start ended (the process died while it ran). */
export const INTERRUPTED_BY_EXIT = "the parent's process ended while the child was running";
/** Why a run found queued on the next start never ran. */
export const NEVER_STARTED = "the parent's process ended before the child started (it was queued)";

/**
 * Body of a run the parent's process left unsettled (a crash or kill), found on the next start: what
 * happened, how to go on, and what the child's own session file holds of the run.
 */
export function interruptedResultText(
	c: Pick<ChildRecord, "id" | "name">,
	started: boolean,
	partial: { ok: true; text: string } | { ok: false; reason: string },
	sessionFile: string | undefined,
): string {
	if (!started) return `Interrupted: ${NEVER_STARTED}; nothing ran. Spawn a new child with the same task to run it.`;
	const head = `Interrupted: ${INTERRUPTED_BY_EXIT}. subagent_send(id="${c.id}", text=…) continues it on its own transcript.`;
	const where = sessionFile ? ` (its session file: ${sessionFile})` : "";
	if (!partial.ok) return `${head}\n\n(Its session file could not be read: ${partial.reason}.)`;
	const text = partial.text.trimEnd();
	return text.length > 0
		? `${head}\n\nPartial output before it stopped${where}:\n${text}`
		: `${head}\n\n(No output before it stopped${where}.)`;
}
export const INTERRUPTED_BY_SHUTDOWN = "the parent session shut down or reloaded while the child was running";

export function watchdogError(model: string, seconds: number): string {
	return (
		`no output from model ${model} for ${seconds} s (watchdog); the child was stopped. ` +
		"Retry with subagent_send, choose another model, or raise subagents.idleTimeoutSeconds."
	);
}

export function maxRunTimeError(seconds: number): string {
	return `stopped after the maximum run time of ${seconds} s (subagents.maxRunSeconds); use subagent_send to continue it.`;
}

export function maxTurnsReason(maxTurns: number): string {
	return `stopped after its maxTurns of ${maxTurns} while it still had work to do; use subagent_send to continue it.`;
}

export function outputLimitReason(): string {
	return "its last reply stopped at the model's output limit (stopReason length), so the answer is cut off; use subagent_send to ask for the rest.";
}

export function emptyAnswerNote(): string {
	return "(The child finished without a text answer.)";
}

export function unknownIdsError(unknown: string[], known: string[]): string {
	const which =
		unknown.length === 1 ? `Unknown subagent id ${unknown[0]}` : `Unknown subagent ids ${unknown.join(", ")}`;
	return known.length > 0
		? `${which}; known: ${known.join(", ")}.`
		: `${which}; no subagents were spawned in this session.`;
}

export function queuedSendError(c: ChildRecord): string {
	const where = c.state === "waiting" ? `waiting for ${(c.after ?? []).join(", ")}` : "queued";
	return `${label(c)} is ${where} and has not started; its prompt will run first. Send your message once it runs.`;
}

export function steeredText(c: ChildRecord): string {
	return `Sent to ${label(c)}; it reads the message after its current step.`;
}

export function rerunText(c: ChildRecord, how: Arrival = "auto"): string {
	const started = `${label(c)} started run ${c.run} on its transcript`;
	return how === "auto" ? `${started}; its result arrives like the first.` : `${started}. ${arrival(c, how)}`;
}

export function cancelHeader(count: number): string {
	return count === 1
		? "Cancelled 1 subagent. Its partial output:"
		: `Cancelled ${count} subagents. Partial output of each:`;
}

export function alreadySettledCancelLine(c: ChildRecord): string {
	return `${label(c)}: already ${c.state}; nothing to cancel.`;
}

export function listLine(c: ChildRecord, now: number, glyph: string): string {
	const since = c.startedAt ?? c.createdAt;
	const elapsed = formatDuration((c.endedAt ?? now) - since);
	const ctx = c.contextTokens !== undefined ? ` · ctx ${formatCount(c.contextTokens)} tok` : "";
	const agent = c.agent ? ` · agent ${c.agent}` : "";
	const state = c.state === "waiting" ? `waiting for ${(c.after ?? []).join(", ")}` : c.state;
	return `${glyph} ${label(c)} ${state} · ${elapsed} · ${plural(c.turns, "turn")} · ${c.model}${agent}${ctx}${spendSuffix(c)}`;
}

/** subagent_check's text; `asking`: the brief of the child's open question (ask_parent), named on the first line. */
export function checkText(c: ChildRecord, now: number, recentOutput: string, asking?: string): string {
	const since = c.startedAt ?? c.createdAt;
	const lines = [
		(c.state === "waiting"
			? `${label(c)} — waiting for ${(c.after ?? []).join(", ")} (it starts when they settle, its task opening with their results)`
			: `${label(c)} — ${c.state}${c.state === "queued" ? "" : ` for ${formatDuration((c.endedAt ?? now) - since)}`}`) +
			(asking !== undefined ? ` · ${askingNote(asking)}` : ""),
		`${c.agent ? `agent ${c.agent} · ` : ""}model ${c.model} · run ${c.run} · ${plural(c.turns, "turn")} · ${plural(c.outputTokens, "output token")}` +
			(c.contextTokens !== undefined && c.contextWindow
				? ` · context ${formatCount(c.contextTokens)}/${formatCount(c.contextWindow)} tokens`
				: ""),
	];
	const spend = spendSuffix(c);
	if (spend) lines.push(spend.replace(/^ · /, ""));
	if (c.sessionFile) lines.push(`session file: ${c.sessionFile}`);
	if (c.error) lines.push(`error: ${c.error}`);
	if (c.recentTools.length > 0) {
		lines.push("last tool calls:");
		for (const t of c.recentTools) lines.push(`  ${t.isError ? "✗" : "·"} ${t.name} ${t.args}`);
	}
	lines.push(recentOutput.length > 0 ? `recent output:\n${recentOutput}` : "recent output: (none yet)");
	return lines.join("\n");
}

/** Header of the results a print-mode run (Pi 1.x) waited for before ending. */
export function settleDeliveryHeader(count: number): string {
	return count === 1
		? "[Subagent result — your run waited for the child before ending; answer with it now]"
		: `[${count} subagent results — your run waited for the children before ending; answer with them now]`;
}

/** Why a child was stopped when Ctrl-C interrupted a print-mode run that waited for it. */
export const SETTLE_INTERRUPTED = "the single-shot run was interrupted (Ctrl-C) while it waited for the child";

/** Why a child was stopped when a print-mode run's wait for it reached its bound. */
export function settleCutError(seconds: number): string {
	return (
		`the single-shot run stopped waiting after ${seconds} s (subagents.maxRunSeconds); ` +
		"use subagent_send to continue it."
	);
}

/** customType of the roster message added after a compaction. */
export const ROSTER_MESSAGE_TYPE = "subagent-roster";

/**
 * First line of the roster a compaction gets: what it lists, that the summary may not, and how results come.
 */
export function rosterHeader(running: number, queued: number, owed: number): string {
	const parts = [
		running > 0 ? `${running} running` : "",
		queued > 0 ? `${queued} queued` : "",
		owed > 0 ? `${plural(owed, "result")} not yet received` : "",
	].filter(Boolean);
	return (
		`[Subagents after the compaction — still yours, whatever the summary says: ${parts.join(", ")}. ` +
		"Each result reaches you once, as a message when the child finishes; subagent_wait(ids=[…]) blocks for them, " +
		"subagent_check(id) shows progress. Do not spawn the same work again.]"
	);
}

/** One child in the roster: who, what state for how long, and its task in brief. */
export function rosterLine(c: ChildRecord, now: number, brief: string, owed: boolean): string {
	const since = (t: number | undefined) => formatDuration(now - (t ?? c.createdAt));
	const state =
		c.state === "running" || c.state === "starting"
			? `running for ${since(c.startedAt)}`
			: c.state === "queued"
				? `queued for ${since(c.queuedAt)}`
				: `${c.state} ${since(c.endedAt)} ago${owed ? ", result not yet received" : ""}`;
	return `- ${label(c)}${asAgent(c)}: ${state}${c.run > 1 ? ` (run ${c.run})` : ""} — task: ${brief}`;
}

export function restoredNote(count: number): string {
	return `[${plural(count, "subagent result")} from before the session was reloaded or resumed]`;
}

export function configWarning(warning: string): string {
	return `subagents: ${warning}`;
}

/** A spawn that lists tools its parent does not have active: refused, naming what the parent has. */
export function toolsBeyondParentError(beyond: readonly string[], parentTools: readonly string[]): string {
	const own = parentTools.filter((t) => !t.startsWith("subagent_"));
	return `A child never gets a tool its parent lacks: ${beyond.join(", ")} ${beyond.length === 1 ? "is" : "are"} not among this session's active tools (${own.join(", ") || "none"}; grep, find and ls come with read). Ask for a subset of them, or leave tools out.`;
}

/** An agent's or the default tools narrowed to the parent's: said in the spawn result. */
export function toolsLeftOutNote(beyond: readonly string[]): string {
	return `subagents: the child does not get ${beyond.join(", ")}: this session does not have ${beyond.length === 1 ? "it" : "them"} active (a child never gets a tool its parent lacks).`;
}

/**
 * Every sentence of the subagents extension that a model reads: tool descriptions, parameter
 * help, tool result texts, errors, delivery headers and the child's system-prompt addition.
 * Kept in one module so the wording is reviewed in one place and pinned by tests.
 */

import { project } from "../shared/projection/projection.ts";
import { SURFACES } from "../shared/surfaces.ts";
import { stripControls } from "../shared/text/sanitize.ts";
import { utf8ByteLength } from "../shared/text/utf8.ts";
import {
	type ChildRecord,
	capChoices,
	formatCount,
	formatDuration,
	type ModelFailure,
	plural,
	queuePosition,
} from "./domain.ts";

export const TOOL_TEXT = {
	spawn: {
		label: "Spawn subagent",
		description:
			"Start a subagent: a separate Pi agent with its own context that works on `prompt` in the background. " +
			"Returns at once with the child's id. Its final answer reaches you automatically when it finishes " +
			"(or call subagent_wait). In a single-shot run without UI (print or json mode), its result says whether your " +
			"run waits for it or you must call subagent_wait before you finish. " +
			"Long answers arrive as head + tail with the full text stored in a file you can read.",
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

function arrival(c: ChildRecord, how: Arrival): string {
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
	const elapsed = formatDuration(now - (c.startedAt ?? c.createdAt));
	if (c.state === "running" || c.state === "starting") {
		return `${label(c)}: running for ${elapsed} (${plural(c.turns, "turn")}) — not finished.`;
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

export function waitAbortedHeader(finished: number, total: number): string {
	return `Waiting was interrupted: ${finished} of ${total} finished. The others keep running.`;
}

export const NOTHING_TO_WAIT_FOR = "No subagent results are outstanding: every child's result was already received.";
export const NO_CHILDREN = "No subagents in this session yet.";

export function waitProgress(children: ChildRecord[], now: number): string {
	const parts = children.map((c) =>
		c.state === "running" || c.state === "starting"
			? `${c.id} running ${formatDuration(now - (c.startedAt ?? now))}`
			: `${c.id} ${c.state}`,
	);
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
export function failedResultText(state: "failed" | "cancelled" | "incomplete", error: string, partial: string): string {
	const head =
		state === "cancelled" ? `Cancelled: ${error}` : state === "incomplete" ? `Incomplete: ${error}` : `Error: ${error}`;
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

export function resumeModelError(c: Pick<ChildRecord, "id" | "name" | "model">, failure: ModelFailure): string {
	return (
		`${label(c)} ran on ${c.model}, which this session cannot run now (models you can use: ` +
		`${choiceList(failure.choices)}); spawn a new child on one of those with what it needs.`
	);
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

/** Most providers named when an id is known only without credentials. */
const KEYLESS_PROVIDERS_SHOWN = SURFACES["subagents.keylessProviders"].maxLines - 1;

/** Choices capped at MODEL_CHOICES_SHOWN, then a count of the rest. */
function choiceList(choices: string[], max?: number): string {
	const { shown, more } = capChoices(choices, max);
	if (shown.length === 0) return "none have credentials configured";
	return more > 0 ? `${shown.join(", ")} … and ${formatCount(more)} more` : shown.join(", ");
}

export function badModelError(spec: string, failure: ModelFailure): string {
	switch (failure.reason) {
		case "ambiguous":
			return `Model "${spec}" is ambiguous among the models you can use; pass provider/id, one of: ${choiceList(failure.choices)}.`;
		case "no-credentials":
			return (
				`Model "${spec}" is known only to providers with no credentials configured here ` +
				`(${choiceList(failure.providers ?? [], KEYLESS_PROVIDERS_SHOWN)}); models you can use: ${choiceList(failure.choices)}.`
			);
		default:
			return `Unknown model "${spec}"; models you can use: ${choiceList(failure.choices)}.`;
	}
}

export function noModelError(): string {
	return "No model to run the child on: pass model as provider/id.";
}

export function badCwdError(cwd: string, parentCwd: string): string {
	return `cwd "${cwd}" does not exist or is not a directory; pass an existing directory (default: ${parentCwd}).`;
}

export function badToolsError(unknown: string[], available: string[]): string {
	return `Unknown ${unknown.length === 1 ? "tool" : "tools"} ${unknown.join(", ")}; available to children: ${available.join(", ")}.`;
}

export function badThinkingError(level: string, levels: readonly string[]): string {
	return `Unknown thinking level "${level}"; use one of: ${levels.join(", ")}.`;
}

export function depthLimitError(maxDepth: number): string {
	return `This agent is a subagent at the depth limit (${maxDepth}); it cannot spawn further subagents. Do the work yourself.`;
}

export function forkUnavailableError(reason: string): string {
	return `context "fork" is not available (${reason}); spawn with context "fresh" and put what the child needs in prompt.`;
}

export function queuedSendError(c: ChildRecord): string {
	return `${label(c)} is queued and has not started; its prompt will run first. Send your message once it runs.`;
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
	return `${glyph} ${label(c)} ${c.state} · ${elapsed} · ${plural(c.turns, "turn")} · ${c.model}${agent}${ctx}`;
}

export function checkText(c: ChildRecord, now: number, recentOutput: string): string {
	const since = c.startedAt ?? c.createdAt;
	const lines = [
		`${label(c)} — ${c.state}${c.state === "queued" ? "" : ` for ${formatDuration((c.endedAt ?? now) - since)}`}`,
		`${c.agent ? `agent ${c.agent} · ` : ""}model ${c.model} · run ${c.run} · ${plural(c.turns, "turn")} · ${plural(c.outputTokens, "output token")}` +
			(c.contextTokens !== undefined && c.contextWindow
				? ` · context ${formatCount(c.contextTokens)}/${formatCount(c.contextWindow)} tokens`
				: ""),
	];
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

export function restoredNote(count: number): string {
	return `[${plural(count, "subagent result")} from before the session was reloaded or resumed]`;
}

export function configWarning(warning: string): string {
	return `subagents: ${warning}`;
}

/** What the spawn description and the errors need of an agent. */
export interface AgentSummary {
	name: string;
	description: string;
}

/** The budget of the agent list in subagent_spawn's description (UTF-8 bytes and lines of the whole list). */
export const AGENT_LIST_BUDGET = {
	maxBytes: SURFACES["subagents.agentList"].maxBytes,
	maxLines: SURFACES["subagents.agentList"].maxLines,
	lineBytes: SURFACES["subagents.agentLine"].maxBytes,
} as const;

/**
 * subagent_spawn's description with the available agents: one "name — description" line each, within
 * AGENT_LIST_BUDGET; agents past it are named on one last line (or counted, when even that is too long).
 */
export function spawnDescription(agents: readonly AgentSummary[]): string {
	const base = TOOL_TEXT.spawn.description;
	if (agents.length === 0) return base;
	const heading = 'Named agents (pass agent="<name>"; its settings apply and your explicit parameters override them):';
	const lines = [heading];
	let bytes = utf8ByteLength(heading);
	let shown = 0;
	for (const a of agents) {
		const line = project(`- ${a.name}${a.description ? ` — ${a.description}` : ""}`, "subagents.agentLine").text;
		const reserve = shown + 1 < agents.length ? 2 : 1; // keep a line for "… and N more"
		if (lines.length + reserve > AGENT_LIST_BUDGET.maxLines) break;
		if (bytes + 1 + utf8ByteLength(line) + (reserve > 1 ? 96 : 0) > AGENT_LIST_BUDGET.maxBytes) break;
		lines.push(line);
		bytes += 1 + utf8ByteLength(line);
		shown++;
	}
	if (shown < agents.length) {
		const rest = agents.slice(shown).map((a) => a.name);
		const named = `- … and ${rest.length} more: ${rest.join(", ")}`;
		const room = AGENT_LIST_BUDGET.maxBytes - bytes - 1;
		lines.push(
			utf8ByteLength(named) <= Math.min(room, AGENT_LIST_BUDGET.lineBytes)
				? named
				: project(`- … and ${rest.length} more agents`, "subagents.agentLine", { maxBytes: room }).text,
		);
	}
	return `${base}\n\n${lines.join("\n")}`;
}

export const SPAWN_AGENT_PARAM =
	"Name of an agent to run as (see the list in this tool's description; optional). Its system prompt, tools, model and other settings apply; parameters you pass explicitly override them.";
export const SPAWN_EXTENSIONS_PARAM =
	'Which of the user\'s extensions the child loads (optional): true = all that Pi would load (the default), false or [] = none, or a list of names; "!name" excludes one.';

/** Most agent names an error lists. */
export const AGENT_NAMES_SHOWN = SURFACES["subagents.agentNames"].maxLines;

export function unknownAgentError(name: string, known: readonly string[]): string {
	const shown = known.slice(0, AGENT_NAMES_SHOWN);
	const more = known.length - shown.length;
	const list = shown.length > 0 ? shown.join(", ") + (more > 0 ? ` … and ${more} more` : "") : "none";
	return `Unknown agent "${project(oneLine(name), "subagents.name").text}"; known agents: ${project(list, "subagents.agentNames").text}. No child was started; spawn again with one of these, or without agent.`;
}

/** An agent file's model that the registry cannot resolve: the child runs on the parent's model. */
export function agentModelFallbackWarning(agent: string, model: string, fallback: string): string {
	return `subagents: agent "${agent}" asks for model "${model}", which is not available here; it runs on ${fallback} instead.`;
}

export function agentToolsError(agent: string, unknown: string[], available: string[]): string {
	return `Agent "${agent}" lists ${unknown.length === 1 ? "a tool" : "tools"} no child can have: ${unknown.join(", ")}; available: ${available.join(", ")}. Fix the agent file, or pass tools explicitly.`;
}

export function missingExtensionToolsError(unknown: string[]): string {
	return `the child's tools ${unknown.join(", ")} come from no extension it loaded; check the agent file's tools and extensions, or pass tools explicitly.`;
}

export function extensionLoadError(name: string, path: string, error: string): string {
	return `the child could not start: extension "${name}" (${path}) failed: ${project(oneLine(error), "subagents.extensionError").text}. Exclude it with extensions: ["!${name}"], or fix it.`;
}

function oneLine(text: string): string {
	return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
}

/** Where an agent was defined, for /agents. */
export function agentSourceLabel(source: string, file?: string): string {
	return file ? `${source}: ${file}` : source;
}

/** The /agents listing: each agent with its source, tools and model, then the warnings. */
export function agentsCommandText(
	agents: ReadonlyArray<
		AgentSummary & { source: string; file?: string; tools?: string[]; model?: string; extensions?: string }
	>,
	warnings: readonly string[],
	defaultTools: readonly string[],
): string {
	const lines: string[] = [`${plural(agents.length, "agent")} (later sources override earlier ones by name):`];
	for (const a of agents) {
		lines.push(`${a.name} — ${a.description || "(no description)"}`);
		lines.push(`  source ${agentSourceLabel(a.source, a.file)}`);
		lines.push(
			`  tools ${a.tools ? a.tools.join(", ") : `${defaultTools.join(", ")} + extension tools`} · model ${a.model ?? "(the parent's)"}${a.extensions ? ` · extensions ${a.extensions}` : ""}`,
		);
	}
	if (warnings.length > 0) {
		lines.push("", `${plural(warnings.length, "warning")}:`);
		for (const w of warnings) lines.push(`  ${w}`);
	}
	return lines.join("\n");
}

// ── Isolated and structured children ─────────────────────────────────────────────────────────────

export function notARepositoryError(reason: string): string {
	return (
		`isolation "worktree" is not possible: ${reason}. No child was started. ` +
		"Spawn without isolation (it then works in your tree), or run git init and commit first."
	);
}

export function worktreeFailedError(reason: string): string {
	return `isolation "worktree" failed: ${reason}. No child was started; fix that or spawn without isolation.`;
}

export function badIsolationError(value: string): string {
	return `Unknown isolation ${JSON.stringify(value)}; use "worktree" or "none".`;
}

export function badOutputSchemaError(reason: string): string {
	return `output_schema cannot be used: ${reason}. No child was started; pass a JSON Schema object.`;
}

/** Spawn-result sentence of an isolated child: where it works and what it does not see. */
export function isolationNote(w: {
	path: string;
	branch: string;
	base: string;
	repoTop: string;
	parentUncommitted: number;
}): string {
	const carried =
		w.parentUncommitted > 0
			? `Your ${plural(w.parentUncommitted, "uncommitted change")} (staged, unstaged or untracked) are NOT in it: commit first if the child needs them.`
			: "Your working tree had no uncommitted changes, so the child sees exactly your files.";
	return (
		`Isolated: it works in a new git worktree ${w.path} on branch ${w.branch}, created from HEAD ${w.base.slice(0, 12)} ` +
		`of ${w.repoTop}. ${carried} Your tree and index are not touched; its result starts with what it changed.`
	);
}

export function structuredNote(): string {
	return "Its answer must end with JSON valid against output_schema (one correction turn); you get the validated JSON.";
}

/** Appended to a structured child's task: the schema it must answer with. */
export function outputSchemaInstruction(schemaText: string): string {
	return (
		"\n\n---\nAnswer format (required): end your final message with one JSON value that validates against this " +
		"JSON Schema — as a ```json fenced block or bare JSON, as the very last thing in the message, nothing after it:\n" +
		"```json\n" +
		schemaText +
		"\n```"
	);
}

/** The one correction turn: what failed, and the schema again. */
export function outputSchemaCorrection(found: boolean, errors: string[], schemaText: string): string {
	const what = found
		? `Your final JSON does not validate against the required JSON Schema:\n${errors.map((e) => `- ${e}`).join("\n")}`
		: "Your final message does not end with a JSON value.";
	return (
		`${what}\nReply now with only the corrected JSON value (no prose), valid against this schema:\n` +
		"```json\n" +
		schemaText +
		"\n```"
	);
}

/** Reminder added to subagent_send's text for a structured child starting another run. */
export const OUTPUT_SCHEMA_REMINDER =
	"\n\n(As before: end your final message with one JSON value valid against the output schema of your task.)";

export const VERDICT_VALID = "output valid";
export const VERDICT_INVALID = "output INVALID";

/** Body of a structured result that never complied: the errors, then the raw answer. */
export function invalidOutputText(reasons: string[], corrections: number, raw: string): string {
	const after = corrections > 0 ? "after one correction turn" : "and the correction turn could not run";
	return (
		`Invalid structured output: the answer does not end with JSON valid against output_schema ${after}.\n` +
		`Errors:\n${reasons.map((e) => `- ${e}`).join("\n")}\n\nRaw answer:\n${raw}`
	);
}

export const NO_JSON_FOUND = "the answer does not end with a JSON value";

export function correctionFailed(error: string): string {
	return `the correction turn failed: ${error}`;
}

type ChangedFile = { path: string; status: "added" | "modified" | "deleted"; added?: number; removed?: number };

/** Most changed files listed in a result; the patch has them all. */
export const CHANGED_FILES_SHOWN = SURFACES["subagents.changedFiles"].maxLines;
/** Longest line of one changed file, in UTF-8 bytes (a very long path is clipped; the patch has it whole). */
const CHANGED_FILE_LINE_BYTES = Math.floor(SURFACES["subagents.changedFiles"].maxBytes / CHANGED_FILES_SHOWN);

function fileLine(f: ChangedFile): string {
	const mark = f.status === "added" ? "A" : f.status === "deleted" ? "D" : "M";
	const counts = f.added === undefined ? "binary" : `+${formatCount(f.added)} −${formatCount(f.removed ?? 0)}`;
	const tail = ` (${counts})`;
	return `  ${mark} ${project(stripControls(f.path).replace(/[\n\t]/g, " "), "subagents.changedFiles", { maxBytes: CHANGED_FILE_LINE_BYTES - 4 - utf8ByteLength(tail), maxLines: 1 }).text}${tail}`;
}

/** First lines of an isolated child's result: what changed, where, and how to take it. */
export function changesText(o: {
	id: string;
	worktree: string;
	branch: string;
	base: string;
	repoTop: string;
	files: ChangedFile[];
	commits: number;
	patch: { ok: true; path: string } | { ok: false; error: string } | undefined;
}): string {
	const added = o.files.reduce((n, f) => n + (f.added ?? 0), 0);
	const removed = o.files.reduce((n, f) => n + (f.removed ?? 0), 0);
	const lines = [
		`Changes in worktree ${o.worktree} (branch ${o.branch}, from ${o.base.slice(0, 12)}): ` +
			`${plural(o.files.length, "file")} changed, +${formatCount(added)} −${formatCount(removed)}` +
			(o.commits > 0 ? `, ${plural(o.commits, "commit")} on the branch` : "") +
			".",
		...o.files.slice(0, CHANGED_FILES_SHOWN).map(fileLine),
	];
	if (o.files.length > CHANGED_FILES_SHOWN) {
		lines.push(`  … and ${formatCount(o.files.length - CHANGED_FILES_SHOWN)} more files (all in the patch)`);
	}
	if (o.patch?.ok) {
		lines.push(
			`Patch of everything it changed (untracked files included): ${o.patch.path} — read it, or take it with ` +
				`git -C ${o.repoTop} apply ${o.patch.path} (add --check to try first).`,
		);
	} else {
		const why = o.patch ? `the patch could not be stored (${o.patch.error})` : "no patch was stored";
		lines.push(
			`${why}; see the changes with git -C ${o.worktree} status and git -C ${o.worktree} diff ${o.base.slice(0, 12)}.`,
		);
	}
	lines.push(`The worktree is kept until you remove it: subagent_cleanup(ids=["${o.id}"]).`);
	return lines.join("\n");
}

export function noChangesText(worktree: string, removed: { ok: true } | { ok: false; error: string }): string {
	return removed.ok
		? `No changes in its worktree; the worktree ${worktree} and its branch were removed.`
		: `No changes in its worktree, but removing ${worktree} failed (${removed.error}); it is kept.`;
}

export function changesUnknownText(worktree: string, error: string): string {
	return `Could not determine what it changed (${error}); its worktree ${worktree} is kept. Inspect it with git -C ${worktree} status.`;
}

export const PATCH_NOT_UTF8 =
	"it holds bytes that are not UTF-8 (a file in another encoding), and the artifact store keeps text only";

export function concludeFailedNote(error: unknown): string {
	return `[could not summarise this child's changes: ${error instanceof Error ? error.message : String(error)}]`;
}

export function recreatedWorktreeNote(path: string, base: string): string {
	return `its worktree ${path} was re-created from HEAD ${base.slice(0, 12)}`;
}

export const CLEANUP_NOTHING = "No ids given: pass the ids of isolated children to remove their worktrees.";

export function cleanupLine(
	c: Pick<ChildRecord, "id" | "name">,
	outcome:
		| { kind: "removed"; why: "no-changes" | "in-tree" | "discarded"; files: number; patchPath?: string }
		| { kind: "kept"; files: number; patchPath?: string; repoTop: string }
		| { kind: "not-isolated" | "already-removed" | "running" }
		| { kind: "failed"; error: string },
): string {
	switch (outcome.kind) {
		case "removed": {
			const why =
				outcome.why === "no-changes"
					? "it had no changes"
					: outcome.why === "in-tree"
						? "its changes are in your working tree"
						: `discarded ${plural(outcome.files, "changed file")} as asked`;
			const patch = outcome.patchPath ? `; its patch stays at ${outcome.patchPath}` : "";
			return `${label(c)}: worktree and branch removed (${why})${patch}.`;
		}
		case "kept":
			return (
				`${label(c)}: kept — its changes (${plural(outcome.files, "file")}) are not in your working tree yet. ` +
				(outcome.patchPath
					? `Apply ${outcome.patchPath} with git -C ${outcome.repoTop} apply, `
					: "Merge its branch ") +
				"then clean up again, or pass discard: true to remove it anyway."
			);
		case "not-isolated":
			return `${label(c)}: not isolated; nothing to remove.`;
		case "already-removed":
			return `${label(c)}: its worktree was already removed.`;
		case "running":
			return `${label(c)}: still running; cancel it or wait for it first.`;
		case "failed":
			return `${label(c)}: could not clean up: ${outcome.error}`;
	}
}

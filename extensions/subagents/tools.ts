/**
 * The six tools' handlers: validate, call the manager, and pass every child output through the
 * batch projection. Errors are thrown with text that lists the valid choices.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { surfaceFor } from "../shared/host/config.ts";
import { singleShotMode } from "../shared/host/pi-host.ts";
import { renderForkContext } from "../shared/transcript/narrate.ts";
import { messageBudget } from "../shared/transcript/plan.ts";
import { ownerFraming } from "../shared/transcript/prompt.ts";
import { type ShortenOptions, storedShortening } from "../shared/transcript/view.ts";
import { type AgentDefinition, parseExtensionPolicy } from "./agents.ts";
import { projectBatch } from "./batch.ts";
import { batchDetails, batchInput, persistDelivered, recordArtifacts } from "./delivery.ts";
import {
	type ChildRecord,
	type ContextMode,
	isSettled,
	type ModelChoice,
	type ModelPools,
	orderChoices,
	partitionIds,
	resolveModelSpec,
	type SettledResult,
	statusGlyph,
} from "./domain.ts";
import {
	batchOptions,
	CHILD_TOOL_NAMES,
	type Env,
	ensureManager,
	ensureStore,
	globalExtensionPolicy,
	loadAgents,
	parentMessages,
	SUBAGENT_TOOL_NAMES,
	THINKING_LEVELS,
} from "./env.ts";
import type { ResumeSettings } from "./manager.ts";
import * as P from "./prompt.ts";
import { OUTPUT_SCHEMA_REMINDER } from "./prompt-checkable.ts";
import {
	agentModelFallbackWarning,
	badCwdError,
	badModelError,
	badThinkingError,
	badToolsError,
	depthLimitError,
	forkUnavailableError,
	noModelError,
	resumeModelError,
	unknownAgentError,
} from "./prompt-spawn.ts";
import type { ChildRow } from "./render.ts";
import { isolationFor, prepareCheckable } from "./spawn-checkable.ts";

type ToolReturn = { content: Array<{ type: "text"; text: string }>; details: Record<string, unknown> };
type OnUpdate = ((partial: ToolReturn) => void) | undefined;

const reply = (text: string, details: Record<string, unknown> = {}): ToolReturn => ({
	content: [{ type: "text", text }],
	details,
});

function row(c: ChildRecord, note?: string): ChildRow {
	return { id: c.id, name: c.name, state: c.state, note, ...(c.agent ? { agent: c.agent } : {}) };
}

/** Whether `path` exists and is a regular file or a directory (symlinks followed, as Pi opens them). */
function isKind(path: string, kind: "file" | "directory"): boolean {
	try {
		const st = statSync(path);
		return kind === "file" ? st.isFile() : st.isDirectory();
	} catch {
		return false;
	}
}

/** The part of Pi's model registry the tools use (getAvailable: both lines have it; fakes may not). */
interface RegistryView {
	getAll(): ModelChoice[];
	getAvailable?(): ModelChoice[];
	find(provider: string, id: string): unknown;
}

/**
 * What a model spec resolves against: the models with credentials (Pi lists some 900 built-in ones, most
 * without a key here) plus the session's own model, which demonstrably runs.
 */
function modelPools(ctx: ExtensionContext): ModelPools {
	const registry = ctx.modelRegistry as unknown as RegistryView;
	const pick = (m: ModelChoice): ModelChoice => ({ provider: m.provider, id: m.id });
	const all = registry.getAll().map(pick);
	const available = (typeof registry.getAvailable === "function" ? registry.getAvailable() : registry.getAll()).map(
		pick,
	);
	const own = ctx.model ? pick(ctx.model) : undefined;
	if (own && !available.some((m) => m.provider === own.provider && m.id === own.id)) available.unshift(own);
	return { available, all, preferProvider: own?.provider };
}

/**
 * How results reach the parent: without a UI (print/json mode) the process ends with the parent's run;
 * on Pi 1.x the top-level run waits for its children first (settle.ts).
 */
function arrivalOf(env: Env, ctx: ExtensionContext): P.Arrival {
	try {
		if (ctx.hasUI) return "auto";
		if (env.depth === 0 && singleShotMode(ctx)) return { settle: env.config.subagents.maxRunSeconds };
		return ctx.sessionManager.getSessionFile() ? "single-shot" : "single-shot-ephemeral";
	} catch {
		return "auto";
	}
}

/** subagent_spawn's parameters (described to the model in TOOL_TEXT.spawn). */
/** How a fork shortens the parent's long texts: surface transcript.segment as configured, stored in full. */
function forkShortening(env: Env): ShortenOptions {
	const segment = surfaceFor(env.config, "transcript.segment");
	return storedShortening(ensureStore(env), segment.headShare, segment);
}

export interface SpawnParams {
	prompt: string;
	agent?: string;
	extensions?: boolean | string[];
	name?: string;
	model?: string;
	tools?: string[];
	cwd?: string;
	thinking?: string;
	context?: ContextMode;
	/** "worktree": its own git worktree of the parent's repository; "none" (default): the parent's tree. */
	isolation?: string;
	/** A JSON Schema its answer must end with a valid JSON value for. */
	output_schema?: unknown;
}

/** The named agent a spawn asks for; an unknown name is refused before anything starts. */
function agentFor(env: Env, name: string | undefined, ctx: ExtensionContext): AgentDefinition | undefined {
	if (name === undefined) return undefined;
	const agents = loadAgents(env, ctx).agents;
	const wanted = typeof name === "string" ? name.trim() : "";
	const found = agents.find((a) => a.name === wanted);
	if (!found)
		throw new Error(
			unknownAgentError(
				String(name),
				agents.map((a) => a.name),
			),
		);
	return found;
}

/** Tool names a spawn may list: Pi's built-in ones and the extension tools this session knows of. */
function listableTools(env: Env): string[] {
	const names = new Set<string>(CHILD_TOOL_NAMES);
	try {
		for (const t of env.pi.getAllTools()) {
			const name = (t as { name?: unknown }).name;
			if (typeof name === "string" && !(SUBAGENT_TOOL_NAMES as readonly string[]).includes(name)) names.add(name);
		}
	} catch {
		// No tool list (a fake or an old host): the built-in names stand.
	}
	return [...names];
}

export async function spawnTool(env: Env, params: SpawnParams, ctx: ExtensionContext): Promise<ToolReturn> {
	const manager = ensureManager(env, ctx);
	const cfg = env.config.subagents;
	if (env.depth >= cfg.maxDepth) throw new Error(depthLimitError(cfg.maxDepth));
	if (typeof params.prompt !== "string" || params.prompt.trim().length === 0) throw new Error(P.EMPTY_PROMPT_ERROR);
	const agent = agentFor(env, params.agent, ctx);
	const notes: string[] = [];
	const registry = ctx.modelRegistry as unknown as RegistryView;
	let model: unknown = ctx.model;
	let modelLabel = ctx.model ? `${ctx.model.provider}/${ctx.model.id}` : "";
	if (params.model) {
		const found = resolveModelSpec(params.model, modelPools(ctx));
		if (!found.ok) throw new Error(badModelError(params.model, found.failure));
		model = registry.find(found.value.provider, found.value.id);
		modelLabel = `${found.value.provider}/${found.value.id}`;
	} else if (agent?.model) {
		// An agent file's model that is not available here (a Claude alias, a provider without a key) is
		// not the caller's mistake: the child runs on the parent's model, and both are told.
		const found = resolveModelSpec(agent.model, modelPools(ctx));
		const picked = found.ok ? registry.find(found.value.provider, found.value.id) : undefined;
		if (found.ok && picked) {
			model = picked;
			modelLabel = `${found.value.provider}/${found.value.id}`;
		} else {
			const warning = agentModelFallbackWarning(agent.name, agent.model, modelLabel || "the parent's model");
			notes.push(warning);
			if (ctx.hasUI) ctx.ui.notify(warning, "warning");
			else console.error(warning);
		}
	}
	if (!model) throw new Error(noModelError());
	const exactTools = params.tools !== undefined || agent?.tools !== undefined;
	const tools = params.tools ?? agent?.tools ?? cfg.defaultTools;
	const allowed = listableTools(env);
	const unknownTools = tools.filter((t) => !allowed.includes(t));
	if (unknownTools.length > 0) {
		if (params.tools !== undefined) throw new Error(badToolsError(unknownTools, allowed));
		// An agent file may name tools of extensions only the child loads; the child's start checks them.
	}
	const extensions =
		params.extensions !== undefined
			? parseExtensionPolicy(params.extensions)
			: (agent?.extensions ?? globalExtensionPolicy(env.config));
	const cwd = params.cwd ? resolve(ctx.cwd, params.cwd) : ctx.cwd;
	if (!isKind(cwd, "directory")) throw new Error(badCwdError(params.cwd ?? cwd, ctx.cwd));
	const levels: readonly string[] = THINKING_LEVELS;
	if (params.thinking !== undefined && !levels.includes(params.thinking)) {
		throw new Error(badThinkingError(params.thinking, THINKING_LEVELS));
	}
	const thinking = params.thinking ?? agent?.thinking ?? safeThinking(env);
	const context: ContextMode = (params.context ?? agent?.context) === "fork" ? "fork" : "fresh";
	let firstMessage: string | undefined;
	if (context === "fork") {
		try {
			const m = model as { contextWindow?: number; maxTokens?: number };
			const window = m.contextWindow ?? 128_000;
			// The same budget rule as the parent's own trimmed view (context-trim), with no system-prompt
			// overhead deducted: the receiver never gets a smaller budget than the parent's view had.
			const budgetTokens = Math.max(
				1024,
				messageBudget({
					contextWindow: window,
					maxTokens: m.maxTokens,
					reserveTokens: env.config.contextTrim.reserveTokens,
					safetyMarginTokens: env.config.contextTrim.safetyMarginTokens,
					overheadTokens: 0,
				}),
			);
			firstMessage = renderForkContext(parentMessages(ctx), {
				budgetTokens,
				sessionFile: ctx.sessionManager.getSessionFile(),
				task: params.prompt,
				// The parent's own view stores oversized texts as transcript artifacts; the child gets the same.
				shorten: forkShortening(env),
			});
		} catch (error) {
			throw new Error(forkUnavailableError(error instanceof Error ? error.message : String(error)));
		}
	}
	// Checked before anything starts: a broken schema, no repository or a failing worktree fails this spawn only.
	const checkable = await prepareCheckable(env, manager, {
		isolation: params.isolation ?? agent?.isolation,
		outputSchema: params.output_schema ?? agent?.outputSchema,
		cwd,
		firstMessage: firstMessage ?? params.prompt,
	});
	let child: ChildRecord;
	try {
		child = manager.spawn({
			prompt: params.prompt,
			firstMessage: checkable.firstMessage,
			name: params.name,
			modelLabel,
			model,
			// Pi's allowlist would hide the nested extension's tools; add them where the depth limit allows.
			tools: env.depth + 1 < cfg.maxDepth ? [...tools, ...SUBAGENT_TOOL_NAMES] : [...tools],
			cwd: checkable.cwd,
			thinking,
			context,
			systemAppend: childSystemAppend(agent, context),
			agent: agent?.name,
			maxTurns: agent?.maxTurns,
			exactTools,
			extensions,
			id: checkable.id,
			steps: checkable.steps,
			worktree: checkable.worktree,
			structured: checkable.structured,
		});
	} catch (error) {
		await checkable.abandon();
		throw error;
	}
	const queued = child.state === "queued";
	const how = arrivalOf(env, ctx);
	const text = queued ? P.queuedText(child, manager.list(), manager.maxConcurrent, how) : P.spawnedText(child, how);
	const shown = [[text, ...checkable.notes].join(" "), ...notes.map((n) => n.replace(/^subagents: /, "Note: "))].join(
		"\n",
	);
	return reply(shown, {
		rows: [row(child, queued ? "queued" : undefined)],
		id: child.id,
		queued,
		...(agent ? { agent: agent.name } : {}),
		...checkable.details,
	});
}

/** The child's system-prompt additions: ours, the agent's own prompt, then the ownership framing. */
function childSystemAppend(agent: AgentDefinition | undefined, context: ContextMode): string[] {
	const own = agent?.systemPrompt ? [agent.systemPrompt] : [];
	return [P.CHILD_SYSTEM_APPEND, ...own, ownerFraming({ forked: context === "fork" })];
}

function safeThinking(env: Env): string | undefined {
	try {
		return env.pi.getThinkingLevel();
	} catch {
		return undefined;
	}
}

function requireIds(env: Env, requested: string[]): string[] {
	const known = env.manager?.ids() ?? [];
	const { known: good, unknown } = partitionIds(requested, known);
	if (unknown.length > 0) throw new Error(P.unknownIdsError(unknown, known));
	return good;
}

/** subagent_wait's parameters (described to the model in TOOL_TEXT.wait). */
export interface WaitParams {
	ids?: string[];
	timeout_s?: number;
	mode?: "all" | "any";
}

export async function waitTool(
	env: Env,
	params: WaitParams,
	signal: AbortSignal | undefined,
	onUpdate: OnUpdate,
	ctx: ExtensionContext,
): Promise<ToolReturn> {
	const manager = ensureManager(env, ctx);
	let ids: string[];
	if (params.ids && params.ids.length > 0) ids = requireIds(env, params.ids);
	else {
		if (manager.list().length === 0) return reply(P.NO_CHILDREN, { rows: [] });
		ids = manager
			.list()
			.filter((c) => !isSettled(c.state) || manager.ledger.latest(c.id)?.delivery === "pending")
			.map((c) => c.id);
		if (ids.length === 0) return reply(P.NOTHING_TO_WAIT_FOR, { rows: [] });
	}
	const mode = params.mode === "any" ? "any" : "all";
	const timeoutMs =
		typeof params.timeout_s === "number" && params.timeout_s >= 0 ? Math.round(params.timeout_s * 1000) : undefined;
	const throttle = Math.max(250, env.config.subagents.pollThrottleMs);
	const outcome = await manager.waitFor(ids, {
		mode,
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
	return consume(env, ctx, ids, outcome, "wait", params.timeout_s);
}

/**
 * Where the full text of a result someone else received lives. The other delivery may still be
 * projecting it (a race within one tick), so the path is not known yet: the content-addressed store
 * gives the same file for the same text, so storing it here names that file (or creates it).
 */
async function deliveredPath(env: Env, result: SettledResult): Promise<string | undefined> {
	if (result.artifactPath) return result.artifactPath;
	const put = await ensureStore(env).put("subagent-results", result.text);
	if (!put.ok) return undefined;
	result.artifactPath ??= put.path;
	return put.path;
}

/** Hand out the results of `ids` (claiming them for this tool) plus status lines for the rest. */
async function consume(
	env: Env,
	ctx: ExtensionContext,
	ids: string[],
	outcome: { timedOut: boolean; aborted: boolean; header?: string },
	timeoutLabel: "wait" | "cancel",
	timeoutSeconds?: number,
): Promise<ToolReturn> {
	const manager = env.manager!;
	const now = Date.now();
	const leading: string[] = [];
	const extraRows: ChildRow[] = [];
	const claimed: SettledResult[] = [];
	const finished = ids.filter((id) => isSettled(manager.get(id)!.state)).length;
	if (outcome.header) leading.push(outcome.header);
	else if (outcome.timedOut) leading.push(P.waitTimeoutHeader(timeoutSeconds ?? 0, finished, ids.length));
	else if (outcome.aborted) leading.push(P.waitAbortedHeader(finished, ids.length));
	// Claims first, all before any await: a concurrent automatic delivery sees them at once. Each id's
	// line is decided here too, so a child settling during a later await cannot drop out of the text.
	const taken = new Map<string, SettledResult>();
	const unsettled: string[] = [];
	for (const id of ids) {
		const latest = manager.ledger.latest(id);
		if (!latest || !isSettled(manager.get(id)!.state)) unsettled.push(id);
		else if (manager.ledger.claim(latest.key, "wait")) claimed.push(latest);
		else taken.set(id, latest);
	}
	try {
		for (const id of ids) {
			const child = manager.get(id)!;
			const other = taken.get(id);
			if (unsettled.includes(id)) {
				leading.push(P.statusLine(child, now));
				extraRows.push(row(child));
			} else if (other) {
				const path = await deliveredPath(env, other);
				leading.push(P.alreadyDeliveredLine(child, other.delivery === "auto" ? "auto" : "wait", path));
				extraRows.push({ ...row(child, "already received"), artifactPath: path });
			}
		}
		const batch = await projectBatch(
			claimed.map((r) => batchInput(manager, r)),
			batchOptions(env, ctx, "wait", { leading }),
		);
		recordArtifacts(manager, batch.items);
		persistDelivered(
			env,
			claimed.map((r) => r.key),
			"wait",
		);
		return reply(batch.text, { ...batchDetails(manager, batch, extraRows), tool: timeoutLabel });
	} catch (error) {
		for (const r of claimed) manager.ledger.release(r.key);
		throw error;
	}
}

export async function checkTool(env: Env, params: { id: string }, ctx: ExtensionContext): Promise<ToolReturn> {
	const manager = ensureManager(env, ctx);
	const [id] = requireIds(env, [params.id]);
	const child = manager.get(id)!;
	const recent = isSettled(child.state)
		? (manager.ledger.latest(id)?.text ?? child.finalText ?? "")
		: child.partialText;
	let output = "";
	let details: Record<string, unknown> = { rows: [row(child)] };
	if (recent.length > 0) {
		const batch = await projectBatch(
			[{ id, run: child.run, header: "", text: recent, noRoom: () => "" }],
			batchOptions(env, ctx, "check"), // its head share (0 in the table): the recent end
		);
		output = batch.text.replace(/^\n/, "");
		details = { ...batchDetails(manager, batch), rows: [row(child)] };
	}
	return reply(P.checkText(child, Date.now(), output), details);
}

export async function sendTool(
	env: Env,
	params: { id: string; text: string },
	ctx: ExtensionContext,
): Promise<ToolReturn> {
	const manager = ensureManager(env, ctx);
	const [id] = requireIds(env, [params.id]);
	if (typeof params.text !== "string" || params.text.trim().length === 0) throw new Error(P.EMPTY_SEND_TEXT_ERROR);
	const child = manager.get(id)!;
	const resume = manager.isRestored(id) ? resumeSettings(env, child, ctx) : undefined;
	// A structured child's new run must end with the JSON again; a steer joins the run that already must.
	const text = child.structured && isSettled(child.state) ? params.text + OUTPUT_SCHEMA_REMINDER : params.text;
	const outcome = await manager.send(id, text, resume);
	if (outcome === "queued-child") throw new Error(P.queuedSendError(child));
	return reply(outcome === "steered" ? P.steeredText(child) : P.rerunText(child, arrivalOf(env, ctx)), {
		rows: [row(child)],
	});
}

/**
 * How a child from an earlier process runs again: its own model, tools and framing, on its reopened
 * session file. Refused plainly when that file or that model is no longer there.
 */
function resumeSettings(env: Env, child: ChildRecord, ctx: ExtensionContext): ResumeSettings {
	if (!child.sessionFile) throw new Error(P.restoredSendError(child));
	if (!isKind(child.sessionFile, "file")) throw new Error(P.missingSessionFileError(child, child.sessionFile));
	if (!isKind(child.cwd, "directory")) throw new Error(P.missingCwdError(child));
	const registry = ctx.modelRegistry as unknown as RegistryView;
	const pools = modelPools(ctx);
	const found = resolveModelSpec(child.model, pools);
	const model = found.ok ? registry.find(found.value.provider, found.value.id) : undefined;
	if (!model) {
		const failure = found.ok
			? { reason: "unknown" as const, choices: orderChoices(pools.available, pools.preferProvider) }
			: found.failure;
		throw new Error(resumeModelError(child, failure));
	}
	if (child.tools.length === 0) child.tools = [...env.config.subagents.defaultTools];
	const agent = child.agent ? loadAgents(env, ctx).agents.find((a) => a.name === child.agent) : undefined;
	return { model, systemAppend: childSystemAppend(agent, child.context), steps: isolationFor(env, child) };
}

export async function cancelTool(env: Env, params: { ids: string[] }, ctx: ExtensionContext): Promise<ToolReturn> {
	const manager = ensureManager(env, ctx);
	const ids = requireIds(env, params.ids ?? []);
	const active = ids.filter((id) => !isSettled(manager.get(id)!.state));
	await manager.cancel(active);
	const lines = ids.filter((id) => !active.includes(id)).map((id) => P.alreadySettledCancelLine(manager.get(id)!));
	const header = [P.cancelHeader(active.length), ...lines].join("\n");
	return consume(env, ctx, active, { timedOut: false, aborted: false, header }, "cancel");
}

export function listTool(env: Env, ctx: ExtensionContext): ToolReturn {
	const manager = ensureManager(env, ctx);
	const children = manager.list();
	if (children.length === 0) return reply(P.NO_CHILDREN, { rows: [] });
	const now = Date.now();
	return reply(children.map((c) => P.listLine(c, now, statusGlyph(c.state))).join("\n"), {
		rows: children.map((c) => row(c)),
	});
}

export { consume as consumeResults };

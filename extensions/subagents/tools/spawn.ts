/**
 * subagent_spawn's handler: resolve the agent, model, tools, cwd, thinking and context, prepare an isolated
 * or structured child, and start or queue it. Errors are thrown with text that lists the valid choices.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { buildSessionContext, type ExtensionContext } from "@mariozechner/pi-coding-agent";
import { surfaceFor } from "../../shared/host/config.ts";
import { singleShotMode } from "../../shared/host/pi-host.ts";
import { renderForkContext } from "../../shared/transcript/narrate.ts";
import { messageBudget } from "../../shared/transcript/plan.ts";
import { ownerFraming } from "../../shared/transcript/prompt.ts";
import { type ShortenOptions, storedShortening } from "../../shared/transcript/view.ts";
import { type AgentDefinition, parseExtensionPolicy } from "../agents/agents.ts";
import { spawnBudget } from "../budget/spawn-budget.ts";
import { isolationFor, prepareCheckable } from "../checkable/spawn-checkable.ts";
import { boundByParent } from "../children/child-extensions.ts";
import type { ResumeSettings } from "../children/requests.ts";
import { childWindow, composeHandover } from "../delivery/handover.ts";
import { type ModelChoice, type ModelPools, orderChoices, resolveModelSpec } from "../domain/models.ts";
import {
	CHILD_TOOL_NAMES,
	type ChildRecord,
	type ContextMode,
	SUBAGENT_TOOL_NAMES,
	THINKING_LEVELS,
} from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import * as P from "../prompt/common.ts";
import { afterProblemError, BAD_AFTER_ERROR, badAfterFailedError, waitingSpawnText } from "../prompt/pipeline.ts";
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
} from "../prompt/spawn.ts";

import { reply, row, type ToolReturn } from "./reply.ts";

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
export function arrivalOf(deps: Pick<SubagentServices, "depth" | "config">, ctx: ExtensionContext): P.Arrival {
	try {
		if (ctx.hasUI) return "auto";
		if (deps.depth === 0 && singleShotMode(ctx)) return { settle: deps.config().subagents.maxRunSeconds };
		return ctx.sessionManager.getSessionFile() ? "single-shot" : "single-shot-ephemeral";
	} catch {
		return "auto";
	}
}

/**
 * How a fork shortens the parent's long texts: surface transcript.segment as configured, stored in full, a log
 * (by the configured tool kinds too) with its notable lines first, as the parent's own trimmed view does.
 */
function forkShortening(deps: Pick<SubagentServices, "config" | "store">): ShortenOptions {
	const segment = surfaceFor(deps.config(), "transcript.segment");
	return storedShortening(deps.store(), segment.headShare, segment, deps.config().toolArtifacts.toolClasses);
}

/** The parent's current message list, as the model sees it (for forks). */
export function parentMessages(ctx: ExtensionContext): unknown[] {
	const sm = ctx.sessionManager;
	return buildSessionContext(sm.getEntries(), sm.getLeafId()).messages as unknown[];
}

/** subagent_spawn's parameters (described to the model in TOOL_TEXT.spawn). */
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
	/** Children of this session (ids or names) it waits for; their results open its task. */
	after?: string[];
	/** When an input did not complete: "skip" (default) or "run". */
	after_failed?: string;
	/** What it may spend: tokens and/or cost; shared: true shares it with the stages spawned after it. */
	budget?: unknown;
}

/** The inputs a spawn names, checked before anything is prepared: ids, or an error saying what to do. */
function plannedInputs(manager: SpawnManager, params: SpawnParams): { after: string[]; afterFailed: "skip" | "run" } {
	if (params.after_failed !== undefined && params.after_failed !== "skip" && params.after_failed !== "run")
		throw new Error(badAfterFailedError(params.after_failed));
	const afterFailed = params.after_failed === "run" ? "run" : "skip";
	if (params.after === undefined) return { after: [], afterFailed };
	if (!Array.isArray(params.after) || params.after.some((r) => typeof r !== "string")) throw new Error(BAD_AFTER_ERROR);
	if (params.after.length === 0) return { after: [], afterFailed };
	const plan = manager.planAfter(params.after);
	if (!plan.ok) throw new Error(afterProblemError(plan.problem));
	return { after: plan.ids, afterFailed };
}

type SpawnManager = ReturnType<SpawnDeps["children"]>;

/** Texts that fill a child's window before its task: the system prompt (the parent's, as an estimate) and its tools' schemas. */
function overheadTexts(
	deps: Pick<SubagentServices, "parent">,
	ctx: ExtensionContext,
	systemAppend: string[],
	tools: string[],
): string[] {
	const texts = [...systemAppend];
	try {
		texts.push(ctx.getSystemPrompt());
	} catch {
		// No system prompt to read (a fake or an old host): the additions stand for it.
	}
	try {
		const wanted = new Set(tools);
		for (const t of deps.parent.getAllTools() as Array<{ name?: string }>)
			if (typeof t.name === "string" && wanted.has(t.name)) texts.push(JSON.stringify(t));
	} catch {
		// No tool list: the estimate leaves the tools out; the share for the child's own work still stands.
	}
	return texts;
}

/** The named agent a spawn asks for; an unknown name is refused before anything starts. */
function agentFor(
	deps: Pick<SubagentServices, "agents">,
	name: string | undefined,
	ctx: ExtensionContext,
): AgentDefinition | undefined {
	if (name === undefined) return undefined;
	const agents = deps.agents(ctx).agents;
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
function listableTools(deps: Pick<SubagentServices, "parent">): string[] {
	const names = new Set<string>(CHILD_TOOL_NAMES);
	try {
		for (const t of deps.parent.getAllTools()) {
			const name = (t as { name?: unknown }).name;
			if (typeof name === "string" && !(SUBAGENT_TOOL_NAMES as readonly string[]).includes(name)) names.add(name);
		}
	} catch {
		// No tool list (a fake or an old host): the built-in names stand.
	}
	return [...names];
}

/** The parent's active tools now, or undefined where the host cannot say (no bound then). */
function parentActiveTools(deps: Pick<SubagentServices, "parent">): readonly string[] | undefined {
	try {
		const tools = deps.parent.getActiveTools?.();
		return Array.isArray(tools) ? tools : undefined;
	} catch {
		return undefined;
	}
}

/** What a spawn uses: the children, the configuration, store and agents, and the parent's tools and thinking. */
export type SpawnDeps = Pick<
	SubagentServices,
	"children" | "depth" | "config" | "store" | "agentDir" | "agents" | "parent"
>;

/** subagent_spawn: one spawn at a time per session, in the order the calls came (see SubagentManager.inOrder). */
/** `id`: spawn under this recorded id (a pipeline stage an earlier process left waiting, spawned again by pi -c). */
export function spawnTool(
	deps: SpawnDeps,
	params: SpawnParams,
	ctx: ExtensionContext,
	id?: string,
): Promise<ToolReturn> {
	return deps.children(ctx).inOrder(() => spawnOne(deps, params, ctx, id));
}

async function spawnOne(deps: SpawnDeps, params: SpawnParams, ctx: ExtensionContext, id?: string): Promise<ToolReturn> {
	const manager = deps.children(ctx);
	const config = deps.config();
	const cfg = config.subagents;
	if (deps.depth >= cfg.maxDepth) throw new Error(depthLimitError(cfg.maxDepth));
	if (typeof params.prompt !== "string" || params.prompt.trim().length === 0) throw new Error(P.EMPTY_PROMPT_ERROR);
	const agent = agentFor(deps, params.agent, ctx);
	const inputs = plannedInputs(manager, params);
	// Refused before anything is prepared: a bad budget, or a session whose children spent its budget.
	const budget = spawnBudget(manager.list(), params.budget, agent?.budget, cfg.budget, inputs.after);
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
	const asked = params.tools ?? agent?.tools ?? cfg.defaultTools;
	// Children never exceed their parent: an explicit list beyond the parent's active tools is refused; an agent's
	// or the default list is narrowed to them, and the spawn says what was left out.
	const active = cfg.toolsBeyondParent ? undefined : parentActiveTools(deps);
	const bounded = boundByParent(asked, active, CHILD_TOOL_NAMES);
	if (bounded.beyond.length > 0) {
		if (params.tools !== undefined) throw new Error(P.toolsBeyondParentError(bounded.beyond, active ?? []));
		notes.push(P.toolsLeftOutNote(bounded.beyond));
	}
	const tools = bounded.kept;
	const allowed = listableTools(deps);
	const unknownTools = tools.filter((t) => !allowed.includes(t));
	if (unknownTools.length > 0) {
		if (params.tools !== undefined) throw new Error(badToolsError(unknownTools, allowed));
		// An agent file may name tools of extensions only the child loads; the child's start checks them.
	}
	const extensions =
		params.extensions !== undefined
			? parseExtensionPolicy(params.extensions)
			: (agent?.extensions ?? parseExtensionPolicy(cfg.childExtensions));
	const cwd = params.cwd ? resolve(ctx.cwd, params.cwd) : ctx.cwd;
	if (!isKind(cwd, "directory")) throw new Error(badCwdError(params.cwd ?? cwd, ctx.cwd));
	const levels: readonly string[] = THINKING_LEVELS;
	if (params.thinking !== undefined && !levels.includes(params.thinking)) {
		throw new Error(badThinkingError(params.thinking, THINKING_LEVELS));
	}
	const thinking = params.thinking ?? agent?.thinking ?? safeThinking(deps);
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
					reserveTokens: config.contextTrim.reserveTokens,
					safetyMarginTokens: config.contextTrim.safetyMarginTokens,
					overheadTokens: 0,
				}),
			);
			firstMessage = renderForkContext(parentMessages(ctx), {
				budgetTokens,
				sessionFile: ctx.sessionManager.getSessionFile(),
				task: params.prompt,
				// The parent's own view stores oversized texts as transcript artifacts; the child gets the same.
				shorten: forkShortening(deps),
			});
		} catch (error) {
			throw new Error(forkUnavailableError(error instanceof Error ? error.message : String(error)));
		}
	}
	// Checked before anything starts: a broken schema, no repository or a failing worktree fails this spawn only.
	const checkable = await prepareCheckable(deps, () => id ?? manager.reserveId(), {
		isolation: params.isolation ?? agent?.isolation,
		outputSchema: params.output_schema ?? agent?.outputSchema,
		cwd,
		firstMessage: firstMessage ?? params.prompt,
	});
	const systemAppend = childSystemAppend(agent, context);
	const childTools = deps.depth + 1 < cfg.maxDepth ? [...tools, ...SUBAGENT_TOOL_NAMES] : [...tools];
	const handover =
		inputs.after.length > 0
			? {
					after: inputs.after,
					afterFailed: inputs.afterFailed,
					handover: async (settled: Parameters<typeof composeHandover>[0], base: string) =>
						(
							await composeHandover(settled, base, {
								store: deps.store(),
								budget: surfaceFor(deps.config(), "subagents.handover"),
								window: childWindow(model, overheadTexts(deps, ctx, systemAppend, childTools)),
							})
						).text,
				}
			: {};
	// A stage's own parameters, recorded until it starts: a later `pi -c` can spawn it again (persistence.ts).
	const respawn =
		inputs.after.length > 0
			? {
					respawn: {
						...(params as unknown as Record<string, unknown>),
						prompt: params.prompt,
						after: inputs.after,
						after_failed: inputs.afterFailed,
						...(params.cwd ? { cwd } : {}),
					},
				}
			: {};
	let child: ChildRecord;
	try {
		child = manager.spawn({
			prompt: params.prompt,
			firstMessage: checkable.firstMessage,
			name: params.name,
			modelLabel,
			model,
			// Pi's allowlist would hide the nested extension's tools; add them where the depth limit allows.
			tools: childTools,
			cwd: checkable.cwd,
			thinking,
			context,
			systemAppend,
			agent: agent?.name,
			maxTurns: agent?.maxTurns,
			exactTools,
			extensions,
			id: id ?? checkable.id,
			steps: checkable.steps,
			worktree: checkable.worktree,
			structured: checkable.structured,
			budget: budget.of,
			...handover,
			...respawn,
		});
	} catch (error) {
		await checkable.abandon();
		throw error;
	}
	const queued = child.state === "queued";
	const how = arrivalOf(deps, ctx);
	const text =
		child.state === "waiting"
			? waitingSpawnText(child, P.arrival(child, how))
			: queued
				? P.queuedText(child, manager.list(), manager.maxConcurrent, how)
				: P.spawnedText(child, how);
	const budgetNotes = budget.notes(child, model, modelLabel);
	const shown = [
		[text, ...checkable.notes, ...budgetNotes].join(" "),
		...notes.map((n) => n.replace(/^subagents: /, "Note: ")),
	].join("\n");
	return reply(shown, {
		rows: [
			row(
				child,
				queued ? "queued" : child.state === "waiting" ? `waits for ${(child.after ?? []).join(", ")}` : undefined,
			),
		],
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

function safeThinking(deps: Pick<SubagentServices, "parent">): string | undefined {
	try {
		return deps.parent.getThinkingLevel();
	} catch {
		return undefined;
	}
}

/**
 * How a child from an earlier process runs again: its own model, tools and framing, on its reopened
 * session file. Refused plainly when that file or that model is no longer there.
 */
export function resumeSettings(
	deps: Pick<SubagentServices, "config" | "store" | "agentDir" | "agents">,
	child: ChildRecord,
	ctx: ExtensionContext,
): ResumeSettings {
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
	if (child.tools.length === 0) child.tools = [...deps.config().subagents.defaultTools];
	const agent = child.agent ? deps.agents(ctx).agents.find((a) => a.name === child.agent) : undefined;
	return { model, systemAppend: childSystemAppend(agent, child.context), steps: isolationFor(deps, child) };
}

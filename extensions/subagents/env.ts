/**
 * Per-extension-instance state shared by the tool handlers and the event handlers: the latest
 * context, the configuration, the artifact store and the manager (created on first use, since
 * it needs the parent's model registry and session folder).
 */
import { join } from "node:path";
import * as PiSdk from "@mariozechner/pi-coding-agent";
import {
	buildSessionContext,
	type ExtensionAPI,
	type ExtensionContext,
	getAgentDir,
	parseFrontmatter,
} from "@mariozechner/pi-coding-agent";
import type { Surface, UsageReading } from "../shared/budget/batch.ts";
import { type ExtensionHost, tellPerson } from "../shared/host/bootstrap.ts";
import { DEFAULT_CONFIG, type HeadroomConfig, surfaceFor, unseenConfigWarnings } from "../shared/host/config.ts";
import { projectTrusted } from "../shared/host/pi-host.ts";
import { type ArtifactStore, storeForAgentDir } from "../shared/store/artifact-store.ts";
import { AgentCatalog, type AgentCatalogSnapshot } from "./agents/agent-files.ts";
import { type ExtensionPolicy, parseExtensionPolicy } from "./agents/agents.ts";
import { createInProcessBackend } from "./children/backend.ts";
import { type ManagerLimits, SubagentManager } from "./children/manager.ts";
import type { BatchOptions } from "./delivery/batch.ts";
import type { ChildRecord, SettledResult } from "./domain.ts";
import { configWarning } from "./prompt.ts";

export { CHILD_TOOL_NAMES, SUBAGENT_TOOL_NAMES, THINKING_LEVELS } from "./domain.ts";

export interface Env {
	/** Pi's extension API of this instance. */
	pi: ExtensionAPI;
	/** 0 for the top-level agent, n for a child n levels down. */
	depth: number;
	/** Builds the extension for a child one level deeper (to honour maxDepth > 1). */
	nested: (depth: number) => (pi: ExtensionAPI) => void;
	/** The latest context Pi handed us (tools and events refresh it). */
	ctx?: ExtensionContext;
	/** The shared bootstrap's services (configuration, store); absent in tests that set config and store. */
	host?: ExtensionHost;
	/** Loaded configuration (defaults until the first event). */
	config: HeadroomConfig;
	/** Pi's agent dir. */
	agentDir: string;
	/** Artifact store for full texts. */
	store?: ArtifactStore;
	/** This session's children. */
	manager?: SubagentManager;
	/** Called after a run settles (persistence and delivery hook in here). */
	onSettled?: (result: SettledResult, child: ChildRecord) => void;
	/** Called when the visible state changes (status line). */
	onChange?: () => void;
	/** Whether the configuration was read already. */
	configLoaded: boolean;
	/** Pending automatic-delivery attempt, if any. */
	flushTimer?: ReturnType<typeof setTimeout>;
	/** Remaining idle polls of the pending attempt. */
	flushAttempts: number;
	/** Set once the session shuts down: no more deliveries from this instance. */
	closing?: boolean;
	/** Agent files, read with a per-file cache. */
	agents?: AgentCatalog;
	/** The agents as last read. */
	agentSnapshot?: AgentCatalogSnapshot;
}

export function createEnv(pi: ExtensionAPI, depth: number, nested: Env["nested"]): Env {
	return { pi, depth, nested, config: DEFAULT_CONFIG, agentDir: "", configLoaded: false, flushAttempts: 0 };
}

export function limitsOf(config: HeadroomConfig): ManagerLimits {
	return {
		maxConcurrent: config.subagents.maxConcurrent,
		inactivityTimeoutMs: config.subagents.idleTimeoutSeconds * 1000,
		maxRunTimeMs: config.subagents.maxRunSeconds * 1000,
	};
}

/**
 * The configuration of this session, through the shared bootstrap (read at session_start, which keeps
 * `env.config` current through its onConfig listener; on first use before that).
 */
export function ensureConfig(env: Env, ctx: ExtensionContext): void {
	env.ctx = ctx;
	if (env.configLoaded) return;
	env.configLoaded = true;
	env.agentDir = getAgentDir();
	if (env.host) env.config = env.host.config(ctx);
}

export function ensureStore(env: Env): ArtifactStore {
	env.store ??= env.host?.store() ?? storeForAgentDir(env.agentDir || getAgentDir());
	return env.store;
}

/** Children's session files live beside the parent's, in a subfolder (so `pi -c` never picks a child's). */
export function childSessionDir(ctx: ExtensionContext, agentDir: string): string {
	let dir: string | undefined;
	try {
		dir = ctx.sessionManager.getSessionDir();
	} catch {
		dir = undefined;
	}
	return join(dir || join(agentDir, "sessions"), "subagents");
}

export function ensureManager(env: Env, ctx: ExtensionContext): SubagentManager {
	ensureConfig(env, ctx);
	if (env.manager) return env.manager;
	const nextDepth = env.depth + 1;
	const backend = createInProcessBackend({
		agentDir: env.agentDir,
		modelRegistry: ctx.modelRegistry,
		sessionDir: childSessionDir(ctx, env.agentDir),
		extensionFactories: nextDepth < env.config.subagents.maxDepth ? [env.nested(nextDepth)] : undefined,
		projectTrusted: projectTrusted(ctx),
		packageDir: safePackageDir(),
	});
	const manager = new SubagentManager(backend, limitsOf(env.config));
	manager.subscribe((event) =>
		event.type === "settled" ? env.onSettled?.(event.result, event.child) : env.onChange?.(),
	);
	env.manager = manager;
	return manager;
}

/** The parent's context reading and reserved output, for the allocator. */
export function usageOf(ctx: ExtensionContext | undefined): { usage?: UsageReading; reservedOutputTokens?: number } {
	let usage: UsageReading | undefined;
	try {
		usage = ctx?.getContextUsage() ?? undefined;
	} catch {
		usage = undefined;
	}
	return { usage, reservedOutputTokens: ctx?.model?.maxTokens };
}

/**
 * Options every projected batch shares: the surface `subagents.<surface>` resolved from the configuration
 * (its caps and head share), the store, the parent's usage reading.
 */
export function batchOptions(
	env: Env,
	ctx: ExtensionContext | undefined,
	surface: Surface,
	extra: { leading?: string[] } = {},
): BatchOptions {
	const budget = surfaceFor(env.config, `subagents.${surface}`);
	return {
		surface,
		store: ensureStore(env),
		leading: extra.leading,
		headShare: budget.headShare,
		budget,
		headroomShare: env.config.budgets.headroomShare,
		...usageOf(ctx),
	};
}

/** The parent's current message list, as the model sees it (for forks). */
export function parentMessages(ctx: ExtensionContext): unknown[] {
	const sm = ctx.sessionManager;
	return buildSessionContext(sm.getEntries(), sm.getLeafId()).messages as unknown[];
}

/**
 * Pi's package folder, where Pi 1.x keeps its built-in extensions: only when the SDK this extension runs
 * children with exports getPackageDir (1.x), since only that SDK's resource loader takes them. Pi 0.73 has
 * neither, and no built-in extensions.
 */
function safePackageDir(): string | undefined {
	const get = (PiSdk as Record<string, unknown>).getPackageDir;
	try {
		return typeof get === "function" ? String(get()) : undefined;
	} catch {
		return undefined;
	}
}

/** The global default of which extensions children load (subagents.childExtensions). */
export function globalExtensionPolicy(config: HeadroomConfig): ExtensionPolicy {
	return parseExtensionPolicy(config.subagents.childExtensions);
}

/**
 * The agents on disk now (cheap: unchanged files are not re-read). New warnings are shown once, to the UI
 * or stderr; they never stop anything.
 */
export function loadAgents(env: Env, ctx: ExtensionContext | undefined): AgentCatalogSnapshot {
	env.agents ??= new AgentCatalog(parseFrontmatter);
	const snapshot = env.agents.load({
		agentDir: env.agentDir || getAgentDir(),
		cwd: ctx?.cwd ?? process.cwd(),
		projectTrusted: ctx ? projectTrusted(ctx) : false,
		claudeAgents: env.config.subagents.claudeAgents,
	});
	env.agentSnapshot = snapshot;
	for (const warning of unseenConfigWarnings(snapshot.warnings)) tellPerson(ctx, configWarning(warning));
	return snapshot;
}

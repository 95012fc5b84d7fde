/**
 * What the parts of subagents are handed instead of shared mutable state. SubagentServices is read-only to
 * them: each handler names the few members it uses (`Pick<SubagentServices, …>`), so its signature tells
 * what it may read and change. Only the adapter changes what lies behind it, through SessionState: the
 * latest context, the closing flag, and this session's manager (made on first use, dropped at shutdown).
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { ExtensionHost } from "../shared/host/bootstrap.ts";
import { DEFAULT_CONFIG, type HeadroomConfig } from "../shared/host/config.ts";
import type { ArtifactStore } from "../shared/store/artifact-store.ts";
import type { AgentCatalogSnapshot } from "./agents/agent-files.ts";
import { agentLoader } from "./agents/loader.ts";
import type { SubagentManager } from "./children/manager.ts";
import { createSessionChildren } from "./children/session.ts";

export interface SubagentServices {
	/** 0 for the top-level agent, n for a child n levels down. */
	readonly depth: number;
	/** The configuration now (defaults until it was read). */
	config(): HeadroomConfig;
	/** Pi's agent dir. */
	agentDir(): string;
	/** The artifact store for full texts. */
	store(): ArtifactStore;
	/** The latest context Pi handed the adapter (tools and events refresh it). */
	context(): ExtensionContext | undefined;
	/** True once the session shuts down: no more deliveries from this instance. */
	closing(): boolean;
	/** This session's children, made on first use (from the context's model registry and session folder). */
	children(ctx: ExtensionContext): SubagentManager;
	/** This session's children if they were made (none before first use, none after shutdown). */
	existingChildren(): SubagentManager | undefined;
	/** The agents on disk now (unchanged files are not re-read; new warnings are told once). */
	agents(ctx: ExtensionContext | undefined): AgentCatalogSnapshot;
	/** What is written into the parent's session: results as messages, settled and delivered entries. */
	session: Pick<ExtensionAPI, "appendEntry" | "sendMessage">;
	/** What is read of the parent: its tools and thinking level (a spawn's defaults and checks). */
	parent: Pick<ExtensionAPI, "getAllTools" | "getThinkingLevel">;
}

/** The adapter's side of the services: the only writer of what they read. */
export interface SessionState {
	readonly services: SubagentServices;
	/** A context from Pi: remembered as the latest; the configuration is read on the first one. */
	enter(ctx: ExtensionContext): void;
	/** A context from Pi: remembered as the latest, nothing read. */
	remember(ctx: ExtensionContext): void;
	/** Set at shutdown, cleared at session start. */
	setClosing(closing: boolean): void;
	/** Forget this session's children (after shutdown); returns them. */
	dropChildren(): SubagentManager | undefined;
}

export interface SessionStateOptions {
	pi: ExtensionAPI;
	depth: number;
	/** The shared bootstrap's services (configuration, store). */
	host: ExtensionHost;
	/** Builds the extension for a child one level deeper (to honour maxDepth > 1). */
	nested: (depth: number) => (pi: ExtensionAPI) => void;
	/** Called once per manager made, before any child is spawned in it (the adapter subscribes here). */
	onChildren: (manager: SubagentManager) => void;
}

export function createSessionState(options: SessionStateOptions): SessionState {
	const { pi, depth, host } = options;
	let config = DEFAULT_CONFIG;
	let configLoaded = false;
	let agentDir = "";
	let ctx: ExtensionContext | undefined;
	let closing = false;
	let store: ArtifactStore | undefined;
	let manager: SubagentManager | undefined;
	host.onConfig((next) => {
		config = next;
		configLoaded = true;
		agentDir = host.agentDir();
	});
	const enter = (next: ExtensionContext) => {
		ctx = next;
		if (configLoaded) return;
		configLoaded = true;
		agentDir = host.agentDir();
		config = host.config(next);
	};
	const services: SubagentServices = {
		depth,
		config: () => config,
		agentDir: () => agentDir,
		store: () => {
			store ??= host.store();
			return store;
		},
		context: () => ctx,
		closing: () => closing,
		children: (context) => {
			enter(context);
			if (manager) return manager;
			manager = createSessionChildren(context, { depth, agentDir, config, nested: options.nested });
			options.onChildren(manager);
			return manager;
		},
		existingChildren: () => manager,
		agents: agentLoader({ config: () => config, agentDir: () => agentDir || host.agentDir() }),
		session: pi,
		parent: pi,
	};
	return {
		services,
		enter,
		remember: (next) => {
			ctx = next;
		},
		setClosing: (value) => {
			closing = value;
		},
		dropChildren: () => {
			const dropped = manager;
			manager = undefined;
			return dropped;
		},
	};
}

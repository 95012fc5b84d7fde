/**
 * The adapter's state behind the services: the configuration (defaults until the shared bootstrap reads
 * it), the store, the latest context, the closing flag and this session's manager. Only the adapter holds
 * a SessionState; the parts get its read-only `services`.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { ExtensionHost } from "../shared/host/bootstrap.ts";
import { DEFAULT_CONFIG } from "../shared/host/config.ts";
import type { ArtifactStore } from "../shared/store/artifact-store.ts";
import { agentLoader } from "./agents/loader.ts";
import type { SubagentManager } from "./children/manager.ts";
import { createSessionChildren } from "./children/session.ts";
import type { SubagentServices } from "./services.ts";

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

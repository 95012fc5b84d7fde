/**
 * The adapter's state behind the services: the configuration (defaults until the shared bootstrap reads
 * it), the store, the latest context, the closing flag and this session's manager. Only the adapter holds
 * a SessionState; the parts get its read-only `services`. The manager is made on first use with the children's
 * code (adapter/later.ts), which its caller has loaded.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { ExtensionHost } from "../../shared/host/bootstrap.ts";
import { DEFAULT_CONFIG } from "../../shared/host/config.ts";
import type { ArtifactStore } from "../../shared/store/artifact-store.ts";
import { agentLoader } from "../agents/loader.ts";
import {
	createSessionHome,
	type EntrySink,
	type SessionHome,
	sessionHomes,
	sessionKey,
	sessionNameOf,
} from "../children/home.ts";
import type { SubagentManager } from "../children/manager.ts";
import type { SubagentServices } from "../domain/services.ts";
import { later } from "./later.ts";

/** The adapter's side of the services: the only writer of what they read. */
/**
 * The parent's active tools, read when a child starts; the last list read when this extension instance's `pi` has
 * gone stale (a session replaced), so a bound is never lost.
 */
function activeToolsOf(pi: Pick<ExtensionAPI, "getActiveTools">): () => readonly string[] | undefined {
	let last: readonly string[] | undefined;
	return () => {
		try {
			const tools = pi.getActiveTools();
			if (Array.isArray(tools)) last = [...tools];
		} catch {
			// stale: keep the last list
		}
		return last;
	};
}

export interface SessionState {
	readonly services: SubagentServices;
	/** A context from Pi: remembered as the latest; the configuration is read on the first one. */
	enter(ctx: ExtensionContext): void;
	/** A context from Pi: remembered as the latest, nothing read. */
	remember(ctx: ExtensionContext): void;
	/** Set at shutdown, cleared at session start. */
	setClosing(closing: boolean): void;
	/**
	 * At session start: take over the children this session left in its process-wide home (a reload, or a
	 * switch back to it); true when there were some. Their waiting records are written through this instance.
	 */
	adopt(ctx: ExtensionContext): boolean;
	/**
	 * Session switch (`away`: their records go straight into the session's file from now on) or reload: this
	 * instance lets go; the children go on in their home.
	 */
	detach(away?: boolean): void;
	/** Forget this session's children and their home (the process ends); returns them. */
	dropChildren(): SubagentManager | undefined;
}

export interface SessionStateOptions {
	pi: ExtensionAPI;
	depth: number;
	/** The shared bootstrap's services (configuration, store). */
	host: ExtensionHost;
	/** Builds the extension for a child one level deeper (to honour maxDepth > 1). */
	nested: (depth: number) => (pi: ExtensionAPI) => void;
	/**
	 * Called once per manager made, before any child is spawned in it: the adapter subscribes what records the
	 * children in the parent's session, through `record` (which outlives this instance).
	 */
	onChildren: (manager: SubagentManager, record: EntrySink) => void;
	/** Called whenever this instance takes a manager (made or adopted): its own listener; returns the unsubscribe. */
	follow?: (manager: SubagentManager) => () => void;
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
	let home: SessionHome | undefined;
	let unfollow: (() => void) | undefined;
	const sink: EntrySink = (type, data) => pi.appendEntry(type, data);
	/** Take over the children the context's session left in its home, if any (top level only). */
	const adoptHome = (context: ExtensionContext): boolean => {
		if (depth !== 0) return false;
		const found = sessionHomes().get(sessionKey(context));
		if (!found) return false;
		home = found;
		home.name = sessionNameOf(context);
		manager = found.manager;
		found.attach(sink);
		unfollow = options.follow?.(found.manager);
		return true;
	};
	host.onConfig((next) => {
		config = next;
		configLoaded = true;
		agentDir = host.agentDir();
	});
	const enter = (next: ExtensionContext) => {
		ctx = next;
		// The name other sessions' views show for these children (a /name may have changed it).
		if (home) home.name = sessionNameOf(next);
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
			if (manager || adoptHome(context)) return manager!;
			// The children's code is loaded by whoever may make them (a tool's run, /subagents, a restore).
			const code = later();
			manager = code.createSessionChildren(context, {
				depth,
				agentDir,
				config,
				nested: options.nested,
				parentTools: config.subagents.toolsBeyondParent ? undefined : activeToolsOf(pi),
			});
			manager.questions.setLimits(code.askLimitsOf(config));
			// Top level: the children live in a process-wide home keyed by session (children/home.ts).
			if (depth === 0) {
				const key = sessionKey(context);
				home = createSessionHome(key, keyFile(key), manager);
				home.name = sessionNameOf(context);
				home.attach(sink);
				sessionHomes().set(key, home);
				options.onChildren(manager, home.record);
			} else options.onChildren(manager, sink);
			unfollow = options.follow?.(manager);
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
		adopt: (context) => {
			enter(context);
			return !manager && adoptHome(context);
		},
		detach: (away) => {
			unfollow?.();
			unfollow = undefined;
			home?.detach(away);
			home = undefined;
			manager = undefined;
		},
		dropChildren: () => {
			const dropped = manager;
			unfollow?.();
			unfollow = undefined;
			if (home && sessionHomes().get(home.key) === home) sessionHomes().delete(home.key);
			home = undefined;
			manager = undefined;
			return dropped;
		},
	};
}

/** The session file a home key names (keys of sessions without a file start with "id:"). */
function keyFile(key: string): string | undefined {
	return key.startsWith("id:") ? undefined : key;
}

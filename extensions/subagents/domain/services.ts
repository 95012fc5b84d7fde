/**
 * What the parts of subagents are handed instead of shared mutable state (types only, so every part may
 * import it). SubagentServices is read-only to them: each handler names the few members it uses
 * (`Pick<SubagentServices, …>`), so its signature tells what it may read and change. Only the adapter
 * changes what lies behind it, through its SessionState (session-state.ts): the latest context, the
 * closing flag, and this session's manager (made on first use, dropped at shutdown).
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { HeadroomConfig } from "../../shared/host/config.ts";
import type { ArtifactStore } from "../../shared/store/artifact-store.ts";
import type { AgentCatalogSnapshot } from "../agents/agent-files.ts";
import type { SubagentManager } from "../children/manager.ts";

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
	parent: Pick<ExtensionAPI, "getAllTools" | "getThinkingLevel"> & Partial<Pick<ExtensionAPI, "getActiveTools">>;
}

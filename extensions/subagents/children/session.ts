/**
 * This session's manager, made from Pi's context: the in-process backend on the parent's model registry,
 * children's session files in a subfolder beside the parent's, the nested extension for one level deeper
 * while subagents.maxDepth allows, and the limits from the configuration.
 */
import { join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import * as PiSdk from "@mariozechner/pi-coding-agent";
import { sessionTrust } from "../../shared/host/bootstrap.ts";
import type { HeadroomConfig } from "../../shared/host/config.ts";
import { canonicalFolder, folderTrust } from "../../shared/host/trust.ts";
import { createInProcessBackend } from "./backend.ts";
import { type ManagerLimits, SubagentManager } from "./manager.ts";

export function limitsOf(config: HeadroomConfig): ManagerLimits {
	return {
		maxConcurrent: config.subagents.maxConcurrent,
		inactivityTimeoutMs: config.subagents.idleTimeoutSeconds * 1000,
		maxRunTimeMs: config.subagents.maxRunSeconds * 1000,
		sessionBudget: config.subagents.budget.perSession,
	};
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

export interface SessionChildrenOptions {
	/** Depth of the extension instance that owns the children (0: top level). */
	depth: number;
	agentDir: string;
	config: HeadroomConfig;
	/** Builds the extension for a child one level deeper. */
	nested: (depth: number) => (pi: ExtensionAPI) => void;
	/** The parent's active tools now (undefined: no bound); see InProcessBackendOptions.toolBound. */
	parentTools?: () => readonly string[] | undefined;
}

export function createSessionChildren(ctx: ExtensionContext, options: SessionChildrenOptions): SubagentManager {
	const nextDepth = options.depth + 1;
	// The parent's own folder keeps the parent's decision (Pi's answer for this session counts there); any other
	// folder is decided from the explicit records alone.
	const parentFolder = canonicalFolder(ctx.cwd);
	const parentTrusted = sessionTrust(options.agentDir, ctx.cwd, ctx).trusted;
	const trustOf = (cwd: string) =>
		canonicalFolder(cwd) === parentFolder ? parentTrusted : folderTrust(options.agentDir, cwd).trusted;
	const backend = createInProcessBackend({
		agentDir: options.agentDir,
		modelRegistry: ctx.modelRegistry,
		sessionDir: childSessionDir(ctx, options.agentDir),
		extensionFactories: nextDepth < options.config.subagents.maxDepth ? [options.nested(nextDepth)] : undefined,
		trustOf,
		toolBound: options.parentTools,
		packageDir: safePackageDir(),
	});
	return new SubagentManager(backend, limitsOf(options.config));
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

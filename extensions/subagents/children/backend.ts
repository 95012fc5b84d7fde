/**
 * In-process children: each is a real Pi agent session (`createAgentSession`) sharing the
 * parent's model registry and credentials, with a persistent session file and its own tools. By
 * default it loads what Pi would load for a new session in its cwd (the user's and the project's
 * extensions and packages; on Pi 1.x the enabled built-in extensions too), filtered by the child's
 * extension policy, never with a UI, and never with this package's subagent tools past the depth limit. Its
 * folder gets its own trust decision (project extensions load only in a trusted one), and its tools stay within
 * the parent's active tools.
 * The same source runs on Pi 0.73 (modelRegistry + authStorage) and 1.x (modelRuntime). A child from an
 * earlier process is resumed by reopening its session file: Pi restores its messages as the context.
 */
import { statSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import {
	createAgentSession,
	DefaultResourceLoader,
	type ExtensionFactory,
	SessionManager,
	SettingsManager,
} from "@mariozechner/pi-coding-agent";
import { spendOfUsage } from "../../shared/budget/spend.ts";
import { ASK_TOOL_NAME, askParentExtension } from "../ask/child-tool.ts";
import { compactArgs } from "../domain/format.ts";
import { CHILD_TOOL_NAMES, SUBAGENT_TOOL_NAMES } from "../domain/records.ts";
import { missingSessionFileError } from "../prompt/common.ts";
import { extensionLoadError, missingExtensionToolsError } from "../prompt/spawn.ts";
import {
	ALL_EXTENSIONS,
	boundByParent,
	childToolAllowlist,
	extensionNames,
	fatalLoadError,
	keepExtension,
	type LoadedExtension,
} from "./child-extensions.ts";
import type { ChildBackend, ChildEvent, ChildHandle, ChildSpec } from "./child-run.ts";

export interface InProcessBackendOptions {
	/** Pi's agent dir (settings, models, auth, resources). */
	agentDir: string;
	/** The parent's ctx.modelRegistry. */
	modelRegistry: unknown;
	/** Folder for the children's session files. */
	sessionDir: string;
	/** Extensions loaded into each child (the subagents extension one level deeper, when allowed). */
	extensionFactories?: ExtensionFactory[];
	/**
	 * Whether the user trusted the folder a child works in (../../shared/host/trust.ts): its project settings and
	 * extensions load only then. Each child's cwd gets its own decision. Default: trusted.
	 */
	trustOf?: (cwd: string) => boolean;
	/**
	 * The parent's active tools now: a child never gets a tool outside them (this package's subagent tools aside,
	 * which the depth limit governs). Undefined: no bound (subagents.toolsBeyondParent).
	 */
	toolBound?: () => readonly string[] | undefined;
	/** Pi's built-in tool names a child may have (default: CHILD_TOOL_NAMES). */
	builtInTools?: readonly string[];
	/** This package's subagent tool names (kept from children unless the nested extension provides them). */
	subagentTools?: readonly string[];
	/** Pi's package folder (getPackageDir), where Pi 1.x keeps its built-in extensions. */
	packageDir?: string;
}

type AnyEvent = { type: string; [key: string]: unknown };

/** Pi's session events → the manager's smaller vocabulary. Every event also counts as activity. */
export function normalizeEvent(
	event: AnyEvent,
	contextUsage: () => { tokens: number | null; contextWindow: number } | undefined,
): ChildEvent[] {
	const out: ChildEvent[] = [{ type: "activity" }];
	switch (event.type) {
		case "message_update": {
			const inner = event.assistantMessageEvent as { type?: string; delta?: string } | undefined;
			if (inner?.type === "text_delta" && typeof inner.delta === "string")
				out.push({ type: "text", delta: inner.delta });
			break;
		}
		case "message_end": {
			const message = event.message as { role?: string; usage?: { output?: number } } | undefined;
			if (message?.role === "assistant")
				out.push({ type: "assistant_end", outputTokens: message.usage?.output, spend: spendOfUsage(message.usage) });
			break;
		}
		case "turn_end": {
			const usage = contextUsage();
			const message = event.message as { stopReason?: string } | undefined;
			out.push({
				type: "turn_end",
				contextTokens: usage?.tokens ?? undefined,
				contextWindow: usage?.contextWindow,
				continues: message?.stopReason === "toolUse",
			});
			break;
		}
		case "tool_execution_start":
			out.push({ type: "tool_start", name: String(event.toolName), args: compactArgs(event.args) });
			break;
		case "tool_execution_end":
			out.push({ type: "tool_end", name: String(event.toolName), isError: Boolean(event.isError) });
			break;
		default:
			break;
	}
	return out;
}

/**
 * A new session file, or the child's own one reopened (its transcript becomes the next run's context).
 * Pi's open() silently starts an empty session when the file is missing, so that is refused first.
 */
function sessionFor(spec: ChildSpec, sessionDir: string): SessionManager {
	if (!spec.sessionFile) return SessionManager.create(spec.cwd, sessionDir);
	let isFile = false;
	try {
		isFile = statSync(spec.sessionFile).isFile();
	} catch {
		isFile = false;
	}
	if (!isFile) throw new Error(missingSessionFileError({ id: spec.id, name: spec.id }, spec.sessionFile));
	return SessionManager.open(spec.sessionFile, sessionDir, spec.cwd);
}

/** Pi 1.x's built-in extensions (MCP, codemode, tool search, …) as its CLI passes them; none on 0.73. */
async function builtInExtensions(packageDir: string | undefined): Promise<unknown[]> {
	if (!packageDir) return [];
	const file = join(packageDir, "dist", "extensions", "index.js");
	try {
		statSync(file);
	} catch {
		return []; // Pi 0.73 has no built-in extensions
	}
	try {
		const mod = (await import(pathToFileURL(file).href)) as { builtInExtensions?: unknown };
		return Array.isArray(mod.builtInExtensions) ? mod.builtInExtensions : [];
	} catch (error) {
		console.error(`subagents: Pi's built-in extensions could not be loaded for children (${String(error)})`);
		return [];
	}
}

/**
 * Whether Pi loaded an extension from the project (`.pi/extensions`, a package the project's settings install
 * under `.pi/`), not the user's. By path: when the override runs, Pi has not yet assigned every source's scope.
 */
function isProjectScoped(ext: unknown, cwd: string): boolean {
	const e = ext as { path?: unknown; sourceInfo?: { scope?: string } };
	if (e.sourceInfo?.scope === "project") return true;
	const projectDir = join(resolve(cwd), ".pi") + sep;
	return typeof e.path === "string" && resolve(e.path).startsWith(projectDir);
}

type PiExtension = { path: string; tools: Map<string, unknown>; sourceInfo?: { origin?: string; baseDir?: string } };

function describe(ext: PiExtension): LoadedExtension {
	const packageDir = ext.sourceInfo?.origin === "package" ? ext.sourceInfo.baseDir : undefined;
	return { path: ext.path, tools: [...ext.tools.keys()], packageDir };
}

export function createInProcessBackend(options: InProcessBackendOptions): ChildBackend {
	let builtIns: Promise<unknown[]> | undefined;
	return {
		async create(spec: ChildSpec, onEvent: (event: ChildEvent) => void): Promise<ChildHandle> {
			const policy = spec.extensions ?? ALL_EXTENSIONS;
			builtIns ??= builtInExtensions(options.packageDir);
			const factories = [
				...(policy.mode === "none" ? [] : await builtIns),
				...(options.extensionFactories ?? []),
				// ask_parent: this child's own tool, bound to its question channel (never the parent's).
				...(spec.ask ? [askParentExtension(spec.ask)] : []),
			];
			// The child's own folder's trust: 1.x then loads project extensions and settings or not; on 0.73, which
			// ignores the option, project-scope extensions are filtered out below.
			const trusted = options.trustOf ? options.trustOf(spec.trustFrom ?? spec.cwd) : true;
			const settingsManager = (
				SettingsManager.create as unknown as (cwd: string, dir: string, o: object) => SettingsManager
			)(spec.cwd, options.agentDir, { projectTrusted: trusted });
			const loader = new DefaultResourceLoader({
				cwd: spec.cwd,
				agentDir: options.agentDir,
				settingsManager,
				noExtensions: policy.mode === "none",
				noPromptTemplates: true,
				noThemes: true,
				appendSystemPrompt: spec.systemAppend,
				extensionFactories: factories as ExtensionFactory[],
				extensionsOverride: (base) => ({
					...base,
					extensions: base.extensions.filter(
						(e) =>
							(trusted || !isProjectScoped(e, spec.cwd)) &&
							keepExtension(
								describe(e as unknown as PiExtension),
								policy,
								options.subagentTools ?? SUBAGENT_TOOL_NAMES,
							),
					),
				}),
			});
			await loader.reload();
			const loaded = loader.getExtensions();
			const fatal = fatalLoadError(loaded.errors, policy);
			if (fatal) throw new Error(extensionLoadError(fatal.name, fatal.path, fatal.error));
			const extensionTools = loaded.extensions.flatMap((e) => [...(e as unknown as PiExtension).tools.keys()]);
			// Past the depth limit (no nested extension) a recorded child keeps no subagent tools, whatever it had.
			const subagentTools: readonly string[] = options.subagentTools ?? SUBAGENT_TOOL_NAMES;
			const nested = (options.extensionFactories ?? []).length > 0;
			const allowlist = childToolAllowlist({
				base: nested ? spec.tools : spec.tools.filter((t) => !subagentTools.includes(t)),
				exact: spec.exactTools === true,
				builtIn: options.builtInTools ?? CHILD_TOOL_NAMES,
				extensionTools,
			});
			if (allowlist.missing.length > 0) throw new Error(missingExtensionToolsError(allowlist.missing));
			// Pi 1.x's built-in extensions (`builtin:codemode`, `builtin:tool-search`, `builtin:mcp`) are Pi's own, not
			// the user's: their tools follow the parent's active tools like read or bash do.
			const piOwnTools = loaded.extensions
				.filter((e) => (e as unknown as PiExtension).path.startsWith("builtin:"))
				.flatMap((e) => [...(e as unknown as PiExtension).tools.keys()]);
			const tools = boundByParent(allowlist.tools, options.toolBound?.(), [
				...(options.builtInTools ?? CHILD_TOOL_NAMES),
				...piOwnTools,
			]).kept;
			if (spec.ask && !tools.includes(ASK_TOOL_NAME)) tools.push(ASK_TOOL_NAME);
			const registry = options.modelRegistry as { authStorage?: unknown; runtime?: unknown };
			// 0.73 takes the registry and its auth storage; 1.x takes the runtime behind the registry.
			// Each line ignores the other's keys.
			const lineSpecific: Record<string, unknown> = { modelRegistry: registry };
			if (registry.authStorage) lineSpecific.authStorage = registry.authStorage;
			if (registry.runtime) lineSpecific.modelRuntime = registry.runtime;
			const { session } = await createAgentSession({
				cwd: spec.cwd,
				agentDir: options.agentDir,
				model: spec.model as never,
				thinkingLevel: spec.thinking as never,
				resourceLoader: loader,
				settingsManager,
				sessionManager: sessionFor(spec, options.sessionDir),
				tools,
				...(lineSpecific as object),
			});
			// Extensions start as in a new Pi session (session_start), with no UI: a child has none. An
			// extension that throws while starting fails this child's start, never the parent.
			const startErrors: Array<{ extensionPath: string; error: string }> = [];
			try {
				await session.bindExtensions({
					onError: (e: { extensionPath: string; error: string }) => startErrors.push(e),
				} as never);
			} catch (error) {
				startErrors.push({ extensionPath: "(extension runner)", error: String(error) });
			}
			if (startErrors.length > 0) {
				session.dispose();
				const first = startErrors[0];
				const name = extensionNames(first.extensionPath)[0] ?? first.extensionPath;
				throw new Error(extensionLoadError(name, first.extensionPath, first.error));
			}
			const unsubscribe = session.subscribe((event) => {
				for (const e of normalizeEvent(event as unknown as AnyEvent, () => session.getContextUsage())) onEvent(e);
			});
			return {
				get sessionFile() {
					return session.sessionFile;
				},
				async prompt(text: string): Promise<unknown[]> {
					const before = session.messages.length;
					await session.prompt(text);
					return session.messages.slice(before);
				},
				async steer(text: string): Promise<void> {
					await session.steer(text);
				},
				async abort(): Promise<void> {
					await session.abort();
				},
				dispose(): void {
					unsubscribe();
					session.dispose();
				},
			};
		},
	};
}

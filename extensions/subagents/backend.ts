/**
 * In-process children: each is a real Pi agent session (`createAgentSession`) sharing the
 * parent's model registry and credentials, with a persistent session file, no extensions
 * (so no subagent tools unless the depth limit allows another level) and its own tools.
 * The same source runs on Pi 0.73 (modelRegistry + authStorage) and 1.x (modelRuntime). A child from an
 * earlier process is resumed by reopening its session file: Pi restores its messages as the context.
 */
import { statSync } from "node:fs";
import {
	createAgentSession,
	DefaultResourceLoader,
	type ExtensionFactory,
	SessionManager,
} from "@mariozechner/pi-coding-agent";
import type { ChildBackend, ChildEvent, ChildHandle, ChildSpec } from "./child-run.ts";
import { compactArgs } from "./domain.ts";
import { missingSessionFileError } from "./prompt.ts";

export interface InProcessBackendOptions {
	/** Pi's agent dir (settings, models, auth, resources). */
	agentDir: string;
	/** The parent's ctx.modelRegistry. */
	modelRegistry: unknown;
	/** Folder for the children's session files. */
	sessionDir: string;
	/** Extensions loaded into each child (the subagents extension one level deeper, when allowed). */
	extensionFactories?: ExtensionFactory[];
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
			if (message?.role === "assistant") out.push({ type: "assistant_end", outputTokens: message.usage?.output });
			break;
		}
		case "turn_end": {
			const usage = contextUsage();
			out.push({ type: "turn_end", contextTokens: usage?.tokens ?? undefined, contextWindow: usage?.contextWindow });
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

export function createInProcessBackend(options: InProcessBackendOptions): ChildBackend {
	return {
		async create(spec: ChildSpec, onEvent: (event: ChildEvent) => void): Promise<ChildHandle> {
			const loader = new DefaultResourceLoader({
				cwd: spec.cwd,
				agentDir: options.agentDir,
				noExtensions: true,
				noPromptTemplates: true,
				noThemes: true,
				appendSystemPrompt: spec.systemAppend,
				extensionFactories: options.extensionFactories,
			});
			await loader.reload();
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
				sessionManager: sessionFor(spec, options.sessionDir),
				tools: spec.tools,
				...(lineSpecific as object),
			});
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

/**
 * context-trim: before each model call, an over-budget history is sent as head + marker + tail
 * at segment boundaries (a tool call never without its results), with an index of what was left
 * out and where the full transcript is. Pi hands a deep copy and uses what we return for this one
 * call only; the stored session is never changed.
 *
 * The whole request counts: system prompt + tool declarations + messages. On Pi 0.87+ (1.x) the hook is
 * `context_with_system`, whose list holds the system messages that carry the prompt, its patches and the
 * tool declarations, so they are counted as sent and kept in place; on 0.73 it is `context`, with the
 * prompt (`ctx.getSystemPrompt()`) and the active tools' schemas counted beside the list.
 *
 * Wiring only: the lifecycle state lives in ContextTrimSession (./session.ts), the decisions in ./trim.ts
 * and ../shared/transcript/*.ts. This file subscribes Pi's events to the session and reads each event's
 * context for it.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { bootExtension, type ExtensionHost } from "../shared/host/bootstrap.ts";
import { CONTEXT_TRIM_ENTRY } from "../shared/host/details.ts";
import { hostSeesSystemMessages, onContextWithSystem, sessionHistory } from "../shared/host/pi-host.ts";
import type { TranscriptMessage } from "../shared/transcript/plan.ts";
import { type ContextTrimContext, ContextTrimSession } from "./session.ts";

/** One event's context as the session reads it. */
function trimContext(host: ExtensionHost, ctx: ExtensionContext): ContextTrimContext {
	return {
		config: () => host.config(ctx),
		store: () => host.store(),
		model: () => ctx.model,
		usageWindow: () => ctx.getContextUsage()?.contextWindow,
		systemPrompt: () => ctx.getSystemPrompt(),
		sessionFile: () => ctx.sessionManager.getSessionFile(),
		seesSystemMessages: () => hostSeesSystemMessages(ctx),
		history: () => sessionHistory(ctx) as TranscriptMessage[] | undefined,
		notify: (text) => host.notify(ctx, text),
		notifyOnce: (text) => host.notifyOnce(ctx, text),
	};
}

export default function contextTrim(pi: ExtensionAPI): void {
	const host = bootExtension(pi, "context-trim");
	const session = new ContextTrimSession({
		activeTools: () => pi.getActiveTools(),
		allTools: () => pi.getAllTools(),
		// A host without appendEntry (a stand-in of Pi's API) has no session to record in.
		record: typeof pi.appendEntry === "function" ? (data) => pi.appendEntry(CONTEXT_TRIM_ENTRY, data) : undefined,
	});
	host.onConfig(() => session.configChanged());
	// After the bootstrap's own session_start (the configuration is read by then): warm up in idle time.
	pi.on("session_start", (_event, ctx) => session.sessionStarted(trimContext(host, ctx)));
	pi.on("session_shutdown", () => session.shutdown());
	// One hook trims per Pi line: 0.87+ runs `context` without the system messages, then
	// `context_with_system` with them (0.73 never emits it).
	onContextWithSystem<ExtensionContext>(pi, (event, ctx) =>
		session.contextWithSystem(event.messages as TranscriptMessage[], trimContext(host, ctx)),
	);
	pi.on("context", (event, ctx) => {
		type Result = { messages: typeof event.messages } | undefined;
		const messages = event.messages as unknown as TranscriptMessage[];
		return session.context(messages, trimContext(host, ctx)) as Result | Promise<Result>;
	});
}

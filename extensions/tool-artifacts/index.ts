/**
 * tool-artifacts: oversized tool results become content-addressed artifacts behind a stub (a
 * cheap-model summary or a type-aware excerpt), and `recall_artifact` pages or searches them.
 * Thin adapter: the lifecycle state lives in ToolArtifactsSession (session.ts), the decisions in the
 * sibling modules; this file subscribes Pi's events to them and reads each event's context for them.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { bootExtension } from "../shared/host/bootstrap.ts";
import { surfaceFor } from "../shared/host/config.ts";
import { completeOneOff, DEFERRED_EXPOSURE, settleDeferredTools } from "../shared/host/pi-host.ts";
import type { StubDeps, ToolArtifactsConfig } from "./artifacts.ts";
import { RECALL_DESCRIPTION, RECALL_PARAMS, RECALL_TOOL_NAME, SUMMARY_FAILURE } from "./prompt.ts";
import { type RecallParams, recallArtifact } from "./recall.ts";
import { type ToolArtifactsContext, ToolArtifactsSession } from "./session.ts";
import { chooseSummaryModel, summarize } from "./summary.ts";

export default function toolArtifacts(pi: ExtensionAPI) {
	const host = bootExtension(pi, "tool-artifacts");
	const session = new ToolArtifactsSession();
	const warn = (ctx: ExtensionContext, message: string) => host.notifyOnce(ctx, message);

	/** One event's context as the session reads it. */
	const contextOf = (ctx: ExtensionContext): ToolArtifactsContext => ({
		config: () => ({ ...host.config(ctx).toolArtifacts, surfaces: host.config(ctx).surfaces }),
		store: () => host.store(),
		cwd: ctx.cwd,
		signal: ctx.signal,
		summary: (cfg) => summaryDeps(cfg, ctx),
		warn: (message) => warn(ctx, message),
	});

	// A new session (the bootstrap has re-read the configuration): stubs of another session do not apply.
	pi.on("session_start", (_event, ctx) => {
		session.sessionStarted();
		// Pi 1.x: recall_artifact stays behind tool_search when it is active; otherwise it is declared.
		settleDeferredTools(pi, [RECALL_TOOL_NAME], host.config(ctx).exposure.deferRareTools);
	});
	pi.on("turn_start", (_event, ctx) => session.turnStarted(contextOf(ctx)));
	pi.on("tool_call", (event, ctx) => session.toolCalled(event, contextOf(ctx)));
	pi.on("tool_execution_end", (event) => session.toolExecutionEnded(event));
	pi.on("tool_result", (event, ctx) => session.toolResult(event, contextOf(ctx)));

	/** The summarizer for this call, or why there is none. */
	const summaryDeps = (
		cfg: ToolArtifactsConfig,
		ctx: ExtensionContext,
	): Pick<StubDeps, "summarize" | "summaryUnavailable"> => {
		if (!cfg.summary.enabled) return {};
		const session = ctx.model ? { provider: ctx.model.provider, id: ctx.model.id } : undefined;
		const choice = chooseSummaryModel({
			configured: cfg.summary.model,
			session,
			available: ctx.modelRegistry.getAvailable().map((m) => ({ provider: m.provider, id: m.id })),
		});
		if ("error" in choice) {
			warn(ctx, choice.error);
			return { summaryUnavailable: SUMMARY_FAILURE.noModel };
		}
		const model = ctx.modelRegistry.find(choice.model.provider, choice.model.id) ?? ctx.model;
		if (!model) return { summaryUnavailable: SUMMARY_FAILURE.noModel };
		return {
			summarize: async (request) => {
				return summarize(request, {
					model,
					timeoutMs: cfg.summary.timeoutMs,
					temperature: cfg.summary.temperature,
					maxTokens: cfg.summary.maxOutputTokens,
					signal: ctx.signal,
					complete: (m, context, options) =>
						completeOneOff(ctx.modelRegistry, m, context, {
							maxTokens: options?.maxTokens,
							temperature: options?.temperature,
							signal: options?.signal,
							maxRetries: options?.maxRetries,
						}),
				});
			},
		};
	};

	pi.registerTool({
		...DEFERRED_EXPOSURE,
		name: RECALL_TOOL_NAME,
		label: "Recall artifact",
		description: RECALL_DESCRIPTION,
		parameters: Type.Object({
			id: Type.String({ description: RECALL_PARAMS.id }),
			offset: Type.Optional(Type.Integer({ minimum: 1, description: RECALL_PARAMS.offset })),
			limit: Type.Optional(Type.Integer({ minimum: 1, description: RECALL_PARAMS.limit })),
			pattern: Type.Optional(Type.String({ description: RECALL_PARAMS.pattern })),
			context: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: RECALL_PARAMS.context })),
			ignoreCase: Type.Optional(Type.Boolean({ description: RECALL_PARAMS.ignoreCase })),
		}),
		execute: async (_toolCallId, params: RecallParams, signal, _onUpdate, ctx) =>
			recallArtifact(host.store(), params, surfaceFor(host.config(ctx), "toolArtifacts.recall"), signal ?? undefined),
	});
}

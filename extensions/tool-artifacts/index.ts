/**
 * tool-artifacts: oversized tool results become content-addressed artifacts behind a stub (a
 * cheap-model summary or a type-aware excerpt), and `recall_artifact` pages or searches them.
 * Thin adapter: the decisions live in the sibling modules.
 */
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { bootExtension } from "../shared/host/bootstrap.ts";
import { surfaceFor } from "../shared/host/config.ts";
import { headroomDetails } from "../shared/host/details.ts";
import { completeOneOff, DEFERRED_EXPOSURE, settleDeferredTools } from "../shared/host/pi-host.ts";
import { project } from "../shared/projection/projection.ts";
import type { ArtifactStore } from "../shared/store/artifact-store.ts";
import {
	buildStub,
	cutOutputBytes,
	isPassThrough,
	readsStoredArtifact,
	resultText,
	type StubDeps,
	TOOL_OUTPUT_KIND,
	type ToolArtifactsConfig,
	thresholdFor,
	turnStubChars,
} from "./artifacts.ts";
import { RECALL_DESCRIPTION, RECALL_PARAMS, RECALL_TOOL_NAME, SUMMARY_FAILURE } from "./prompt.ts";
import {
	compilePattern,
	pageStored,
	type RecallAnswer,
	type RecallParams,
	resolveForRecall,
	searchStored,
	validateRecall,
} from "./recall.ts";
import { chooseSummaryModel, summarize } from "./summary.ts";
import { TurnBatch } from "./turn.ts";

interface ResultPatch {
	content: Array<TextContent | ImageContent>;
	details: Record<string, unknown>;
}

export default function toolArtifacts(pi: ExtensionAPI) {
	const host = bootExtension(pi, "tool-artifacts");
	let batch: TurnBatch | undefined;
	const batchOf = new Map<string, TurnBatch>();
	/** Stubs already made, by tool call id: a stub once sent never changes. */
	const stubs = new Map<string, ResultPatch>();
	const warn = (ctx: ExtensionContext, message: string) => host.notifyOnce(ctx, message);
	const setup = (ctx: ExtensionContext): { config: ToolArtifactsConfig; store: ArtifactStore } => ({
		config: { ...host.config(ctx).toolArtifacts, surfaces: host.config(ctx).surfaces },
		store: host.store(),
	});

	const newBatch = (cfg: ToolArtifactsConfig) => new TurnBatch(cfg.turnCapChars, turnStubChars(cfg));

	// A new session (the bootstrap has re-read the configuration): stubs of another session do not apply.
	pi.on("session_start", (_event, ctx) => {
		stubs.clear();
		// Pi 1.x: recall_artifact stays behind tool_search when it is active; otherwise it is declared.
		settleDeferredTools(pi, [RECALL_TOOL_NAME], host.config(ctx).exposure.deferRareTools);
	});

	pi.on("turn_start", (_event, ctx) => {
		batch = newBatch(setup(ctx).config);
		batchOf.clear();
	});

	// Every prepared call passes here before any call of the turn runs (parallel mode): the batch.
	pi.on("tool_call", (event, ctx) => {
		const cfg = setup(ctx).config;
		if (!cfg.enabled || isNested(event)) return;
		batch ??= newBatch(cfg);
		batch.register(event.toolCallId);
		batchOf.set(event.toolCallId, batch);
	});

	pi.on("tool_execution_end", (event) => {
		const owner = batchOf.get(event.toolCallId);
		owner?.ended(event.toolCallId, resultText(event.result?.content).length);
	});

	pi.on("tool_result", async (event, ctx) => {
		const { config: cfg, store: st } = setup(ctx);
		if (!cfg.enabled || isNested(event)) return;
		const cached = stubs.get(event.toolCallId);
		if (cached) return cached;
		const text = resultText(event.content);
		const threshold = thresholdFor(event.toolName, cfg);
		const passThrough =
			isPassThrough(text, event.details) || readsStoredArtifact(event.toolName, event.input, ctx.cwd, st.root);
		const limit = threshold === false ? Number.POSITIVE_INFINITY : threshold;
		const eligible = !passThrough && threshold !== false && text.length > 0;
		// A result Pi cut counts at its complete output's size (0.73 shows "(no output)" for a last line over 50 KB).
		const forced = eligible && Math.max(text.length, cutOutputBytes(event.details)) > limit;
		const owner = batchOf.get(event.toolCallId) ?? batch ?? newBatch(cfg);
		const moved = await owner.arrive({ id: event.toolCallId, chars: text.length, forced, eligible }, ctx.signal);
		if (!forced && !moved) {
			owner.finalize(event.toolCallId, text.length);
			return;
		}
		const deps: StubDeps = { store: st, config: cfg, ...summaryDeps(cfg, ctx) };
		const built = await buildStub(
			{
				toolName: event.toolName,
				toolCallId: event.toolCallId,
				input: event.input,
				content: event.content,
				details: event.details,
				isError: event.isError,
			},
			text,
			deps,
		);
		// The stub of an output the store could not keep says so itself; the person hears it once too.
		if ("notStored" in built) warn(ctx, `could not store a ${event.toolName} result: ${built.notStored}`);
		owner.finalize(event.toolCallId, built.text.length);
		const patch: ResultPatch = { content: built.content as ResultPatch["content"], details: built.details };
		stubs.set(event.toolCallId, patch);
		return patch;
	});

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
		async execute(_toolCallId, params: RecallParams, signal, _onUpdate, ctx) {
			const { store: st } = setup(ctx);
			const valid = validateRecall(params);
			if (!valid.ok) throw new Error(valid.error);
			const id = params.id.trim().toLowerCase();
			const resolved = resolveForRecall(st, id);
			if (!resolved.ok) throw new Error(resolved.error);
			let answer: RecallAnswer;
			if (params.pattern !== undefined) {
				const compiled = compilePattern(params.pattern, params.ignoreCase === true);
				if (!compiled.ok) throw new Error(compiled.error);
				answer = await searchStored(resolved.path, id, params.pattern, compiled.regex, params.context ?? 0, {
					signal: signal ?? undefined,
					offset: params.offset,
				});
			} else answer = pageStored(resolved.path, id, params.offset, params.limit);
			if (!answer.ok) throw new Error(answer.error);
			const projection = await project(answer.text, surfaceFor(host.config(ctx), "toolArtifacts.recall"), {
				sink: st.asyncSink(TOOL_OUTPUT_KIND),
			});
			const artifacts = [resolved.path];
			if (projection.artifact?.ok) artifacts.push(projection.artifact.path);
			return {
				content: [{ type: "text", text: projection.text }],
				details: { headroom: headroomDetails({ artifacts }), id, sha256: resolved.sha256 },
			};
		},
	});
}

/** Calls another tool made (Pi 1.x `ctx.executeTool`) feed that tool, not the model: left alone. */
function isNested(event: object): boolean {
	return typeof (event as { parentToolCallId?: unknown }).parentToolCallId === "string";
}

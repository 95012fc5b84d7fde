/**
 * Handoff compaction (thin Pi adapter). Compaction becomes summary → questions → answers
 * (session_before_compact); a probe at each turn end stages the handoff when free context runs low
 * and applies it once the run is over (ctx.compact() aborts a running agent, so only when idle).
 * The pipeline, the serializer, the trajectories and the probe are plain modules beside this file.
 */
import { complete } from "@mariozechner/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { getAgentDir } from "@mariozechner/pi-coding-agent";
import { storeForAgentDir } from "../shared/artifact-store.ts";
import { DEFAULT_CONFIG, type HeadroomConfig, loadConfig } from "../shared/config.ts";
import { projectResultSync } from "../shared/projection.ts";
import { bytesForTokens, estimateTokens } from "../shared/tokens.ts";
import {
	type CallModel,
	type HandoffDetails,
	type HandoffOutcome,
	isHandoffDetails,
	runHandoff,
	summarizationIndex,
} from "./handoff.ts";
import { HandoffStager, keepAfterStaging, type ResumeMode, shouldResume, shouldStage } from "./probe.ts";
import { LOG, questionsPrompt, RESUME_MESSAGE, summaryInstruction } from "./prompt.ts";
import {
	type BranchEntry,
	branchContext,
	currentState,
	fitUserMessages,
	type HistoryMessage,
	type Projector,
	serializeHistory,
	userTexts,
} from "./serialize.ts";
import { buildTrajectories, highestIndexIn, trajectoryDir, writeTrajectories } from "./trajectory.ts";

/** Budget of each long piece (tool result, long reply) in the transcript the handoff calls read. */
const PIECE_LIMITS = { maxBytes: 8 * 1024, maxLines: 160 };
/** Budget of each excerpt of the current state. */
const STATE_LIMITS = { maxBytes: 2 * 1024, maxLines: 40 };
/** Output tokens asked of each handoff call, at most (further capped by the model). */
const MAX_OUTPUT_TOKENS = 4096;
/** Tokens kept free beyond the estimate, for provider framing. */
const SAFETY_TOKENS = 512;
/** The transcript is never squeezed below this many tokens, however small the window. */
const MIN_TRANSCRIPT_TOKENS = 1024;
/** Retries of a failed handoff call (transient provider errors); the SDK default would be two. */
const HANDOFF_MAX_RETRIES = 1;
/** Pi 0.73 has no agent_settled: wait this long after agent_end before checking idleness, in ms. */
const APPLY_DELAY_MS = 200;
/** Re-check idleness this often while Pi finishes its own end-of-run work, in ms, at most APPLY_TRIES times. */
const APPLY_RETRY_MS = 100;
const APPLY_TRIES = 50;
/** customType of the follow-up that resumes the task after a staged handoff. */
export const RESUME_CUSTOM_TYPE = "headroom-handoff-resume";

type AnyModel = NonNullable<ExtensionContext["model"]>;

/** A prepared handoff: the compaction text and its details. */
interface Prepared {
	text: string;
	details: HandoffDetails;
}

function log(ctx: ExtensionContext, message: string): void {
	if (ctx.hasUI) ctx.ui.notify(message, "warning");
	else console.error(message);
}

function textOf(content: unknown, type: "text" | "thinking"): string {
	if (!Array.isArray(content)) return "";
	return content
		.filter((p) => p?.type === type)
		.map((p) => String(type === "text" ? p.text : p.thinking))
		.join("\n");
}

function modelCaller(model: AnyModel, apiKey: string | undefined, headers: unknown, maxTokens: number): CallModel {
	return async (call, signal) => {
		const now = Date.now();
		const usage0 = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
		const cost0 = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
		const messages = call.messages.map((m) =>
			m.role === "user"
				? { role: "user" as const, content: [{ type: "text" as const, text: m.text }], timestamp: now }
				: {
						role: "assistant" as const,
						content: [{ type: "text" as const, text: m.text }],
						api: model.api,
						provider: model.provider,
						model: model.id,
						usage: { ...usage0, cost: cost0 },
						stopReason: "stop" as const,
						timestamp: now,
					},
		);
		const response = await complete(
			model,
			{ systemPrompt: call.systemPrompt, messages },
			{
				apiKey,
				headers: headers as Record<string, string> | undefined,
				maxTokens,
				signal,
				maxRetries: HANDOFF_MAX_RETRIES,
			},
		);
		if (response.stopReason === "error" || response.stopReason === "aborted") {
			throw new Error(response.errorMessage || response.stopReason);
		}
		const u = response.usage;
		return {
			text: textOf(response.content, "text"),
			reasoning: textOf(response.content, "thinking") || undefined,
			model: `${model.provider}/${response.model || model.id}`,
			usage: {
				input: u.input,
				output: u.output,
				cacheRead: u.cacheRead,
				cacheWrite: u.cacheWrite,
				costUsd: u.cost.total,
			},
		};
	};
}

export default function handoffExtension(pi: ExtensionAPI) {
	let config: HeadroomConfig["handoff"] = DEFAULT_CONFIG.handoff;
	let configLoaded = false;
	const stager = new HandoffStager<Prepared>();
	/** Highest summarization index used in this process (files and entries are checked too). */
	let lastIndex = 0;
	let lastStopReason: string | undefined;
	let runActive = false;
	let agentEnds = 0;
	let compactionsStarted = 0;

	const settings = (ctx: ExtensionContext) => {
		if (!configLoaded) {
			configLoaded = true;
			const { config: loaded, warnings } = loadConfig({ agentDir: getAgentDir(), cwd: ctx.cwd });
			config = loaded.handoff;
			for (const w of warnings) log(ctx, `headroom config: ${w}`);
		}
		return config;
	};

	async function resolveModel(ctx: ExtensionContext) {
		const ref = settings(ctx).model;
		let model = ctx.model;
		if (ref) {
			const slash = ref.indexOf("/");
			model = ctx.modelRegistry.find(ref.slice(0, slash), ref.slice(slash + 1)) ?? ctx.model;
		}
		if (!model) return undefined;
		const registry = ctx.modelRegistry as unknown as {
			getApiKeyAndHeaders?: (
				m: AnyModel,
			) => Promise<{ ok: boolean; apiKey?: string; headers?: unknown; baseUrl?: string }>;
			getApiKey?: (m: AnyModel) => Promise<string | undefined>;
		};
		if (registry.getApiKeyAndHeaders) {
			const auth = await registry.getApiKeyAndHeaders(model);
			if (!auth.ok) return undefined;
			const routed = auth.baseUrl ? { ...model, baseUrl: auth.baseUrl } : model;
			return { model: routed, apiKey: auth.apiKey, headers: auth.headers };
		}
		if (registry.getApiKey) return { model, apiKey: await registry.getApiKey(model), headers: undefined };
		return undefined;
	}

	/** Run the three calls over `messages` and write the trajectories; undefined when the summary failed. */
	async function prepare(
		ctx: ExtensionContext,
		input: {
			messages: HistoryMessage[];
			previousSummary?: string;
			branch: BranchEntry[];
			staged: boolean;
			focus?: string;
		},
		signal: AbortSignal | undefined,
	): Promise<Prepared | undefined> {
		const cfg = settings(ctx);
		const resolved = await resolveModel(ctx);
		if (!resolved) {
			log(ctx, LOG.noModel);
			return undefined;
		}
		const { model } = resolved;
		const window = model.contextWindow > 0 ? model.contextWindow : 128_000;
		const maxTokens = Math.max(
			256,
			Math.min(MAX_OUTPUT_TOKENS, model.maxTokens || MAX_OUTPUT_TOKENS, Math.floor(window / 8)),
		);
		const users = userTexts(input.branch);
		const task = users[0] ?? "(the session has no user message)";
		const later = fitUserMessages(users.slice(1), cfg.userMessagesBudgetBytes);
		const store = storeForAgentDir(getAgentDir());
		const project: Projector = (text, limits) => projectResultSync(text, limits, { store, kind: "transcripts" });
		const state = currentState(branchContext(input.branch).messages, STATE_LIMITS, project);
		// Room for the transcript: the window less three replies (the answers call carries the summary and
		// the questions too) and the fixed parts of the prompts.
		const fixed = estimateTokens(
			summaryInstruction(task, input.previousSummary, input.focus) +
				questionsPrompt(task, "", state) +
				later.kept.join("\n"),
		);
		const transcriptTokens = Math.max(MIN_TRANSCRIPT_TOKENS, window - 3 * maxTokens - fixed - SAFETY_TOKENS);
		const history = serializeHistory(input.messages, {
			pieceLimits: PIECE_LIMITS,
			maxBytes: bytesForTokens(transcriptTokens),
			project,
		});
		const callModel = modelCaller(model, resolved.apiKey, resolved.headers, maxTokens);
		const outcome: HandoffOutcome = await runHandoff(
			{
				task,
				laterUserMessages: later.kept,
				omittedUserMessages: later.omitted,
				conversation: history.text,
				currentState: state,
				previousSummary: input.previousSummary,
				focus: input.focus,
			},
			callModel,
			signal,
		);
		if (outcome.kind === "failed" || !outcome.text) {
			if (!outcome.aborted) log(ctx, LOG.summaryFailed(outcome.errors.join("; ")));
			return undefined;
		}
		for (const e of outcome.errors) log(ctx, LOG.followUpFailed(e.split(":")[0] ?? "", e));
		const sessionId = ctx.sessionManager.getSessionId();
		const dir = trajectoryDir(ctx.sessionManager.getSessionFile(), store.dirFor("handoffs"), sessionId);
		const index = summarizationIndex(lastIndex, highestIndexIn(dir), ctx.sessionManager.getEntries());
		lastIndex = index;
		let trajectories: HandoffDetails["trajectories"] = [];
		try {
			const files = buildTrajectories(
				{
					parentSessionId: sessionId,
					index,
					modelName: `${model.provider}/${model.id}`,
					copiedMessages: input.messages,
					copiedBlocks: history.blocks,
					omittedBytes: history.omittedBytes,
					summaryInstruction: summaryInstruction(task, input.previousSummary, input.focus),
				},
				outcome,
			);
			const written = writeTrajectories(dir, files);
			for (const w of written) if (!w.ok) log(ctx, LOG.trajectoryFailed(w.error));
			trajectories = written.flatMap((w) => (w.ok ? [{ path: w.path, label: w.label }] : []));
		} catch (error) {
			log(ctx, LOG.trajectoryFailed(error instanceof Error ? error.message : String(error)));
		}
		return {
			text: outcome.text,
			details: {
				kind: "headroom-handoff",
				version: 1,
				index,
				outcome: outcome.kind,
				staged: input.staged,
				model: `${model.provider}/${model.id}`,
				trajectories,
				errors: outcome.errors,
				calls: outcome.records.map((r) => ({
					step: r.step,
					durationMs: Math.round(r.durationMs),
					inputTokens: r.reply ? r.reply.usage.input + r.reply.usage.cacheRead : 0,
					outputTokens: r.reply?.usage.output ?? 0,
					ok: Boolean(r.reply),
				})),
				transcriptOmittedBytes: history.omittedBytes,
			},
		};
	}

	pi.on("session_before_compact", async (event, ctx) => {
		compactionsStarted++;
		if (!settings(ctx).enabled) return;
		const { preparation, branchEntries, signal } = event;
		const branch = branchEntries as unknown as BranchEntry[];
		const staged = await stager.take(signal);
		if (signal.aborted) return;
		if (staged) {
			const keep = keepAfterStaging(branch, staged.leafId, preparation.firstKeptEntryId);
			if (keep.usable) {
				return {
					compaction: {
						summary: staged.result.text,
						firstKeptEntryId: keep.firstKeptEntryId,
						tokensBefore: preparation.tokensBefore,
						details: staged.result.details,
					},
				};
			}
		}
		const prepared = await prepare(
			ctx,
			{
				messages: [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages] as HistoryMessage[],
				previousSummary: preparation.previousSummary,
				branch,
				staged: false,
				focus: event.customInstructions,
			},
			signal,
		);
		if (!prepared || signal.aborted) return;
		return {
			compaction: {
				summary: prepared.text,
				firstKeptEntryId: preparation.firstKeptEntryId,
				tokensBefore: preparation.tokensBefore,
				details: prepared.details,
			},
		};
	});

	pi.on("turn_end", (_event, ctx) => {
		const cfg = settings(ctx);
		if (!cfg.enabled || !shouldStage(ctx.getContextUsage(), cfg.probe, stager.phase)) return;
		const leafId = ctx.sessionManager.getLeafId();
		if (!leafId) return;
		const branch = ctx.sessionManager.getBranch() as unknown as BranchEntry[];
		const context = branchContext(branch);
		stager.start(leafId, (signal) =>
			prepare(
				ctx,
				{ messages: context.messages, previousSummary: context.previousSummary, branch, staged: true },
				signal,
			).catch((error) => {
				log(ctx, LOG.stageFailed(error instanceof Error ? error.message : String(error)));
				return undefined;
			}),
		);
	});

	/** True from ctx.compact() until it completes or fails: one application at a time. */
	let applying = false;
	const applyStaged = (ctx: ExtensionContext) => {
		if (applying || stager.phase === "idle") return;
		applying = true;
		const resume = shouldResume(settings(ctx).resume as ResumeMode, lastStopReason);
		ctx.compact({
			onComplete: (result) => {
				applying = false;
				if (!resume || !isHandoffDetails(result.details) || !result.details.staged) return;
				// A tick later: the session finishes its own bookkeeping first, then the turn starts.
				setTimeout(() => {
					pi.sendMessage(
						{ customType: RESUME_CUSTOM_TYPE, content: RESUME_MESSAGE, display: true },
						{ deliverAs: "followUp", triggerTurn: true },
					);
				}, 0);
			},
			onError: (error) => {
				applying = false;
				log(ctx, LOG.compactFailed(error.message));
			},
		});
	};

	pi.on("agent_start", () => {
		runActive = true;
	});

	pi.on("agent_end", (event, ctx) => {
		runActive = false;
		const last = [...(event.messages as HistoryMessage[])].reverse().find((m) => m.role === "assistant");
		lastStopReason = last?.stopReason;
		if (stager.phase === "idle") return;
		// Pi 0.73 has no agent_settled (1.x has, and applies there; `applying` keeps it to one).
		// Pi may still run its own compaction after agent_end (which then takes the staged handoff
		// through session_before_compact): apply only if it did not.
		const mark = ++agentEnds;
		const startedBefore = compactionsStarted;
		const attempt = (tries: number) => {
			if (mark !== agentEnds || runActive || compactionsStarted !== startedBefore || stager.phase === "idle") return;
			if (!ctx.isIdle()) {
				if (tries < APPLY_TRIES) setTimeout(() => attempt(tries + 1), APPLY_RETRY_MS);
				return;
			}
			applyStaged(ctx);
		};
		setTimeout(() => attempt(0), APPLY_DELAY_MS);
	});

	// Pi 1.x: the run, its retries and Pi's own compaction are all over. A tick later, out of the handler.
	pi.on("agent_settled" as "agent_end", (_event, ctx) => {
		if (stager.phase !== "idle") setTimeout(() => applyStaged(ctx), 0);
	});

	pi.on("session_shutdown", () => {
		stager.reset();
	});
}

/**
 * Handoff compaction (thin Pi adapter). Compaction becomes summary → questions → answers
 * (session_before_compact); a probe at each turn end stages the handoff when free context runs low
 * and applies it once the run is over (ctx.compact() aborts a running agent, so only when idle).
 * The pipeline, the serializer, the trajectories and the probe are plain modules beside this file.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { bootExtension, tellPerson } from "../shared/host/bootstrap.ts";
import { toPiUsage } from "../shared/host/model-usage.ts";
import { onAgentSettled } from "../shared/host/pi-host.ts";
import { isHandoffDetails } from "./details.ts";
import { chooseModel } from "./model-ref.ts";
import {
	type AppliedHandoff,
	applyHandoff,
	type ComputedHandoff,
	computeHandoff,
	type HandoffRequest,
	type HandoffSettings,
	transcriptLocation,
} from "./prepare.ts";
import { HandoffStager, keepAfterStaging, type ResumeMode, shouldResume, shouldStage } from "./probe.ts";
import { LOG, RESUME_MESSAGE } from "./prompt.ts";
import { type BranchEntry, branchContext, type HistoryMessage } from "./serialize.ts";

/** Pi 0.73 has no agent_settled: wait this long after agent_end before checking idleness, in ms. */
const APPLY_DELAY_MS = 200;
/** Re-check idleness this often while Pi finishes its own end-of-run work, in ms, at most APPLY_TRIES times. */
const APPLY_RETRY_MS = 100;
const APPLY_TRIES = 50;
/** customType of the follow-up that resumes the task after a staged handoff. */
export const RESUME_CUSTOM_TYPE = "headroom-handoff-resume";

/** Handoff's messages carry their own "headroom handoff:" prefix (prompt.ts). */
const log = (ctx: ExtensionContext, message: string): void => tellPerson(ctx, message);

export default function handoffExtension(pi: ExtensionAPI) {
	const host = bootExtension(pi, "handoff");
	/** Holds a computed (not yet applied) handoff: applying it is what takes an index and writes files. */
	const stager = new HandoffStager<ComputedHandoff>();
	/** Highest summarization index applied in this process (files and entries are checked too). */
	let lastIndex = 0;
	/** The configured model already warned about as not found (one warning per value, not per handoff). */
	let warnedModel: string | undefined;
	let lastStopReason: string | undefined;
	let runActive = false;
	let agentEnds = 0;
	let compactionsStarted = 0;

	const settings = (ctx: ExtensionContext): HandoffSettings => {
		const config = host.config(ctx);
		return { handoff: config.handoff, headShare: config.projection.headShare };
	};

	async function resolveModel(ctx: ExtensionContext) {
		const configured = settings(ctx).handoff.model;
		const registry = ctx.modelRegistry;
		const choice = chooseModel(
			configured,
			ctx.model,
			(provider, id) => registry.find(provider, id),
			() => (typeof registry.getAvailable === "function" ? registry.getAvailable() : registry.getAll()),
		);
		if (choice.warning && warnedModel !== configured) {
			warnedModel = configured;
			log(ctx, choice.warning);
		}
		return choice.model ? { model: choice.model, registry } : undefined;
	}

	/** Compute a handoff (no index, no files); undefined when there is no model or the summary failed. */
	async function compute(ctx: ExtensionContext, input: HandoffRequest, signal: AbortSignal | undefined) {
		const resolved = await resolveModel(ctx);
		if (!resolved) {
			log(ctx, LOG.noModel);
			return undefined;
		}
		try {
			return await computeHandoff(resolved, settings(ctx), input, signal, (m) => log(ctx, m));
		} catch (error) {
			// Degrade, never break: Pi's default compaction runs instead.
			log(ctx, LOG.summaryFailed(error instanceof Error ? error.message : String(error)));
			return undefined;
		}
	}

	/** Turn a computed handoff into the compaction: only now is an index taken and are trajectories written. */
	function apply(ctx: ExtensionContext, computed: ComputedHandoff): AppliedHandoff {
		const applied = applyHandoff(ctx, computed, lastIndex, (m) => log(ctx, m));
		lastIndex = applied.details.index;
		return applied;
	}

	pi.on("session_before_compact", async (event, ctx) => {
		compactionsStarted++;
		if (!settings(ctx).handoff.enabled) return;
		const { preparation, branchEntries, signal } = event;
		const branch = branchEntries as unknown as BranchEntry[];
		const staged = await stager.take(signal);
		if (signal.aborted) return;
		if (staged) {
			const keep = keepAfterStaging(branch, staged.leafId, preparation.firstKeptEntryId);
			if (keep.usable) {
				const applied = apply(ctx, staged.result);
				return {
					compaction: {
						summary: applied.text,
						firstKeptEntryId: keep.firstKeptEntryId,
						tokensBefore: preparation.tokensBefore,
						details: applied.details,
						usage: toPiUsage(applied.details.usage),
					},
				};
			}
		}
		const computed = await compute(
			ctx,
			{
				messages: [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages] as HistoryMessage[],
				previousSummary: preparation.previousSummary,
				branch,
				staged: false,
				focus: event.customInstructions,
				location: transcriptLocation(ctx),
			},
			signal,
		);
		if (!computed || signal.aborted) return;
		const applied = apply(ctx, computed);
		return {
			compaction: {
				summary: applied.text,
				firstKeptEntryId: preparation.firstKeptEntryId,
				tokensBefore: preparation.tokensBefore,
				details: applied.details,
				usage: toPiUsage(applied.details.usage),
			},
		};
	});

	pi.on("turn_end", (_event, ctx) => {
		const cfg = settings(ctx).handoff;
		if (!cfg.enabled || !shouldStage(ctx.getContextUsage(), cfg.probe, stager.phase)) return;
		const leafId = ctx.sessionManager.getLeafId();
		if (!leafId) return;
		const branch = ctx.sessionManager.getBranch() as unknown as BranchEntry[];
		const context = branchContext(branch);
		stager.start(leafId, (signal) =>
			compute(
				ctx,
				{
					messages: context.messages,
					previousSummary: context.previousSummary,
					branch,
					staged: true,
					location: transcriptLocation(ctx),
				},
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
		const resume = shouldResume(settings(ctx).handoff.resume as ResumeMode, lastStopReason);
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
	onAgentSettled(pi, (ctx) => {
		if (stager.phase !== "idle") setTimeout(() => applyStaged(ctx), 0);
	});

	pi.on("session_shutdown", () => {
		stager.reset();
	});
}

/**
 * Handoff compaction (thin Pi adapter). Compaction becomes summary → questions → answers
 * (session_before_compact); a probe at each turn end stages the handoff when free context falls
 * toward Pi's own compaction threshold (Pi's reserve, read from its settings, plus a margin), so that
 * Pi's compaction — mid-run on 1.x, at the run's end or on overflow on 0.73 — finds it ready. A staged
 * handoff Pi did not use is applied once the run is over (ctx.compact() aborts a running agent, so
 * only when idle). The pipeline, the serializer, the trajectories and the probe are plain modules.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { bootExtension, tellPerson } from "../shared/host/bootstrap.ts";
import { toPiUsage } from "../shared/host/model-usage.ts";
import {
	type CompactionSettingsReading,
	compactionReasonOf,
	compactionSettingsOf,
	onPi1Event,
	projectTrusted,
	readCompactionSettings,
} from "../shared/host/pi-host.ts";
import { isHandoffDetails } from "./details.ts";
import { chooseModel } from "./model-ref.ts";
import {
	type AppliedHandoff,
	applyHandoff,
	type ComputedHandoff,
	computeHandoff,
	type HandoffRequest,
	type HandoffSettings,
	handoffSurfaces,
	transcriptLocation,
} from "./prepare.ts";
import {
	compactionPlan,
	HandoffStager,
	isStale,
	keepAfterStaging,
	ProbeObserver,
	type ResumeMode,
	shouldResume,
	shouldStage,
	stagingThreshold,
	staleBound,
} from "./probe.ts";
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
	/** True from ctx.compact() until it completes or fails: one application at a time. */
	let applying = false;
	/** Context growth, turn times and handoff durations that size the probe's margin. */
	const observer = new ProbeObserver();
	let turnStartedAt: number | undefined;
	/** Pi's effective compaction settings per "provider/id": its settings files, then each compaction's own. */
	const piSettings = new Map<string, CompactionSettingsReading>();
	const modelKey = (ctx: ExtensionContext) => (ctx.model ? `${ctx.model.provider}/${ctx.model.id}` : "");
	const piCompaction = (ctx: ExtensionContext): CompactionSettingsReading => {
		const key = modelKey(ctx);
		let found = piSettings.get(key);
		if (!found) {
			found = readCompactionSettings(ctx.cwd, host.agentDir(), ctx.model, projectTrusted(ctx));
			piSettings.set(key, found);
		}
		return found;
	};
	/** Tokens of new history past which a staged handoff is stale. */
	const staleAfter = (ctx: ExtensionContext, window: number | undefined) =>
		staleBound(settings(ctx).handoff.probe, piCompaction(ctx), window ?? ctx.model?.contextWindow ?? 0);

	const settings = (ctx: ExtensionContext): HandoffSettings => {
		const config = host.config(ctx);
		return {
			handoff: config.handoff,
			headShare: config.projection.headShare,
			surfaces: handoffSurfaces(config),
			toolClasses: config.toolArtifacts.toolClasses,
		};
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
		const t0 = Date.now();
		try {
			const computed = await computeHandoff(resolved, settings(ctx), input, signal, (m) => log(ctx, m));
			if (computed && !input.summaryOnly) observer.handoffTook(Date.now() - t0);
			return computed;
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
		const { preparation, branchEntries, signal } = event;
		const effective = compactionSettingsOf(preparation);
		if (effective) piSettings.set(modelKey(ctx), effective);
		observer.compacted();
		if (!settings(ctx).handoff.enabled) {
			stager.reset();
			return;
		}
		const branch = branchEntries as unknown as BranchEntry[];
		const reason = compactionReasonOf(event);
		const focus = event.customInstructions?.trim() ? event.customInstructions : undefined;
		const plan = compactionPlan(reason, stager.phase, focus !== undefined);
		if (plan !== "use-staged") stager.reset();
		if (plan === "use-staged") {
			const staged = await stager.take(signal);
			if (signal.aborted) return;
			if (staged) {
				const bound = staleAfter(ctx, ctx.getContextUsage()?.contextWindow);
				const arrived = preparation.tokensBefore - staged.tokens;
				const keep = keepAfterStaging(branch, staged.leafId, preparation.firstKeptEntryId);
				if (arrived > bound) log(ctx, LOG.staleDropped(arrived, bound));
				else if (keep.usable) {
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
		}
		const computed = await compute(
			ctx,
			{
				messages: [...preparation.messagesToSummarize, ...preparation.turnPrefixMessages] as HistoryMessage[],
				previousSummary: preparation.previousSummary,
				branch,
				staged: false,
				// An overflow retry is waiting: one call, not three (see compactionPlan).
				summaryOnly: reason === "overflow" && focus === undefined,
				focus,
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

	// Pi 1.x: a compaction failed or was aborted. Nothing half-staged may survive it.
	onPi1Event<"session_compact_failed", ExtensionContext>(pi, "session_compact_failed", (event, ctx) => {
		stager.reset();
		applying = false;
		log(ctx, LOG.piCompactFailed(event.reason ?? "automatic", event.errorMessage, event.aborted === true));
	});

	pi.on("turn_start", () => {
		turnStartedAt = Date.now();
	});

	pi.on("turn_end", (_event, ctx) => {
		const cfg = settings(ctx).handoff;
		const usage = ctx.getContextUsage();
		observer.turnEnded(usage?.tokens, turnStartedAt === undefined ? undefined : Date.now() - turnStartedAt);
		if (!cfg.enabled || !cfg.probe.enabled || !usage) return;
		const state = stager.state();
		// The history outgrew the staged handoff: drop it, and stage afresh below if still due.
		if (state.phase !== "idle" && isStale(state.tokens, usage.tokens, staleAfter(ctx, usage.contextWindow)))
			stager.reset();
		const pic = piCompaction(ctx);
		// Pi never compacts on its own here: nothing to stage for (unless a fixed threshold says otherwise).
		if (!pic.enabled && cfg.probe.freeTokensThreshold === undefined) return;
		const threshold = stagingThreshold(cfg.probe, pic, usage.contextWindow, observer.observations());
		if (!shouldStage(usage, threshold, stager.phase)) return;
		const leafId = ctx.sessionManager.getLeafId();
		if (!leafId || usage.tokens === null) return;
		const branch = ctx.sessionManager.getBranch() as unknown as BranchEntry[];
		const context = branchContext(branch);
		stager.start(
			leafId,
			(signal) =>
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
			usage.tokens,
		);
	});

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
	onPi1Event<"agent_settled", ExtensionContext>(pi, "agent_settled", (_event, ctx) => {
		if (stager.phase !== "idle") setTimeout(() => applyStaged(ctx), 0);
	});

	pi.on("session_shutdown", () => {
		stager.reset();
		piSettings.clear();
	});
}

/**
 * The handoff's lifecycle state in one object: what it staged, which summarization index it applied
 * last, whether a run or an application is under way, what the probe observed, Pi's compaction settings
 * per model. One method per Pi event it handles, each taking plain data and a HandoffContext (plain
 * readings and callbacks over one event's context), so every Pi-version timing path — polling for
 * idleness after `agent_end` on 0.73, `agent_settled` on 1.x, a compaction Pi runs itself, a session
 * shut down by /reload, /new or quit — is testable without Pi. index.ts only subscribes Pi's events.
 */

import { toPiUsage } from "../shared/host/model-usage.ts";
import type { CompactionSettingsReading } from "../shared/host/pi-host.ts";
import { type HandoffDetails, isHandoffDetails } from "./details.ts";
import type { ModelChoice } from "./model-ref.ts";
import type { AppliedHandoff, ComputedHandoff, HandoffRequest, HandoffSettings } from "./prepare.ts";
import {
	type CompactionReason,
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
	type UsageReading,
} from "./probe.ts";
import { LOG, type TranscriptLocation } from "./prompt.ts";
import { type BranchEntry, branchContext, type HistoryMessage } from "./serialize.ts";

/** Pi 0.73 has no agent_settled: wait this long after agent_end before checking idleness, in ms. */
export const APPLY_DELAY_MS = 200;
/** Re-check idleness this often while Pi finishes its own end-of-run work, in ms, at most APPLY_TRIES times. */
export const APPLY_RETRY_MS = 100;
export const APPLY_TRIES = 50;

/**
 * One Pi event's context as the session sees it: readings and callbacks, each read when called (the
 * configuration and the model may change between two events, never within one call). `R` is the model
 * the handoff calls are made with, opaque here.
 */
export interface HandoffContext<R> {
	/** The handoff's settings from the configuration in force. */
	settings(): HandoffSettings;
	/** "provider/id" of the session's model, "" without one: the key of Pi's compaction settings. */
	modelKey(): string;
	/** The session model's context window, when it has one. */
	modelWindow(): number | undefined;
	/** Pi's compaction settings for the session's model, read from Pi's settings files. */
	readPiCompaction(): CompactionSettingsReading;
	/** Context usage now (tokens null right after a compaction), undefined when Pi does not know. */
	usage(): UsageReading | undefined;
	/** The session's leaf entry (what a staged handoff covers) and its branch. */
	leafId(): string | null | undefined;
	branch(): BranchEntry[];
	/** The session file and trajectory folder a handoff text names. */
	location(): TranscriptLocation;
	/** The model for the handoff's calls: the configured one if found, else the session's (with a warning). */
	chooseModel(configured: string | undefined): ModelChoice<R>;
	/** The three calls (or one: summaryOnly) with `model`; undefined when the summary failed. May throw. */
	computeHandoff(
		model: R,
		input: HandoffRequest,
		signal: AbortSignal | undefined,
	): Promise<ComputedHandoff | undefined>;
	/** Make `computed` the compaction: take the index past `lastIndex`, write the trajectories. */
	applyHandoff(computed: ComputedHandoff, lastIndex: number): AppliedHandoff;
	/** Whether the agent is idle (no run, no retry, no compaction of Pi's own). */
	isIdle(): boolean;
	/** Ask Pi to compact now (Pi then asks the session through beforeCompact); reports the end. */
	compact(done: { onComplete(details: unknown): void; onError(message: string): void }): void;
	/** Tell the person (handoff's messages carry their own prefix). */
	log(message: string): void;
}

/** A compaction Pi is about to run (session_before_compact), as plain data. */
export interface CompactionRequest {
	/** Pi's effective compaction settings this compaction carries (1.x), if any. */
	effectiveSettings: CompactionSettingsReading | undefined;
	/** What triggered it (1.x says; undefined on 0.73). */
	reason: CompactionReason | undefined;
	/** /compact's instructions, if any. */
	customInstructions: string | undefined;
	/** The messages Pi would summarize, then the prefix of a split turn. */
	messagesToSummarize: HistoryMessage[];
	turnPrefixMessages: HistoryMessage[];
	previousSummary: string | undefined;
	firstKeptEntryId: string;
	tokensBefore: number;
	branch: BranchEntry[];
	signal: AbortSignal;
}

/** The compaction the session hands Pi (session_before_compact's result). */
export interface CompactionAnswer {
	compaction: {
		summary: string;
		firstKeptEntryId: string;
		tokensBefore: number;
		details: HandoffDetails;
		usage: ReturnType<typeof toPiUsage>;
	};
}

/** Pi 1.x's session_compact_failed, as plain data. */
export interface CompactionFailure {
	reason?: string;
	errorMessage?: string;
	aborted?: boolean;
}

/** The stop reason of a run's last assistant message (agent_end's messages), if any. */
export function lastStopReason(messages: readonly HistoryMessage[]): string | undefined {
	const last = [...messages].reverse().find((m) => m.role === "assistant") as { stopReason?: string } | undefined;
	return last?.stopReason;
}

/** What the session needs from outside beyond each event's context. */
export interface HandoffSessionOptions {
	/** Send the follow-up that resumes the task after a staged handoff was applied at the run's end. */
	resume(): void;
}

export class HandoffSession<R> {
	/** Holds a computed (not yet applied) handoff: applying it is what takes an index and writes files. */
	private readonly stager = new HandoffStager<ComputedHandoff>();
	/** Context growth, turn times and handoff durations that size the probe's margin. */
	private readonly observer = new ProbeObserver();
	/** Pi's effective compaction settings per "provider/id": its settings files, then each compaction's own. */
	private readonly piSettings = new Map<string, CompactionSettingsReading>();
	/** Highest summarization index applied in this process (files and entries are checked too). */
	private lastIndex = 0;
	/** The configured model already warned about as not found (one warning per value, not per handoff). */
	private warnedModel: string | undefined;
	private stopReason: string | undefined;
	private runActive = false;
	/** agent_end events seen: a newer one supersedes the older one's idleness polling. */
	private agentEnds = 0;
	/** Compactions Pi started (session_before_compact): one after agent_end means Pi took the staged handoff. */
	private compactionsStarted = 0;
	/** True from ctx.compact() until it completes or fails: one application at a time. */
	private applying = false;
	private turnStartedAt: number | undefined;

	constructor(private readonly options: HandoffSessionOptions) {}

	/** Whether a handoff is staged or being staged ("idle" when none). */
	get phase() {
		return this.stager.phase;
	}

	/** session_before_compact: the staged handoff if still usable, else one computed now; undefined lets Pi compact. */
	async beforeCompact(request: CompactionRequest, ctx: HandoffContext<R>): Promise<CompactionAnswer | undefined> {
		this.compactionsStarted++;
		const { branch, signal, reason, tokensBefore } = request;
		if (request.effectiveSettings) this.piSettings.set(ctx.modelKey(), request.effectiveSettings);
		this.observer.compacted();
		if (!ctx.settings().handoff.enabled) {
			this.stager.reset();
			return;
		}
		const focus = request.customInstructions?.trim() ? request.customInstructions : undefined;
		const plan = compactionPlan(reason, this.stager.phase, focus !== undefined);
		if (plan !== "use-staged") this.stager.reset();
		if (plan === "use-staged") {
			const staged = await this.stager.take(signal);
			if (signal.aborted) return;
			if (staged) {
				const bound = this.staleAfter(ctx, ctx.usage()?.contextWindow);
				const arrived = tokensBefore - staged.tokens;
				const keep = keepAfterStaging(branch, staged.leafId, request.firstKeptEntryId);
				if (arrived > bound) ctx.log(LOG.staleDropped(arrived, bound));
				else if (keep.usable) return this.answer(ctx, staged.result, keep.firstKeptEntryId, tokensBefore);
			}
		}
		const computed = await this.compute(
			ctx,
			{
				messages: [...request.messagesToSummarize, ...request.turnPrefixMessages],
				previousSummary: request.previousSummary,
				branch,
				staged: false,
				// An overflow retry is waiting: one call, not three (see compactionPlan).
				summaryOnly: reason === "overflow" && focus === undefined,
				focus,
				location: ctx.location(),
			},
			signal,
		);
		if (!computed || signal.aborted) return;
		return this.answer(ctx, computed, request.firstKeptEntryId, tokensBefore);
	}

	/** Pi 1.x's session_compact_failed: a compaction failed or was aborted. Nothing half-staged may survive it. */
	compactFailed(failure: CompactionFailure, ctx: HandoffContext<R>): void {
		this.stager.reset();
		this.applying = false;
		ctx.log(LOG.piCompactFailed(failure.reason ?? "automatic", failure.errorMessage, failure.aborted === true));
	}

	/** turn_start: the turn's wall time is measured from here. */
	turnStarted(): void {
		this.turnStartedAt = Date.now();
	}

	/** turn_end: the probe. Stage the handoff in the background when free context runs low. */
	turnEnded(ctx: HandoffContext<R>): void {
		const cfg = ctx.settings().handoff;
		const usage = ctx.usage();
		const started = this.turnStartedAt;
		this.observer.turnEnded(usage?.tokens, started === undefined ? undefined : Date.now() - started);
		if (!cfg.enabled || !cfg.probe.enabled || !usage) return;
		const state = this.stager.state();
		// The history outgrew the staged handoff: drop it, and stage afresh below if still due.
		if (state.phase !== "idle" && isStale(state.tokens, usage.tokens, this.staleAfter(ctx, usage.contextWindow)))
			this.stager.reset();
		const pic = this.piCompaction(ctx);
		// Pi never compacts on its own here: nothing to stage for (unless a fixed threshold says otherwise).
		if (!pic.enabled && cfg.probe.freeTokensThreshold === undefined) return;
		const threshold = stagingThreshold(cfg.probe, pic, usage.contextWindow, this.observer.observations());
		if (!shouldStage(usage, threshold, this.stager.phase)) return;
		const leafId = ctx.leafId();
		if (!leafId || usage.tokens === null) return;
		const branch = ctx.branch();
		const context = branchContext(branch);
		this.stager.start(
			leafId,
			(signal) =>
				this.compute(
					ctx,
					{
						messages: context.messages,
						previousSummary: context.previousSummary,
						branch,
						staged: true,
						location: ctx.location(),
					},
					signal,
				).catch((error) => {
					ctx.log(LOG.stageFailed(error instanceof Error ? error.message : String(error)));
					return undefined;
				}),
			usage.tokens,
		);
	}

	/** agent_start: a run is under way (a staged handoff waits for its end). */
	agentStarted(): void {
		this.runActive = true;
	}

	/**
	 * agent_end. Pi 0.73 has no agent_settled (1.x has, and applies there; `applying` keeps it to one):
	 * after APPLY_DELAY_MS, poll for idleness and apply the staged handoff — unless a new run started,
	 * a later agent_end took over, or Pi ran its own compaction meanwhile (which took the staged handoff
	 * through beforeCompact).
	 */
	agentEnded(stopReason: string | undefined, ctx: HandoffContext<R>): void {
		this.runActive = false;
		this.stopReason = stopReason;
		if (this.stager.phase === "idle") return;
		const mark = ++this.agentEnds;
		const startedBefore = this.compactionsStarted;
		const attempt = (tries: number) => {
			if (mark !== this.agentEnds || this.runActive || this.compactionsStarted !== startedBefore) return;
			if (this.stager.phase === "idle") return;
			if (!ctx.isIdle()) {
				if (tries < APPLY_TRIES) setTimeout(() => attempt(tries + 1), APPLY_RETRY_MS);
				return;
			}
			this.applyStaged(ctx);
		};
		setTimeout(() => attempt(0), APPLY_DELAY_MS);
	}

	/** Pi 1.x's agent_settled: the run, its retries and Pi's own compaction are over. A tick later, out of the handler. */
	agentSettled(ctx: HandoffContext<R>): void {
		if (this.stager.phase !== "idle") setTimeout(() => this.applyStaged(ctx), 0);
	}

	/**
	 * session_shutdown (quit, /reload, /new, /resume, /fork): drop what is staged (a run in flight is
	 * aborted; pending idleness polls find nothing to apply) and the cached Pi settings. The index is
	 * kept: the next handoff still checks the trajectory files and the session's entries.
	 */
	shutdown(): void {
		this.stager.reset();
		this.piSettings.clear();
	}

	/** Apply the staged handoff through Pi's compaction (only when idle: ctx.compact() aborts a running agent). */
	private applyStaged(ctx: HandoffContext<R>): void {
		if (this.applying || this.stager.phase === "idle") return;
		this.applying = true;
		const resume = shouldResume(ctx.settings().handoff.resume as ResumeMode, this.stopReason);
		ctx.compact({
			onComplete: (details) => {
				this.applying = false;
				if (!resume || !isHandoffDetails(details) || !details.staged) return;
				// A tick later: the session finishes its own bookkeeping first, then the turn starts.
				setTimeout(() => this.options.resume(), 0);
			},
			onError: (message) => {
				this.applying = false;
				ctx.log(LOG.compactFailed(message));
			},
		});
	}

	/** Pi's compaction settings for the session's model: a compaction's own, else its settings files. */
	private piCompaction(ctx: HandoffContext<R>): CompactionSettingsReading {
		const key = ctx.modelKey();
		let found = this.piSettings.get(key);
		if (!found) {
			found = ctx.readPiCompaction();
			this.piSettings.set(key, found);
		}
		return found;
	}

	/** Tokens of new history past which a staged handoff is stale. */
	private staleAfter(ctx: HandoffContext<R>, window: number | undefined): number {
		return staleBound(ctx.settings().handoff.probe, this.piCompaction(ctx), window ?? ctx.modelWindow() ?? 0);
	}

	/** The model for the handoff's calls; warns once per configured model that was not found. */
	private model(ctx: HandoffContext<R>): R | undefined {
		const configured = ctx.settings().handoff.model;
		const choice = ctx.chooseModel(configured);
		if (choice.warning && this.warnedModel !== configured) {
			this.warnedModel = configured;
			ctx.log(choice.warning);
		}
		return choice.model;
	}

	/** Compute a handoff (no index, no files); undefined when there is no model or the summary failed. */
	private async compute(ctx: HandoffContext<R>, input: HandoffRequest, signal: AbortSignal | undefined) {
		const model = this.model(ctx);
		if (model === undefined) {
			ctx.log(LOG.noModel);
			return undefined;
		}
		const t0 = Date.now();
		try {
			const computed = await ctx.computeHandoff(model, input, signal);
			if (computed && !input.summaryOnly) this.observer.handoffTook(Date.now() - t0);
			return computed;
		} catch (error) {
			// Degrade, never break: Pi's default compaction runs instead.
			ctx.log(LOG.summaryFailed(error instanceof Error ? error.message : String(error)));
			return undefined;
		}
	}

	/** Turn a computed handoff into the compaction: only now is an index taken and are trajectories written. */
	private answer(
		ctx: HandoffContext<R>,
		computed: ComputedHandoff,
		firstKeptEntryId: string,
		tokensBefore: number,
	): CompactionAnswer {
		const applied = ctx.applyHandoff(computed, this.lastIndex);
		this.lastIndex = applied.details.index;
		return {
			compaction: {
				summary: applied.text,
				firstKeptEntryId,
				tokensBefore,
				details: applied.details,
				usage: toPiUsage(applied.details.usage),
			},
		};
	}
}

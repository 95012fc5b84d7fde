/**
 * The proactive probe: when free context runs low at a turn end — below Pi's own compaction reserve
 * plus a margin that covers the turns the handoff's calls take — prepare the handoff in the background
 * (staging) while the agent keeps running. When Pi compacts (mid-run on 1.x, at the run's end or on
 * overflow on 0.73), compaction uses the staged handoff instead of making the three calls again,
 * keeping verbatim what came after staging; a staged handoff the history has outgrown is dropped.
 * Only one handoff is ever in flight. Decisions are pure functions; HandoffStager owns the promise.
 */
import { readHeadroom, type UsageReading } from "../shared/budget/batch.ts";

/** What ctx.getContextUsage() returns: the shared reading, named here for the probe's callers. */
export type { UsageReading };

export interface ProbeSettings {
	enabled: boolean;
	/** Fixed threshold: stage when fewer than this many tokens are free. Absent: derived from Pi's reserve. */
	freeTokensThreshold?: number;
	/** Least margin above Pi's reserve at which staging starts, in tokens. */
	marginTokens: number;
	/** Turns of context growth the margin covers (raised when handoffs are measured to take longer). */
	leadTurns: number;
	/** A staged handoff older than this many tokens of new history is refreshed or dropped. Absent: see staleBound. */
	maxStaleTokens?: number;
}

/** Pi's compaction settings as the probe needs them. */
export interface PiCompaction {
	enabled: boolean;
	reserveTokens: number;
	keepRecentTokens: number;
}

/** What the threshold is sized from, observed during the session. */
export interface ProbeObservations {
	/** Tokens the context grew per turn recently (undefined before two readings). */
	growthPerTurn?: number;
	/** Typical wall time of one turn, in ms (undefined before one was measured). */
	turnMs?: number;
	/** Wall time of the last handoff computation, in ms (undefined before one ran). */
	handoffMs?: number;
}

/** Largest share of the window the margin above Pi's reserve may take. */
export const MAX_MARGIN_SHARE = 0.25;
/** Recent turns whose growth sizes the margin (the largest of them counts). */
export const GROWTH_WINDOW_TURNS = 3;

/**
 * Turns the staged handoff must be ahead of Pi's compaction: the configured lead, or — once a handoff
 * and a turn were measured — enough turns to cover the handoff's duration, plus the turn at which Pi checks.
 */
export function leadTurnsFor(settings: ProbeSettings, seen: ProbeObservations): number {
	const measured =
		seen.handoffMs !== undefined && seen.turnMs !== undefined && seen.turnMs > 0
			? Math.ceil(seen.handoffMs / seen.turnMs) + 1
			: 0;
	return Math.max(settings.leadTurns, Math.min(measured, 50));
}

/**
 * Free tokens below which the probe stages: Pi's reserve (Pi compacts below it) plus a margin that
 * covers the context growth expected while the handoff's calls run — at least `marginTokens`, at
 * most a quarter of the window. A configured `freeTokensThreshold` replaces all of it.
 */
export function stagingThreshold(
	settings: ProbeSettings,
	pi: PiCompaction,
	window: number,
	seen: ProbeObservations,
): number {
	if (settings.freeTokensThreshold !== undefined) return settings.freeTokensThreshold;
	const growth = seen.growthPerTurn !== undefined && seen.growthPerTurn > 0 ? seen.growthPerTurn : 0;
	const wanted = Math.max(settings.marginTokens, Math.ceil(growth * leadTurnsFor(settings, seen)));
	const cap = Math.max(settings.marginTokens, Math.floor(window * MAX_MARGIN_SHARE));
	return pi.reserveTokens + Math.min(wanted, cap);
}

/** Growth per turn from the readings of recent turn ends (oldest first): the largest recent increase. */
export function growthPerTurn(readings: readonly number[]): number | undefined {
	const recent = readings.slice(-(GROWTH_WINDOW_TURNS + 1));
	let best: number | undefined;
	for (let i = 1; i < recent.length; i++) {
		const d = recent[i] - recent[i - 1];
		if (d > 0 && (best === undefined || d > best)) best = d;
	}
	return best;
}

export type StagePhase = "idle" | "staging" | "staged";

/**
 * Stage now? Only when Pi compacts automatically, the stager is idle, and free tokens are below the threshold
 * (a reading above the window is below any threshold); never on an unknown or malformed reading.
 */
export function shouldStage(
	usage: UsageReading | undefined,
	threshold: number,
	phase: StagePhase,
	enabled = true,
): boolean {
	if (!enabled || phase !== "idle") return false;
	const free = readHeadroom(usage);
	return free.ok ? free.tokens < threshold : free.overBy !== undefined && -free.overBy < threshold;
}

/** Share of the usable window (window − Pi's reserve) that what came after staging may fill before the staged handoff is stale. */
export const MAX_STALE_SHARE = 0.6;

/**
 * Tokens of history after staging past which a staged handoff is stale: the configured bound, else the
 * larger of Pi's keepRecentTokens and 60% of (window − reserve). Within it, the compacted context (the
 * handoff plus what came after staging, kept verbatim) still leaves 40% of the usable window free.
 */
export function staleBound(settings: ProbeSettings, pi: PiCompaction, window: number): number {
	if (settings.maxStaleTokens !== undefined) return settings.maxStaleTokens;
	const usable = Math.max(0, window - pi.reserveTokens);
	return Math.max(pi.keepRecentTokens, Math.floor(usable * MAX_STALE_SHARE));
}

/** A staged handoff covering history up to `stagedTokens` is stale once the context holds `maxStale` more. */
export function isStale(stagedTokens: number, nowTokens: number | null | undefined, maxStale: number): boolean {
	if (nowTokens === null || nowTokens === undefined || !Number.isFinite(nowTokens)) return false;
	return nowTokens - stagedTokens > maxStale;
}

/** What triggered a compaction (Pi 1.x says; 0.73 does not, which counts as "threshold"). */
export type CompactionReason = "manual" | "threshold" | "overflow";

/** How session_before_compact answers. */
export type CompactionPlan =
	/** Take the staged handoff (waiting for one in flight). */
	| "use-staged"
	/** One summary call, no questions or answers: an overflow retry is waiting. */
	| "summary-only"
	/** The three calls now. */
	| "full";

/**
 * Decide how to compact. An overflow retry must not wait for three calls: a ready staged handoff is
 * used, anything else (nothing staged, or still in flight) becomes a one-call summary-only handoff.
 * Other reasons use a staged handoff (ready or in flight, since it started early for this moment) and
 * run the three calls otherwise. /compact with instructions always runs afresh, with the focus.
 */
export function compactionPlan(
	reason: CompactionReason | undefined,
	phase: StagePhase,
	hasFocus: boolean,
): CompactionPlan {
	if (hasFocus) return "full";
	if (reason === "overflow") return phase === "staged" ? "use-staged" : "summary-only";
	return phase === "idle" ? "full" : "use-staged";
}

/** A branch entry as far as the keep decision needs it. */
export interface KeepEntry {
	id: string;
	type: string;
	message?: { role?: string };
}

/** Where the kept (verbatim) part starts when a staged handoff is applied. */
export type KeepDecision =
	/** Keep from this entry on: everything that arrived after staging. */
	| { usable: true; firstKeptEntryId: string; arrivedAfter: number }
	/** The staged handoff does not fit this branch any more; run the handoff afresh. */
	| { usable: false; reason: string };

/**
 * The staged handoff covers the branch up to `stagedLeafId`. Keep verbatim whatever arrived after
 * it. When nothing arrived, keep from `fallbackId` (Pi's own cut), which only repeats a little.
 * A kept part must not start with a tool result (it would lose its tool call).
 */
export function keepAfterStaging(entries: KeepEntry[], stagedLeafId: string, fallbackId: string): KeepDecision {
	const at = entries.findIndex((e) => e.id === stagedLeafId);
	if (at < 0) return { usable: false, reason: "the staged point is no longer on this branch" };
	const after = entries.slice(at + 1);
	if (after.some((e) => e.type === "compaction")) return { usable: false, reason: "compacted since staging" };
	const firstMessage = after.find((e) => e.type === "message");
	if (firstMessage?.message?.role === "toolResult") {
		return { usable: false, reason: "the entries after staging start with a tool result" };
	}
	if (after.length === 0) return { usable: true, firstKeptEntryId: fallbackId, arrivedAfter: 0 };
	return { usable: true, firstKeptEntryId: after[0].id, arrivedAfter: after.length };
}

export type ResumeMode = "auto" | "always" | "never";

/**
 * Send a follow-up so the task goes on after a staged handoff was applied? "auto": only when the
 * run ended mid-task — its last reply stopped for a tool call, the length limit or an error —
 * not when the model finished its answer ("stop") or the user aborted.
 */
export function shouldResume(mode: ResumeMode, lastStopReason: string | undefined): boolean {
	if (mode === "never") return false;
	if (mode === "always") return lastStopReason !== "aborted";
	return lastStopReason === "toolUse" || lastStopReason === "length" || lastStopReason === "error";
}

/** The stager's state, as observed from outside. */
export type StagerState<T> =
	| { phase: "idle" }
	| { phase: "staging"; leafId: string; tokens: number }
	| { phase: "staged"; leafId: string; tokens: number; result: T };

/** What `take` hands over: the result, the leaf it covers and the context tokens when staging began. */
export interface TakenHandoff<T> {
	leafId: string;
	tokens: number;
	result: T;
}

/**
 * Holds at most one handoff: in flight or ready. `take` hands it over exactly once (waiting for an
 * in-flight one) and returns the stager to idle, so a second compaction can never reuse it.
 */
export class HandoffStager<T> {
	private current:
		| { phase: "idle" }
		| {
				phase: "staging";
				leafId: string;
				tokens: number;
				promise: Promise<T | undefined>;
				controller: AbortController;
		  }
		| { phase: "staged"; leafId: string; tokens: number; result: T } = { phase: "idle" };
	private generation = 0;

	get phase(): StagePhase {
		return this.current.phase;
	}

	state(): StagerState<T> {
		const c = this.current;
		return c.phase === "staging" ? { phase: "staging", leafId: c.leafId, tokens: c.tokens } : c;
	}

	/**
	 * Start staging the history up to `leafId` (`tokens` = context tokens then); false (nothing started)
	 * unless idle. A failed or empty run returns the stager to idle.
	 */
	start(leafId: string, run: (signal: AbortSignal) => Promise<T | undefined>, tokens = 0): boolean {
		if (this.current.phase !== "idle") return false;
		const controller = new AbortController();
		const generation = ++this.generation;
		const promise = run(controller.signal).then(
			(result) => {
				if (this.generation === generation && this.current.phase === "staging") {
					this.current = result === undefined ? { phase: "idle" } : { phase: "staged", leafId, tokens, result };
				}
				return result;
			},
			() => {
				if (this.generation === generation && this.current.phase === "staging") this.current = { phase: "idle" };
				return undefined;
			},
		);
		this.current = { phase: "staging", leafId, tokens, promise, controller };
		return true;
	}

	/** Hand over the staged handoff (awaiting one in flight); undefined when there is none or it failed. */
	async take(signal?: AbortSignal): Promise<TakenHandoff<T> | undefined> {
		const c = this.current;
		if (c.phase === "idle") return undefined;
		if (c.phase === "staged") {
			this.current = { phase: "idle" };
			return { leafId: c.leafId, tokens: c.tokens, result: c.result };
		}
		const onAbort = () => c.controller.abort();
		signal?.addEventListener("abort", onAbort, { once: true });
		try {
			await c.promise;
			// Whoever finds it staged first takes it; a concurrent taker finds the stager idle.
			const now = this.current;
			if (now.phase !== "staged" || now.leafId !== c.leafId) return undefined;
			this.current = { phase: "idle" };
			return signal?.aborted ? undefined : { leafId: now.leafId, tokens: now.tokens, result: now.result };
		} finally {
			signal?.removeEventListener("abort", onAbort);
		}
	}

	/** Drop whatever is held, aborting a run in flight. */
	reset(): void {
		if (this.current.phase === "staging") this.current.controller.abort();
		this.generation++;
		this.current = { phase: "idle" };
	}
}

/** Readings kept for the growth estimate. */
const MAX_READINGS = GROWTH_WINDOW_TURNS + 1;

/**
 * What the probe observes across turns: context tokens at each turn end (reset by a compaction, which
 * empties the context), turn wall times, and how long the last handoff took. Plain state, no Pi.
 */
export class ProbeObserver {
	private readings: number[] = [];
	private turnTimes: number[] = [];
	private lastHandoffMs: number | undefined;

	/** One turn ended with `tokens` in context (null: unknown, e.g. just after a compaction) after `turnMs`. */
	turnEnded(tokens: number | null | undefined, turnMs: number | undefined): void {
		if (typeof tokens === "number" && Number.isFinite(tokens)) {
			this.readings.push(tokens);
			if (this.readings.length > MAX_READINGS) this.readings.shift();
		}
		if (turnMs !== undefined && Number.isFinite(turnMs) && turnMs >= 0) {
			this.turnTimes.push(turnMs);
			if (this.turnTimes.length > MAX_READINGS) this.turnTimes.shift();
		}
	}

	/** The context was compacted: growth readings start over. */
	compacted(): void {
		this.readings = [];
	}

	/** A handoff's calls took this long (staged or not). */
	handoffTook(ms: number): void {
		if (Number.isFinite(ms) && ms >= 0) this.lastHandoffMs = ms;
	}

	observations(): ProbeObservations {
		const sorted = [...this.turnTimes].sort((a, b) => a - b);
		return {
			growthPerTurn: growthPerTurn(this.readings),
			turnMs: sorted.length > 0 ? sorted[Math.floor(sorted.length / 2)] : undefined,
			handoffMs: this.lastHandoffMs,
		};
	}
}

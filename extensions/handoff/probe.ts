/**
 * The proactive probe: when free context runs low at a turn end, prepare the handoff in the
 * background (staging) while the agent keeps running; when the run ends, compaction uses the staged
 * handoff instead of making the three calls again. Only one handoff is ever in flight.
 * Decisions are pure functions; HandoffStager owns the one in-flight promise.
 */

/** What ctx.getContextUsage() returns (tokens is null right after a compaction). */
export interface UsageReading {
	tokens: number | null;
	contextWindow: number;
}

export interface ProbeSettings {
	enabled: boolean;
	/** Stage when fewer than this many tokens of the window are free. */
	freeTokensThreshold: number;
}

/** Free tokens of the window, or undefined when the reading is unknown or malformed. */
export function freeTokens(usage: UsageReading | undefined): number | undefined {
	if (!usage || usage.tokens === null || !Number.isFinite(usage.tokens)) return undefined;
	if (!Number.isFinite(usage.contextWindow) || usage.contextWindow <= 0) return undefined;
	return usage.contextWindow - usage.tokens;
}

export type StagePhase = "idle" | "staging" | "staged";

/** Stage now? Only when enabled, idle, and the reading shows free tokens below the threshold. */
export function shouldStage(usage: UsageReading | undefined, settings: ProbeSettings, phase: StagePhase): boolean {
	if (!settings.enabled || phase !== "idle") return false;
	const free = freeTokens(usage);
	return free !== undefined && free < settings.freeTokensThreshold;
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
	| { phase: "staging"; leafId: string }
	| { phase: "staged"; leafId: string; result: T };

/**
 * Holds at most one handoff: in flight or ready. `take` hands it over exactly once (waiting for an
 * in-flight one) and returns the stager to idle, so a second compaction can never reuse it.
 */
export class HandoffStager<T> {
	private current:
		| { phase: "idle" }
		| { phase: "staging"; leafId: string; promise: Promise<T | undefined>; controller: AbortController }
		| { phase: "staged"; leafId: string; result: T } = { phase: "idle" };
	private generation = 0;

	get phase(): StagePhase {
		return this.current.phase;
	}

	state(): StagerState<T> {
		const c = this.current;
		return c.phase === "staging" ? { phase: "staging", leafId: c.leafId } : c;
	}

	/** Start staging; false (nothing started) unless idle. A failed or empty run returns the stager to idle. */
	start(leafId: string, run: (signal: AbortSignal) => Promise<T | undefined>): boolean {
		if (this.current.phase !== "idle") return false;
		const controller = new AbortController();
		const generation = ++this.generation;
		const promise = run(controller.signal).then(
			(result) => {
				if (this.generation === generation && this.current.phase === "staging") {
					this.current = result === undefined ? { phase: "idle" } : { phase: "staged", leafId, result };
				}
				return result;
			},
			() => {
				if (this.generation === generation && this.current.phase === "staging") this.current = { phase: "idle" };
				return undefined;
			},
		);
		this.current = { phase: "staging", leafId, promise, controller };
		return true;
	}

	/** Hand over the staged handoff (awaiting one in flight); undefined when there is none or it failed. */
	async take(signal?: AbortSignal): Promise<{ leafId: string; result: T } | undefined> {
		const c = this.current;
		if (c.phase === "idle") return undefined;
		if (c.phase === "staged") {
			this.current = { phase: "idle" };
			return { leafId: c.leafId, result: c.result };
		}
		const onAbort = () => c.controller.abort();
		signal?.addEventListener("abort", onAbort, { once: true });
		try {
			await c.promise;
			// Whoever finds it staged first takes it; a concurrent taker finds the stager idle.
			const now = this.current;
			if (now.phase !== "staged" || now.leafId !== c.leafId) return undefined;
			this.current = { phase: "idle" };
			return signal?.aborted ? undefined : { leafId: now.leafId, result: now.result };
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

/**
 * context-trim's warm-up in idle time. A resumed session's first request would size its whole history (on a
 * cold JIT, ~0.1–0.3 s for ~1,000 messages) and shorten its oversized texts while the person waits. So after
 * `session_start` (WARM_UP_DELAY_MS later, once Pi has finished starting) the warm-up reads the branch's
 * messages, sizes them a chunk per turn of the event loop and, when the history is over budget, runs the trim
 * the first request would run (without recording it): the size caches, the segments, the omission index and
 * the shortened texts are then ready for the first request, which only sizes what is new.
 *
 * It only fills the caches every request validates (a message is recognised at its position by role,
 * timestamp and shape, and the first pass after a warm-up checks every shape), so a request is never answered
 * from the warm-up's list, only sped up by it. A request that comes before the warm-up has finished stops it
 * and does the rest itself; a shutdown (quit, /reload, /new, /resume, /fork) and a new start stop it too.
 *
 * It knows the session only through WarmUpCaches: the caches it fills, and the session's settings and
 * overhead reading (the same ones a request uses, so both compute the same budget).
 */
import type { HeadroomConfig } from "../shared/host/config.ts";
import type { OmissionMemo } from "../shared/transcript/omission.ts";
import {
	type BoundMemo,
	messageBudget,
	surelyWithinBudget,
	type TokenSizer,
	type TranscriptMessage,
	usageBasedTokens,
} from "../shared/transcript/plan.ts";
import type { ShortenOptions } from "../shared/transcript/view.ts";
import { trimMessages } from "./trim.ts";

/** Schedules `run` in `ms` milliseconds (0: the next turn of the event loop); returns a cancel. */
export type Later = (run: () => void, ms: number) => () => void;

/**
 * Timers that never keep the process alive (a `pi -p` run exits when it is done). A timeout, not an immediate,
 * even for the next turn: an unref'd immediate scheduled from another one waits until something else wakes the
 * event loop (checked on Node 20 and Bun 1.4), while an unref'd timer runs when due.
 */
export const unrefLater: Later = (run, ms) => {
	const handle = setTimeout(run, Math.max(0, ms)) as { unref?: () => void };
	handle.unref?.();
	return () => clearTimeout(handle as Parameters<typeof clearTimeout>[0]);
};

/** How long after session_start the warm-up begins, in ms: Pi finishes its own start first. */
export const WARM_UP_DELAY_MS = 300;
/** Messages sized per turn of the event loop during the warm-up (a few ms on a cold JIT). */
export const WARM_UP_CHUNK_MESSAGES = 64;

/**
 * Where the warm-up is: none begun; waiting for its delay; sizing the history; ready (the caches hold the
 * history, or it was found within budget: nothing to prepare); stopped (by a request, a shutdown, a new
 * session start, a disabled configuration or a failure: the next request does the work itself).
 */
export type WarmUpState = "none" | "waiting" | "sizing" | "ready" | "stopped";

/** The settings a trim runs with, made from the configuration in force. */
export interface TrimSettings {
	/** The `contextTrim` section of the configuration. */
	config: HeadroomConfig["contextTrim"];
	/** How oversized texts are shortened and stored. */
	shorten: ShortenOptions;
}

/** What the warm-up reads of one event's context, each when called. */
export interface WarmUpReadings {
	/** The model's context window and output limit, when there is a model. */
	model(): { contextWindow?: number; maxTokens?: number } | undefined;
	/** The context window Pi's usage reading names, when the model states none. */
	usageWindow(): number | undefined;
	/** The session file, named in the marker as the place of the full transcript. */
	sessionFile(): string | undefined;
	/**
	 * The messages of the session's branch as the next request will start (Pi's resumed history), read in
	 * idle time; undefined when the host cannot tell.
	 */
	history(): TranscriptMessage[] | undefined;
}

/** The session's parts the warm-up uses: the caches it fills and the readings a request makes too. */
export interface WarmUpCaches<C extends WarmUpReadings> {
	/** Message sizes by position, validated by every request. */
	readonly sizer: TokenSizer;
	/** surelyWithinBudget's bound of the history seen so far. */
	readonly bounds: BoundMemo;
	/** Segments, omission index and shortened texts of earlier trims. */
	readonly memo: OmissionMemo;
	/** The settings of the configuration in force (may throw). */
	settings(ctx: C): TrimSettings;
	/** System prompt and tool declarations in tokens: what a 0.73 request counts beside its list. */
	overheadTokens(ctx: C): number;
}

/** The budget figures the first request would compute for the history. */
interface Figures {
	budgetTokens: number;
	measuredTokens: number | undefined;
}

/** One session's idle-time warm-up: started by session_start, stopped by a request, a shutdown or a restart. */
export class IdleWarmUp<C extends WarmUpReadings> {
	/** Bumped by every start and stop: a scheduled step of an older warm-up does nothing. */
	private generation = 0;
	private cancelStep: (() => void) | undefined;
	private current: WarmUpState = "none";

	constructor(
		private readonly caches: WarmUpCaches<C>,
		private readonly later: Later = unrefLater,
	) {}

	/** Where the warm-up is (see WarmUpState). */
	get state(): WarmUpState {
		return this.current;
	}

	/** Start anew (any warm-up under way stops): the first step WARM_UP_DELAY_MS from now. */
	start(ctx: C): void {
		this.stop("waiting");
		const generation = this.generation;
		this.cancelStep = this.later(() => this.begin(generation, ctx), WARM_UP_DELAY_MS);
	}

	/** Stop whatever is scheduled; nothing runs after this. */
	shutdown(): void {
		this.stop("stopped");
	}

	/** A request came: a warm-up under way stops (the request sizes what is left; the caches hold at every step). */
	requestBegins(): void {
		if (this.current === "waiting" || this.current === "sizing") this.stop("stopped");
	}

	private stop(next: WarmUpState): void {
		this.generation++;
		this.cancelStep?.();
		this.cancelStep = undefined;
		this.current = next;
	}

	/** The first step: the settings, the budget, the history; then sizing, a chunk per turn. */
	private begin(generation: number, ctx: C): void {
		if (generation !== this.generation) return;
		this.cancelStep = undefined;
		try {
			const { config } = this.caches.settings(ctx);
			const model = ctx.model();
			const contextWindow = model?.contextWindow ?? ctx.usageWindow();
			const history = config.enabled && contextWindow ? ctx.history() : undefined;
			if (!history || history.length === 0 || !contextWindow) {
				this.current = "ready";
				return;
			}
			// The budget as 0.73's hook computes it (prompt and tools beside the list); 0.87+ counts the same
			// things as system messages, so its cut differs at most by a quantised step (then the caches still hold).
			const system = this.caches.overheadTokens(ctx);
			const budgetTokens = messageBudget({
				contextWindow,
				maxTokens: model?.maxTokens,
				reserveTokens: config.reserveTokens,
				safetyMarginTokens: config.safetyMarginTokens,
				overheadTokens: system,
			});
			const used = usageBasedTokens(history, this.caches.sizer);
			const measuredTokens = used === undefined ? undefined : used - system;
			if (surelyWithinBudget(history, { budgetTokens, measuredTokens }, this.caches.bounds)) {
				// The first request will see this from text lengths alone: nothing to size.
				this.current = "ready";
				return;
			}
			this.current = "sizing";
			// Sizes learnt from the session's list, not from Pi's copy: the next pass checks every shape, even
			// when a request stops the warm-up half-way.
			this.caches.sizer.verifyNextPass();
			this.sizeChunk(generation, ctx, history, 0, { budgetTokens, measuredTokens });
		} catch {
			// A warm-up that fails only leaves the work to the first request, which reports its own errors.
			this.current = "stopped";
		}
	}

	/** Size history[from, from + chunk) at their positions; then the next chunk, or the trim itself. */
	private sizeChunk(generation: number, ctx: C, history: TranscriptMessage[], from: number, figures: Figures): void {
		if (generation !== this.generation) return;
		this.cancelStep = undefined;
		try {
			const { sizer, memo } = this.caches;
			const to = Math.min(history.length, from + WARM_UP_CHUNK_MESSAGES);
			for (let k = from; k < to; k++) sizer.tokens(history[k], k);
			if (to < history.length) {
				this.cancelStep = this.later(() => this.sizeChunk(generation, ctx, history, to, figures), 0);
				return;
			}
			const { config, shorten } = this.caches.settings(ctx);
			// The trim the next request would run, not recorded: segments, omission index and shortened texts.
			trimMessages(history, {
				...figures,
				cutStepTokens: config.cutStepTokens,
				sessionFile: ctx.sessionFile(),
				sizer,
				shorten,
				memo,
			});
			// That trim was a pass of its own: the request's pass after it checks every shape again.
			sizer.verifyNextPass();
			this.current = "ready";
		} catch {
			this.current = "stopped";
		}
	}
}

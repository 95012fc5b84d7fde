/**
 * context-trim's lifecycle state in one object: the size caches that carry from one request to the next,
 * the settings of the configuration in force, the last cut recorded in the session, which hook trims on
 * this Pi line. One method per Pi event it handles, each taking plain data and a ContextTrimContext (readings and
 * callbacks over one event's context), so both Pi lines' orders — `context` alone on 0.73; `context` then
 * `context_with_system` on 0.87+ (1.x) — are testable without Pi. index.ts only subscribes Pi's events.
 *
 * **Warm-up in idle time.** A resumed session's first request would size its whole history (on a cold JIT,
 * ~0.1–0.3 s for ~1,000 messages) and shorten its oversized texts while the person waits. So after
 * `session_start` (WARM_UP_DELAY_MS later, once Pi has finished starting) the session reads the branch's
 * messages from the session manager, sizes them a chunk per turn of the event loop and, when the history
 * is over budget, runs the trim it would run (without recording it): the size caches, the segments, the
 * omission index and the shortened texts are then ready for the first request, which only sizes what
 * is new. The caches are the same ones every request validates (a message is recognised at its position
 * by role, timestamp and shape, and the first pass after a warm-up checks every shape), so a request is
 * never answered from the warm-up's list, only sped up by it. A request that comes before the warm-up
 * has finished stops it and does the rest itself; `shutdown` (quit, /reload, /new, /resume, /fork) and a
 * new `sessionStarted` stop it too.
 *
 * The decisions live in ./trim.ts and ../shared/transcript/*.ts.
 */
import type { HeadroomConfig } from "../shared/host/config.ts";
import { surfaceFor } from "../shared/host/config.ts";
import type { ContextTrimRecord } from "../shared/host/details.ts";
import type { ArtifactStore } from "../shared/store/artifact-store.ts";
import { fingerprintAvailable, fingerprintError, fingerprintReady } from "../shared/text/fingerprint.ts";
import { estimateTokens } from "../shared/text/tokens.ts";
import { OmissionMemo } from "../shared/transcript/omission.ts";
import {
	type BoundMemo,
	messageBudget,
	type Sizer,
	surelyWithinBudget,
	TokenSizer,
	type TranscriptMessage,
	usageBasedTokens,
} from "../shared/transcript/plan.ts";
import { argumentsJson, systemMessageTokens, toolDeclarationTokens } from "../shared/transcript/size.ts";
import { type ShortenOptions, storedShortening } from "../shared/transcript/view.ts";
import { type TrimResult, trimKey, trimMessages, trimRecord, trimTranscript } from "./trim.ts";

/** System messages whose estimates are remembered (by their JSON): the prompt and its few patches. */
const SYSTEM_MEMO_ENTRIES = 64;

type TrimConfig = HeadroomConfig["contextTrim"];

/** A tool as Pi lists it (getAllTools): what its declaration costs in every request. */
export interface ToolInfo {
	name: string;
	description?: string;
	parameters?: unknown;
}

/**
 * One Pi event's context as the session sees it: readings and callbacks, each read when called (the
 * configuration and the model may change between two events, never within one call).
 */
export interface ContextTrimContext {
	/** The configuration in force (read now when none was read yet). */
	config(): HeadroomConfig;
	/** The artifact store shortened texts are saved in; may throw (then they say they were not saved). */
	store(): ArtifactStore;
	/** The model's context window and output limit, when there is a model. */
	model(): { contextWindow?: number; maxTokens?: number } | undefined;
	/** The context window Pi's usage reading names, when the model states none. */
	usageWindow(): number | undefined;
	/** Pi's system prompt (0.73: sent outside the message list). */
	systemPrompt(): string;
	/** The session file, named in the marker as the place of the full transcript. */
	sessionFile(): string | undefined;
	/** Whether this Pi line hands `context_with_system` the system messages (0.87+). */
	seesSystemMessages(): boolean;
	/**
	 * The messages of the session's branch as the next request will start (Pi's resumed history), read in
	 * idle time; undefined when the host cannot tell.
	 */
	history(): TranscriptMessage[] | undefined;
	/** Tell the person `context-trim: text`. */
	notify(text: string): void;
	/** notify, at most once per distinct text. */
	notifyOnce(text: string): void;
}

export interface ContextTrimSessionOptions {
	/** Names of the tools active now (their declarations go with every request). */
	activeTools(): string[];
	/** Every tool Pi knows. */
	allTools(): ToolInfo[];
	/** Append a trim record to the session, undefined when the host cannot (a stand-in of Pi's API). May throw. */
	record?: (data: ContextTrimRecord) => void;
	/** Runs `run` in `ms` (0: on the next turn of the event loop) and returns its cancel; default: unref'd timers. */
	later?: Later;
}

/** Schedules `run` in `ms` milliseconds (0: the next turn of the event loop); returns a cancel. */
export type Later = (run: () => void, ms: number) => () => void;

/**
 * Timers that never keep the process alive (a `pi -p` run exits when it is done). A timeout, not an immediate,
 * even for the next turn: an unref'd immediate scheduled from another one waits until something else wakes the
 * event loop (checked on Node 20 and Bun 1.4), while an unref'd timer runs when due.
 */
const unrefLater: Later = (run, ms) => {
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

/** What a request's hook returns: the messages to send instead, or nothing (send as is). */
export type TrimAnswer = { messages: TranscriptMessage[] } | undefined;

export class ContextTrimSession {
	private readonly sizer = new TokenSizer();
	private readonly memo = new OmissionMemo(this.sizer);
	/** surelyWithinBudget's bound of the history seen so far: later calls bound only the newest messages. */
	private readonly bounds: BoundMemo = { count: 0, tokens: 0 };
	/** Settings of the current configuration; made again after each configuration read. */
	private settings: { config: TrimConfig; shorten: ShortenOptions } | undefined;
	private tools = { key: "", tokens: 0 };
	private system = { text: "", tokens: 0 };
	private reportedError = false;
	/** Set once `context_with_system` ran: from then on it alone trims (Pi 0.87+). */
	private withSystemSeen = false;
	/** Estimates of system messages by their JSON: Pi hands a fresh copy on every call. */
	private readonly systemMemo = new Map<string, number>();
	/** The list the `context` phase of this request saw (0.87+): lets the split skip reading every role. */
	private conversation: TranscriptMessage[] | undefined;
	/** The last cut recorded in the session (trimKey): a record is appended only when it changes. */
	private recordedKey = "";
	/** The sizer for Pi's usage reading on a full transcript: system messages counted with their tools. */
	private readonly fullSizer: Sizer = {
		tokens: (message, index) =>
			message.role === "system" ? this.systemTokens(message) : this.sizer.tokens(message, index),
	};

	private readonly later: Later;
	/** Bumped by every warm-up start and stop: a scheduled step of an older warm-up does nothing. */
	private generation = 0;
	private cancelStep: (() => void) | undefined;
	private warm: WarmUpState = "none";

	constructor(private readonly options: ContextTrimSessionOptions) {
		this.later = options.later ?? unrefLater;
	}

	/** Where the idle-time warm-up is (see WarmUpState). */
	get warmUp(): WarmUpState {
		return this.warm;
	}

	/** Messages estimated so far (sizes found in the caches are not estimated again). */
	get estimatedMessages(): number {
		return this.sizer.estimated;
	}

	/** Pi's `session_start` (startup, resume, new, fork, reload): warm the caches for the first request in idle time. */
	sessionStarted(ctx: ContextTrimContext): void {
		this.stopWarmUp("waiting");
		const generation = this.generation;
		this.cancelStep = this.later(() => this.beginWarmUp(generation, ctx), WARM_UP_DELAY_MS);
	}

	/** Pi's `session_shutdown` (quit, /reload, /new, /resume, /fork): no work is left scheduled. */
	shutdown(): void {
		this.stopWarmUp("stopped");
	}

	private stopWarmUp(next: WarmUpState): void {
		this.generation++;
		this.cancelStep?.();
		this.cancelStep = undefined;
		this.warm = next;
	}

	/** A request came: a warm-up under way stops (the request sizes what is left; the caches hold at every step). */
	private requestBegins(): void {
		if (this.warm === "waiting" || this.warm === "sizing") this.stopWarmUp("stopped");
	}

	/** The warm-up's first step: the settings, the budget, the history; then sizing, a chunk per turn. */
	private beginWarmUp(generation: number, ctx: ContextTrimContext): void {
		if (generation !== this.generation) return;
		this.cancelStep = undefined;
		try {
			const { config } = this.setup(ctx);
			const model = ctx.model();
			const contextWindow = model?.contextWindow ?? ctx.usageWindow();
			const history = config.enabled && contextWindow ? ctx.history() : undefined;
			if (!history || history.length === 0 || !contextWindow) {
				this.warm = "ready";
				return;
			}
			// The budget as 0.73's hook computes it (prompt and tools beside the list); 0.87+ counts the same
			// things as system messages, so its cut differs at most by a quantised step (then the caches still hold).
			const system = this.overheadTokens(ctx);
			const budgetTokens = messageBudget({
				contextWindow,
				maxTokens: model?.maxTokens,
				reserveTokens: config.reserveTokens,
				safetyMarginTokens: config.safetyMarginTokens,
				overheadTokens: system,
			});
			const used = usageBasedTokens(history, this.sizer);
			const measuredTokens = used === undefined ? undefined : used - system;
			if (surelyWithinBudget(history, { budgetTokens, measuredTokens }, this.bounds)) {
				// The first request will see this from text lengths alone: nothing to size.
				this.warm = "ready";
				return;
			}
			this.warm = "sizing";
			// Sizes learnt from the session's list, not from Pi's copy: the next pass checks every shape, even
			// when a request stops the warm-up half-way.
			this.sizer.verifyNextPass();
			this.sizeChunk(generation, ctx, history, 0, { budgetTokens, measuredTokens });
		} catch {
			// A warm-up that fails only leaves the work to the first request, which reports its own errors.
			this.warm = "stopped";
		}
	}

	/** Size history[from, from + chunk) at their positions; then the next chunk, or the trim itself. */
	private sizeChunk(
		generation: number,
		ctx: ContextTrimContext,
		history: TranscriptMessage[],
		from: number,
		figures: { budgetTokens: number; measuredTokens: number | undefined },
	): void {
		if (generation !== this.generation) return;
		this.cancelStep = undefined;
		try {
			const to = Math.min(history.length, from + WARM_UP_CHUNK_MESSAGES);
			for (let k = from; k < to; k++) this.sizer.tokens(history[k], k);
			if (to < history.length) {
				this.cancelStep = this.later(() => this.sizeChunk(generation, ctx, history, to, figures), 0);
				return;
			}
			const { config, shorten } = this.setup(ctx);
			// The trim the next request would run, not recorded: segments, omission index and shortened texts.
			trimMessages(history, {
				...figures,
				cutStepTokens: config.cutStepTokens,
				sessionFile: ctx.sessionFile(),
				sizer: this.sizer,
				shorten,
				memo: this.memo,
			});
			// That trim was a pass of its own: the request's pass after it checks every shape again.
			this.sizer.verifyNextPass();
			this.warm = "ready";
		} catch {
			this.warm = "stopped";
		}
	}

	/** A configuration was read (session_start, or first use): settings are made again from it. */
	configChanged(): void {
		this.settings = undefined;
	}

	/**
	 * Pi's `context` event: the conversation without system messages. On 0.73 it is the request's only
	 * hook; on 0.87+ `context_with_system` follows with the same message objects, and trims.
	 */
	context(messages: TranscriptMessage[], ctx: ContextTrimContext): TrimAnswer | Promise<TrimAnswer> {
		this.requestBegins();
		if (this.withSystemSeen || ctx.seesSystemMessages()) {
			// Pi 0.87+ calls context_with_system next with the same message objects plus the system ones.
			this.conversation = messages;
			return undefined;
		}
		return this.whenSized(messages, ctx, false);
	}

	/** Pi 0.87+'s `context_with_system` event: the whole transcript, system messages included. */
	contextWithSystem(messages: TranscriptMessage[], ctx: ContextTrimContext): TrimAnswer | Promise<TrimAnswer> {
		this.requestBegins();
		this.withSystemSeen = true;
		// used for this request only, and not kept: it holds Pi's copy of the whole history
		const seen = this.conversation;
		this.conversation = undefined;
		return this.whenSized(messages, ctx, true, seen);
	}

	private systemTokens = (message: TranscriptMessage): number => {
		const key = argumentsJson(message);
		const hit = this.systemMemo.get(key);
		if (hit !== undefined) return hit;
		const tokens = systemMessageTokens(message);
		if (this.systemMemo.size >= SYSTEM_MEMO_ENTRIES) this.systemMemo.clear();
		this.systemMemo.set(key, tokens);
		return tokens;
	};

	/**
	 * surelyWithinBudget for a full transcript (context_with_system), with trimTranscript's figures: the
	 * system messages counted in full, the conversation bounded against what is left of the budget.
	 */
	private withinBudget(messages: TranscriptMessage[], requestBudget: number, measured: number | undefined): boolean {
		let system = 0;
		const conversation: TranscriptMessage[] = [];
		for (const message of messages) {
			if (message.role === "system") system += this.systemTokens(message);
			else conversation.push(message);
		}
		return surelyWithinBudget(
			conversation,
			{
				budgetTokens: Math.max(0, requestBudget - system),
				measuredTokens: measured === undefined ? undefined : measured - system,
			},
			this.bounds,
		);
	}

	private setup(ctx: ContextTrimContext): { config: TrimConfig; shorten: ShortenOptions } {
		if (this.settings) return this.settings;
		const config = ctx.config();
		const segment = surfaceFor(config, "transcript.segment");
		const headShare = segment.headShare;
		// A tool's output is a log by the kinds tool-artifacts uses (its name, or toolArtifacts.toolClasses).
		const toolClasses = config.toolArtifacts.toolClasses;
		let shorten: ShortenOptions;
		try {
			shorten = storedShortening(ctx.store(), headShare, segment, toolClasses);
		} catch (error) {
			// The configuration still applies; shortened texts then say they were not saved.
			shorten = { headShare, surface: segment, toolClasses };
			ctx.notifyOnce(`shortened texts cannot be stored (${String(error)}); they say so`);
		}
		this.settings = { config: config.contextTrim, shorten };
		return this.settings;
	}

	/** System prompt and tool definitions: sent with every request, outside the message list. */
	private overheadTokens(ctx: ContextTrimContext): number {
		const prompt = ctx.systemPrompt();
		if (prompt !== this.system.text) this.system = { text: prompt, tokens: estimateTokens(prompt) };
		const active = this.options.activeTools();
		const key = active.join("\n");
		if (key !== this.tools.key) {
			const wanted = new Set(active);
			let tokens = 0;
			for (const tool of this.options.allTools()) {
				if (!wanted.has(tool.name)) continue;
				tokens += toolDeclarationTokens(tool);
			}
			this.tools = { key, tokens };
		}
		return this.system.tokens + this.tools.tokens;
	}

	/** Synchronous once the fingerprint runs; the first call of a process may wait for it to start. */
	private whenSized(
		messages: TranscriptMessage[],
		ctx: ContextTrimContext,
		seesSystem: boolean,
		seen?: TranscriptMessage[],
	): TrimAnswer | Promise<TrimAnswer> {
		if (fingerprintAvailable()) return this.trim(messages, ctx, seesSystem, seen);
		return fingerprintReady().then((ok) => {
			if (!ok && !this.reportedError) {
				this.reportedError = true;
				ctx.notify(`message sizes are recomputed on every call (${fingerprintError()})`);
			}
			return this.trim(messages, ctx, seesSystem, seen);
		});
	}

	/** Record what the trim did, in a session entry the model never sees (the /headroom ledger reads it). */
	private record(
		ctx: ContextTrimContext,
		result: TrimResult,
		messages: TranscriptMessage[],
		systemTokens: number,
		budgetTokens: number,
	): void {
		const key = trimKey(result);
		// A host without appendEntry (a stand-in of Pi's API) has no session to record in.
		const append = this.options.record;
		if (key === this.recordedKey || !append) return;
		this.recordedKey = key;
		const conversation = messages.some((m) => m.role === "system")
			? messages.filter((m) => m.role !== "system")
			: messages;
		const data = trimRecord(result, conversation, { systemTokens, budgetTokens });
		try {
			append(data);
		} catch (error) {
			ctx.notifyOnce(`could not record a trim in the session (${String(error)})`);
		}
	}

	/**
	 * `seesSystem`: the list is the whole transcript, system messages included (context_with_system);
	 * `seen`: the conversation the `context` phase of the same request saw.
	 */
	private trim(
		messages: TranscriptMessage[],
		ctx: ContextTrimContext,
		seesSystem: boolean,
		seen?: TranscriptMessage[],
	): TrimAnswer {
		try {
			const { config, shorten } = this.setup(ctx);
			if (!config.enabled) return undefined;
			const model = ctx.model();
			const contextWindow = model?.contextWindow ?? ctx.usageWindow();
			if (!contextWindow) return undefined;
			const budget = (overheadTokens: number) =>
				messageBudget({
					contextWindow,
					maxTokens: model?.maxTokens,
					reserveTokens: config.reserveTokens,
					safetyMarginTokens: config.safetyMarginTokens,
					overheadTokens,
				});
			const common = {
				cutStepTokens: config.cutStepTokens,
				sessionFile: ctx.sessionFile(),
				sizer: this.sizer,
				shorten,
				memo: this.memo,
			};
			let result: TrimResult;
			let system: number;
			if (seesSystem) {
				const measuredTokens = usageBasedTokens(messages, this.fullSizer);
				if (this.withinBudget(messages, budget(0), measuredTokens)) return undefined;
				const full = trimTranscript(messages, {
					...common,
					requestBudgetTokens: budget(0),
					measuredTokens,
					systemTokens: this.systemTokens,
					conversation: seen,
				});
				result = full;
				system = full.systemTokens;
			} else {
				system = this.overheadTokens(ctx);
				const used = usageBasedTokens(messages, this.sizer);
				const budgetTokens = budget(system);
				const measuredTokens = used === undefined ? undefined : used - system;
				// Far within budget by a bound read from text lengths: nothing to size (the first call of a resumed session).
				if (surelyWithinBudget(messages, { budgetTokens, measuredTokens }, this.bounds)) return undefined;
				result = trimMessages(messages, { ...common, budgetTokens, measuredTokens });
			}
			if (!result.trimmed) return undefined;
			this.record(ctx, result, messages, system, budget(0));
			return { messages: result.messages };
		} catch (error) {
			// Sending the untrimmed history is the safe failure: the provider reports an overflow plainly.
			if (!this.reportedError) ctx.notify(`left this request untrimmed (${String(error)})`);
			this.reportedError = true;
			return undefined;
		}
	}
}

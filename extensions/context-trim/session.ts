/**
 * context-trim's lifecycle state in one object: the size caches that carry from one request to the next,
 * the settings of the configuration in force, the last cut recorded in the session, which hook trims on
 * this Pi line. One method per Pi event it handles, each taking plain data and a ContextTrimContext (readings and
 * callbacks over one event's context), so both Pi lines' orders — `context` alone on 0.73; `context` then
 * `context_with_system` on 0.87+ (1.x) — are testable without Pi. index.ts only subscribes Pi's events.
 *
 * After `session_start` the session warms its caches for the first request in idle time (./warm-up.ts, which
 * fills the same caches every request validates and stops when a request comes first).
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
import { IdleWarmUp, type Later, type TrimSettings, type WarmUpReadings, type WarmUpState } from "./warm-up.ts";

/** System messages whose estimates are remembered (by their JSON): the prompt and its few patches. */
const SYSTEM_MEMO_ENTRIES = 64;

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
export interface ContextTrimContext extends WarmUpReadings {
	/** The configuration in force (read now when none was read yet). */
	config(): HeadroomConfig;
	/** The artifact store shortened texts are saved in; may throw (then they say they were not saved). */
	store(): ArtifactStore;
	/** Pi's system prompt (0.73: sent outside the message list). */
	systemPrompt(): string;
	/** Whether this Pi line hands `context_with_system` the system messages (0.87+). */
	seesSystemMessages(): boolean;
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

/** What a request's hook returns: the messages to send instead, or nothing (send as is). */
export type TrimAnswer = { messages: TranscriptMessage[] } | undefined;

export class ContextTrimSession {
	private readonly sizer = new TokenSizer();
	private readonly memo = new OmissionMemo(this.sizer);
	/** surelyWithinBudget's bound of the history seen so far: later calls bound only the newest messages. */
	private readonly bounds: BoundMemo = { count: 0, tokens: 0 };
	/** Settings of the current configuration; made again after each configuration read. */
	private settings: TrimSettings | undefined;
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

	private readonly warm: IdleWarmUp<ContextTrimContext>;

	constructor(private readonly options: ContextTrimSessionOptions) {
		this.warm = new IdleWarmUp<ContextTrimContext>(
			{
				sizer: this.sizer,
				bounds: this.bounds,
				memo: this.memo,
				settings: (ctx) => this.setup(ctx),
				overheadTokens: (ctx) => this.overheadTokens(ctx),
			},
			options.later,
		);
	}

	/** Where the idle-time warm-up is (see WarmUpState). */
	get warmUp(): WarmUpState {
		return this.warm.state;
	}

	/** Messages estimated so far (sizes found in the caches are not estimated again). */
	get estimatedMessages(): number {
		return this.sizer.estimated;
	}

	/** Pi's `session_start` (startup, resume, new, fork, reload): warm the caches for the first request in idle time. */
	sessionStarted(ctx: ContextTrimContext): void {
		this.warm.start(ctx);
	}

	/** Pi's `session_shutdown` (quit, /reload, /new, /resume, /fork): no work is left scheduled. */
	shutdown(): void {
		this.warm.shutdown();
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
		this.warm.requestBegins();
		if (this.withSystemSeen || ctx.seesSystemMessages()) {
			// Pi 0.87+ calls context_with_system next with the same message objects plus the system ones.
			this.conversation = messages;
			return undefined;
		}
		return this.whenSized(messages, ctx, false);
	}

	/** Pi 0.87+'s `context_with_system` event: the whole transcript, system messages included. */
	contextWithSystem(messages: TranscriptMessage[], ctx: ContextTrimContext): TrimAnswer | Promise<TrimAnswer> {
		this.warm.requestBegins();
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

	private setup(ctx: ContextTrimContext): TrimSettings {
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

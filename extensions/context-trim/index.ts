/**
 * context-trim: before each model call, an over-budget history is sent as head + marker + tail
 * at segment boundaries (a tool call never without its results), with an index of what was left
 * out and where the full transcript is. Pi hands a deep copy and uses what we return for this one
 * call only; the stored session is never changed.
 *
 * The whole request counts: system prompt + tool declarations + messages. On Pi 0.87+ (1.x) the hook is
 * `context_with_system`, whose list holds the system messages that carry the prompt, its patches and the
 * tool declarations, so they are counted as sent and kept in place; on 0.73 it is `context`, with the
 * prompt (`ctx.getSystemPrompt()`) and the active tools' schemas counted beside the list.
 *
 * Thin adapter: the decisions live in ./trim.ts and ../shared/transcript*.ts.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { bootExtension } from "../shared/host/bootstrap.ts";
import { type HeadroomConfig, surfaceFor } from "../shared/host/config.ts";
import { CONTEXT_TRIM_ENTRY } from "../shared/host/details.ts";
import { hostSeesSystemMessages, onContextWithSystem } from "../shared/host/pi-host.ts";
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

export default function contextTrim(pi: ExtensionAPI): void {
	const host = bootExtension(pi, "context-trim");
	const sizer = new TokenSizer();
	const memo = new OmissionMemo(sizer);
	/** surelyWithinBudget's bound of the history seen so far: later calls bound only the newest messages. */
	const bounds: BoundMemo = { count: 0, tokens: 0 };
	/** Settings of the current configuration; made again after each reload (session_start). */
	let settings: { config: TrimConfig; shorten: ShortenOptions } | undefined;
	host.onConfig(() => {
		settings = undefined;
	});
	let tools = { key: "", tokens: 0 };
	let system = { text: "", tokens: 0 };
	let reportedError = false;
	/** Set once `context_with_system` ran: from then on it alone trims (Pi 0.87+). */
	let withSystemSeen = false;
	/** Estimates of system messages by their JSON: Pi hands a fresh copy on every call. */
	const systemMemo = new Map<string, number>();
	const systemTokens = (message: TranscriptMessage): number => {
		const key = argumentsJson(message);
		const hit = systemMemo.get(key);
		if (hit !== undefined) return hit;
		const tokens = systemMessageTokens(message);
		if (systemMemo.size >= SYSTEM_MEMO_ENTRIES) systemMemo.clear();
		systemMemo.set(key, tokens);
		return tokens;
	};
	/**
	 * surelyWithinBudget for a full transcript (context_with_system), with trimTranscript's figures: the
	 * system messages counted in full, the conversation bounded against what is left of the budget.
	 */
	const withinBudget = (messages: TranscriptMessage[], requestBudget: number, measured: number | undefined) => {
		let system = 0;
		const conversation: TranscriptMessage[] = [];
		for (const message of messages) {
			if (message.role === "system") system += systemTokens(message);
			else conversation.push(message);
		}
		return surelyWithinBudget(
			conversation,
			{
				budgetTokens: Math.max(0, requestBudget - system),
				measuredTokens: measured === undefined ? undefined : measured - system,
			},
			bounds,
		);
	};
	/** The sizer for Pi's usage reading on a full transcript: system messages counted with their tools. */
	const fullSizer: Sizer = {
		tokens: (message, index) => (message.role === "system" ? systemTokens(message) : sizer.tokens(message, index)),
	};

	const setup = (ctx: ExtensionContext) => {
		if (settings) return settings;
		const config = host.config(ctx);
		const segment = surfaceFor(config, "transcript.segment");
		const headShare = segment.headShare;
		// A tool's output is a log by the kinds tool-artifacts uses (its name, or toolArtifacts.toolClasses).
		const toolClasses = config.toolArtifacts.toolClasses;
		let shorten: ShortenOptions;
		try {
			shorten = storedShortening(host.store(), headShare, segment, toolClasses);
		} catch (error) {
			// The configuration still applies; shortened texts then say they were not saved.
			shorten = { headShare, surface: segment, toolClasses };
			host.notifyOnce(ctx, `shortened texts cannot be stored (${String(error)}); they say so`);
		}
		settings = { config: config.contextTrim, shorten };
		return settings;
	};

	/** System prompt and tool definitions: sent with every request, outside the message list. */
	const overheadTokens = (ctx: ExtensionContext): number => {
		const prompt = ctx.getSystemPrompt();
		if (prompt !== system.text) system = { text: prompt, tokens: estimateTokens(prompt) };
		const active = pi.getActiveTools();
		const key = active.join("\n");
		if (key !== tools.key) {
			const wanted = new Set(active);
			let tokens = 0;
			for (const tool of pi.getAllTools()) {
				if (!wanted.has(tool.name)) continue;
				tokens += toolDeclarationTokens(tool);
			}
			tools = { key, tokens };
		}
		return system.tokens + tools.tokens;
	};

	/** Synchronous once the fingerprint runs; the first call of a process may wait for it to start. */
	const whenSized = (
		event: { messages: unknown[] },
		ctx: ExtensionContext,
		seesSystem: boolean,
		seen?: TranscriptMessage[],
	) => {
		if (fingerprintAvailable()) return trim(event, ctx, seesSystem, seen);
		return fingerprintReady().then((ok) => {
			if (!ok && !reportedError) {
				reportedError = true;
				host.notify(ctx, `message sizes are recomputed on every call (${fingerprintError()})`);
			}
			return trim(event, ctx, seesSystem, seen);
		});
	};
	// One hook trims per Pi line: 0.87+ runs `context` without the system messages, then
	// `context_with_system` with them (0.73 never emits it).
	/** The list the `context` phase of this request saw (0.87+): lets the split skip reading every role. */
	let conversation: TranscriptMessage[] | undefined;
	onContextWithSystem<ExtensionContext>(pi, (event, ctx) => {
		withSystemSeen = true;
		// used for this request only, and not kept: it holds Pi's copy of the whole history
		const seen = conversation;
		conversation = undefined;
		return whenSized(event, ctx, true, seen);
	});
	pi.on("context", (event, ctx) => {
		if (withSystemSeen || hostSeesSystemMessages(ctx)) {
			// Pi 0.87+ calls context_with_system next with the same message objects plus the system ones.
			conversation = event.messages as unknown as TranscriptMessage[];
			return undefined;
		}
		type Result = { messages: typeof event.messages } | undefined;
		return whenSized(event, ctx, false) as Result | Promise<Result>;
	});

	/** The last cut recorded in the session (trimKey): a record is appended only when it changes. */
	let recordedKey = "";
	/** Record what the trim did, in a session entry the model never sees (the /headroom ledger reads it). */
	const record = (
		ctx: ExtensionContext,
		result: TrimResult,
		messages: TranscriptMessage[],
		systemTokens: number,
		budgetTokens: number,
	) => {
		const key = trimKey(result);
		// A host without appendEntry (a stand-in of Pi's API) has no session to record in.
		if (key === recordedKey || typeof pi.appendEntry !== "function") return;
		recordedKey = key;
		const conversation = messages.some((m) => m.role === "system")
			? messages.filter((m) => m.role !== "system")
			: messages;
		const data = trimRecord(result, conversation, { systemTokens, budgetTokens });
		try {
			pi.appendEntry(CONTEXT_TRIM_ENTRY, data);
		} catch (error) {
			host.notifyOnce(ctx, `could not record a trim in the session (${String(error)})`);
		}
	};

	/**
	 * `seesSystem`: the list is the whole transcript, system messages included (context_with_system);
	 * `seen`: the conversation the `context` phase of the same request saw.
	 */
	const trim = (
		event: { messages: unknown[] },
		ctx: ExtensionContext,
		seesSystem: boolean,
		seen?: TranscriptMessage[],
	) => {
		try {
			const { config, shorten } = setup(ctx);
			if (!config.enabled) return undefined;
			const contextWindow = ctx.model?.contextWindow ?? ctx.getContextUsage()?.contextWindow;
			if (!contextWindow) return undefined;
			const budget = (overheadTokens: number) =>
				messageBudget({
					contextWindow,
					maxTokens: ctx.model?.maxTokens,
					reserveTokens: config.reserveTokens,
					safetyMarginTokens: config.safetyMarginTokens,
					overheadTokens,
				});
			const messages = event.messages as unknown as TranscriptMessage[];
			const common = {
				cutStepTokens: config.cutStepTokens,
				sessionFile: ctx.sessionManager.getSessionFile(),
				sizer,
				shorten,
				memo,
			};
			let result: TrimResult;
			let system: number;
			if (seesSystem) {
				const measuredTokens = usageBasedTokens(messages, fullSizer);
				if (withinBudget(messages, budget(0), measuredTokens)) return undefined;
				const full = trimTranscript(messages, {
					...common,
					requestBudgetTokens: budget(0),
					measuredTokens,
					systemTokens,
					conversation: seen,
				});
				result = full;
				system = full.systemTokens;
			} else {
				system = overheadTokens(ctx);
				const used = usageBasedTokens(messages, sizer);
				const budgetTokens = budget(system);
				const measuredTokens = used === undefined ? undefined : used - system;
				// Far within budget by a bound read from text lengths: nothing to size (the first call of a resumed session).
				if (surelyWithinBudget(messages, { budgetTokens, measuredTokens }, bounds)) return undefined;
				result = trimMessages(messages, { ...common, budgetTokens, measuredTokens });
			}
			if (!result.trimmed) return undefined;
			record(ctx, result, messages, system, budget(0));
			return { messages: result.messages as unknown as typeof event.messages };
		} catch (error) {
			// Sending the untrimmed history is the safe failure: the provider reports an overflow plainly.
			if (!reportedError) host.notify(ctx, `left this request untrimmed (${String(error)})`);
			reportedError = true;
			return undefined;
		}
	};
}

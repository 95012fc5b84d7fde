/**
 * context-trim: before each model call, an over-budget history is sent as head + marker + tail
 * at segment boundaries (a tool call never without its results), with an index of what was left
 * out and where the full transcript is. Pi's `context` event hands a deep copy and uses what we
 * return for this one call only; the stored session is never changed.
 *
 * Thin adapter: the decisions live in ./trim.ts and ../shared/transcript*.ts.
 */
import type { ContextEvent, ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { bootExtension } from "../shared/host/bootstrap.ts";
import { type HeadroomConfig, surfaceFor } from "../shared/host/config.ts";
import { fingerprintAvailable, fingerprintError, fingerprintReady } from "../shared/text/fingerprint.ts";
import { estimateTokens } from "../shared/text/tokens.ts";
import { messageBudget, TokenSizer, type TranscriptMessage, usageBasedTokens } from "../shared/transcript/plan.ts";
import { OmissionMemo, type ShortenOptions, storedShortening } from "../shared/transcript/view.ts";
import { trimMessages } from "./trim.ts";

/** Tokens charged per tool definition besides its JSON (function wrapper, type). */
const TOOL_DEFINITION_OVERHEAD_TOKENS = 8;

type TrimConfig = HeadroomConfig["contextTrim"];

export default function contextTrim(pi: ExtensionAPI): void {
	const host = bootExtension(pi, "context-trim");
	const sizer = new TokenSizer();
	const memo = new OmissionMemo(sizer);
	/** Settings of the current configuration; made again after each reload (session_start). */
	let settings: { config: TrimConfig; shorten: ShortenOptions } | undefined;
	host.onConfig(() => {
		settings = undefined;
	});
	let tools = { key: "", tokens: 0 };
	let system = { text: "", tokens: 0 };
	let reportedError = false;

	const setup = (ctx: ExtensionContext) => {
		if (settings) return settings;
		const config = host.config(ctx);
		const segment = surfaceFor(config, "transcript.segment");
		const headShare = segment.headShare;
		let shorten: ShortenOptions;
		try {
			shorten = storedShortening(host.store(), headShare, segment);
		} catch (error) {
			// The configuration still applies; shortened texts then say they were not saved.
			shorten = { headShare, surface: segment };
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
				const definition = { name: tool.name, description: tool.description, parameters: tool.parameters };
				tokens += TOOL_DEFINITION_OVERHEAD_TOKENS + estimateTokens(JSON.stringify(definition));
			}
			tools = { key, tokens };
		}
		return system.tokens + tools.tokens;
	};

	/** Synchronous once the fingerprint runs; the first call of a process may wait for it to start. */
	pi.on("context", (event, ctx) => {
		if (fingerprintAvailable()) return trim(event, ctx);
		return fingerprintReady().then((ok) => {
			if (!ok && !reportedError) {
				reportedError = true;
				host.notify(ctx, `message sizes are recomputed on every call (${fingerprintError()})`);
			}
			return trim(event, ctx);
		});
	});

	const trim = (event: ContextEvent, ctx: ExtensionContext) => {
		try {
			const { config, shorten } = setup(ctx);
			if (!config.enabled) return undefined;
			const contextWindow = ctx.model?.contextWindow ?? ctx.getContextUsage()?.contextWindow;
			if (!contextWindow) return undefined;
			const overhead = overheadTokens(ctx);
			const budgetTokens = messageBudget({
				contextWindow,
				maxTokens: ctx.model?.maxTokens,
				reserveTokens: config.reserveTokens,
				safetyMarginTokens: config.safetyMarginTokens,
				overheadTokens: overhead,
			});
			const messages = event.messages as unknown as TranscriptMessage[];
			const used = usageBasedTokens(messages, sizer);
			const result = trimMessages(messages, {
				budgetTokens,
				measuredTokens: used === undefined ? undefined : used - overhead,
				cutStepTokens: config.cutStepTokens,
				sessionFile: ctx.sessionManager.getSessionFile(),
				sizer,
				shorten,
				memo,
			});
			if (!result.trimmed) return undefined;
			return { messages: result.messages as unknown as typeof event.messages };
		} catch (error) {
			// Sending the untrimmed history is the safe failure: the provider reports an overflow plainly.
			if (!reportedError) host.notify(ctx, `left this request untrimmed (${String(error)})`);
			reportedError = true;
			return undefined;
		}
	};
}

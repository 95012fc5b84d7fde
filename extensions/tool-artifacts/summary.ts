/**
 * The optional summary model: which model writes a stub's body, and one bounded call to it.
 *
 * Choice (pure): a configured "provider/id"; else a known cheap model of the session's provider
 * that the registry has with auth; else a model of that provider whose id reads as a cheap tier
 * ("mini", "haiku", "flash", "nano", "lite", "small"); else the session's own model.
 *
 * Call: the host's one-off model call (Pi 1.x `ctx.modelRegistry.complete()`, 0.73 pi-ai's `complete()`,
 * prompt caching off; see shared/host/pi-host.ts) with temperature 0.3, at most 2,048 output tokens, no retries, an
 * abort signal tied to both the turn's signal and a timeout, and a race against that timeout in
 * case a provider ignores the signal. Every failure comes back as a reason, never as a throw or a hang.
 */
import type { Api, AssistantMessage, Context, Model, ProviderStreamOptions } from "@mariozechner/pi-ai";
import { type CallUsage, usageOfReply } from "../shared/host/model-usage.ts";
import { clampTimerMs } from "../shared/host/timers.ts";
import { sanitizeReason } from "../shared/projection/projection.ts";
import type { OutputClass } from "./classify.ts";
import { SUMMARY_FAILURE, summarySystemPrompt, summaryUserPrompt } from "./prompt.ts";

/** Sampling temperature of summary calls. */
export const SUMMARY_TEMPERATURE = 0.3;
/** Output token cap of summary calls. */
export const SUMMARY_MAX_TOKENS = 2048;
/** Characters of tool output sent to the summary model at most. */
export const SUMMARY_MAX_INPUT_CHARS = 50_000;
/** Default timeout of one summary call, in milliseconds. */
export const SUMMARY_TIMEOUT_MS = 30_000;

/**
 * Known cheap models per provider, most preferred first. Short on purpose: the name heuristic
 * below covers the rest, and a configured model overrides all of it.
 */
export const KNOWN_CHEAP_MODELS: Readonly<Record<string, readonly string[]>> = {
	anthropic: ["claude-haiku-4-5", "claude-3-5-haiku-latest"],
	openai: ["gpt-5-mini", "gpt-4.1-mini", "gpt-4o-mini", "gpt-5-nano"],
	google: ["gemini-2.5-flash-lite", "gemini-2.5-flash", "gemini-2.0-flash"],
	mistral: ["mistral-small-latest"],
	groq: ["llama-3.1-8b-instant"],
	xai: ["grok-3-mini"],
};

/** Id words that mark a provider's cheap tier. */
const CHEAP_WORDS = /(?:^|[-_./:])(mini|haiku|flash|nano|lite|small)(?:$|[-_./:\d])/i;

/** A model as the chooser sees it. */
export interface ModelRef {
	provider: string;
	id: string;
}

/** The chooser's answer. */
export interface SummaryModelChoice {
	/** The model to call. */
	model: ModelRef;
	/** Why this one, for logs and tests. */
	reason: "configured" | "known-cheap" | "cheap-name" | "session";
}

/** Pure: pick the summary model. `available` = the registry's models that have auth. */
export function chooseSummaryModel(input: {
	configured?: string;
	session?: ModelRef;
	available: readonly ModelRef[];
}): SummaryModelChoice | { error: string } {
	if (input.configured) {
		const slash = input.configured.indexOf("/");
		if (slash <= 0 || slash === input.configured.length - 1) {
			return { error: `summary model "${input.configured}" is not of the form provider/id` };
		}
		const provider = input.configured.slice(0, slash);
		const id = input.configured.slice(slash + 1);
		const found = input.available.find((m) => m.provider === provider && m.id === id);
		if (!found) return { error: `summary model "${input.configured}" is not in the model registry (or has no auth)` };
		return { model: found, reason: "configured" };
	}
	const session = input.session;
	if (!session) return { error: "no session model to derive a summary model from" };
	const sameProvider = input.available.filter((m) => m.provider === session.provider);
	for (const id of KNOWN_CHEAP_MODELS[session.provider] ?? []) {
		const found = sameProvider.find((m) => m.id === id);
		if (found) return { model: found, reason: "known-cheap" };
	}
	const cheap = sameProvider
		.filter((m) => CHEAP_WORDS.test(m.id) && !/preview|exp/i.test(m.id))
		.sort((a, b) => a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
	if (cheap.length > 0) return { model: cheap[0], reason: "cheap-name" };
	return { model: session, reason: "session" };
}

/** What a summary attempt produced. */
export type SummaryOutcome =
	| {
			ok: true;
			/** The summary text (trimmed). */
			text: string;
			/** "provider/id" of the model that wrote it. */
			model: string;
			/** Tokens and cost of the call (recorded in the stub's `details.headroom.usage`). */
			usage?: CallUsage;
	  }
	| {
			ok: false;
			/** Why not, in words for the stub. */
			reason: string;
	  };

/** A one-off `complete` (the host's, through shared/host/pi-host.ts; injected so tests can script it). */
export type CompleteFn = (
	model: Model<Api>,
	context: Context,
	options?: ProviderStreamOptions,
) => Promise<AssistantMessage>;

/** One summary request, already cut to size. */
export interface SummaryRequest {
	kind: OutputClass;
	tool: string;
	/** The call's arguments as short text. */
	args: string;
	/** The output to summarise, at most SUMMARY_MAX_INPUT_CHARS characters. */
	output: string;
	/** True when `output` is a head+tail projection of a longer text. */
	cut: boolean;
	/** True when `output` leads with the notable lines of the whole text (then head and tail). */
	notable?: boolean;
}

/** Call options of a summary. */
export interface SummaryCallOptions {
	model: Model<Api>;
	apiKey?: string;
	headers?: Record<string, string>;
	timeoutMs: number;
	temperature: number;
	maxTokens: number;
	/** The turn's abort signal (Esc). */
	signal?: AbortSignal;
	complete: CompleteFn;
}

/** Ask the model for a summary; any failure → `{ok:false, reason}` within about `timeoutMs`. */
export async function summarize(request: SummaryRequest, options: SummaryCallOptions): Promise<SummaryOutcome> {
	if (options.signal?.aborted) return { ok: false, reason: SUMMARY_FAILURE.aborted };
	const controller = new AbortController();
	let timedOut = false;
	const onAbort = () => controller.abort();
	options.signal?.addEventListener("abort", onAbort, { once: true });
	let timer: ReturnType<typeof setTimeout> | undefined;
	const deadline = new Promise<"timeout">((resolve) => {
		timer = setTimeout(() => {
			timedOut = true;
			controller.abort();
			resolve("timeout");
		}, clampTimerMs(options.timeoutMs));
	});
	const context: Context = {
		systemPrompt: summarySystemPrompt(request.kind),
		messages: [
			{
				role: "user",
				content: [{ type: "text", text: summaryUserPrompt(request) }],
				timestamp: Date.now(),
			},
		],
	};
	const call = options
		.complete(options.model, context, {
			temperature: options.temperature,
			maxTokens: Math.min(options.maxTokens, options.model.maxTokens || options.maxTokens),
			signal: controller.signal,
			apiKey: options.apiKey,
			headers: options.headers,
			maxRetries: 0,
		})
		.then(
			(message) => ({ message }),
			(error: unknown) => ({ error }),
		);
	try {
		const settled = await Promise.race([call, deadline]);
		if (settled === "timeout" || timedOut) return { ok: false, reason: SUMMARY_FAILURE.timeout(options.timeoutMs) };
		if (options.signal?.aborted) return { ok: false, reason: SUMMARY_FAILURE.aborted };
		if ("error" in settled) return { ok: false, reason: SUMMARY_FAILURE.http(sanitizeReason(String(settled.error))) };
		const message = settled.message;
		if (message.stopReason === "aborted") return { ok: false, reason: SUMMARY_FAILURE.aborted };
		if (message.stopReason === "error") {
			return { ok: false, reason: SUMMARY_FAILURE.http(sanitizeReason(message.errorMessage ?? "unknown error")) };
		}
		const text = (Array.isArray(message.content) ? message.content : [])
			.filter((part): part is { type: "text"; text: string } => part?.type === "text" && typeof part.text === "string")
			.map((part) => part.text)
			.join("")
			.trim();
		if (text.length === 0) return { ok: false, reason: SUMMARY_FAILURE.empty };
		return {
			ok: true,
			text,
			model: `${options.model.provider}/${options.model.id}`,
			usage: usageOfReply(message.usage),
		};
	} finally {
		if (timer) clearTimeout(timer);
		options.signal?.removeEventListener("abort", onAbort);
	}
}

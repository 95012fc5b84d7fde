/**
 * The pure core of context-trim: the message list Pi is about to send → the list to send instead.
 * Within budget the input comes back as is; over budget it is the shared retention plan (head +
 * marker + tail at segment boundaries, oversized texts as head+tail) rendered as messages.
 * The message budget formula (messageBudget) lives in the shared transcript module so a forked
 * child's budget can be computed the same way.
 */

import type { ContextTrimRecord } from "../shared/host/details.ts";
import type { OmissionIndex, OmissionMemo } from "../shared/transcript/omission.ts";
import {
	DEFAULT_MARKER_RESERVE_TOKENS,
	estimateMessageTokens,
	MESSAGE_OVERHEAD_TOKENS,
	planRetention,
	type RetentionOptions,
	type RetentionPlan,
	type Sizer,
	type TranscriptMessage,
} from "../shared/transcript/plan.ts";
import { buildView, type ShortenOptions } from "../shared/transcript/view.ts";
import { MARKER_CUSTOM_TYPE, renderTrimMarker } from "./prompt.ts";

export interface TrimOptions extends RetentionOptions {
	/** The session file, named in the marker as the place of the full transcript. */
	sessionFile?: string;
	/** Sizes messages (a TokenSizer keeps estimates across calls). */
	sizer?: Sizer;
	/** How oversized texts are shortened (default: the projection without a stored copy). */
	shorten?: ShortenOptions;
	/** Reuses the omission index while the cut is stable (built on the same TokenSizer as `sizer`). */
	memo?: OmissionMemo;
}

export interface TrimResult {
	/** The list to send: the input array itself when nothing was trimmed. */
	messages: TranscriptMessage[];
	/** True when something was left out or shortened (then exactly one marker message is in `messages`). */
	trimmed: boolean;
	/** The retention plan followed. */
	plan: RetentionPlan;
	/** The marker text, when trimmed. */
	marker?: string;
	/** What was left out and shortened, when trimmed. */
	omission?: OmissionIndex;
	/** For each message of `messages`: its index in the input, -1 for the marker, -2 for a system message (set when trimmed). */
	sources?: number[];
}

/** The last marker rendered for each omission index (an OmissionMemo hands the same index back while the cut holds). */
const renderedMarkers = new WeakMap<OmissionIndex, { sessionFile?: string; maxTokens: number; text: string }>();

/** renderTrimMarker, remembered for the same index object, session file and reserve. */
function markerFor(omission: OmissionIndex, sessionFile: string | undefined, maxTokens: number): string {
	const hit = renderedMarkers.get(omission);
	if (hit && hit.sessionFile === sessionFile && hit.maxTokens === maxTokens) return hit.text;
	const text = renderTrimMarker(omission, sessionFile, maxTokens);
	renderedMarkers.set(omission, { sessionFile, maxTokens, text });
	return text;
}

/** Trim `messages` to the budget; never mutates the input. */
export function trimMessages(messages: TranscriptMessage[], options: TrimOptions): TrimResult {
	const plan = planRetention(messages, options, options.sizer);
	if (!plan.trimmed) return { messages, trimmed: false, plan };
	const view = buildView(messages, plan, options.shorten, options.memo);
	const reserve = options.markerReserveTokens ?? DEFAULT_MARKER_RESERVE_TOKENS;
	const omission = view.omission as OmissionIndex;
	const marker = markerFor(omission, options.sessionFile, reserve - MESSAGE_OVERHEAD_TOKENS);
	const at = view.omissionAt;
	const markerMessage: TranscriptMessage = {
		role: "custom",
		customType: MARKER_CUSTOM_TYPE,
		content: marker,
		display: false,
		timestamp: view.timestamp,
	};
	// Whole-array copies, not a push per message: the list holds thousands of messages on every call.
	const out = view.messages.slice(0, at).concat([markerMessage], view.messages.slice(at));
	const sources = view.indices.slice(0, at).concat([-1], view.indices.slice(at));
	return { messages: out, trimmed: true, plan, marker, sources, omission };
}

export interface TranscriptTrimOptions extends Omit<TrimOptions, "budgetTokens" | "measuredTokens"> {
	/** Tokens the whole request may take besides the reserved output: context window − output reserve − margin. */
	requestBudgetTokens: number;
	/** Tokens of the whole request as last measured (Pi's usage reading plus what came after), if known. */
	measuredTokens?: number;
	/** Tokens of each system message (prompt, section patches, tool declarations); see systemMessageTokens. */
	systemTokens: (message: TranscriptMessage) => number;
	/** The conversation as Pi's `context` phase had it, if seen: used when it matches (splitTranscript). */
	conversation?: readonly TranscriptMessage[];
}

export interface TranscriptTrimResult extends TrimResult {
	/** Estimated tokens of the system messages: the prompt and the tool declarations the request carries. */
	systemTokens: number;
}

/**
 * Trim a full transcript as Pi 0.87+ hands it to `context_with_system`: system messages (the prompt,
 * its patches and the tool declarations) are counted and always sent, the conversation between them is
 * trimmed to what is left of the budget. Every system message keeps its place relative to the messages
 * shown: before the next message kept, or just before the marker when that message was left out (its
 * prompt or tool change still applies to what follows). The leading system messages stay first.
 * Never mutates the input; returns the input array itself when nothing was trimmed.
 */
export function trimTranscript(messages: TranscriptMessage[], options: TranscriptTrimOptions): TranscriptTrimResult {
	const { rest, system } = splitTranscript(messages, options.conversation);
	let systemTokens = 0;
	for (const { message } of system) systemTokens += options.systemTokens(message);
	const budgetTokens = Math.max(0, options.requestBudgetTokens - systemTokens);
	const measuredTokens = options.measuredTokens === undefined ? undefined : options.measuredTokens - systemTokens;
	const result = trimMessages(system.length === 0 ? messages : rest, { ...options, budgetTokens, measuredTokens });
	if (!result.trimmed || system.length === 0)
		return { ...result, messages: result.trimmed ? result.messages : messages, systemTokens };
	const sources = result.sources ?? [];
	const marker = sources.indexOf(-1);
	/** Trimmed-list position each system message goes before (result.messages.length: at the end). */
	const target = (before: number): number => {
		if (before >= rest.length) return result.messages.length;
		// sources rise on each side of the marker: look the message up where it would be
		const at =
			marker < 0
				? find(sources, before, 0, sources.length)
				: before < (sources[marker + 1] ?? Infinity)
					? find(sources, before, 0, marker)
					: find(sources, before, marker + 1, sources.length);
		if (at >= 0) return at;
		return marker >= 0 ? marker : result.messages.length;
	};
	// The trimmed list cut where system messages go, glued back in whole slices (it holds thousands of messages).
	const chunks: TranscriptMessage[][] = [];
	const sourceChunks: number[][] = [];
	let s = 0;
	// The leading run of system messages opens the request whatever follows it.
	while (s < system.length && system[s].before === 0) {
		chunks.push([system[s].message]);
		sourceChunks.push([-2]);
		s++;
	}
	let from = 0;
	for (const entry of system.slice(s)) {
		// targets rise (head positions, the marker, tail positions); never step back over what is placed
		const at = Math.max(from, target(entry.before));
		chunks.push(result.messages.slice(from, at), [entry.message]);
		sourceChunks.push(sources.slice(from, at), [-2]);
		from = at;
	}
	chunks.push(result.messages.slice(from));
	sourceChunks.push(sources.slice(from));
	const out = ([] as TranscriptMessage[]).concat(...chunks);
	const outSources = ([] as number[]).concat(...sourceChunks);
	return { ...result, messages: out, sources: outSources, systemTokens };
}

/** Index of `value` in the rising run `list[from, to)`, or -1 (binary search). */
function find(list: readonly number[], value: number, from: number, to: number): number {
	let lo = from;
	let hi = to;
	while (lo < hi) {
		const mid = (lo + hi) >>> 1;
		if (list[mid] < value) lo = mid + 1;
		else hi = mid;
	}
	return lo < to && list[lo] === value ? lo : -1;
}

/** A transcript taken apart: the conversation, and each system message with the count of conversation messages before it. */
interface SplitTranscript {
	rest: TranscriptMessage[];
	system: Array<{ message: TranscriptMessage; before: number }>;
}

/**
 * Split `messages` into conversation and system messages. `conversation` is a candidate for the
 * conversation (Pi 1.x hands the `context` phase the same message objects without the system ones): it is
 * taken when the transcript is exactly its messages, in order, with only system messages between them,
 * which is checked by identity without reading a message. Otherwise each message's role is read.
 */
function splitTranscript(messages: TranscriptMessage[], conversation?: readonly TranscriptMessage[]): SplitTranscript {
	if (conversation) {
		const system: SplitTranscript["system"] = [];
		let j = 0;
		let i = 0;
		for (; i < messages.length; i++) {
			const message = messages[i];
			if (j < conversation.length && message === conversation[j]) j++;
			else if (message.role === "system") system.push({ message, before: j });
			else break;
		}
		if (i === messages.length && j === conversation.length) return { rest: [...conversation], system };
	}
	const system: SplitTranscript["system"] = [];
	for (let i = 0; i < messages.length; i++) {
		const message = messages[i];
		if (message.role === "system") system.push({ message, before: i - system.length });
	}
	// The conversation: the runs between system messages, copied whole.
	const runs: TranscriptMessage[][] = [];
	let start = 0;
	for (const { before } of system) {
		const at = before + runs.length;
		runs.push(messages.slice(start, at));
		start = at + 1;
	}
	return { rest: ([] as TranscriptMessage[]).concat(...runs, messages.slice(start)), system };
}

/** What a trim left out and shortened, in a few numbers: equal keys mean the same cut (nothing to record). */
export function trimKey(result: TrimResult): string {
	const o = result.omission;
	if (!result.trimmed || !o) return "";
	const first = result.plan.omitted.length > 0 ? result.plan.segments[result.plan.omitted[0]].start : -1;
	let shortened = 0;
	for (const note of o.shortened) shortened += note.originalBytes * 31 + note.keptBytes;
	return `${first}:${o.messages}:${o.shortened.length}:${shortened}`;
}

/**
 * The record of a trim (ContextTrimRecord). `conversation` is the list the trim planned over (system
 * messages excluded). Cheap: kept messages are counted by their segments' sizes; only the marker and the
 * messages whose texts were shortened are estimated again.
 */
export function trimRecord(
	result: TrimResult,
	conversation: readonly TranscriptMessage[],
	figures: { systemTokens: number; budgetTokens: number },
): ContextTrimRecord {
	const { plan } = result;
	const o = result.omission;
	const sources = result.sources ?? [];
	let keptTokens = 0;
	for (const s of plan.kept) keptTokens += plan.segments[s].tokens;
	let after = 0;
	let changed = 0;
	result.messages.forEach((m, k) => {
		if (m.role === "system" && sources[k] === -2) return;
		after++;
		const source = sources[k];
		if (source === -1) changed += estimateMessageTokens(m);
		else if (source >= 0 && conversation[source] !== m)
			changed += estimateMessageTokens(m) - estimateMessageTokens(conversation[source]);
	});
	let from = 0;
	let to = 0;
	for (const note of o?.shortened ?? []) {
		from += note.originalBytes;
		to += note.keptBytes;
	}
	return {
		kind: "headroom-context-trim",
		messagesBefore: conversation.length,
		messagesAfter: after,
		messagesOmitted: o?.messages ?? 0,
		tokensBefore: figures.systemTokens + plan.totalTokens,
		tokensAfter: Math.max(0, figures.systemTokens + keptTokens + changed),
		tokensOmitted: o?.tokens ?? 0,
		textsShortened: o?.shortened.length ?? 0,
		shortenedFromBytes: from,
		shortenedToBytes: to,
		systemTokens: figures.systemTokens,
		budgetTokens: figures.budgetTokens,
	};
}

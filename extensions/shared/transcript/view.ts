/**
 * Turns a retention plan into a view: the kept messages (with oversized texts shortened to
 * head+tail through the projection primitive, a log's notable lines first) and one omission item that
 * indexes exactly what was left out. context-trim renders the omission item as a marker message; narrate.ts renders
 * the same view as third-person text, so both carry the same content.
 */

import { projectLog } from "../projection/log.ts";
import { type ArtifactSink, project, type SurfaceLimits } from "../projection/projection.ts";
import type { ArtifactStore } from "../store/artifact-store.ts";
import { bytesForTokens, estimateTokens, utf8Length } from "../text/tokens.ts";
import { isLogOutput, type OutputClass } from "../text/tool-kind.ts";
import { indexOmitted, type OmissionIndex, type OmissionMemo, type ShortenedNote } from "./omission.ts";
import type { RetentionPlan, TranscriptMessage } from "./plan.ts";

/** Texts shorter than this (UTF-16 units) are never shortened: cutting them saves too little to matter. */
const MIN_SHORTENABLE_CHARS = 512;

/** Shortened texts remembered per memo: the hook shortens the same texts on every call. */
const SHORTENED_MEMO_ENTRIES = 256;

/** Shortened texts by (budget, log or not, text), so a long text is projected (and stored) once, not on every call. */
export class ShortenedTexts {
	private readonly byBudget = new Map<string, Map<string, string>>();
	private entries = 0;

	get(maxBytes: number, text: string, log = false): string | undefined {
		return this.byBudget.get(budgetKey(maxBytes, log))?.get(text);
	}

	set(maxBytes: number, text: string, shown: string, log = false): void {
		if (this.entries >= SHORTENED_MEMO_ENTRIES) {
			this.byBudget.clear();
			this.entries = 0;
		}
		const key = budgetKey(maxBytes, log);
		let byText = this.byBudget.get(key);
		if (!byText) {
			byText = new Map();
			this.byBudget.set(key, byText);
		}
		byText.set(text, shown);
		this.entries++;
	}
}

function budgetKey(maxBytes: number, log: boolean): string {
	return log ? `log:${maxBytes}` : String(maxBytes);
}

/** How a view shortens its oversized texts (surface transcript.segment). */
export interface ShortenOptions {
	/** The configured projection.headShare (projectionHeadShare in host/config.ts); default the primitive's. */
	headShare?: number;
	/** The transcript.segment surface as configured (surfaceFor in host/config-surfaces.ts); absent: the table's. */
	surface?: SurfaceLimits;
	/** Stores each shortened text in full, so its footer names the read call; absent: the footer says not saved. */
	sink?: ArtifactSink;
	/** Remembers shortened texts across calls. */
	memo?: ShortenedTexts;
	/** Tool name → output kind (toolArtifacts.toolClasses): which tools' results are logs (isLogOutput). */
	toolClasses?: Readonly<Record<string, OutputClass>>;
}

/** What the parent's own view uses: full texts stored as "transcripts" artifacts, shortened texts remembered. */
export function storedShortening(
	store: ArtifactStore,
	headShare?: number,
	surface?: SurfaceLimits,
	toolClasses?: ShortenOptions["toolClasses"],
): ShortenOptions {
	return { headShare, surface, sink: store.sink("transcripts"), memo: new ShortenedTexts(), toolClasses };
}

/**
 * `text` within `maxBytes` UTF-8 bytes through the projection (surface transcript.segment); a `log` (a
 * command's output, a user's shell command, a tool's error) leads with its notable lines.
 */
export function shortenText(text: string, maxBytes: number, options: ShortenOptions = {}, log = false): string {
	const hit = options.memo?.get(maxBytes, text, log);
	if (hit !== undefined) return hit;
	const projectWith = log ? projectLog : project;
	const shown = projectWith(text, options.surface ?? "transcript.segment", {
		maxBytes,
		headShare: options.headShare,
		sink: options.sink,
	}).text;
	options.memo?.set(maxBytes, text, shown, log);
	return shown;
}

export type ViewItem =
	| {
			kind: "message";
			/** The message shown: the input's own object, or a copy with shortened texts. */
			message: TranscriptMessage;
			/** Its position in the input list. */
			index: number;
	  }
	| { kind: "omission"; omission: OmissionIndex; timestamp: number };

export interface TranscriptView {
	/** True when something is left out or shortened (then the omission is placed at `omissionAt`). */
	trimmed: boolean;
	/** The messages shown, in order, without the omission: the input's own objects, or copies with shortened texts. */
	messages: TranscriptMessage[];
	/** For each of `messages`: its position in the input list. */
	indices: number[];
	/** Where the omission goes: before `messages[omissionAt]` (`messages.length`: after the last); -1 when not trimmed. */
	omissionAt: number;
	/** What was left out and shortened, when trimmed. */
	omission?: OmissionIndex;
	/** Timestamp of the first message left out (0 when none): the omission's place in time. */
	timestamp: number;
	/** The plan the view follows. */
	plan: RetentionPlan;
}

/** The view as one ordered list of items: the messages shown, with the omission item in its place. */
export function viewItems(view: TranscriptView): ViewItem[] {
	const items: ViewItem[] = view.messages.map((message, k) => ({ kind: "message", message, index: view.indices[k] }));
	if (view.trimmed && view.omission)
		items.splice(view.omissionAt, 0, { kind: "omission", omission: view.omission, timestamp: view.timestamp });
	return items;
}

/** A shortenable text inside a message: where it lives and how big it is. */
interface Slot {
	msg: number;
	/** Content part index, or -1 for a message-level field. */
	part: number;
	field: string;
	/** Tool-call argument name when the text is a top-level string argument. */
	arg?: string;
	text: string;
	tokens: number;
	toolName?: string;
	/** The text is a log: a tool's output that isLogOutput says is one, or a user's shell command's output. */
	log: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

function slotsOf(
	message: TranscriptMessage,
	msg: number,
	out: Slot[],
	toolClasses: ShortenOptions["toolClasses"],
): void {
	const add = (part: number, field: string, text: unknown, arg?: string, toolName?: string, log = false) => {
		if (typeof text !== "string" || text.length < MIN_SHORTENABLE_CHARS) return;
		out.push({ msg, part, field, arg, text, tokens: estimateTokens(text), toolName, log });
	};
	const toolName = typeof message.toolName === "string" ? message.toolName : undefined;
	// A tool result's text is a log when its tool's output is one; an assistant's or a user's never is.
	const log =
		message.role === "toolResult" &&
		isLogOutput({ toolName: toolName ?? "tool", isError: message.isError === true, overrides: toolClasses });
	if (message.role === "bashExecution") add(-1, "output", message.output, undefined, "bash", true);
	else if (message.role === "compactionSummary" || message.role === "branchSummary")
		add(-1, "summary", message.summary);
	else if (typeof message.content === "string") add(-1, "content", message.content, undefined, toolName, log);
	if (!Array.isArray(message.content)) return;
	message.content.forEach((part, i) => {
		if (!isObject(part)) return;
		if (part.type === "text") add(i, "text", part.text, undefined, toolName, log);
		else if (part.type === "thinking") add(i, "thinking", part.thinking);
		else if (part.type === "toolCall" && isObject(part.arguments)) {
			for (const [key, value] of Object.entries(part.arguments)) add(i, "arguments", value, key, String(part.name));
		}
	});
}

/** The largest per-text cap c with Σ min(t, c) ≤ available (water-filling); 0 when nothing fits. */
function waterLevel(sizes: number[], available: number): number {
	const sorted = [...sizes].sort((a, b) => a - b);
	let below = 0;
	for (let k = 0; k < sorted.length; k++) {
		const rest = sorted.length - k;
		if (below + rest * sorted[k] >= available) return Math.max(0, Math.floor((available - below) / rest));
		below += sorted[k];
	}
	return Number.POSITIVE_INFINITY;
}

function withText(message: TranscriptMessage, slot: Slot, text: string): TranscriptMessage {
	const copy: TranscriptMessage = { ...message };
	if (slot.part < 0) {
		copy[slot.field] = text;
		return copy;
	}
	const content = [...(message.content as unknown[])];
	const part = { ...(content[slot.part] as Record<string, unknown>) };
	if (slot.arg !== undefined) part.arguments = { ...(part.arguments as Record<string, unknown>), [slot.arg]: text };
	else part[slot.field] = text;
	content[slot.part] = part;
	copy.content = content;
	return copy;
}

/** Shorten the texts of the messages in [start, end) segments so the group fits `capTokens`. */
function shortenGroup(
	messages: readonly TranscriptMessage[],
	indices: number[],
	capTokens: number,
	groupTokens: number,
	shorten: ShortenOptions,
	replaced: Map<number, TranscriptMessage>,
	notes: ShortenedNote[],
): void {
	const slots: Slot[] = [];
	for (const i of indices) slotsOf(replaced.get(i) ?? messages[i], i, slots, shorten.toolClasses);
	if (slots.length === 0) return;
	let slotTokens = 0;
	for (const s of slots) slotTokens += s.tokens;
	const level = waterLevel(
		slots.map((s) => s.tokens),
		capTokens - (groupTokens - slotTokens),
	);
	for (const slot of slots) {
		if (slot.tokens <= level) continue;
		const shown = shortenText(slot.text, bytesForTokens(level), shorten, slot.log);
		if (shown === slot.text) continue;
		replaced.set(slot.msg, withText(replaced.get(slot.msg) ?? messages[slot.msg], slot, shown));
		notes.push({
			role: messages[slot.msg].role,
			toolName: slot.toolName,
			originalBytes: utf8Length(slot.text),
			keptBytes: utf8Length(shown),
		});
	}
}

/**
 * Build the view a plan describes. `memo` (with the sizer that planned it) skips re-indexing a stable cut.
 * Kept segments are the head plus one contiguous tail, so the tail is copied in one slice: the hook builds
 * this view of a history of thousands of messages on every call.
 */
export function buildView(
	messages: readonly TranscriptMessage[],
	plan: RetentionPlan,
	shorten: ShortenOptions = {},
	memo?: OmissionMemo,
): TranscriptView {
	if (!plan.trimmed) {
		const indices = messages.map((_, index) => index);
		return { trimmed: false, messages: [...messages], indices, omissionAt: -1, timestamp: 0, plan };
	}
	const replaced = new Map<number, TranscriptMessage>();
	const notes: ShortenedNote[] = [];
	for (const group of plan.shorten) {
		const indices: number[] = [];
		let groupTokens = 0;
		for (const s of group.segments) {
			const seg = plan.segments[s];
			groupTokens += seg.tokens;
			for (let i = seg.start; i < seg.end; i++) indices.push(i);
		}
		shortenGroup(messages, indices, group.capTokens, groupTokens, shorten, replaced, notes);
	}
	const omission = memo ? memo.get(messages, plan, notes) : indexOmitted(messages, plan, notes);
	const firstOmitted = plan.omitted.length > 0 ? messages[plan.segments[plan.omitted[0]].start] : undefined;
	const timestamp = typeof firstOmitted?.timestamp === "number" ? firstOmitted.timestamp : 0;
	const shown: TranscriptMessage[] = [];
	const indices: number[] = [];
	// The head: kept segments before the cut.
	for (const s of plan.kept) {
		if (s >= plan.cut) break;
		const seg = plan.segments[s];
		for (let i = seg.start; i < seg.end; i++) {
			shown.push(messages[i]);
			indices.push(i);
		}
	}
	const omissionAt = shown.length;
	const tailStart = plan.cut < plan.segments.length ? plan.segments[plan.cut].start : messages.length;
	const view = shown.concat(messages.slice(tailStart));
	for (let i = tailStart; i < messages.length; i++) indices.push(i);
	if (replaced.size > 0) {
		for (let k = 0; k < indices.length; k++) {
			const copy = replaced.get(indices[k]);
			if (copy) view[k] = copy;
		}
	}
	return { trimmed: true, messages: view, indices, omissionAt, omission, timestamp, plan };
}

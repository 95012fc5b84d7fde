/**
 * Message sizes for transcript retention: a token estimate per message as the model sees it, and
 * a sizer that remembers estimates across calls (Pi's `context` hook sees the same history again
 * and again, each time as a deep copy). Pure; reads Pi's message shapes structurally.
 */
import { estimateTokens } from "../text/tokens.ts";

/** Pi's AgentMessage as far as this module reads it (user, assistant, toolResult, custom, …). */
export interface TranscriptMessage {
	role: string;
	[key: string]: unknown;
}

/** Tokens charged per message for role and framing in the provider's format. */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Tokens charged per tool call besides its name and arguments (id, type, braces). */
export const TOOL_CALL_OVERHEAD_TOKENS = 8;
/** Tokens charged per image part (Pi's own estimate: 4,800 characters). */
export const IMAGE_TOKENS = 1200;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/** JSON of tool-call arguments as the provider receives them; never throws (cycles, BigInt). */
export function argumentsJson(args: unknown): string {
	try {
		return JSON.stringify(args ?? {}) ?? "{}";
	} catch {
		return String(args);
	}
}

/** Estimated tokens of one message as the model sees it (Pi's accounting, with a real token estimate). */
export function estimateMessageTokens(message: TranscriptMessage): number {
	let tokens = MESSAGE_OVERHEAD_TOKENS;
	const content = message.content;
	switch (message.role) {
		case "bashExecution":
			if (message.excludeFromContext === true) return 0;
			return tokens + estimateTokens(String(message.command ?? "")) + estimateTokens(String(message.output ?? ""));
		case "compactionSummary":
		case "branchSummary":
			return tokens + estimateTokens(String(message.summary ?? "")) + 32;
	}
	if (typeof content === "string") return tokens + estimateTokens(content);
	if (!Array.isArray(content)) return tokens;
	for (const part of content) {
		if (!isObject(part)) continue;
		if (part.type === "text" && typeof part.text === "string") tokens += estimateTokens(part.text);
		else if (part.type === "thinking" && typeof part.thinking === "string") tokens += estimateTokens(part.thinking);
		else if (part.type === "image") tokens += IMAGE_TOKENS;
		else if (part.type === "toolCall") {
			tokens += TOOL_CALL_OVERHEAD_TOKENS + estimateTokens(String(part.name ?? ""));
			tokens += estimateTokens(argumentsJson(part.arguments));
		}
	}
	return tokens;
}

/** Characters sampled from a long text for its size key, besides its length and both ends. */
const KEY_SAMPLES = 8;
/** Texts up to this many characters are hashed whole. */
const KEY_WHOLE_TEXT_CHARS = 32;

/** Running 2×32-bit hash for size keys (FNV-1a and a murmur-style mix side by side). */
class KeyHash {
	private a = 0;
	private b = 0;

	reset(): void {
		this.a = 0x811c9dc5;
		this.b = 0x9747b28c;
	}

	mix(x: number): void {
		this.a = Math.imul(this.a ^ x, 0x01000193);
		const b = Math.imul(this.b ^ x, 0x5bd1e995);
		this.b = b ^ (b >>> 13);
	}

	text(text: string): void {
		const n = text.length;
		this.mix(n);
		if (n <= KEY_WHOLE_TEXT_CHARS) {
			for (let i = 0; i < n; i++) this.mix(text.charCodeAt(i));
			return;
		}
		for (let i = 0; i < 4; i++) this.mix(text.charCodeAt(i) ^ (text.charCodeAt(n - 1 - i) << 16));
		const stride = Math.floor(n / (KEY_SAMPLES + 1));
		for (let k = 1; k <= KEY_SAMPLES; k++) this.mix(text.charCodeAt(k * stride));
	}

	value(value: unknown): void {
		if (typeof value === "string") this.text(value);
		else if (typeof value === "number") {
			this.mix(value | 0);
			this.mix((value / 4294967296) | 0);
		} else this.mix(value === true ? 1 : value === undefined ? 2 : 3);
	}

	/** 53 bits: safe as a Map key. */
	digest(): number {
		return (this.a >>> 0) * 0x200000 + ((this.b >>> 0) & 0x1fffff);
	}
}

/**
 * A 53-bit size key for a message, computed without reading its whole text. Pi hands the hook a
 * deep copy on every call, so identity cannot be used; role, timestamp, tool-call ids, and the
 * length, ends and a few sampled characters of every text identify a message for sizing. A
 * collision could only return the estimate of another message of the same shape.
 */
export function messageKey(message: TranscriptMessage, hash = new KeyHash()): number {
	hash.reset();
	hash.text(message.role);
	hash.value(message.timestamp);
	hash.value(message.toolCallId);
	const content = message.content;
	if (message.role === "bashExecution") {
		hash.value(message.command);
		hash.value(message.output);
		hash.value(message.excludeFromContext);
	} else if (typeof message.summary === "string") hash.text(message.summary);
	if (typeof content === "string") hash.text(content);
	else if (Array.isArray(content)) {
		for (const part of content) {
			if (!isObject(part)) continue;
			hash.value(part.type);
			if (typeof part.text === "string") hash.text(part.text);
			else if (typeof part.thinking === "string") hash.text(part.thinking);
			else if (part.type === "toolCall") {
				hash.value(part.id);
				hash.value(part.name);
			}
		}
	}
	return hash.digest();
}

/** A cheap shape of a message: lengths and part count only (no text is read). */
function shapeOf(message: TranscriptMessage): number {
	const content = message.content;
	let shape = typeof message.toolCallId === "string" ? message.toolCallId.length : 0;
	if (typeof content === "string") return shape + content.length;
	if (typeof message.output === "string") shape += message.output.length;
	if (typeof message.summary === "string") shape += message.summary.length;
	if (!Array.isArray(content)) return shape;
	for (const part of content) {
		if (!isObject(part)) continue;
		shape = shape * 31 + 7;
		if (typeof part.text === "string") shape += part.text.length;
		else if (typeof part.thinking === "string") shape += part.thinking.length;
		else if (typeof part.id === "string") shape += part.id.length;
		shape %= 0x20000000000000;
	}
	return shape;
}

/**
 * Estimates message sizes, remembering them across calls: the hook sees the same history again
 * and again, each time as a fresh deep copy. A message at the same position with the same role,
 * timestamp and shape as in the previous pass reuses its size without reading any text; others
 * are looked up by messageKey, and only new content is estimated.
 */
export class TokenSizer {
	private readonly cache = new Map<number, number>();
	private readonly hash = new KeyHash();
	private readonly roles: string[] = [];
	private readonly times: unknown[] = [];
	private readonly shapes: number[] = [];
	private readonly sizes: number[] = [];
	/** Index of the first message of the current pass that differed from the previous pass (Infinity: none). */
	firstChange = Number.POSITIVE_INFINITY;
	/** Passes begun so far. */
	passes = 0;

	/** @param maxEntries cached messages kept before the cache starts over (bounds memory). */
	constructor(private readonly maxEntries = 50_000) {}

	/** Start a pass over a whole list (segmentMessages calls it). */
	beginPass(): void {
		this.firstChange = Number.POSITIVE_INFINITY;
		this.passes++;
	}

	tokens(message: TranscriptMessage, index?: number): number {
		if (index === undefined) return this.keyed(message);
		const shape = shapeOf(message);
		if (this.roles[index] === message.role && this.times[index] === message.timestamp && this.shapes[index] === shape) {
			return this.sizes[index];
		}
		if (index < this.firstChange) this.firstChange = index;
		const tokens = this.keyed(message);
		this.roles[index] = message.role;
		this.times[index] = message.timestamp;
		this.shapes[index] = shape;
		this.sizes[index] = tokens;
		return tokens;
	}

	private keyed(message: TranscriptMessage): number {
		const key = messageKey(message, this.hash);
		const hit = this.cache.get(key);
		if (hit !== undefined) return hit;
		const tokens = estimateMessageTokens(message);
		if (this.cache.size >= this.maxEntries) this.cache.clear();
		this.cache.set(key, tokens);
		return tokens;
	}
}

/** Anything that sizes a message; `index` is its position in the list being sized, when known. */
export type Sizer = { tokens(message: TranscriptMessage, index?: number): number; beginPass?(): void };

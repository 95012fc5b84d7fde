/**
 * Message sizes for transcript retention: a token estimate per message as the model sees it, and
 * a sizer that remembers estimates across calls (Pi's `context` hook sees the same history again
 * and again, each time as a deep copy). Pure; reads Pi's message shapes structurally.
 */
import { type Fingerprint, FingerprintBuilder, fingerprintAvailable } from "../text/fingerprint.ts";
import { estimateTokens, estimateTokensUpperBound } from "../text/tokens.ts";

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
	return messageTokensBy(message, estimateTokens);
}

/** estimateTokensUpperBound of a text; 0 for an empty one, as estimateTokens gives. */
const textBound = (text: string): number => (text.length === 0 ? 0 : estimateTokensUpperBound(text.length));

/**
 * An upper bound of estimateMessageTokens(message) that reads only the lengths of its texts (no character
 * is classified): the same accounting with each estimateTokens replaced by estimateTokensUpperBound.
 * Tool-call arguments are measured as the JSON the estimate reads.
 */
export function messageTokensUpperBound(message: TranscriptMessage): number {
	return messageTokensBy(message, textBound);
}

/** Pi's accounting of one message, each of its texts charged `tokensOf` it (the estimate, or its bound). */
function messageTokensBy(message: TranscriptMessage, tokensOf: (text: string) => number): number {
	let tokens = MESSAGE_OVERHEAD_TOKENS;
	const content = message.content;
	switch (message.role) {
		case "bashExecution":
			if (message.excludeFromContext === true) return 0;
			return tokens + tokensOf(String(message.command ?? "")) + tokensOf(String(message.output ?? ""));
		case "compactionSummary":
		case "branchSummary":
			return tokens + tokensOf(String(message.summary ?? "")) + 32;
	}
	if (typeof content === "string") return tokens + tokensOf(content);
	if (!Array.isArray(content)) return tokens;
	for (const part of content) {
		if (!isObject(part)) continue;
		if (part.type === "text" && typeof part.text === "string") tokens += tokensOf(part.text);
		else if (part.type === "thinking" && typeof part.thinking === "string") tokens += tokensOf(part.thinking);
		else if (part.type === "image") tokens += IMAGE_TOKENS;
		else if (part.type === "toolCall") {
			tokens += TOOL_CALL_OVERHEAD_TOKENS + tokensOf(String(part.name ?? ""));
			tokens += tokensOf(argumentsJson(part.arguments));
		}
	}
	return tokens;
}

/** Tokens charged per tool declaration besides its JSON (function wrapper, type). */
export const TOOL_DEFINITION_OVERHEAD_TOKENS = 8;

/** Estimated tokens of one tool declaration as the provider receives it ({name, description, parameters}). */
export function toolDeclarationTokens(tool: unknown): number {
	const t = isObject(tool) ? tool : {};
	const definition = { name: t.name, description: t.description, parameters: t.parameters };
	return TOOL_DEFINITION_OVERHEAD_TOKENS + estimateTokens(argumentsJson(definition));
}

/**
 * Estimated tokens of a Pi 0.87+ system message (role "system"): its text, its prompt sections (a later
 * message patches them by name), the tools it declares and the names it removes. Counted in full for
 * every system message, although a provider without mid-conversation system messages folds them into
 * one: the count never falls short of what is sent.
 */
export function systemMessageTokens(message: TranscriptMessage): number {
	let tokens = MESSAGE_OVERHEAD_TOKENS;
	const content = message.content;
	if (typeof content === "string") tokens += estimateTokens(content);
	else if (Array.isArray(content)) {
		for (const part of content)
			if (isObject(part) && typeof part.text === "string") tokens += estimateTokens(part.text);
	}
	if (isObject(message.sections)) {
		for (const [name, value] of Object.entries(message.sections)) {
			tokens += estimateTokens(name) + (typeof value === "string" ? estimateTokens(value) : 1);
		}
	}
	if (Array.isArray(message.toolsAdded)) for (const tool of message.toolsAdded) tokens += toolDeclarationTokens(tool);
	if (Array.isArray(message.toolsRemoved)) {
		for (const tool of message.toolsRemoved)
			tokens += MESSAGE_OVERHEAD_TOKENS + estimateTokens(String(isObject(tool) ? tool.name : tool));
	}
	return tokens;
}

/** Separates the small fields of a message in its size key. */
const FIELD_SEPARATOR = "\u0000";

/** The small fields of a value in a size key (a text as is; others by type, so 5 and "5" differ). */
const field = (value: unknown): string => (typeof value === "string" ? value : `${typeof value}:${String(value)}`);

/**
 * A 53-bit size key for a message (the package's xxHash fingerprint over its role, timestamp, ids and
 * every text), or undefined while the hasher is not running. Pi hands the hook a deep copy on every
 * call, so identity cannot be used. A collision could only return the estimate of another message.
 */
export function messageKey(message: TranscriptMessage, builder = new FingerprintBuilder()): Fingerprint | undefined {
	if (!builder.begin()) return undefined;
	const content = message.content;
	let fields = `${message.role}${FIELD_SEPARATOR}${field(message.timestamp)}${FIELD_SEPARATOR}${field(message.toolCallId)}`;
	if (message.role === "bashExecution") fields += `${FIELD_SEPARATOR}${field(message.excludeFromContext)}`;
	if (Array.isArray(content)) {
		for (const part of content) {
			if (!isObject(part)) continue;
			fields += `${FIELD_SEPARATOR}${field(part.type)}`;
			if (part.type === "toolCall")
				fields += `${FIELD_SEPARATOR}${field(part.id)}${FIELD_SEPARATOR}${field(part.name)}`;
		}
	}
	builder.add(fields);
	if (message.role === "bashExecution") builder.add(field(message.command)).add(field(message.output));
	else if (typeof message.summary === "string") builder.add(message.summary);
	if (typeof content === "string") builder.add(content);
	else if (Array.isArray(content)) {
		for (const part of content) {
			if (!isObject(part)) continue;
			if (typeof part.text === "string") builder.add(part.text);
			else if (typeof part.thinking === "string") builder.add(part.thinking);
			else if (part.type === "toolCall") builder.add(argumentsJson(part.arguments));
		}
	}
	return builder.digest();
}

/**
 * A cheap shape of a message: lengths and part count only (no text is read), mixed in 32-bit integer
 * arithmetic (the hook shapes every message on every call, so no floating-point modulo per part).
 */
function shapeOf(message: TranscriptMessage): number {
	const content = message.content;
	const id = message.toolCallId;
	let shape = typeof id === "string" ? id.length : 0;
	if (typeof content === "string") return (shape + content.length) | 0;
	const output = message.output;
	if (typeof output === "string") shape = (shape + output.length) | 0;
	const summary = message.summary;
	if (typeof summary === "string") shape = (shape + summary.length) | 0;
	if (!Array.isArray(content)) return shape;
	for (let i = 0; i < content.length; i++) {
		const part = content[i];
		if (typeof part !== "object" || part === null) continue;
		shape = (Math.imul(shape, 31) + 7) | 0;
		const text = part.text;
		if (typeof text === "string") {
			shape = (shape + text.length) | 0;
			continue;
		}
		const thinking = part.thinking;
		if (typeof thinking === "string") shape = (shape + thinking.length) | 0;
		else if (typeof part.id === "string") shape = (shape + part.id.length) | 0;
	}
	return shape;
}

/** Pi's roles as string literals: kept per position, they compare without reading another copy's string. */
const ROLES = new Map(
	["user", "assistant", "toolResult", "custom", "bashExecution", "compactionSummary", "branchSummary", "system"].map(
		(role) => [role, role],
	),
);
const internedRole = (role: string): string => ROLES.get(role) ?? role;
/** Stands for a timestamp that is not a number (any such message then matches on role and shape alone). */
const NO_TIMESTAMP = Number.NEGATIVE_INFINITY;

/** Messages keyed per turn of the event loop after a call (a few milliseconds of hashing at most). */
const KEYS_PER_TICK = 256;
/**
 * Keying starts this long after the call that queued it: the model request is still being built and sent
 * for a few turns of the event loop after the hook returns, and a `setImmediate` would run before it goes.
 */
export const KEYING_DELAY_MS = 250;

/** setImmediate that does not keep the process alive for it (a `pi -p` run exits when it is done). */
function unrefImmediate(run: () => void): void {
	const handle = setImmediate(run) as { unref?: () => void };
	handle.unref?.();
}

/** setTimeout that does not keep the process alive for it. */
function unrefTimeout(run: () => void, ms: number): void {
	const handle = setTimeout(run, ms) as { unref?: () => void };
	handle.unref?.();
}

/** Every how many positions, in turn, a pass verifies the shape of a message it recognised (see TokenSizer). */
export const SHAPE_CHECK_STRIDE = 8;
/** The newest messages of a list, whose shapes every pass verifies. */
const SHAPE_CHECK_NEWEST = 16;

/**
 * Estimates message sizes, remembering them across calls: the hook sees the same history again
 * and again, each time as a fresh deep copy. A message is recognised at its position by its role and
 * timestamp and then reuses its size without reading any text; others are looked up by messageKey,
 * and only new content is estimated.
 *
 * Pi never changes a message once it is in the session, so role and timestamp identify it. An
 * extension's context handler could still rewrite an old message in place: each pass therefore also
 * verifies the shape (text lengths, part count, tool-call id lengths) of every SHAPE_CHECK_STRIDE-th
 * position in turn and of the newest SHAPE_CHECK_NEWEST messages, so such a rewrite is noticed within
 * SHAPE_CHECK_STRIDE calls. Reading every part of thousands of messages on every call would be most of
 * the hook's cost; until a rewrite is noticed, the trim still takes the larger of this estimate and the
 * size Pi measured (usageBasedTokens).
 */
export class TokenSizer {
	private readonly cache = new Map<Fingerprint, number>();
	private readonly fingerprint = new FingerprintBuilder();
	private readonly roles: string[] = [];
	/** Timestamps as plain doubles (an unboxed array: no pointer to chase per message); NO_TIMESTAMP when not a number. */
	private readonly times: number[] = [];
	private readonly shapes: number[] = [];
	private readonly sizes: number[] = [];
	/** Positions from here on have their shapes verified in this pass. */
	private verifyFrom = 0;
	/** Messages first seen at a new position, sized but not yet keyed (keyed after the call: drainKeys). */
	private unkeyed: Array<{ message: TranscriptMessage; tokens: number }> = [];
	private draining = false;
	/** Messages whose tokens were estimated so far (what the caches spare shows as estimates not made). */
	estimated = 0;
	/** Index of the first message of the current pass that differed from the previous pass (Infinity: none). */
	firstChange = Number.POSITIVE_INFINITY;
	/** Passes begun so far. */
	passes = 0;

	/** @param maxEntries cached messages kept before the cache starts over (bounds memory). */
	constructor(private readonly maxEntries = 50_000) {}

	/** The next pass verifies the shape of every message it recognises (verifyNextPass). */
	private verifyAll = false;

	/** Start a pass over a whole list of `count` messages (segmentMessages calls it; positional sizing belongs to passes). */
	beginPass(count = 0): void {
		this.firstChange = Number.POSITIVE_INFINITY;
		this.passes++;
		this.verifyFrom = this.verifyAll ? 0 : count - SHAPE_CHECK_NEWEST;
		this.verifyAll = false;
	}

	/**
	 * Make the next pass verify the shape of every message it recognises at its position, not every
	 * SHAPE_CHECK_STRIDE-th: for sizes learnt from a list other than the one the next pass is handed (a
	 * history read from the session in idle time, before Pi's first request of it).
	 */
	verifyNextPass(): void {
		this.verifyAll = true;
	}

	tokens(message: TranscriptMessage, index?: number): number {
		if (index === undefined) return this.keyed(message);
		const time = typeof message.timestamp === "number" ? message.timestamp : NO_TIMESTAMP;
		if (this.times[index] === time && this.roles[index] === message.role) {
			if (index < this.verifyFrom && (index + this.passes) % SHAPE_CHECK_STRIDE !== 0) return this.sizes[index];
			const shape = shapeOf(message);
			if (this.shapes[index] === shape) return this.sizes[index];
			return this.remember(message, index, time, shape);
		}
		return this.remember(message, index, time, shapeOf(message));
	}

	/** Messages sized but not keyed yet. */
	get pendingKeys(): number {
		return this.unkeyed.length;
	}

	/**
	 * Size a message not recognised at `index` and remember it there. At a position no list had before
	 * (a session's first call, new messages at the end) the message is new, so there is no size to find
	 * by key: it is estimated now and keyed after the call (KEYING_DELAY_MS later, once the model request is
	 * on its way), so that a later shift of the history still finds it. A session's first call thus hashes
	 * nothing.
	 */
	private remember(message: TranscriptMessage, index: number, time: number, shape: number): number {
		if (index < this.firstChange) this.firstChange = index;
		const tokens = index >= this.sizes.length && fingerprintAvailable() ? this.keyLater(message) : this.keyed(message);
		this.roles[index] = internedRole(message.role);
		this.times[index] = time;
		this.shapes[index] = shape;
		this.sizes[index] = tokens;
		return tokens;
	}

	private keyed(message: TranscriptMessage): number {
		const key = messageKey(message, this.fingerprint);
		// No fingerprint yet (the hasher still starting, or unavailable): estimate, remember nothing by key.
		if (key === undefined) return this.estimate(message);
		const hit = this.cache.get(key);
		if (hit !== undefined) return hit;
		const tokens = this.estimate(message);
		this.store(key, tokens);
		return tokens;
	}

	private estimate(message: TranscriptMessage): number {
		this.estimated++;
		return estimateMessageTokens(message);
	}

	private store(key: Fingerprint, tokens: number): void {
		if (this.cache.size >= this.maxEntries) this.cache.clear();
		this.cache.set(key, tokens);
	}

	/** Estimate now, key after the call (the queue holds the message until then). */
	private keyLater(message: TranscriptMessage): number {
		const tokens = this.estimate(message);
		this.unkeyed.push({ message, tokens });
		if (!this.draining) {
			this.draining = true;
			unrefTimeout(() => this.drainKeys(), KEYING_DELAY_MS);
		}
		return tokens;
	}

	/** Key queued messages a chunk at a time, yielding to the event loop between chunks. */
	private drainKeys(): void {
		const chunk = this.unkeyed.splice(0, KEYS_PER_TICK);
		for (const { message, tokens } of chunk) {
			const key = messageKey(message, this.fingerprint);
			if (key !== undefined) this.store(key, tokens);
		}
		if (this.unkeyed.length > 0) unrefImmediate(() => this.drainKeys());
		else this.draining = false;
	}
}

/**
 * Anything that sizes a message; `index` is its position in the list being sized, when known. A
 * positional sizer (TokenSizer) also counts its passes and says where the current pass first differed
 * from the previous one, which lets segmentMessages reuse the segments before that point.
 */
export type Sizer = {
	tokens(message: TranscriptMessage, index?: number): number;
	/** Start a pass over a whole list of `count` messages. */
	beginPass?(count: number): void;
	/** Passes begun so far. */
	readonly passes?: number;
	/** Index of the first message of the current pass that differs from the previous pass (Infinity: none). */
	readonly firstChange?: number;
};

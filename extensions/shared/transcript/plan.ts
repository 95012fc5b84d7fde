/**
 * Transcript segmentation and retention: the one policy that decides which part of a long
 * message list a model sees — for an agent's own history (context-trim) and for a forked
 * child's narrated start (narrate.ts), so the receiver never gets a worse picture.
 *
 * Pure: reads Pi's AgentMessage shapes structurally (both Pi lines), never imports Pi.
 * Segments are never split: an assistant message travels with every result of its tool calls.
 * The head (compaction summary, first user message, first assistant reply) is always kept;
 * the tail is the newest segments that fit; the cut between them moves in quantised steps so
 * consecutive calls share the same prefix (the provider's prompt cache survives).
 */
import { estimateMessageTokens, messageTokensUpperBound, type Sizer, type TranscriptMessage } from "./size.ts";

export {
	argumentsJson,
	estimateMessageTokens,
	IMAGE_TOKENS,
	MESSAGE_OVERHEAD_TOKENS,
	messageKey,
	messageTokensUpperBound,
	type Sizer,
	TOOL_CALL_OVERHEAD_TOKENS,
	TokenSizer,
	type TranscriptMessage,
} from "./size.ts";

/** The sizing function used when none is given: no cache. */
const uncached: Sizer = { tokens: estimateMessageTokens };

/** What opens a segment. */
export type SegmentKind = "user" | "turn" | "custom" | "summary" | "other";

export interface Segment {
	/** user: a user message; turn: an assistant message plus the results of its tool calls; summary: a compaction summary. */
	kind: SegmentKind;
	/** Index of the segment's first message in the list. */
	start: number;
	/** Index one past the segment's last message. */
	end: number;
	/** Estimated tokens of the segment's messages as the model sees them. */
	tokens: number;
}

/** Default step of the cut, in tokens: the cut moves only when the budget forces it, and then by about this much. */
export const DEFAULT_CUT_STEP_TOKENS = 16_384;
/** Default largest share of the budget the head may take before its contents are shortened. */
export const DEFAULT_HEAD_MAX_SHARE = 0.3;
/** Default tokens held back for the omission marker (the marker renderer keeps within it). */
export const DEFAULT_MARKER_RESERVE_TOKENS = 1024;
/** The cut step never exceeds this fraction of the tail budget, so a jump cannot empty the tail. */
const MAX_STEP_SHARE_OF_TAIL = 0.25;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/** True for a value that looks like a message (an object with a string role). */
export function isTranscriptMessage(value: unknown): value is TranscriptMessage {
	return isObject(value) && typeof value.role === "string";
}

/** Tool calls of an assistant message: {id, name, arguments}. */
export function toolCallsOf(message: TranscriptMessage): Array<{ id: string; name: string; arguments: unknown }> {
	if (message.role !== "assistant" || !Array.isArray(message.content)) return [];
	const calls: Array<{ id: string; name: string; arguments: unknown }> = [];
	for (const part of message.content) {
		if (isObject(part) && part.type === "toolCall") {
			calls.push({ id: String(part.id ?? ""), name: String(part.name ?? "?"), arguments: part.arguments ?? {} });
		}
	}
	return calls;
}

/**
 * Cut a message list into segments. An assistant message owns the tool results that follow it,
 * including results separated from it by other messages before the next assistant message.
 * A tool result with no call before it (already orphaned in the input) stands alone.
 *
 * With a positional sizer (a TokenSizer) the segments of its previous pass are reused up to the
 * last assistant message before the first change: a segment's bounds depend only on the messages
 * from its start up to the next assistant message, so those segments are the same again and the
 * hook re-cuts only the newest few of a long history.
 */
export function segmentMessages(messages: readonly TranscriptMessage[], sizer: Sizer = uncached): Segment[] {
	return cutSegments(messages, sizer).segments;
}

/** Segments and their running token sums: `sums[k]` is the tokens of segments 0 … k−1 (`sums[length]`: all). */
interface SegmentCut {
	segments: Segment[];
	sums: number[];
}

/** segmentMessages with the running sums, which let planRetention find its cut without reading each segment. */
function cutSegments(messages: readonly TranscriptMessage[], sizer: Sizer): SegmentCut {
	const n = messages.length;
	sizer.beginPass?.(n);
	const sizes = new Array<number>(n);
	for (let k = 0; k < n; k++) sizes[k] = sizer.tokens(messages[k], k);
	const cut: SegmentCut = { segments: [], sums: [0] };
	let i = reusedPrefix(sizer, n, cut);
	const segments = cut.segments;
	while (i < n) {
		const message = messages[i];
		let end = i + 1;
		let kind: SegmentKind;
		if (message.role === "assistant") {
			kind = "turn";
			const calls = callIdsInto(message, pendingIds);
			if (calls > 0) {
				let open = calls;
				while (end < n && messages[end].role === "toolResult") {
					if (open > 0) open -= resolveCall(pendingIds, String(messages[end].toolCallId));
					end++;
				}
				if (open > 0) {
					const pending = new Set<string>();
					for (const id of pendingIds) if (id !== undefined) pending.add(id);
					end = lastPendingResult(messages, end, pending) ?? end;
				}
			} else while (end < n && messages[end].role === "toolResult") end++;
		} else if (message.role === "user") kind = "user";
		else if (message.role === "compactionSummary") kind = "summary";
		else if (message.role === "custom" || message.role === "bashExecution" || message.role === "branchSummary") {
			kind = "custom";
		} else kind = "other";
		let tokens = 0;
		for (let k = i; k < end; k++) tokens += sizes[k];
		segments.push({ kind, start: i, end, tokens });
		cut.sums.push(cut.sums[cut.sums.length - 1] + tokens);
		i = end;
	}
	if (sizer.passes !== undefined) lastSegments.set(sizer, { pass: sizer.passes, cut });
	return cut;
}

/** The segments of each positional sizer's latest pass (segmentMessages reuses their unchanged prefix). */
const lastSegments = new WeakMap<Sizer, { pass: number; cut: SegmentCut }>();

/**
 * Push onto `out` the segments of the sizer's previous pass that hold again in the pass just sized, and
 * return the index to go on cutting from (0: nothing reused). They hold up to the last turn that starts
 * before the first changed message: each earlier segment ends, and its search for late tool results
 * stops, at or before that assistant message, and every message up to it is unchanged.
 */
function reusedPrefix(sizer: Sizer, n: number, out: SegmentCut): number {
	const previous = sizer.passes === undefined ? undefined : lastSegments.get(sizer);
	if (!previous || previous.pass !== (sizer.passes ?? 0) - 1) return 0;
	const changed = Math.min(sizer.firstChange ?? 0, n);
	const segments = previous.cut.segments;
	let turn = segments.length - 1;
	while (turn > 0 && (segments[turn].kind !== "turn" || segments[turn].start >= changed)) turn--;
	if (turn <= 0) return 0;
	out.segments = segments.slice(0, turn);
	out.sums = previous.cut.sums.slice(0, turn + 1);
	return segments[turn].start;
}

/** Reused across segmentMessages calls: the open tool-call ids of the assistant message being segmented. */
const pendingIds: Array<string | undefined> = [];

/**
 * The distinct ids of an assistant message's tool calls (as toolCallsOf names them) into `out`, replacing
 * its contents; returns how many (0 when it has none). A reused array instead of a Set per message: the
 * hook segments thousands of messages on every call.
 */
function callIdsInto(message: TranscriptMessage, out: Array<string | undefined>): number {
	out.length = 0;
	const content = message.content;
	if (!Array.isArray(content)) return 0;
	for (const part of content) {
		if (!isObject(part) || part.type !== "toolCall") continue;
		const id = String(part.id ?? "");
		if (!out.includes(id)) out.push(id);
	}
	return out.length;
}

/** Mark `id` answered among the open ids: 1 when it was open, else 0. */
function resolveCall(open: Array<string | undefined>, id: string): number {
	const at = open.indexOf(id);
	if (at < 0) return 0;
	open[at] = undefined;
	return 1;
}

/** Index one past the last result for a pending call before the next assistant message, if any. */
function lastPendingResult(
	messages: readonly TranscriptMessage[],
	from: number,
	pending: Set<string>,
): number | undefined {
	let last: number | undefined;
	for (let j = from; j < messages.length && messages[j].role !== "assistant"; j++) {
		const m = messages[j];
		if (m.role === "toolResult" && pending.has(String(m.toolCallId))) last = j + 1;
	}
	return last;
}

export interface RetentionOptions {
	/** Tokens the message list may take (context window − output reserve − margin − system prompt and tools). */
	budgetTokens: number;
	/**
	 * Tokens the caller measured for the same list (Pi's way: last reported usage plus an estimate
	 * of what came after). Trimming starts when either this or the own estimate is over budget;
	 * when it is the larger, the own budget shrinks by the same ratio.
	 */
	measuredTokens?: number;
	/** The cut moves in steps of about this many tokens (default DEFAULT_CUT_STEP_TOKENS). */
	cutStepTokens?: number;
	/** Largest share of the budget the head may take before its texts are shortened (default 0.3). */
	headMaxShare?: number;
	/** Tokens held back for the marker message (default DEFAULT_MARKER_RESERVE_TOKENS). */
	markerReserveTokens?: number;
}

/** Kept segments that together must shrink to a token cap (head+tail of their largest texts). */
export interface ShortenGroup {
	/** Segment indices in the group. */
	segments: number[];
	/** Tokens the group may take in total. */
	capTokens: number;
}

export interface RetentionPlan {
	/** True when the view differs from the input: something is left out or shortened. */
	trimmed: boolean;
	/** All segments of the input, in order. */
	segments: Segment[];
	/** Head segment indices (empty when not trimmed). */
	head: number[];
	/** Segment indices shown, in order. */
	kept: number[];
	/** Segment indices left out, in order. */
	omitted: number[];
	/** Index of the first tail segment; the marker goes between the head and it. */
	cut: number;
	/** Groups of kept segments whose texts must be shortened. */
	shorten: ShortenGroup[];
	/** Own estimate of the whole list, in tokens. */
	totalTokens: number;
	/** The budget the plan fits (after scaling to a larger measured size). */
	budgetTokens: number;
}

/** The head: every compaction summary, the first user message and the first assistant reply after it. */
export function headSegments(segments: readonly Segment[]): number[] {
	const head = new Set<number>();
	for (let i = 0; i < segments.length; i++) if (segments[i].kind === "summary") head.add(i);
	const firstUser = segments.findIndex((s) => s.kind === "user");
	if (firstUser >= 0) head.add(firstUser);
	const firstTurn = segments.findIndex((s, i) => s.kind === "turn" && i > firstUser);
	if (firstTurn >= 0) head.add(firstTurn);
	if (head.size === 0 && segments.length > 0) head.add(0);
	return [...head].sort((a, b) => a - b);
}

/**
 * Decide what a model sees of `messages` within `budgetTokens`. Within budget → untouched.
 * Over budget → head + marker + tail. The tail starts at the first segment boundary whose
 * cumulative size reaches (body − tail budget) rounded UP to a multiple of the step: the cut
 * stays put while the history grows by less than a step, then jumps by about a step.
 */
export function planRetention(
	messages: readonly TranscriptMessage[],
	options: RetentionOptions,
	sizer: Sizer = uncached,
): RetentionPlan {
	const { segments, sums } = cutSegments(messages, sizer);
	const total = sums[segments.length];
	const requested = Math.max(0, Math.floor(Number.isFinite(options.budgetTokens) ? options.budgetTokens : 0));
	const measured = Number.isFinite(options.measuredTokens) ? (options.measuredTokens as number) : 0;
	const untouched = (): RetentionPlan => ({
		trimmed: false,
		segments,
		head: [],
		kept: segments.map((_, i) => i),
		omitted: [],
		cut: 0,
		shorten: [],
		totalTokens: total,
		budgetTokens: requested,
	});
	if (segments.length === 0 || Math.max(total, measured) <= requested) return untouched();

	const budget = measured > total ? Math.floor((requested * total) / measured) : requested;
	const head = headSegments(segments);
	const bodyStart = head[head.length - 1] + 1;
	const hasBody = bodyStart < segments.length;
	const reserve = Math.max(0, options.markerReserveTokens ?? DEFAULT_MARKER_RESERVE_TOKENS);
	const headShare = Math.min(1, Math.max(0, options.headMaxShare ?? DEFAULT_HEAD_MAX_SHARE));
	const shorten: ShortenGroup[] = [];
	let headTokens = 0;
	for (const i of head) headTokens += segments[i].tokens;
	const headCap = Math.max(0, Math.floor(hasBody ? budget * headShare : budget - reserve));
	if (headTokens > headCap) {
		shorten.push({ segments: head, capTokens: headCap });
		headTokens = headCap;
	}

	let cut = segments.length;
	if (hasBody) {
		const tailBudget = Math.max(0, budget - headTokens - reserve);
		const stepCap = Math.floor(tailBudget * MAX_STEP_SHARE_OF_TAIL);
		const step = Math.max(1, Math.min(options.cutStepTokens ?? DEFAULT_CUT_STEP_TOKENS, stepCap));
		const bodyTokens = total - sums[bodyStart];
		const threshold = Math.ceil(Math.max(0, bodyTokens - tailBudget) / step) * step;
		// The first boundary at or past the threshold (the running sums, not the segments, are read).
		cut = bodyStart;
		while (cut < segments.length && sums[cut] - sums[bodyStart] < threshold) cut++;
		// The newest segment is always shown: shortened when it alone is larger than the tail budget.
		if (cut >= segments.length) cut = segments.length - 1;
		const before = sums[cut] - sums[bodyStart];
		if (bodyTokens - before > tailBudget) {
			const tail: number[] = [];
			for (let i = cut; i < segments.length; i++) tail.push(i);
			shorten.push({ segments: tail, capTokens: tailBudget });
		}
	}
	// Head segments all come before bodyStart, in order: walk them beside the index.
	const kept = new Array<number>(head.length + segments.length - cut);
	const omitted = new Array<number>(cut - head.length);
	let k = 0;
	let o = 0;
	let h = 0;
	for (let i = 0; i < cut; i++) {
		if (h < head.length && head[h] === i) {
			kept[k++] = i;
			h++;
		} else omitted[o++] = i;
	}
	for (let i = cut; i < segments.length; i++) kept[k++] = i;
	if (omitted.length === 0 && shorten.length === 0) return untouched();
	return { trimmed: true, segments, head, kept, omitted, cut, shorten, totalTokens: total, budgetTokens: budget };
}

/**
 * The bound of a list's first `count` messages, kept across calls: Pi's history grows at its end, so the next
 * call only bounds what came after. It is reused when the message at `count − 1` has the same role and
 * numeric timestamp again (the sizer's own test of a known message, see TokenSizer).
 */
export interface BoundMemo {
	count: number;
	role?: string;
	timestamp?: number;
	tokens: number;
}

/**
 * True when planRetention would surely leave `messages` untouched within `options`, decided from an upper
 * bound of their size that reads only text lengths (messageTokensUpperBound) and stops as soon as it passes
 * the budget. A history far within its budget (a 1M-token window, a resumed session) then costs no
 * estimate at all; false says nothing (planRetention decides). With a `memo`, a later call bounds only the
 * messages added since (and a list already past the budget costs nothing to rule out).
 */
export function surelyWithinBudget(
	messages: readonly TranscriptMessage[],
	options: Pick<RetentionOptions, "budgetTokens" | "measuredTokens">,
	memo?: BoundMemo,
): boolean {
	// The same figures planRetention compares its estimate with.
	const requested = Math.max(0, Math.floor(Number.isFinite(options.budgetTokens) ? options.budgetTokens : 0));
	const measured = Number.isFinite(options.measuredTokens) ? (options.measuredTokens as number) : 0;
	if (measured > requested) return false;
	let i = 0;
	let bound = 0;
	if (memo && memo.count > 0 && memo.count <= messages.length) {
		const last = messages[memo.count - 1];
		if (typeof last.timestamp === "number" && last.timestamp === memo.timestamp && last.role === memo.role) {
			i = memo.count;
			bound = memo.tokens;
		}
	}
	for (; i < messages.length && bound <= requested; i++) bound += messageTokensUpperBound(messages[i]);
	if (memo && i > 0) {
		const last = messages[i - 1];
		memo.count = i;
		memo.role = last.role;
		memo.timestamp = typeof last.timestamp === "number" ? last.timestamp : undefined;
		memo.tokens = bound;
	}
	return bound <= requested;
}

/**
 * Tokens in use the way Pi counts them before a call: the usage the provider reported for the
 * last successful assistant message plus an estimate of every message after it. Undefined when
 * no assistant message carries usage yet.
 */
export function usageBasedTokens(messages: readonly TranscriptMessage[], sizer: Sizer = uncached): number | undefined {
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i];
		if (m.role !== "assistant" || m.stopReason === "aborted" || m.stopReason === "error" || !isObject(m.usage))
			continue;
		const u = m.usage as Record<string, unknown>;
		const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
		const used = num(u.totalTokens) || num(u.input) + num(u.output) + num(u.cacheRead) + num(u.cacheWrite);
		let trailing = 0;
		for (let k = i + 1; k < messages.length; k++) trailing += sizer.tokens(messages[k]);
		return used + trailing;
	}
	return undefined;
}

/** Output tokens pi-ai asks for at most when the caller sets none (it caps model.maxTokens at this). */
export const PI_DEFAULT_MAX_OUTPUT_TOKENS = 32_000;
/** Output tokens reserved when the model states no maxTokens. */
export const FALLBACK_RESERVE_TOKENS = 4096;
/** The safety margin never takes more than this share of the context window (small windows). */
const MAX_MARGIN_SHARE = 0.1;

export interface BudgetInput {
	/** The model's context window, in tokens. */
	contextWindow: number;
	/** The model's maxTokens (output), if known. */
	maxTokens?: number;
	/** Configured output reserve; overrides the model's maxTokens. */
	reserveTokens?: number;
	/** Configured safety margin, in tokens. */
	safetyMarginTokens: number;
	/** Estimated tokens of what is sent besides the messages: system prompt and tool definitions. */
	overheadTokens: number;
}

/** Tokens the message list may take: context window − reserved output − safety margin − system prompt and tools. */
export function messageBudget(input: BudgetInput): number {
	const window = Number.isFinite(input.contextWindow) && input.contextWindow > 0 ? input.contextWindow : 0;
	const modelMax = input.maxTokens && input.maxTokens > 0 ? input.maxTokens : FALLBACK_RESERVE_TOKENS;
	const reserve = input.reserveTokens ?? Math.min(modelMax, PI_DEFAULT_MAX_OUTPUT_TOKENS);
	const margin = Math.min(Math.max(0, input.safetyMarginTokens), Math.floor(window * MAX_MARGIN_SHARE));
	return Math.max(0, Math.floor(window - reserve - margin - Math.max(0, input.overheadTokens)));
}

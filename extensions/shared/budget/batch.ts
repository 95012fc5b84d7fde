/**
 * Batch budgets: how many UTF-8 bytes (and lines) each result of a batch may take in the model's
 * context. One allocator serves every surface (automatic completion delivery, subagent_wait,
 * check previews). Pure: plain data in, plain data out, deterministic.
 */
import { MIN_WINDOW_BYTES, MIN_WINDOW_LINES, type SurfaceLimits } from "../projection/projection.ts";
import { SURFACES, type SurfaceBudget } from "../surfaces.ts";
import { formatCount } from "../text/format.ts";
import { bytesForTokens } from "../text/tokens.ts";

export type Surface = "autoDelivery" | "wait" | "check" | "handover";

export interface SurfaceCaps {
	/** UTF-8 bytes of the whole batch the model sees: results, headers, separators, footers. */
	batchBytes: number;
	/** UTF-8 bytes of one result's projection (head + marker + tail + footer). */
	perResultBytes: number;
	/** Lines of one result's projection. */
	perResultLines: number;
}

/** The caps of a batch surface's budget (as resolved from the configuration, or the table's entry). */
export function capsOf(entry: SurfaceBudget): SurfaceCaps {
	const batchBytes = entry.batchBytes ?? entry.maxBytes;
	return Object.freeze({ batchBytes, perResultBytes: entry.maxBytes, perResultLines: entry.maxLines });
}

/**
 * The caps of the table's entries, unconfigured: what applies without a usable context reading, and the
 * ceiling with one, when the caller passes no resolved `budget`. Line caps are about 40 bytes per line of the byte cap, so a report of short lines is cut
 * by bytes, not lines, while a flood of blank lines still stops early.
 */
export const STATIC_CAPS: Record<Surface, SurfaceCaps> = Object.freeze({
	autoDelivery: capsOf(SURFACES["subagents.autoDelivery"]),
	wait: capsOf(SURFACES["subagents.wait"]),
	check: capsOf(SURFACES["subagents.check"]),
	handover: capsOf(SURFACES["subagents.handover"]),
});

/** Share of the remaining headroom (window − used − reserved output) one batch may use. */
export const DEFAULT_HEADROOM_SHARE = 0.5;

/** UTF-8 bytes charged for a one-line entry (id, status, size, artifact path) when not overridden. */
export const ONE_LINE_ENTRY_BYTES = 320;

/** What ctx.getContextUsage() returns (tokens is null right after a compaction). */
export interface UsageReading {
	tokens: number | null;
	contextWindow: number;
	percent?: number | null;
}

export interface AllocationItem {
	/** Budget for the projection, or undefined when the item is a one-line entry. */
	limits?: SurfaceLimits;
	/** True when the batch could not give this result the minimum readable window: show one line (id, status, size, path). */
	oneLine: boolean;
	/** Bytes this item is counted for: its full size when it fits verbatim, else limits.maxBytes; for a one-line entry, the entry's cost. */
	chargedBytes: number;
}

export interface Allocation {
	/** One entry per input result, in batch order. */
	items: AllocationItem[];
	/** The batch cap actually used (UTF-8 bytes of everything the model sees, wrappers included). */
	batchBytes: number;
	/** "headroom" when a valid context reading lowered or confirmed the cap, "static" when the reading was unusable. */
	source: "static" | "headroom";
	/** Why, in one line, e.g. "headroom 12,000 tokens × 0.5 → 15,000 bytes". */
	reason: string;
}

export interface AllocationInput {
	/** Which caps apply. */
	surface: Surface;
	/** UTF-8 byte size and line count of each full result text, in batch order. */
	results: Array<{ bytes: number; lines: number }>;
	/** From ctx.getContextUsage(); missing, null or nonsensical readings fall back to the static caps. */
	usage?: UsageReading | null;
	/** Tokens kept free for the model's answer (its maxTokens); 0 when absent. */
	reservedOutputTokens?: number;
	/** Fixed bytes the caller adds around each result (header, separator). */
	wrapperBytesPerResult?: number;
	/** Fixed bytes the caller adds once per batch (title, closing notes). */
	wrapperBytesPerBatch?: number;
	/** The surface's budget resolved from the configuration (host/config-surfaces.ts); absent: the table's entry. */
	budget?: SurfaceBudget;
	/** Overrides of those caps; per-result caps below the minimum window are raised to it. */
	caps?: Partial<SurfaceCaps>;
	/** Share of the headroom the batch may use, in (0, 1]; default 0.5. */
	headroomShare?: number;
	/** Bytes one one-line entry costs; default ONE_LINE_ENTRY_BYTES. */
	oneLineBytes?: number;
}

/**
 * Remaining context in tokens, or why the reading cannot be used. A reading above the window is unusable
 * as a budget, but says how far over it is (`overBy`, tokens past the window), for callers that act on a
 * full context (the handoff probe stages then).
 */
export type HeadroomReading = { ok: true; tokens: number } | { ok: false; why: string; overBy?: number };

/** Headroom = context window − used tokens − reserved output, from a reading that makes sense. */
export function readHeadroom(usage: UsageReading | null | undefined, reservedOutputTokens?: number): HeadroomReading {
	if (!usage || typeof usage !== "object") return { ok: false, why: "no context reading" };
	const { tokens, contextWindow } = usage;
	if (tokens === null || tokens === undefined)
		return { ok: false, why: "token count unknown (just after compaction?)" };
	if (typeof tokens !== "number" || !Number.isFinite(tokens) || tokens < 0) {
		return { ok: false, why: `invalid token count ${String(tokens)}` };
	}
	if (typeof contextWindow !== "number" || !Number.isFinite(contextWindow) || contextWindow <= 0) {
		return { ok: false, why: `invalid context window ${String(contextWindow)}` };
	}
	if (tokens > contextWindow) {
		return { ok: false, why: "token count exceeds the context window", overBy: tokens - contextWindow };
	}
	const reserved = reservedOutputTokens ?? 0;
	if (typeof reserved !== "number" || !Number.isFinite(reserved) || reserved < 0) {
		return { ok: false, why: `invalid reserved output tokens ${String(reserved)}` };
	}
	return { ok: true, tokens: Math.max(0, Math.floor(contextWindow - tokens - reserved)) };
}

const isCount = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n >= 0;
const orDefault = (n: unknown, fallback: number): number => (isCount(n) && n > 0 ? Math.floor(n) : fallback);
const nonNegative = (n: unknown): number => (isCount(n) ? Math.ceil(n) : 0);

/**
 * The surface's caps (from its resolved `budget`, else the table's) with overrides applied; per-result caps
 * never below the minimum readable window.
 */
export function resolveCaps(surface: Surface, overrides?: Partial<SurfaceCaps>, budget?: SurfaceBudget): SurfaceCaps {
	const base = budget ? capsOf(budget) : STATIC_CAPS[surface];
	return {
		batchBytes: orDefault(overrides?.batchBytes, base.batchBytes),
		perResultBytes: Math.max(MIN_WINDOW_BYTES, orDefault(overrides?.perResultBytes, base.perResultBytes)),
		perResultLines: Math.max(MIN_WINDOW_LINES, orDefault(overrides?.perResultLines, base.perResultLines)),
	};
}

/** Per-result bounds of the water-filling: `low` is the least it can be shown with, `high` all it can use. */
interface Demand {
	low: number;
	high: number;
}

function demandOf(result: { bytes: number; lines: number }, caps: SurfaceCaps): Demand {
	// Unknown sizes count as too long to show verbatim: the item is then projected, never over budget.
	const bytes = isCount(result?.bytes) ? Math.ceil(result.bytes) : Number.POSITIVE_INFINITY;
	const lines = isCount(result?.lines) ? Math.ceil(result.lines) : Number.POSITIVE_INFINITY;
	const fits = bytes <= caps.perResultBytes && lines <= caps.perResultLines;
	const high = fits ? bytes : Math.min(caps.perResultBytes, Math.max(MIN_WINDOW_BYTES, bytes));
	return { low: Math.min(high, MIN_WINDOW_BYTES), high };
}

/** Largest level λ with Σ clamp(λ, low, high) ≤ budget; budget ≥ Σ low is required. */
function waterLevel(demands: Demand[], budget: number): number {
	const used = (level: number) => {
		let sum = 0;
		for (const d of demands) sum += Math.min(d.high, Math.max(d.low, level));
		return sum;
	};
	let lo = 0;
	let hi = demands.reduce((m, d) => Math.max(m, d.high), 0);
	if (used(hi) <= budget) return hi;
	while (lo < hi) {
		const mid = lo + Math.ceil((hi - lo) / 2);
		if (used(mid) <= budget) lo = mid;
		else hi = mid - 1;
	}
	return lo;
}

/**
 * Share a batch cap among results.
 *
 * - Cap: the surface's static batch cap; with a valid reading, at most `headroomShare` of the
 *   headroom converted to bytes by the conservative token ratio, if that is lower.
 * - Wrappers (per batch and per result) are deducted first; what remains is for result bodies.
 * - Water-filling: every result gets min(level, its need), so short results keep their full size
 *   and the unused share flows to long ones; no result exceeds its static cap.
 * - When the bodies cannot all get the minimum readable window, results are kept smallest need
 *   first (ties: batch order) at exactly that minimum, and the rest become one-line entries.
 *   If even the one-line entries exceed the cap, every result is a one-line entry (never silence).
 * - Monotone: less headroom never gives any item or the batch a larger budget.
 */
export function allocateBatchBudgets(input: AllocationInput): Allocation {
	const caps = resolveCaps(input.surface, input.caps, input.budget);
	const share =
		isCount(input.headroomShare) && input.headroomShare > 0 && input.headroomShare <= 1
			? input.headroomShare
			: DEFAULT_HEADROOM_SHARE;
	const oneLineBytes = orDefault(input.oneLineBytes, ONE_LINE_ENTRY_BYTES);
	const results = Array.isArray(input.results) ? input.results : [];
	const n = results.length;

	let batchBytes = caps.batchBytes;
	let source: Allocation["source"] = "static";
	let reason: string;
	const headroom = readHeadroom(input.usage, input.reservedOutputTokens);
	if (headroom.ok) {
		source = "headroom";
		const headroomBytes = bytesForTokens(Math.floor(headroom.tokens * share));
		batchBytes = Math.min(caps.batchBytes, headroomBytes);
		reason =
			`headroom ${formatCount(headroom.tokens)} tokens × ${share} → ${formatCount(headroomBytes)} bytes` +
			(headroomBytes > caps.batchBytes ? ` (capped at ${formatCount(caps.batchBytes)})` : "");
	} else {
		reason = `static caps (${headroom.why}): batch ${formatCount(batchBytes)} bytes`;
	}

	const wrappers = nonNegative(input.wrapperBytesPerBatch) + n * nonNegative(input.wrapperBytesPerResult);
	const body = batchBytes - wrappers;
	const demands = results.map((r) => demandOf(r, caps));
	const limitsFor = (charged: number): SurfaceLimits => ({
		maxBytes: Math.max(charged, MIN_WINDOW_BYTES),
		maxLines: caps.perResultLines,
	});

	const sumLow = demands.reduce((s, d) => s + d.low, 0);
	if (n === 0 || sumLow <= body) {
		const level = waterLevel(demands, body);
		const items = demands.map((d) => {
			const charged = Math.min(d.high, Math.max(d.low, level));
			return { limits: limitsFor(charged), oneLine: false, chargedBytes: charged };
		});
		return { items, batchBytes, source, reason };
	}

	// Not every result gets a window. Keep the longest affordable prefix of the order below; the
	// kept ones get exactly their minimum, so dropping one never raises another's budget.
	const order = demands.map((_, i) => i).sort((a, b) => demands[a].low - demands[b].low || a - b);
	let kept = 0;
	let prefix = 0;
	for (let k = 1; k <= n; k++) {
		prefix += demands[order[k - 1]].low;
		if (prefix + (n - k) * oneLineBytes <= body) kept = k;
	}
	const keep = new Set(order.slice(0, kept));
	const items = demands.map((d, i): AllocationItem => {
		if (keep.has(i)) return { limits: limitsFor(d.low), oneLine: false, chargedBytes: d.low };
		return { oneLine: true, chargedBytes: oneLineBytes };
	});
	reason += `; ${n - kept} of ${n} results as one-line entries`;
	return { items, batchBytes, source, reason };
}

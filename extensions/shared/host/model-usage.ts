/**
 * Usage (tokens, cost) of the package's own model calls — the tool-output summaries and the handoff
 * calls — and the one `details` field that records it, so `/headroom` can total it from the session.
 * Pure.
 */

/** Tokens and cost of one or more model calls. */
export interface CallUsage {
	/** How many calls (successful replies) this covers. */
	calls: number;
	/** Prompt tokens not served from the cache. */
	input: number;
	/** Completion tokens. */
	output: number;
	/** Prompt tokens served from the provider's cache. */
	cacheRead: number;
	/** Prompt tokens written to the provider's cache. */
	cacheWrite: number;
	/** Total cost in US dollars (0 when the model has no prices). */
	costUsd: number;
}

/** Key under `details` (tool results: `details.headroom.usage`; compaction entries: `details.usage`). */
export const USAGE_FIELD = "usage";

export const NO_USAGE: Readonly<CallUsage> = Object.freeze({
	calls: 0,
	input: 0,
	output: 0,
	cacheRead: 0,
	cacheWrite: 0,
	costUsd: 0,
});

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/** The usage of one reply as pi-ai reports it (`AssistantMessage.usage`); zeros for anything missing. */
export function usageOfReply(usage: unknown): CallUsage {
	const u = (usage ?? {}) as {
		input?: unknown;
		output?: unknown;
		cacheRead?: unknown;
		cacheWrite?: unknown;
		cost?: { total?: unknown };
	};
	return {
		calls: 1,
		input: num(u.input),
		output: num(u.output),
		cacheRead: num(u.cacheRead),
		cacheWrite: num(u.cacheWrite),
		costUsd: num(u.cost?.total),
	};
}

export function addUsage(a: CallUsage, b: CallUsage): CallUsage {
	return {
		calls: a.calls + b.calls,
		input: a.input + b.input,
		output: a.output + b.output,
		cacheRead: a.cacheRead + b.cacheRead,
		cacheWrite: a.cacheWrite + b.cacheWrite,
		costUsd: a.costUsd + b.costUsd,
	};
}

/** A well-formed CallUsage read back from stored details, or undefined. */
export function readUsage(value: unknown): CallUsage | undefined {
	if (!value || typeof value !== "object") return undefined;
	const v = value as Record<string, unknown>;
	if (typeof v.calls !== "number" || !Number.isInteger(v.calls) || v.calls < 0) return undefined;
	return {
		calls: v.calls,
		input: num(v.input),
		output: num(v.output),
		cacheRead: num(v.cacheRead),
		cacheWrite: num(v.cacheWrite),
		costUsd: num(v.costUsd),
	};
}

/**
 * The usage in pi-ai's `Usage` shape, which Pi 1.x adds to the session's totals when a compaction
 * carries it (`CompactionResult.usage`). The cost breakdown is not kept per part: all of it is `total`.
 */
export function toPiUsage(u: CallUsage) {
	return {
		input: u.input,
		output: u.output,
		cacheRead: u.cacheRead,
		cacheWrite: u.cacheWrite,
		totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite,
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: u.costUsd },
	};
}

/** The package's model calls recorded in a session, by purpose. */
export interface SessionCallUsage {
	/** Handoff compactions (summary, questions, answers, re-asks). */
	handoff: CallUsage;
	/** Tool-output summaries. */
	toolSummaries: CallUsage;
}

/** Total what a session's entries record: compaction `details.usage`, tool results' `details.headroom.usage`. */
export function sessionCallUsage(entries: readonly unknown[]): SessionCallUsage {
	let handoff: CallUsage = { ...NO_USAGE };
	let toolSummaries: CallUsage = { ...NO_USAGE };
	for (const entry of entries) {
		const e = entry as { type?: unknown; details?: unknown; message?: { role?: unknown; details?: unknown } };
		if (e?.type === "compaction") {
			const d = e.details as { kind?: unknown; usage?: unknown } | undefined;
			const u = d?.kind === "headroom-handoff" ? readUsage(d.usage) : undefined;
			if (u) handoff = addUsage(handoff, u);
		} else if (e?.type === "message" && e.message?.role === "toolResult") {
			const h = (e.message.details as { headroom?: { usage?: unknown } } | undefined)?.headroom;
			const u = readUsage(h?.usage);
			if (u) toolSummaries = addUsage(toolSummaries, u);
		}
	}
	return { handoff, toolSummaries };
}

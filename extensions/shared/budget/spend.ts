/**
 * What children spend, in Pi's own units: tokens (every request's input, output, cache reads and cache writes, as
 * Pi's usage reports them) and cost (Pi's `usage.cost.total`, only where Pi knows the model's price). Pure, and
 * the one contract between the subagents extension, which records each child's spend in the parent's session
 * entries (`subagent-run`, `subagent-settled`, field `spend`), and /headroom's ledger, which sums them: extensions
 * never import each other, they share this module and the session file.
 */

/** What a child (or a session's children together) spent. `cost` is absent while no request had a known price. */
export interface Spend {
	/** Tokens of every request: input + output + cache reads + cache writes. */
	tokens: number;
	/** In the currency of Pi's model prices (US dollars for the built-in ones); absent when no price was known. */
	cost?: number;
}

/** Session entries of the subagents extension that carry a child's spend so far (cumulative, all its runs). */
export const SPEND_ENTRY_TYPES: readonly string[] = ["subagent-run", "subagent-settled"];

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * The spend of one assistant message from its `usage` (Pi's shape on both lines). Anything malformed counts as
 * nothing; a cost of 0 is no known price (Pi reports 0 for a model without prices).
 */
export function spendOfUsage(usage: unknown): Spend {
	if (!usage || typeof usage !== "object") return { tokens: 0 };
	const u = usage as { input?: unknown; output?: unknown; cacheRead?: unknown; cacheWrite?: unknown; cost?: unknown };
	const tokens = count(u.input) + count(u.output) + count(u.cacheRead) + count(u.cacheWrite);
	const cost = count((u.cost as { total?: unknown } | undefined)?.total);
	return cost > 0 ? { tokens, cost } : { tokens };
}

/** a + b; the cost is known when either side's is. */
export function addSpend(a: Spend, b: Spend): Spend {
	const tokens = a.tokens + b.tokens;
	if (a.cost === undefined && b.cost === undefined) return { tokens };
	return { tokens, cost: (a.cost ?? 0) + (b.cost ?? 0) };
}

/** A spend read back from a record (session files are input): a valid one, or undefined. */
export function checkSpend(raw: unknown): Spend | undefined {
	if (!raw || typeof raw !== "object") return undefined;
	const r = raw as { tokens?: unknown; cost?: unknown };
	if (typeof r.tokens !== "number" || !Number.isFinite(r.tokens) || r.tokens < 0) return undefined;
	if (r.cost === undefined) return { tokens: r.tokens };
	if (typeof r.cost !== "number" || !Number.isFinite(r.cost) || r.cost < 0) return { tokens: r.tokens };
	return { tokens: r.tokens, cost: r.cost };
}

/**
 * What this session's children spent, from the branch's entries: each child's latest recorded spend (a child's
 * spend only grows; a later entry of it replaces an earlier one), summed.
 */
export function sessionSpendOf(entries: readonly unknown[]): { children: number; spend: Spend } {
	const latest = new Map<string, Spend>();
	for (const raw of entries) {
		const e = (raw ?? {}) as { type?: unknown; customType?: unknown; data?: unknown };
		if (e.type !== "custom" || typeof e.customType !== "string" || !SPEND_ENTRY_TYPES.includes(e.customType)) continue;
		const data = (e.data ?? {}) as { id?: unknown; spend?: unknown };
		if (typeof data.id !== "string") continue;
		const spend = checkSpend(data.spend);
		if (spend) latest.set(data.id, spend);
		else if (!latest.has(data.id)) latest.set(data.id, { tokens: 0 });
	}
	let total: Spend = { tokens: 0 };
	for (const s of latest.values()) total = addSpend(total, s);
	return { children: latest.size, spend: total };
}

/**
 * What a child's own session file (Pi's JSONL) says it spent: the usage of every assistant message in it, summed.
 * Lines that do not parse (a torn last line) count as nothing.
 */
export function spendOfSessionText(jsonl: string): Spend {
	let total: Spend = { tokens: 0 };
	for (const raw of jsonl.split("\n")) {
		if (!raw.startsWith("{") || !raw.includes('"assistant"')) continue;
		let line: { type?: unknown; message?: { role?: unknown; usage?: unknown } };
		try {
			line = JSON.parse(raw);
		} catch {
			continue;
		}
		if (line?.type === "message" && line.message?.role === "assistant")
			total = addSpend(total, spendOfUsage(line.message.usage));
	}
	return total;
}

/** "$0.0123", "$1.25": four decimals below a dollar, two above. */
export function formatCost(cost: number): string {
	if (!Number.isFinite(cost)) return `$${cost}`;
	return cost < 1 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

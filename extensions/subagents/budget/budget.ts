/**
 * Budgets of children, pure: what a child may spend (its spawn's `budget`, its agent file's, and the configured
 * `subagents.budget.perChild`, the tightest of each), what a pipeline that shares one budget may spend together,
 * what this session's children may spend together (`subagents.budget.perSession`), and the verdicts: a child that
 * reached one of them is stopped at the end of its turn, a spawn past the session's budget is refused. No Pi, no
 * I/O: the manager asks `budgetVerdict` at each turn's end and before a run starts.
 */
import { addSpend, type Spend } from "../../shared/budget/spend.ts";

export type { Spend } from "../../shared/budget/spend.ts";

/** Limits in tokens and in cost; an absent dimension is unbounded. */
export interface Budget {
	/** Tokens (input + output + cache reads + cache writes over every request). */
	tokens?: number;
	/** Cost in the currency of Pi's model prices; applies only where Pi knows the model's price. */
	cost?: number;
}

/** A child's budget as its record keeps it: its own limits, and the shared account it draws from, if any. */
export interface ChildBudget extends Budget {
	/** Id of the child whose budget a pipeline shares (that child's own id for the first stage). */
	shared?: string;
}

/** What a spawn's `budget` parameter (and an agent file's `budget`) may hold. */
export interface BudgetParam extends Budget {
	/** true: this child's budget is shared with the stages spawned `after` it. */
	shared?: boolean;
}

/** Which limit a child reached. */
export type BudgetScope = "child" | "pipeline" | "session";

/** A reached limit: whose, in which unit, the limit and what was spent against it. */
export interface BudgetReached {
	scope: BudgetScope;
	unit: "tokens" | "cost";
	limit: number;
	spent: number;
	/** The pipeline's first stage (scope "pipeline"). */
	owner?: string;
}

/** The children's fields the verdicts read. */
export interface Spender {
	id: string;
	spend?: Spend;
	budget?: ChildBudget;
}

const positive = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v > 0;

/** The tightest of several limits, per unit (absent ones ignored). */
export function tightest(...budgets: ReadonlyArray<Budget | undefined>): Budget {
	const out: Budget = {};
	for (const b of budgets) {
		if (!b) continue;
		if (positive(b.tokens)) out.tokens = Math.min(out.tokens ?? Number.POSITIVE_INFINITY, b.tokens);
		if (positive(b.cost)) out.cost = Math.min(out.cost ?? Number.POSITIVE_INFINITY, b.cost);
	}
	return out;
}

/** Whether a budget bounds anything. */
export function bounded(b: Budget | undefined): boolean {
	return positive(b?.tokens) || positive(b?.cost);
}

/** The first unit of `limit` that `spent` reached (spent ≥ limit), if any; a cost limit needs a known cost. */
export function reached(
	spent: Spend,
	limit: Budget,
): { unit: "tokens" | "cost"; limit: number; spent: number } | undefined {
	if (positive(limit.tokens) && spent.tokens >= limit.tokens)
		return { unit: "tokens", limit: limit.tokens, spent: spent.tokens };
	if (positive(limit.cost) && spent.cost !== undefined && spent.cost >= limit.cost)
		return { unit: "cost", limit: limit.cost, spent: spent.cost };
	return undefined;
}

/** What remains of `limit` after `spent` (never negative), per bounded unit. */
export function remaining(limit: Budget, spent: Spend): Budget {
	const out: Budget = {};
	if (positive(limit.tokens)) out.tokens = Math.max(0, limit.tokens - spent.tokens);
	if (positive(limit.cost)) out.cost = Math.max(0, limit.cost - (spent.cost ?? 0));
	return out;
}

/** The sum of the children's spends. */
export function totalSpend(children: readonly Spender[]): Spend {
	let total: Spend = { tokens: 0 };
	for (const c of children) if (c.spend) total = addSpend(total, c.spend);
	return total;
}

/** The children drawing from the shared budget of `owner` (the owner included). */
export function sharing(children: readonly Spender[], owner: string): Spender[] {
	return children.filter((c) => c.id === owner || c.budget?.shared === owner);
}

/**
 * Whether `child` must stop (or must not start): its own limits, then its pipeline's shared ones (the first
 * stage's limits against what every stage spent), then the session's (every child of the session).
 */
export function budgetVerdict(
	child: Spender,
	children: readonly Spender[],
	session: Budget | undefined,
): BudgetReached | undefined {
	const own = child.budget ? reached(child.spend ?? { tokens: 0 }, child.budget) : undefined;
	if (own) return { scope: "child", ...own };
	const ownerId = child.budget?.shared;
	if (ownerId && ownerId !== child.id) {
		const owner = children.find((c) => c.id === ownerId);
		const pool = owner?.budget ? reached(totalSpend(sharing(children, ownerId)), owner.budget) : undefined;
		if (pool) return { scope: "pipeline", owner: ownerId, ...pool };
	} else if (ownerId === child.id && child.budget) {
		const pool = reached(totalSpend(sharing(children, ownerId)), child.budget);
		if (pool) return { scope: "pipeline", owner: ownerId, ...pool };
	}
	const all = session ? reached(totalSpend(children), session) : undefined;
	return all ? { scope: "session", ...all } : undefined;
}

/** The shared budget a stage spawned `after` `inputs` joins: the first input's that has one. */
export function sharedFrom(inputs: readonly string[], children: readonly Spender[]): string | undefined {
	for (const id of inputs) {
		const shared = children.find((c) => c.id === id)?.budget?.shared;
		if (shared) return shared;
	}
	return undefined;
}

/**
 * A child's budget from its spawn's parameter, its agent file's and the configured per-child bound (the tightest
 * of each unit), and the shared account it belongs to: its own (`shared: true`), else its inputs' (a stage after a
 * child whose budget is shared), else none. Undefined when nothing bounds it.
 */
export function childBudget(options: {
	id: string;
	param?: BudgetParam;
	agent?: Budget;
	perChild?: Budget;
	inputsShared?: string;
}): ChildBudget | undefined {
	const limits = tightest(options.param, options.agent, options.perChild);
	const shared = options.param?.shared === true ? options.id : options.inputsShared;
	if (!bounded(limits) && !shared) return undefined;
	return { ...limits, ...(shared ? { shared } : {}) };
}

/** A spawn's `budget` parameter checked (the model wrote it): the parameter, or why it is refused. */
export function checkBudgetParam(raw: unknown): { ok: true; value?: BudgetParam } | { ok: false; problem: string } {
	if (raw === undefined) return { ok: true };
	if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, problem: "not an object" };
	const r = raw as Record<string, unknown>;
	for (const key of Object.keys(r))
		if (!["tokens", "cost", "shared"].includes(key)) return { ok: false, problem: `unknown key "${key}"` };
	for (const key of ["tokens", "cost"] as const)
		if (r[key] !== undefined && !positive(r[key])) return { ok: false, problem: `${key} must be a positive number` };
	if (r.shared !== undefined && typeof r.shared !== "boolean")
		return { ok: false, problem: "shared must be true or false" };
	return {
		ok: true,
		value: {
			...(r.tokens !== undefined ? { tokens: r.tokens as number } : {}),
			...(r.cost !== undefined ? { cost: r.cost as number } : {}),
			...(r.shared !== undefined ? { shared: r.shared as boolean } : {}),
		},
	};
}

/** A child's budget read back from a record (session files are input): a valid one, or undefined. */
export function checkChildBudget(raw: unknown): ChildBudget | undefined {
	if (!raw || typeof raw !== "object" || Array.isArray(raw)) return undefined;
	const r = raw as Record<string, unknown>;
	const out: ChildBudget = {};
	if (positive(r.tokens)) out.tokens = r.tokens;
	if (positive(r.cost)) out.cost = r.cost;
	if (typeof r.shared === "string" && /^sa-\d+$/.test(r.shared)) out.shared = r.shared;
	return bounded(out) || out.shared ? out : undefined;
}

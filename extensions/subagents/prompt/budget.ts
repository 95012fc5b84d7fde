/**
 * The wording of children's budgets: the spawn parameter, why a child was stopped or not started, a spawn refused
 * past the session's budget, spend as lists, checks and the picker show it. Pinned by tests.
 */
import { formatCost, type Spend } from "../../shared/budget/spend.ts";
import type { Budget, BudgetReached } from "../budget/budget.ts";
import { formatCount } from "../domain/format.ts";

/** subagent_spawn's `budget` parameter (kept short: it is in every request's tool schemas). */
export const SPAWN_BUDGET_PARAM =
	"Spending cap (optional): tokens (input+output+cache, all turns) and/or cost (model price units). " +
	"Reached: stopped after that turn, outcome budget. shared: stages spawned after it share it.";

/** "1,234 tokens", "1,234 tokens, $0.0123". */
export function spendWords(spend: Spend | undefined): string {
	const s = spend ?? { tokens: 0 };
	return `${formatCount(s.tokens)} tokens${s.cost !== undefined ? `, ${formatCost(s.cost)}` : ""}`;
}

/** "200,000 tokens", "$2.00", "200,000 tokens or $2.00". */
export function budgetWords(b: Budget): string {
	const parts = [
		b.tokens !== undefined ? `${formatCount(b.tokens)} tokens` : "",
		b.cost !== undefined ? formatCost(b.cost) : "",
	].filter(Boolean);
	return parts.join(" or ");
}

/** What remains of a budget: "800 tokens, $1.50". */
function leftWords(b: Budget): string {
	return budgetWords(b).replace(" or ", ", ");
}

/** A unit's amount: "201,234 tokens", "$2.0100". */
function amount(unit: "tokens" | "cost", n: number): string {
	return unit === "tokens" ? `${formatCount(n)} tokens` : formatCost(n);
}

/** Whose budget: the child's, its pipeline's, the session's. */
function whose(r: BudgetReached): string {
	if (r.scope === "child") return "its budget";
	if (r.scope === "pipeline") return `the budget its pipeline shares (given to ${r.owner})`;
	return "this session's subagent budget (subagents.budget.perSession)";
}

/** Why a run was stopped at the end of a turn (the result's first line follows "Budget reached: "). */
export function budgetStopReason(r: BudgetReached): string {
	return (
		`stopped at the end of a turn: it reached ${whose(r)} of ${amount(r.unit, r.limit)} ` +
		`(${amount(r.unit, r.spent)} spent); its output so far follows. A new child with a budget can take the work on.`
	);
}

/** Why a child never started: its budget (a pipeline's, the session's) was already spent. */
export function budgetNotStartedReason(r: BudgetReached): string {
	return `not started: ${whose(r)} of ${amount(r.unit, r.limit)} is spent (${amount(r.unit, r.spent)}).`;
}

/** A spawn refused because this session's children have spent the session's budget: what was spent, what remains. */
export function sessionBudgetRefusal(r: BudgetReached, left: Budget): string {
	return (
		`No child started: this session's subagents spent ${amount(r.unit, r.spent)} of their budget of ` +
		`${amount(r.unit, r.limit)} (subagents.budget.perSession); remaining: ${leftWords(left) || "nothing"}. ` +
		"Finish with what you have, or ask the user to raise the budget."
	);
}

/**
 * subagent_send answered a child whose budget (its pipeline's, the session's: other children spent it while it
 * waited) is reached: it stops at the end of this turn, before its model reads the answer.
 */
export function answeredOverBudgetText(id: string, r: BudgetReached): string {
	return (
		`Answered ${id}'s question, but it will not use the answer: while it waited it reached ${whose(r)} of ` +
		`${amount(r.unit, r.limit)} (${amount(r.unit, r.spent)} spent), so it stops at the end of this turn and its ` +
		"output so far arrives as its result (budget). Spawn a new child with the answer for the rest of the work."
	);
}

/** subagent_send on a child that has spent its budget. */
export function budgetSpentSendError(id: string, r: BudgetReached): string {
	return `${id} cannot run again: ${budgetNotStartedReason(r).replace(/^not started: /, "")} Spawn a new child for the rest of the work.`;
}

/** A spawn's `budget` parameter that is not usable. */
export function badBudgetError(problem: string): string {
	return `budget: ${problem}; give { tokens?: <positive number>, cost?: <positive number>, shared?: true }.`;
}

/** Said in the spawn result when a budget applies. */
export function budgetSpawnNote(own: Budget, shared: string | undefined, id: string, sessionLeft?: Budget): string {
	const parts: string[] = [];
	if (own.tokens !== undefined || own.cost !== undefined) parts.push(`budget ${budgetWords(own)}`);
	if (shared === id) parts.push("shared with the stages spawned after it");
	else if (shared) parts.push(`drawing on the budget shared with ${shared}`);
	if (sessionLeft) parts.push(`this session has ${leftWords(sessionLeft) || "nothing"} left`);
	return parts.length > 0 ? `Budget: ${parts.join("; ")}.` : "";
}

/** A cost budget for a child whose model has no price in Pi: only its tokens can be counted. */
export function unpricedModelNote(model: string): string {
	return `Note: Pi knows no price for ${model}, so a cost budget cannot stop this child; its tokens are counted.`;
}

/** " · spent 1,234 tokens of 10,000 tokens" for a list line: only once it spent something or has a budget. */
export function spendSuffix(c: { spend?: Spend; budget?: Budget & { shared?: string } }): string {
	if (!c.spend && !c.budget) return "";
	return ` · ${spendOfBudget(c.spend, c.budget)}${sharedWords(c.budget)}`;
}

/** " (shared with sa-1's pipeline)" for a child drawing on a shared budget. */
function sharedWords(b: { shared?: string } | undefined): string {
	return b?.shared ? ` (shared budget of ${b.shared})` : "";
}

/** Spend with its limit, for lists and checks: "12,345 tokens of 200,000 tokens". */
export function spendOfBudget(spend: Spend | undefined, budget: Budget | undefined): string {
	const of = budget && (budget.tokens !== undefined || budget.cost !== undefined) ? ` of ${budgetWords(budget)}` : "";
	return `spent ${spendWords(spend)}${of}`;
}

/** 1234 → "1.2k", 2500000 → "2.5M": a picker cell's short count. */
function short(n: number): string {
	if (n < 1000) return String(Math.round(n));
	if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
	return `${(n / 1_000_000).toFixed(1)}M`;
}

/** The picker's "spent" cell: "12k/200k $0.0123", "—" before any spend. */
export function spentCell(c: { spend?: Spend; budget?: Budget }): string {
	if (!c.spend && !c.budget) return "—";
	const tokens = short(c.spend?.tokens ?? 0) + (c.budget?.tokens !== undefined ? `/${short(c.budget.tokens)}` : "");
	const cost = c.spend?.cost !== undefined ? ` ${formatCost(c.spend.cost)}` : "";
	return tokens + cost;
}

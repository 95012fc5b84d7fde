/**
 * A spawn's budget, decided before anything is prepared: its `budget` parameter checked, the session's budget
 * asked (a session whose children spent it starts no child, and says what remains), and the child's budget made
 * from the parameter, its agent file's and the configured per-child bound, sharing its inputs' account when a
 * pipeline shares one. Returns what the manager needs (the budget given the child's id) and the spawn's notes.
 */
import type { ChildRecord } from "../domain/records.ts";
import { badBudgetError, budgetSpawnNote, sessionBudgetRefusal, unpricedModelNote } from "../prompt/budget.ts";
import {
	type Budget,
	bounded,
	type ChildBudget,
	checkBudgetParam,
	childBudget,
	reached,
	remaining,
	sharedFrom,
	totalSpend,
} from "./budget.ts";

/** `subagents.budget` of the configuration. */
export interface BudgetConfig {
	perChild: Budget;
	perSession: Budget;
}

export interface SpawnBudget {
	/** The child's budget given its id (undefined: unbounded, the session's aside). */
	of: (id: string) => ChildBudget | undefined;
	/** Sentences for the spawn result: its budget, what the session has left, a cost budget Pi cannot price. */
	notes: (child: Pick<ChildRecord, "id" | "budget">, model: unknown, modelLabel: string) => string[];
}

/** Whether Pi knows a price for the model (its Model's `cost` has a non-zero rate). */
export function priced(model: unknown): boolean {
	const cost = (model as { cost?: Record<string, unknown> } | undefined)?.cost;
	if (!cost || typeof cost !== "object") return false;
	return Object.values(cost).some((v) => typeof v === "number" && v > 0);
}

/** Throws the refusal (a bad parameter, a spent session budget); else the spawn's budget. */
export function spawnBudget(
	children: readonly ChildRecord[],
	param: unknown,
	agent: Budget | undefined,
	config: BudgetConfig,
	after: readonly string[],
): SpawnBudget {
	const checked = checkBudgetParam(param);
	if (!checked.ok) throw new Error(badBudgetError(checked.problem));
	const spent = totalSpend(children);
	const session = bounded(config.perSession) ? config.perSession : undefined;
	const over = session ? reached(spent, session) : undefined;
	if (session && over) throw new Error(sessionBudgetRefusal({ scope: "session", ...over }, remaining(session, spent)));
	const inputsShared = sharedFrom(after, children);
	return {
		of: (id) => childBudget({ id, param: checked.value, agent, perChild: config.perChild, inputsShared }),
		notes: (child, model, modelLabel) => {
			const own = child.budget ?? {};
			const limits: Budget = {
				...(own.tokens !== undefined ? { tokens: own.tokens } : {}),
				...(own.cost !== undefined ? { cost: own.cost } : {}),
			};
			const note = budgetSpawnNote(limits, own.shared, child.id, session ? remaining(session, spent) : undefined);
			const wantsCost = own.cost !== undefined || session?.cost !== undefined;
			return [note, wantsCost && !priced(model) ? unpricedModelNote(modelLabel) : ""].filter(Boolean);
		},
	};
}

/**
 * Children's budgets: the spend arithmetic (property-based), the verdicts (a child's own budget, a pipeline's
 * shared one, the session's), the checks of parameters and records, and the manager stopping a child at the end
 * of the turn that reached its budget, with outcome "budget" and its partial output, never "completed".
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { addSpend, type Spend, sessionSpendOf, spendOfUsage } from "../../extensions/shared/budget/spend.ts";
import {
	type Budget,
	budgetVerdict,
	checkBudgetParam,
	checkChildBudget,
	childBudget,
	reached,
	remaining,
	type Spender,
	sharedFrom,
	tightest,
	totalSpend,
} from "../../extensions/subagents/budget/budget.ts";
import type { ChildEvent, ChildHandle, ChildSpec } from "../../extensions/subagents/children/manager.ts";
import { SubagentManager } from "../../extensions/subagents/children/manager.ts";
import { budgetStopReason, sessionBudgetRefusal } from "../../extensions/subagents/prompt/budget.ts";

const amount = fc.integer({ min: 0, max: 1_000_000 });
const price = fc.option(fc.double({ min: 0, max: 50, noNaN: true }), { nil: undefined });
const spend = fc
	.record({ tokens: amount, cost: price })
	.map((s): Spend => (s.cost === undefined ? { tokens: s.tokens } : s));
const usage = fc.record({
	input: amount,
	output: amount,
	cacheRead: amount,
	cacheWrite: amount,
	cost: fc.record({ total: fc.double({ min: 0, max: 10, noNaN: true }) }),
});
const limit = fc.record(
	{ tokens: fc.integer({ min: 1, max: 2_000_000 }), cost: fc.double({ min: 0.001, max: 100, noNaN: true }) },
	{ requiredKeys: [] },
);

describe("spend arithmetic", () => {
	it("counts input, output, cache reads and cache writes; cost only when Pi priced it", () => {
		fc.assert(
			fc.property(usage, (u) => {
				const s = spendOfUsage(u);
				expect(s.tokens).toBe(u.input + u.output + u.cacheRead + u.cacheWrite);
				if (u.cost.total > 0) expect(s.cost).toBe(u.cost.total);
				else expect(s.cost).toBeUndefined();
			}),
		);
	});

	it("counts malformed usage as nothing, never as negative or NaN", () => {
		for (const bad of [undefined, null, 7, "x", { input: -5, output: Number.NaN, cacheRead: "3", cost: { total: -1 } }])
			expect(spendOfUsage(bad)).toEqual({ tokens: 0 });
	});

	it("sums in any order and grouping to the same spend (summing over turns)", () => {
		fc.assert(
			fc.property(fc.array(spend, { maxLength: 20 }), (spends) => {
				const forward = spends.reduce(addSpend, { tokens: 0 });
				const backward = [...spends].reverse().reduce(addSpend, { tokens: 0 });
				expect(forward.tokens).toBe(spends.reduce((n, s) => n + s.tokens, 0));
				expect(backward.tokens).toBe(forward.tokens);
				const anyPriced = spends.some((s) => s.cost !== undefined);
				expect(forward.cost === undefined).toBe(!anyPriced);
				if (anyPriced) expect(backward.cost).toBeCloseTo(forward.cost!, 6);
				const children: Spender[] = spends.map((s, i) => ({ id: `sa-${i + 1}`, spend: s }));
				expect(totalSpend(children).tokens).toBe(forward.tokens);
			}),
		);
	});

	it("a limit is reached exactly when what was spent is at least the limit", () => {
		fc.assert(
			fc.property(spend, limit, (s, l) => {
				const r = reached(s, l);
				const byTokens = l.tokens !== undefined && s.tokens >= l.tokens;
				const byCost = l.cost !== undefined && s.cost !== undefined && s.cost >= l.cost;
				expect(r !== undefined).toBe(byTokens || byCost);
				const left = remaining(l, s);
				if (l.tokens !== undefined) {
					expect(left.tokens).toBeGreaterThanOrEqual(0);
					expect(left.tokens === 0).toBe(byTokens);
				}
				if (l.cost !== undefined) expect(left.cost).toBeGreaterThanOrEqual(0);
			}),
		);
	});

	it("the tightest of several limits is the smallest of each unit", () => {
		fc.assert(
			fc.property(fc.array(fc.option(limit, { nil: undefined }), { maxLength: 5 }), (limits) => {
				const t = tightest(...limits);
				const tokens = limits.flatMap((l) => (l?.tokens !== undefined ? [l.tokens] : []));
				const costs = limits.flatMap((l) => (l?.cost !== undefined ? [l.cost] : []));
				expect(t.tokens).toBe(tokens.length ? Math.min(...tokens) : undefined);
				expect(t.cost).toBe(costs.length ? Math.min(...costs) : undefined);
			}),
		);
	});

	it("a session's spend from its entries is each child's latest record, summed", () => {
		fc.assert(
			fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), spend), { maxLength: 30 }), (records) => {
				const entries = records.map(([n, s], i) => ({
					type: "custom",
					customType: i % 2 ? "subagent-run" : "subagent-settled",
					data: { id: `sa-${n}`, spend: s },
				}));
				const latest = new Map<string, Spend>();
				for (const [n, s] of records) latest.set(`sa-${n}`, s);
				const got = sessionSpendOf([
					{ type: "message" },
					...entries,
					{ type: "custom", customType: "other", data: {} },
				]);
				expect(got.children).toBe(latest.size);
				expect(got.spend.tokens).toBe([...latest.values()].reduce((n, s) => n + s.tokens, 0));
			}),
		);
	});
});

describe("budget verdicts", () => {
	const s = (tokens: number, cost?: number): Spend => (cost === undefined ? { tokens } : { tokens, cost });

	it("a child's own budget, in tokens or in a known cost", () => {
		expect(budgetVerdict({ id: "sa-1", spend: s(99), budget: { tokens: 100 } }, [], undefined)).toBeUndefined();
		expect(budgetVerdict({ id: "sa-1", spend: s(100), budget: { tokens: 100 } }, [], undefined)).toMatchObject({
			scope: "child",
			unit: "tokens",
			limit: 100,
			spent: 100,
		});
		// No known price: a cost budget cannot stop it.
		expect(budgetVerdict({ id: "sa-1", spend: s(10 ** 6), budget: { cost: 0.01 } }, [], undefined)).toBeUndefined();
		expect(budgetVerdict({ id: "sa-1", spend: s(1, 0.02), budget: { cost: 0.01 } }, [], undefined)?.unit).toBe("cost");
	});

	it("a pipeline's shared budget counts every stage drawing on it", () => {
		const first: Spender = { id: "sa-1", spend: s(60), budget: { tokens: 100, shared: "sa-1" } };
		const second: Spender = { id: "sa-2", spend: s(30), budget: { shared: "sa-1" } };
		const other: Spender = { id: "sa-3", spend: s(500) };
		expect(budgetVerdict(second, [first, second, other], undefined)).toBeUndefined();
		second.spend = s(40);
		expect(budgetVerdict(second, [first, second, other], undefined)).toMatchObject({
			scope: "pipeline",
			owner: "sa-1",
			spent: 100,
		});
		expect(budgetVerdict(first, [first, second, other], undefined)?.scope).toBe("pipeline");
		expect(sharedFrom(["sa-3", "sa-2"], [first, second, other])).toBe("sa-1");
	});

	it("the session's budget counts every child of the session", () => {
		const children: Spender[] = [
			{ id: "sa-1", spend: s(400) },
			{ id: "sa-2", spend: s(500) },
		];
		expect(budgetVerdict(children[1], children, { tokens: 1000 })).toBeUndefined();
		children[0].spend = s(500);
		expect(budgetVerdict(children[1], children, { tokens: 1000 })).toMatchObject({ scope: "session", spent: 1000 });
	});

	it("a child's budget is the tightest of spawn, agent file and configuration; shared: true names it", () => {
		expect(
			childBudget({ id: "sa-4", param: { tokens: 500 }, agent: { tokens: 300 }, perChild: { tokens: 400 } }),
		).toEqual({
			tokens: 300,
		});
		expect(childBudget({ id: "sa-4", param: { tokens: 500, shared: true } })).toEqual({ tokens: 500, shared: "sa-4" });
		expect(childBudget({ id: "sa-5", inputsShared: "sa-4" })).toEqual({ shared: "sa-4" });
		expect(childBudget({ id: "sa-6" })).toBeUndefined();
	});

	it("checks the spawn parameter and records as input", () => {
		expect(checkBudgetParam(undefined)).toEqual({ ok: true });
		expect(checkBudgetParam({ tokens: 10, shared: true })).toEqual({ ok: true, value: { tokens: 10, shared: true } });
		for (const bad of [5, [], { tokens: 0 }, { cost: -1 }, { tokens: "10" }, { shared: "yes" }, { limit: 3 }])
			expect(checkBudgetParam(bad).ok).toBe(false);
		expect(checkChildBudget({ tokens: 5, shared: "sa-2" })).toEqual({ tokens: 5, shared: "sa-2" });
		expect(checkChildBudget({ tokens: -5, shared: "../x" })).toBeUndefined();
		expect(checkChildBudget("x")).toBeUndefined();
	});

	it("says what was spent and what remains", () => {
		const r = budgetVerdict({ id: "sa-1", spend: s(1200), budget: { tokens: 1000 } }, [], undefined)!;
		expect(budgetStopReason(r)).toContain("its budget of 1,000 tokens (1,200 tokens spent)");
		const session = budgetVerdict({ id: "sa-1", spend: s(1200) }, [{ id: "sa-1", spend: s(1200) }], {
			tokens: 1000,
			cost: 2,
		})!;
		expect(sessionBudgetRefusal(session, remaining({ tokens: 1000, cost: 2 }, s(1200)))).toContain(
			"remaining: 0 tokens, $2.00",
		);
	});
});

/** A child that streams its turns (each with usage), then waits for abort or a final answer. */
class TurnsBackend {
	constructor(private readonly turns: (id: string) => Array<{ text: string; tokens: number; continues: boolean }>) {}
	async create(spec: ChildSpec, onEvent: (e: ChildEvent) => void): Promise<ChildHandle> {
		let abort: (() => void) | undefined;
		return {
			sessionFile: `/sessions/${spec.id}.jsonl`,
			prompt: async () => {
				const turns = this.turns(spec.id);
				const aborted = new Promise<boolean>((resolve) => {
					abort = () => resolve(true);
				});
				for (const t of turns) {
					onEvent({ type: "text", delta: t.text });
					onEvent({ type: "assistant_end", outputTokens: 1, spend: { tokens: t.tokens } });
					onEvent({ type: "turn_end", continues: t.continues });
					const stop = await Promise.race([aborted, new Promise<boolean>((r) => setTimeout(() => r(false), 5))]);
					if (stop) return [{ role: "assistant", content: [], stopReason: "aborted", errorMessage: "aborted" }];
				}
				const last = turns[turns.length - 1];
				return [{ role: "assistant", content: [{ type: "text", text: last?.text ?? "" }], stopReason: "stop" }];
			},
			steer: async () => undefined,
			abort: async () => abort?.(),
			dispose: () => undefined,
		};
	}
}

const managers: SubagentManager[] = [];
afterEach(async () => {
	for (const m of managers.splice(0)) await m.shutdown();
});

function manager(backend: TurnsBackend, sessionBudget?: Budget) {
	const m = new SubagentManager(backend, {
		maxConcurrent: 1,
		inactivityTimeoutMs: 10_000,
		maxRunTimeMs: 60_000,
		watchdogTickMs: 20,
		sessionBudget,
	});
	managers.push(m);
	return m;
}

const spawnRequest = (prompt: string, budget?: Budget) => ({
	prompt,
	modelLabel: "mock/m",
	model: {},
	tools: ["read"],
	cwd: "/w",
	context: "fresh" as const,
	systemAppend: [],
	...(budget ? { budget: () => budget } : {}),
});

describe("the manager and budgets", () => {
	const turns = [
		{ text: "TURN-ONE", tokens: 600, continues: true },
		{ text: "TURN-TWO", tokens: 600, continues: true },
		{ text: "TURN-THREE", tokens: 600, continues: true },
		{ text: "FINAL", tokens: 600, continues: false },
	];

	it("stops a child at the end of the turn that reached its budget: outcome budget, partial output, its spend", async () => {
		const m = manager(new TurnsBackend(() => turns));
		const child = m.spawn(spawnRequest("work", { tokens: 1000 }));
		await m.waitFor([child.id], { mode: "all" });
		expect(child.state).toBe("budget");
		expect(child.spend).toEqual({ tokens: 1200 });
		const result = m.ledger.latest(child.id)!;
		expect(result.state).toBe("budget");
		expect(result.text).toMatch(/^Budget reached: stopped at the end of a turn: it reached its budget of 1,000 tokens/);
		expect(result.text).toContain("TURN-ONE");
		expect(result.text).toContain("TURN-TWO");
		expect(result.text).not.toContain("TURN-THREE");
		expect(m.ledger.pending()).toHaveLength(1);
		await expect(m.send(child.id, "go on")).rejects.toThrow(/cannot run again/);
	});

	it("a child within its budget completes, and a final answer in the turn that reaches it completes too", async () => {
		const m = manager(new TurnsBackend(() => turns));
		const within = m.spawn(spawnRequest("a", { tokens: 10_000 }));
		await m.waitFor([within.id], { mode: "all" });
		expect(within.state).toBe("completed");
		expect(within.spend).toEqual({ tokens: 2400 });
		const m2 = manager(new TurnsBackend(() => [{ text: "ONLY", tokens: 5000, continues: false }]));
		const last = m2.spawn(spawnRequest("b", { tokens: 1000 }));
		await m2.waitFor([last.id], { mode: "all" });
		expect(last.state).toBe("completed");
	});

	it("the session's budget stops a running child and keeps a queued one from starting", async () => {
		const m = manager(new TurnsBackend(() => turns), { tokens: 1000 });
		const first = m.spawn(spawnRequest("a"));
		const second = m.spawn(spawnRequest("b"));
		expect(second.state).toBe("queued");
		await m.waitFor([first.id, second.id], { mode: "all" });
		expect(first.state).toBe("budget");
		expect(m.ledger.latest(first.id)!.text).toContain("this session's subagent budget");
		expect(second.state).toBe("budget");
		expect(second.startedAt).toBeUndefined();
		expect(m.ledger.latest(second.id)!.text).toContain("not started");
	});
});

describe("budgets in the configuration", () => {
	it("a project may lower the user's budgets, never raise them, and may set one where the user has none", async () => {
		const { boundProjectConfig } = await import("../../extensions/shared/host/config-bounds.ts");
		const { DEFAULT_CONFIG } = await import("../../extensions/shared/host/config.ts");
		const user = structuredClone(DEFAULT_CONFIG);
		user.subagents.budget.perChild = { tokens: 200_000 };
		const project = { subagents: { budget: { perChild: { tokens: 900_000 }, perSession: { cost: 3 } } } };
		const { config, warnings } = boundProjectConfig(project, user, { project: "p.json", user: "u.json" });
		expect(config).toEqual({ subagents: { budget: { perChild: { tokens: 200_000 }, perSession: { cost: 3 } } } });
		expect(warnings).toEqual([
			expect.stringContaining('"subagents.budget.perChild.tokens" 900000 is above your limit 200000'),
		]);
		const lower = boundProjectConfig({ subagents: { budget: { perChild: { tokens: 1000 } } } }, user, {
			project: "p.json",
			user: "u.json",
		});
		expect(lower).toEqual({ config: { subagents: { budget: { perChild: { tokens: 1000 } } } }, warnings: [] });
	});
});

describe("schema growth", () => {
	it("the spawn's budget parameter adds at most 400 bytes to the parent's first request", async () => {
		const { setupSubagents } = await import("../../extensions/subagents/index.ts");
		const tools = new Map<string, { parameters: { properties: Record<string, unknown> } }>();
		setupSubagents(
			{
				registerTool: (t: { name: string; parameters: { properties: Record<string, unknown> } }) =>
					tools.set(t.name, t),
				registerCommand: () => undefined,
				registerMessageRenderer: () => undefined,
				on: () => undefined,
				sendMessage: () => undefined,
				appendEntry: () => undefined,
				getThinkingLevel: () => "off",
			} as never,
			0,
		);
		const spawn = tools.get("subagent_spawn")!;
		const added = Buffer.byteLength(`,"budget":${JSON.stringify(spawn.parameters.properties.budget)}`);
		expect(added).toBeGreaterThan(100); // it is there
		expect(added).toBeLessThanOrEqual(400);
		// Every other tool's schema is unchanged by budgets: only subagent_spawn has the parameter.
		for (const [name, t] of tools)
			if (name !== "subagent_spawn") expect(t.parameters.properties?.budget).toBeUndefined();
	});
});

/**
 * Budgets through the tools and the records: subagent_spawn applies the tightest of its `budget`, the agent file's
 * and `subagents.budget.perChild`, refuses a spawn once the session's children spent `perSession` (saying what
 * remains), shares a pipeline's budget with the stages after it; list and check show each child's spend; the
 * session's records keep spend and budget so a restore continues the same accounts; /headroom's ledger sums them.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { childSpend } from "../../extensions/headroom/ledger.ts";
import { spendLine } from "../../extensions/headroom/ledger-format.ts";
import { spendOfSessionText } from "../../extensions/shared/budget/spend.ts";
import { DEFAULT_CONFIG, type HeadroomConfig } from "../../extensions/shared/host/config.ts";
import { persistRun, persistSettled, restoreFromSession } from "../../extensions/subagents/delivery/persistence.ts";
import { checkTool } from "../../extensions/subagents/tools/check.ts";
import { listTool } from "../../extensions/subagents/tools/list.ts";
import { spawnTool } from "../../extensions/subagents/tools/spawn.ts";
import { pickerRow, stateLine } from "../../extensions/subagents/view/screens.ts";
import { onSettled, useFakeWorlds } from "./subagents-fakes.ts";

const world = useFakeWorlds();

function budgetConfig(budget: HeadroomConfig["subagents"]["budget"]): HeadroomConfig {
	const config = structuredClone(DEFAULT_CONFIG) as HeadroomConfig;
	config.subagents.budget = budget;
	return config;
}

const text = (r: { content: Array<{ text: string }> }) => r.content.map((c) => c.text).join("");

describe("subagent_spawn's budget", () => {
	it("is the tightest of the parameter and subagents.budget.perChild, and the result says it", async () => {
		const w = world({ config: budgetConfig({ perChild: { tokens: 5000 }, perSession: {} }) });
		const r = await spawnTool(w.services, { prompt: "task", budget: { tokens: 9000 } }, w.ctx);
		const child = w.manager.get("sa-1")!;
		expect(child.budget).toEqual({ tokens: 5000 });
		expect(text(r)).toContain("Budget: budget 5,000 tokens.");
		const capped = await spawnTool(w.services, { prompt: "task", budget: { tokens: 100, cost: 1 } }, w.ctx);
		expect(w.manager.get("sa-2")!.budget).toEqual({ tokens: 100, cost: 1 });
		// The mock model has no price in Pi: a cost budget cannot stop it, and the spawn says so.
		expect(text(capped)).toContain("Pi knows no price for mock/mock-model");
	});

	it("refuses a bad parameter before anything starts", async () => {
		const w = world();
		await expect(spawnTool(w.services, { prompt: "task", budget: { tokens: -1 } }, w.ctx)).rejects.toThrow(
			/budget: tokens must be a positive number/,
		);
		expect(w.manager.list()).toHaveLength(0);
	});

	it("refuses a spawn once the session's children spent the session's budget, saying what remains", async () => {
		const w = world({ config: budgetConfig({ perChild: {}, perSession: { tokens: 1000, cost: 5 } }) });
		const first = await spawnTool(w.services, { prompt: "one" }, w.ctx);
		expect(text(first)).toContain("this session has 1,000 tokens, $5.00 left");
		const child = w.manager.get("sa-1")!;
		child.spend = { tokens: 1000, cost: 1.5 };
		await expect(spawnTool(w.services, { prompt: "two" }, w.ctx)).rejects.toThrow(
			"No child started: this session's subagents spent 1,000 tokens of their budget of 1,000 tokens (subagents.budget.perSession); remaining: 0 tokens, $3.50.",
		);
		expect(w.manager.list()).toHaveLength(1);
	});

	it("shares a pipeline's budget with the stages spawned after it", async () => {
		const w = world();
		await spawnTool(w.services, { prompt: "scout", name: "scout", budget: { tokens: 800, shared: true } }, w.ctx);
		const r = await spawnTool(w.services, { prompt: "worker", after: ["scout"] }, w.ctx);
		expect(w.manager.get("sa-1")!.budget).toEqual({ tokens: 800, shared: "sa-1" });
		expect(w.manager.get("sa-2")!.budget).toEqual({ shared: "sa-1" });
		expect(text(r)).toContain("drawing on the budget shared with sa-1");
		// The scout spent the pipeline's budget: the stage after it does not start.
		w.manager.get("sa-1")!.spend = { tokens: 900 };
		w.backend.finish("sa-1", "map");
		await w.manager.waitFor(["sa-2"], { mode: "all" });
		expect(w.manager.get("sa-2")!.state).toBe("budget");
		expect(w.manager.ledger.latest("sa-2")!.text).toContain("the budget its pipeline shares (given to sa-1)");
	});
});

describe("spend shown and kept", () => {
	it("list, check, the picker and the live view show a child's spend against its budget", async () => {
		const w = world();
		await spawnTool(w.services, { prompt: "task", budget: { tokens: 200_000 } }, w.ctx);
		const child = w.manager.get("sa-1")!;
		child.spend = { tokens: 12_345, cost: 0.0123 };
		expect(text(listTool(w.services, w.ctx))).toContain("· spent 12,345 tokens, $0.0123 of 200,000 tokens");
		expect(text(await checkTool(w.services, { id: "sa-1" }, w.ctx))).toContain(
			"\nspent 12,345 tokens, $0.0123 of 200,000 tokens\n",
		);
		expect(pickerRow(child, [child], Date.now())).toContain("12k/200k $0.0123");
		expect(stateLine(child, [child], Date.now())).toContain("spent 12,345 tokens, $0.0123 of 200,000 tokens");
	});

	it("the session's records keep spend and budget: a restore continues the same accounts", async () => {
		const w = world();
		onSettled(w, (result, child) => persistSettled(w.services, result, child));
		await spawnTool(w.services, { prompt: "task", budget: { tokens: 5000, shared: true } }, w.ctx);
		const child = w.manager.get("sa-1")!;
		persistRun(w.services, child, 1, "started");
		child.spend = { tokens: 4321, cost: 0.5 };
		w.backend.finish("sa-1", "done");
		await w.manager.waitFor(["sa-1"], { mode: "all" });
		const branch = w.entries.map((e) => ({ type: "custom", customType: e.type, data: e.data }));
		expect(childSpend(branch)).toMatchObject({ children: 1, tokens: 4321, cost: 0.5 });
		expect(spendLine(childSpend(branch, { tokens: 10_000 }))).toBe(
			"1 child: 4,321 tokens, $0.5000 (session budget 10,000 tokens: 5,679 tokens left)",
		);
		const next = world({
			sessionManager: { getSessionDir: () => w.root, getBranch: () => branch, getSessionFile: () => undefined },
		});
		restoreFromSession(next.services, next.ctx);
		expect(next.manager.get("sa-1")).toMatchObject({
			spend: { tokens: 4321, cost: 0.5 },
			budget: { tokens: 5000, shared: "sa-1" },
		});
		// A damaged record's spend and budget are dropped, never trusted.
		const damaged = branch.map((e) => ({
			...e,
			data: { ...(e.data as object), spend: { tokens: -4 }, budget: "all" },
		}));
		const third = world({
			sessionManager: { getSessionDir: () => w.root, getBranch: () => damaged, getSessionFile: () => undefined },
		});
		restoreFromSession(third.services, third.ctx);
		expect(third.manager.get("sa-1")?.spend).toBeUndefined();
		expect(third.manager.get("sa-1")?.budget).toBeUndefined();
		expect(spendLine(childSpend([]))).toBe("");
	});
});

describe("a crash keeps the account", () => {
	it("a run the process left unsettled takes its spend from the child's own session file", async () => {
		const w = world();
		const file = join(w.root, "child.jsonl");
		const assistant = (input: number, output: number, total: number) =>
			JSON.stringify({
				type: "message",
				message: {
					role: "assistant",
					content: [{ type: "text", text: "x" }],
					usage: { input, output, cacheRead: 0, cacheWrite: 0, cost: { total } },
				},
			});
		writeFileSync(
			file,
			[
				JSON.stringify({ type: "session" }),
				assistant(1000, 500, 0.01),
				assistant(1200, 300, 0.02),
				'{"type":"mess',
			].join("\n"),
		);
		expect(spendOfSessionText(readFileSync(file, "utf8"))).toEqual({ tokens: 3000, cost: 0.03 });
		const run = {
			id: "sa-1",
			run: 1,
			name: "crashed",
			model: "mock/mock-model",
			prompt: "task",
			turns: 1,
			createdAt: 1,
			startedAt: 2,
			sessionFile: file,
			phase: "started",
			spend: { tokens: 200 },
			budget: { tokens: 10_000 },
		};
		const branch = [{ type: "custom", customType: "subagent-run", data: run }];
		const next = world({
			sessionManager: { getSessionDir: () => w.root, getBranch: () => branch, getSessionFile: () => undefined },
		});
		restoreFromSession(next.services, next.ctx);
		expect(next.manager.get("sa-1")).toMatchObject({
			state: "interrupted",
			spend: { tokens: 3000 },
			budget: { tokens: 10_000 },
		});
		// The settled record it wrote carries that spend: /headroom and the next start read the same account.
		const settled = next.entries.find((e) => e.type === "subagent-settled")!;
		expect((settled.data as { spend?: unknown }).spend).toMatchObject({ tokens: 3000 });
	});
});

describe("an agent file's budget", () => {
	it("is read from its frontmatter, a bad one is a warning naming the key, and a spawn can only lower it", async () => {
		const { parseFrontmatter } = await import("@mariozechner/pi-coding-agent");
		const { parseAgentFile } = await import("../../extensions/subagents/agents/agents.ts");
		const parse = (budget: string) =>
			parseAgentFile(`---\nname: capped\ndescription: d\nbudget: ${budget}\n---\nbody`, {
				file: "capped.md",
				source: "user",
				parseFrontmatter,
			});
		expect(parse("{ tokens: 4000, cost: 1.5 }").agent?.budget).toEqual({ tokens: 4000, cost: 1.5 });
		const bad = parse("{ tokens: -3 }");
		expect(bad.agent?.budget).toBeUndefined();
		expect(bad.warnings.join("\n")).toContain('capped.md: "budget"');
		expect(parse("{}").warnings.join("\n")).toContain("expected tokens and/or cost");
		const { spawnBudget } = await import("../../extensions/subagents/budget/spawn-budget.ts");
		const made = spawnBudget([], { tokens: 9000 }, { tokens: 4000 }, { perChild: {}, perSession: {} }, []);
		expect(made.of("sa-1")).toEqual({ tokens: 4000 });
	});
});

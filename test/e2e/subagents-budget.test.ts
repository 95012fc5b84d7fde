/**
 * Children's budgets end to end, on both Pi lines with the scripted model reporting usage per response: a child
 * stopped by its token budget at the end of the turn that reached it, reported with outcome budget and its partial
 * output, delivered once; a pipeline sharing one budget (shared: true); a session budget refusing a spawn, saying
 * what remains; in Pi's TUI under tmux, the child's spend in `/subagents`, and the same account after `pi -c` (the
 * picker and /headroom's ledger).
 */
import { describe, expect, it } from "vitest";
import { extensionPath, PI_LINES, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import type { ChatRequest, ScriptedReply } from "../fixtures/scripted-server.ts";
import { calledTools, isChild, toolTexts } from "./subagents-support.ts";
import { keepCapture, STEP_MS, useTuiRuns } from "./tui-support.ts";

const EXT = [extensionPath("subagents")];
/** Each child turn reports 1,000 prompt + 500 completion tokens: 1,500 tokens a turn. */
const TURN = { promptTokens: 1000, completionTokens: 500 };

/** A child that works in steps (a bash call each, with a progress line) and would answer after five. */
function childTurn(req: ChatRequest): ScriptedReply {
	const k = req.body.messages.filter((m) => m.role === "tool").length;
	if (k < 5)
		return { ...TURN, text: `PROGRESS-${k}`, toolCalls: [{ name: "bash", arguments: { command: `echo STEP-${k}` } }] };
	return { ...TURN, text: "CHILD-FINISHED all steps" };
}

const childRequests = (requests: ChatRequest[]) => requests.filter(isChild);

/** The /subagents picker is open and lists the stopped child (its transcript rows alone do not count). */
const inPicker = (screen: string) =>
	screen.includes("subagents of this session: 1") && /⊖ +sa-1 +capped .*budget/.test(screen);

describe.each(PI_LINES)("children's budgets on $label", ({ line }) => {
	const runs = usePrintRuns(line, { extensions: EXT, args: ["--no-session"] });

	it("stops a child at the end of the turn that reached its token budget: outcome budget, partial output, once", async () => {
		const server = await runs.startServer((req) => {
			if (isChild(req)) return childTurn(req);
			const called = calledTools(req);
			if (called.length === 0)
				return {
					toolCalls: [
						{
							name: "subagent_spawn",
							arguments: { prompt: "BUDGET-CHILD work", name: "capped", budget: { tokens: 3000 } },
						},
					],
				};
			if (called.length === 1) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			return { text: "PARENT-DONE" };
		});
		const { run } = await runs.print(server, { prompt: "delegate with a budget" });
		const spawn = toolResults(run.events, "subagent_spawn")[0];
		expect(spawn.text).toContain("Budget: budget 3,000 tokens.");
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(wait.isError).toBe(false);
		// Two turns of 1,500 tokens reach 3,000: the child is stopped there, never asked for a third.
		expect(childRequests(server.requests)).toHaveLength(2);
		expect(wait.text).toMatch(/sa-1 "capped" budget/);
		expect(wait.text).toContain(
			"Budget reached: stopped at the end of a turn: it reached its budget of 3,000 tokens (3,000 tokens spent)",
		);
		expect(wait.text).not.toMatch(/sa-1 "capped" completed/);
		expect(wait.text).toContain("PROGRESS-0");
		expect(wait.text).toContain("PROGRESS-1");
		expect(wait.text).not.toContain("CHILD-FINISHED");
		// Delivered once: the parent's model saw the result in the wait alone.
		const parent = server.requests.filter((r) => !isChild(r));
		const carrying = parent.flatMap((r) => toolTexts(r)).filter((t) => t.includes("Budget reached:"));
		expect(new Set(carrying).size).toBe(1);
		const lastParent = parent[parent.length - 1];
		expect(lastParent.raw.split("Budget reached:").length - 1).toBe(1);
	}, 180_000);

	it("a pipeline's stages share the budget given with shared: true; the later stage is stopped on it", async () => {
		const server = await runs.startServer((req) => {
			if (isChild(req)) {
				if (req.firstUser.includes("PIPE-SCOUT"))
					return { promptTokens: 2000, completionTokens: 500, text: "SCOUT-MAP" };
				return childTurn(req);
			}
			const called = calledTools(req);
			if (called.length === 0)
				return {
					toolCalls: [
						{
							name: "subagent_spawn",
							arguments: { prompt: "PIPE-SCOUT map", name: "scout", budget: { tokens: 3000, shared: true } },
						},
						{ name: "subagent_spawn", arguments: { prompt: "PIPE-WORKER fix", name: "worker", after: ["scout"] } },
					],
				};
			if (called.length === 2) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1", "sa-2"] } }] };
			return { text: "PARENT-DONE" };
		});
		const { run } = await runs.print(server, { prompt: "a pipeline on one budget" });
		const [scout, worker] = toolResults(run.events, "subagent_spawn");
		expect(scout.text).toContain("shared with the stages spawned after it");
		expect(worker.text).toContain("drawing on the budget shared with sa-1");
		const wait = toolResults(run.events, "subagent_wait")[0].text;
		expect(wait).toMatch(/sa-1 "scout" completed/);
		// 2,500 by the scout, then 1,500 by the worker's first turn: 4,000 of the shared 3,000, so it stops there.
		expect(wait).toMatch(/sa-2 "worker" budget/);
		expect(wait).toContain(
			"it reached the budget its pipeline shares (given to sa-1) of 3,000 tokens (4,000 tokens spent)",
		);
		expect(wait).toContain("PROGRESS-0");
		expect(childRequests(server.requests).filter((r) => r.firstUser.includes("PIPE-WORKER"))).toHaveLength(1);
	}, 180_000);

	it("refuses a spawn once the session's children spent the session's budget, saying what remains", async () => {
		const server = await runs.startServer((req) => {
			if (isChild(req)) return { promptTokens: 1500, completionTokens: 600, text: "FIRST-CHILD-ANSWER" };
			const called = calledTools(req);
			if (called.length === 0)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "SESSION-CHILD one", name: "one" } }] };
			if (called.length === 1) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			if (called.length === 2)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "SESSION-CHILD two", name: "two" } }] };
			return { text: "PARENT-DONE" };
		});
		const { run } = await runs.print(server, {
			prompt: "delegate twice",
			sandbox: { headroomConfig: { subagents: { budget: { perSession: { tokens: 2000 } } } } },
		});
		const [first, second] = toolResults(run.events, "subagent_spawn");
		expect(first.isError).toBe(false);
		expect(first.text).toContain("this session has 2,000 tokens left");
		expect(toolResults(run.events, "subagent_wait")[0].text).toContain("FIRST-CHILD-ANSWER");
		expect(second.isError).toBe(true);
		expect(second.text).toContain(
			"No child started: this session's subagents spent 2,100 tokens of their budget of 2,000 tokens (subagents.budget.perSession); remaining: 0 tokens.",
		);
		// Nothing of the second child ever reached the model.
		expect(childRequests(server.requests).filter((r) => r.firstUser.includes("SESSION-CHILD two"))).toHaveLength(0);
	}, 180_000);
});

describe.each(PI_LINES)("a child's spend in the TUI on $label", ({ line }) => {
	const tuiRuns = useTuiRuns(line);

	it("shows the spend in /subagents, and the same account after pi -c (picker and /headroom)", async () => {
		const script = (req: ChatRequest): ScriptedReply => {
			if (isChild(req)) return childTurn(req);
			if (req.lastUser.includes("BUDGET-TUI") && calledTools(req).length === 0)
				return {
					toolCalls: [
						{
							name: "subagent_spawn",
							arguments: { prompt: "BUDGET-CHILD tui", name: "capped", budget: { tokens: 3000 } },
						},
					],
				};
			if (req.raw.includes("Budget reached:")) return { text: "PARENT-GOT-BUDGET" };
			return { text: "PARENT-SPAWNED" };
		};
		const { tui } = await tuiRuns.start({ script, tag: "budget" });
		await tui.submit("BUDGET-TUI spawn a capped helper");
		await tui.waitFor("the budget result delivered", (s) => s.includes("PARENT-GOT-BUDGET"), { timeoutMs: STEP_MS });

		await tui.submit("/subagents");
		const picker = await tui.waitFor("the picker with the stopped child", (s) => inPicker(s), { timeoutMs: STEP_MS });
		keepCapture(`subagents-budget-picker-${line}`, picker);
		expect(picker).toMatch(/context +spent/);
		expect(picker).toMatch(/sa-1 +capped .*budget .*3\.0k\/3\.0k/);
		tui.press("Escape");
		await tui.waitFor("the picker closed", (s) => !s.includes("subagents of this session"), { timeoutMs: STEP_MS });

		// A new process on the same session: the same account, in the picker and in /headroom's ledger.
		const resumed = tuiRuns.restart(["-c"]);
		await resumed.waitFor("the resumed session", (s) => s.includes("mock-model"), { timeoutMs: STEP_MS });
		await resumed.submit("/subagents");
		const again = await resumed.waitFor("the restored child in the picker", (s) => inPicker(s), { timeoutMs: STEP_MS });
		expect(again).toMatch(/sa-1 +capped .*budget .*3\.0k\/3\.0k/);
		resumed.press("Escape");
		await resumed.waitFor("the picker closed", (s) => !s.includes("subagents of this session"), { timeoutMs: STEP_MS });
		await resumed.submit("/headroom");
		// Wait for the spend's own line, not its heading: the screen can be caught mid-render.
		const ledger = await resumed.waitFor(
			"the ledger with the spend",
			(s) => /subagents' spend[\s\S]*1 child: /.test(s),
			{
				timeoutMs: STEP_MS,
			},
		);
		keepCapture(`subagents-budget-ledger-${line}`, ledger);
		expect(ledger).toContain("1 child: 3,000 tokens");
	}, 300_000);
});

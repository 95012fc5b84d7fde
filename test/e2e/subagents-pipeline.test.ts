/**
 * Pipelines end to end (issue 23): the real pi CLI (both lines) with this extension, the scripted model playing
 * the parent and every stage. The parent lays out scout → two workers → reviewer in ONE turn with `after`, then
 * waits on the reviewer; each stage starts only once its inputs settled and opens with their results, cut to its
 * own window, with the full texts one read away; the parent sees the intermediate results as one line each.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { extensionPath, PI_LINES, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import type { ChatRequest, ScriptedServer } from "../fixtures/scripted-server.ts";
import {
	PIPELINE_ANSWERS,
	pipelineScript,
	SCHEMA_GROWTH_GOAL,
	STAGES,
	type Stage,
	schemaGrowth,
	spawnToolOf,
	stageOf,
} from "./pipeline-scenario.ts";
import { calledTools, isChild, utf8Bytes } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
const firstRequest = (server: ScriptedServer, stage: Stage) =>
	server.requests.filter((r) => isChild(r) && stageOf(r) === stage)[0];

describe.each(PI_LINES)("pipelines on $label", ({ line }) => {
	const { startServer, print, printIn } = usePrintRuns(line, { extensions: EXT });

	it("a four-stage pipeline laid out in one turn runs stage by stage, handing results over, the parent's context small", async () => {
		const server = await startServer(pipelineScript);
		const { run } = await print(server, { prompt: "run the pipeline" });
		const spawns = toolResults(run.events, "subagent_spawn");
		expect(spawns.map((s) => s.isError)).toEqual([false, false, false, false]);
		expect(spawns[1].text).toContain("waiting for sa-1");
		expect(spawns[3].text).toContain("waiting for sa-2, sa-3");
		// All four spawns came in the parent's first answer.
		const parent = server.requests.filter((r) => !isChild(r));
		expect(parent[1].body.messages.filter((m) => m.role === "tool")).toHaveLength(4);
		// The pipeline parameters are offered, and cost the first request at most SCHEMA_GROWTH_GOAL bytes.
		const growth = schemaGrowth(spawnToolOf(parent[0])!);
		expect(growth.with).toBeGreaterThan(growth.without);
		expect(growth.with - growth.without).toBeLessThanOrEqual(SCHEMA_GROWTH_GOAL);

		const first = Object.fromEntries(STAGES.map((s) => [s, firstRequest(server, s)])) as Record<Stage, ChatRequest>;
		for (const s of STAGES) expect(first[s], s).toBeDefined();
		// Each stage starts only after its inputs settled (the server's own clock).
		const done = (s: Stage) => first[s].finishedAt!;
		expect(first.W1.receivedAt).toBeGreaterThanOrEqual(done("SCOUT"));
		expect(first.W2.receivedAt).toBeGreaterThanOrEqual(done("SCOUT"));
		expect(first.REVIEW.receivedAt).toBeGreaterThanOrEqual(Math.max(done("W1"), done("W2")));

		// Each stage's first request carries its inputs' BEGIN and END, within budget, and their artifact paths.
		const inputsOf: Record<Stage, Stage[]> = { SCOUT: [], W1: ["SCOUT"], W2: ["SCOUT"], REVIEW: ["W1", "W2"] };
		for (const s of STAGES) {
			const task = first[s].firstUser;
			for (const input of inputsOf[s]) {
				expect(task, `${s} ← ${input}`).toContain(`BEGIN-${input}`);
				expect(task, `${s} ← ${input}`).toContain(`END-${input}`);
				expect(task).toContain("omitted");
				const path = new RegExp(
					`=== input sa-\\d \\(${input === "SCOUT" ? "scout" : input.toLowerCase()}\\) completed; \\d+ bytes; full text: (\\S+)`,
				).exec(task)?.[1];
				expect(path, task.slice(0, 400)).toBeDefined();
				expect(readFileSync(path!, "utf8")).toBe(PIPELINE_ANSWERS[input]);
			}
			// Within subagents.handover's batch cap (64 KiB) plus the task itself.
			expect(utf8Bytes(task)).toBeLessThan(64 * 1024 + 1024);
		}

		// The parent: the reviewer's result in full, each intermediate as one line; never an intermediate in full.
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(wait.text).toContain(PIPELINE_ANSWERS.REVIEW);
		for (const [id, name, users] of [
			["sa-1", "scout", "sa-2, sa-3"],
			["sa-2", "w1", "sa-4"],
			["sa-3", "w2", "sa-4"],
		])
			expect(wait.text).toMatch(
				new RegExp(`${id} \\(${name}\\) completed, \\d+ bytes, full text \\S+; handed to ${users}`),
			);
		for (const r of parent)
			for (const s of ["SCOUT", "W1", "W2"])
				expect(r.raw.includes(`BEGIN-${s}`), `parent request ${r.index}`).toBe(false);
		expect(parent.at(-1)!.raw).toContain("BEGIN-REVIEW");
	});

	it("a failing input: its dependent is skipped with the reason; with after_failed run the other runs, told the outcome", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) {
				if (req.firstUser.includes("TASK-BAD")) return { error: { status: 400, message: "boom-provider" } };
				return { text: "RAN-ANYWAY" };
			}
			const called = calledTools(req);
			if (called.length === 0)
				return {
					toolCalls: [
						{ name: "subagent_spawn", arguments: { prompt: "TASK-BAD", name: "bad" } },
						{ name: "subagent_spawn", arguments: { prompt: "TASK-SKIP", name: "skip", after: ["bad"] } },
						{
							name: "subagent_spawn",
							arguments: { prompt: "TASK-RUN", name: "run", after: ["bad"], after_failed: "run" },
						},
					],
				};
			if (!called.includes("subagent_wait"))
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-2", "sa-3"] } }] };
			return { text: "DONE" };
		});
		const { run } = await print(server, { prompt: "go" });
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(wait.text).toMatch(/sa-2 "skip" skipped/);
		expect(wait.text).toContain("Skipped, not started: sa-1 (bad) failed");
		expect(wait.text).toContain("boom-provider");
		expect(wait.text).toContain("RAN-ANYWAY");
		const children = server.requests.filter(isChild);
		expect(children.some((r) => r.firstUser.includes("TASK-SKIP"))).toBe(false);
		const ran = children.find((r) => r.firstUser.includes("TASK-RUN"))!;
		expect(ran.firstUser).toContain("=== input sa-1 (bad) failed");
		expect(ran.firstUser).toContain("boom-provider");
	});

	it("a cycle or an unknown input is an error and nothing starts", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: "SHOULD-NOT-RUN" };
			if (calledTools(req).length === 0)
				return {
					toolCalls: [
						{ name: "subagent_spawn", arguments: { prompt: "TASK-SELF", after: ["sa-1"] } },
						{ name: "subagent_spawn", arguments: { prompt: "TASK-GHOST", after: ["ghost"] } },
					],
				};
			return { text: "DONE" };
		});
		const { run } = await print(server, { prompt: "go" });
		const [self, ghost] = toolResults(run.events, "subagent_spawn");
		expect(self.isError).toBe(true);
		expect(self.text).toContain("after would make a cycle (sa-1 → sa-1)");
		expect(ghost.isError).toBe(true);
		expect(ghost.text).toContain("after names no child of this session: ghost");
		expect(ghost.text).toContain("Nothing was started");
		expect(server.requests.filter(isChild)).toHaveLength(0);
	});

	const twoStages = (final: string) => (req: ChatRequest) => {
		if (isChild(req)) {
			if (req.firstUser.includes("TASK-SLOW")) return { text: "SLOW-BEGIN done SLOW-END", delayMs: 1_500 };
			return { text: "NEXT-RESULT" };
		}
		if (req.lastUser.includes("phase two")) return { text: "resumed" };
		if (calledTools(req).length === 0)
			return {
				toolCalls: [
					{ name: "subagent_spawn", arguments: { prompt: "TASK-SLOW", name: "slow" } },
					{ name: "subagent_spawn", arguments: { prompt: "TASK-NEXT", name: "next", after: ["slow"] } },
				],
			};
		return { text: final };
	};

	if (line === "1.x")
		it("a single-shot run waits for waiting children too: the last stage in full, the input as one line", async () => {
			const server = await startServer(twoStages("ended without waiting"));
			await print(server, { prompt: "phase one" });
			const parent = server.requests.filter((r) => !isChild(r));
			const delivered = parent.at(-1)!.raw;
			expect(delivered).toContain("NEXT-RESULT");
			expect(delivered).not.toContain("SLOW-BEGIN");
			expect(delivered).toMatch(/sa-1 \(slow\) completed, \d+ bytes, full text \S+; handed to sa-2/);
		});

	if (line === "0.73")
		it("a run that ends while a child waits: pi -c continues it, skipped as its input was cut off", async () => {
			const server = await startServer(twoStages("ended without waiting"));
			const { sandbox } = await print(server, { prompt: "phase one" });
			expect(server.requests.filter(isChild).some((r) => r.firstUser.includes("TASK-NEXT"))).toBe(false);
			await printIn(sandbox, { prompt: "phase two", args: ["-c"] });
			const resumed = server.requests.filter((r) => !isChild(r)).at(-1)!.raw;
			expect(resumed).toMatch(/sa-2 \\"next\\" skipped/);
			expect(resumed).toContain("Skipped, not started: sa-1 (slow) was cancelled: the parent session shut down");
			expect(server.requests.filter(isChild).some((r) => r.firstUser.includes("TASK-NEXT"))).toBe(false);
		});
});

/**
 * Subagents end to end, scenario 6 and the lifecycle around it: queueing past the cap, cancel
 * with partial output, a failing child, a stalled child caught by the watchdog after its first
 * turn, no double delivery when wait and automatic delivery meet, results kept across a
 * shutdown, and narrated forks (the transcript-parity issue's fork test).
 */
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ownerFraming } from "../../extensions/shared/transcript/prompt.ts";
import { extensionPath, makeSandbox, PI_LINES, startPiRpc, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import { type ChatRequest, messageText } from "../fixtures/scripted-server.ts";
import {
	artifactFacts,
	calledTools,
	childTools,
	footerReads,
	isChild,
	lastToolText,
	numberedAnswer,
	userTexts,
} from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
const LONG = numberedAnswer("R", 300, 30_000);
const AUTO_HEADER = "delivered automatically";
const SLOW_TEXT = Array.from({ length: 200 }, (_, i) => `PARTIAL-${String(i + 1).padStart(3, "0")}`).join(" ");

/** The child's task tag: the last one in its first message (a fork narrates the parent's spawn calls first). */
const task = (req: ChatRequest) => [...req.firstUser.matchAll(/CHILD-TASK (\w+)/g)].pop()?.[1] ?? "";

describe.each(PI_LINES)("subagents lifecycle on $label", ({ line }) => {
	const { startServer, print } = usePrintRuns(line, { extensions: EXT });

	it("6a: queues past the cap, reports a failing child, stops a stalled one by watchdog, cancels with partial output", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) {
				const t = task(req);
				if (t === "fail") return { error: { status: 400, message: "boom-provider" } };
				if (t === "stall")
					return req.last?.role === "tool" ? { hang: true } : { toolCalls: [{ name: "ls", arguments: {} }] };
				return { text: SLOW_TEXT, chunkChars: 12, chunkDelayMs: 150 };
			}
			const called = calledTools(req);
			if (called.length === 0) {
				return {
					toolCalls: ["fail", "stall", "slow"].map((t) => ({
						name: "subagent_spawn",
						arguments: { prompt: `CHILD-TASK ${t}`, name: t },
					})),
				};
			}
			const waits = called.filter((c) => c === "subagent_wait").length;
			if (waits === 0) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1", "sa-2"] } }] };
			if (waits === 1) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-3"], timeout_s: 1 } }] };
			if (!called.includes("subagent_cancel"))
				return { toolCalls: [{ name: "subagent_cancel", arguments: { ids: ["sa-3"] } }] };
			return { text: "done" };
		});
		const { run } = await print(server, {
			prompt: "delegate",
			sandbox: { headroomConfig: { subagents: { maxConcurrent: 2, idleTimeoutSeconds: 3 } } },
			args: ["--no-session"],
		});
		const spawns = toolResults(run.events, "subagent_spawn").map((r) => r.text);
		expect(spawns[0]).toMatch(/^Spawned sa-1/);
		expect(spawns[1]).toMatch(/^Spawned sa-2/);
		expect(spawns[2]).toMatch(/^Queued sa-3 "slow": 2 of 2 slots busy; position 1 in the queue\./);
		const [firstWait, secondWait] = toolResults(run.events, "subagent_wait").map((r) => r.text);
		expect(firstWait).toMatch(/sa-1 "fail" failed/);
		expect(firstWait).toContain("boom-provider");
		expect(firstWait).toMatch(/sa-2 "stall" failed/);
		expect(firstWait).toContain("watchdog");
		// The stall came after a completed tool turn: the watchdog covers the whole run.
		expect(server.requests.some((r) => isChild(r) && task(r) === "stall" && r.last?.role === "tool")).toBe(true);
		expect(secondWait).toMatch(/^Timed out after 1 s: 0 of 1 finished/);
		expect(secondWait).toMatch(/sa-3 "slow": running for/);
		const [cancel] = toolResults(run.events, "subagent_cancel");
		expect(cancel.text).toMatch(/Cancelled: stopped by subagent_cancel/);
		expect(cancel.text).toContain("PARTIAL-001");
		expect(cancel.text).not.toContain("PARTIAL-200");
	});

	it("6b: a result consumed by wait is not delivered again; one delivered automatically is not repeated in full by wait", async () => {
		const server = await startServer((req) => {
			if (isChild(req))
				return task(req) === "quick" ? { text: "quick answer", delayMs: 300 } : { text: LONG, delayMs: 300 };
			const lastUser = req.last?.role === "user" ? messageText(req.last) : "";
			const tool = lastToolText(req);
			if (lastUser.includes("first phase"))
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK quick" } }] };
			if (tool.startsWith("Spawned sa-1"))
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			if (lastUser.includes("second phase"))
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK long" } }] };
			if (lastUser.includes(AUTO_HEADER))
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-2"] } }] };
			return { text: "ok" };
		});
		const sandbox = makeSandbox({ server });
		const rpc = startPiRpc({ line, sandbox, extensions: EXT, args: ["--no-session"] });
		try {
			await rpc.prompt("first phase");
			await new Promise((r) => setTimeout(r, 1500));
			expect(rpc.agentEnds()).toBe(1); // no automatic delivery after the wait consumed it
			await rpc.prompt("second phase");
			await rpc.waitFor((e) => e.type === "agent_end" && rpc.agentEnds() >= 3, 30_000);
		} finally {
			await rpc.stop();
		}
		const parent = server.requests.filter((r) => !isChild(r));
		const lastRequest = parent[parent.length - 1];
		const all = lastRequest.body.messages.map((m) => messageText(m)).join("\n");
		expect(all.split("quick answer").length - 1).toBe(1);
		const autos = userTexts(lastRequest).filter((t) => t.includes(AUTO_HEADER));
		expect(autos.length).toBe(1);
		expect(autos[0]).toContain("sa-2");
		const waits = toolResults(rpc.events, "subagent_wait");
		expect(waits.length).toBe(2);
		expect(waits[1].text).toContain("delivered to you automatically earlier");
		expect(waits[1].text).not.toContain("BEGIN-R");
		const path = /full text: (\S+)\./.exec(waits[1].text)?.[1] ?? "";
		expect(artifactFacts(path).content === LONG).toBe(true);
		expect(footerReads(autos[0])[0].path).toBe(path);
	});

	it("keeps a result across shutdown: a child interrupted by exit is reported when the session resumes", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { hang: true };
			const lastUser = req.last?.role === "user" ? messageText(req.last) : "";
			if (lastUser.includes("start"))
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK sleepy", name: "sleepy" } }] };
			return { text: "ok" };
		});
		const sandbox = makeSandbox({ server });
		const first = startPiRpc({ line, sandbox, extensions: EXT });
		try {
			await first.prompt("start");
			await new Promise((r) => setTimeout(r, 500));
		} finally {
			await first.stop();
		}
		const second = startPiRpc({ line, sandbox, extensions: EXT, args: ["-c"] });
		try {
			await second.prompt("resume");
		} finally {
			await second.stop();
		}
		const last = server.requests.filter((r) => !isChild(r)).pop()!;
		expect(last.lastUser).toContain("resume");
		const restored = userTexts(last).find((t) => t.includes("before the session was reloaded or resumed"));
		expect(restored).toBeDefined();
		expect(restored).toMatch(/sa-1 "sleepy" cancelled/);
		expect(restored).toContain("shut down");
		// Child sessions live in a subfolder, so `-c` continued the parent's session.
		const sessionDirs = readdirSync(`${sandbox.agentDir}/sessions`);
		expect(sessionDirs.length).toBe(1);
		expect(readdirSync(`${sandbox.agentDir}/sessions/${sessionDirs[0]}`)).toContain("subagents");
	});

	it("the depth limit is configurable: with maxDepth 2 a child may spawn, its own child may not", async () => {
		const server = await startServer((req) => {
			const called = calledTools(req);
			if (isChild(req) && task(req) === "grandchild") return { text: "grandchild result G-7" };
			if (isChild(req)) {
				if (called.length === 0) {
					return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK grandchild" } }] };
				}
				if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
				return { text: `child relays: ${lastToolText(req).includes("G-7") ? "G-7" : "nothing"}` };
			}
			if (called.length === 0)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK middle" } }] };
			if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "done" };
		});
		const { run } = await print(server, {
			prompt: "nest",
			sandbox: { headroomConfig: { subagents: { maxDepth: 2 } } },
			args: ["--no-session"],
		});
		const middle = server.requests.find((r) => isChild(r) && task(r) === "middle")!;
		const grandchild = server.requests.find((r) => isChild(r) && task(r) === "grandchild")!;
		expect(middle.toolNames).toContain("subagent_spawn");
		expect(grandchild.toolNames).not.toContain("subagent_spawn");
		expect(toolResults(run.events, "subagent_wait")[0].text).toContain("child relays: G-7");
	});

	it("forks narrate the parent's history with owner framing; fresh children get only their prompt and no subagent tools", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: `child ${task(req)} done` };
			const called = calledTools(req);
			if (called.length === 0) return { toolCalls: [{ name: "bash", arguments: { command: "echo parent-did-this" } }] };
			if (!called.includes("subagent_spawn")) {
				return {
					toolCalls: [
						{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK forked", context: "fork" } },
						{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK fresh" } },
					],
				};
			}
			if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "done" };
		});
		const { run } = await print(server, { prompt: "PARENT-TASK build the widget" });
		const children = server.requests.filter(isChild);
		const forked = children.find((r) => task(r) === "forked")!;
		const fresh = children.find((r) => task(r) === "fresh")!;
		expect(forked.body.messages.filter((m) => m.role !== "system").length).toBe(1);
		expect(forked.firstUser).toContain("This work is yours; continue it.");
		expect(forked.firstUser).toContain("PARENT-TASK build the widget");
		expect(forked.firstUser).toContain("echo parent-did-this");
		expect(forked.firstUser).toContain("parent-did-this\n");
		expect(forked.firstUser.trimEnd().endsWith("CHILD-TASK forked")).toBe(true);
		expect(forked.system).toContain(ownerFraming({ forked: true }));
		expect(fresh.firstUser).toBe("CHILD-TASK fresh");
		expect(fresh.system).toContain(ownerFraming({ forked: false }));
		expect(fresh.system).not.toContain(ownerFraming({ forked: true }));
		// Pi's built-in tools; not those of Pi 1.x's built-in extensions (codemode, tool_search): the parent, run
		// without extensions, does not have them active.
		for (const child of children) {
			expect([...child.toolNames].sort()).toEqual(childTools(["bash", "edit", "find", "grep", "ls", "read", "write"]));
		}
		expect(toolResults(run.events, "subagent_wait")[0].text).toContain("child forked done");
	});
});

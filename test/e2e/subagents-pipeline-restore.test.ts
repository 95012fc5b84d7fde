/**
 * Pipelines across processes (the real pi CLI): a stage waiting for its input when the parent's process ends
 * is continued by `pi -c`. Killed (SIGKILL) while the input ran: the input is interrupted, so the stage is
 * skipped naming it. Exited cleanly after the input completed but before the stage started (0.73, where a
 * print run does not wait for its children): `pi -c` starts the stage with the input's result handed over.
 */
import type { ChildProcess } from "node:child_process";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, runPiPrint, toolResults } from "../fixtures/pi-runner.ts";
import type { ChatRequest } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { calledTools, isChild } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];

/** The parent's answer in phase two: wait on `ids` once, then end. */
function phaseTwo(req: ChatRequest, ids: string[]) {
	const since = req.body.messages.slice(req.body.messages.findLastIndex((m) => m.role === "user"));
	if (!since.some((m) => (m.tool_calls ?? []).length > 0))
		return { toolCalls: [{ name: "subagent_wait", arguments: { ids, timeout_s: 60 } }] };
	return { text: "phase two done" };
}

describe.each(PI_LINES)("pipeline stages across processes on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("killed while A runs and B waits: pi -c skips B, naming A as interrupted", async () => {
		let parent: ChildProcess | undefined;
		let killed = false;
		const server = await startServer((req) => {
			if (isChild(req)) {
				if (req.firstUser.includes("TASK-A")) {
					// A runs: the parent dies now, with B waiting.
					setTimeout(() => {
						killed = parent?.exitCode === null && parent.kill("SIGKILL");
					}, 300);
					return { hang: true };
				}
				return { text: "B-SHOULD-NOT-RUN" };
			}
			if (req.lastUser.includes("phase two")) return phaseTwo(req, ["sa-1", "sa-2"]);
			if (calledTools(req).length === 0)
				return {
					toolCalls: [
						{ name: "subagent_spawn", arguments: { prompt: "TASK-A", name: "alpha" } },
						{ name: "subagent_spawn", arguments: { prompt: "TASK-B", name: "beta", after: ["alpha"] } },
					],
				};
			return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-2"], timeout_s: 60 } }] };
		});
		const sandbox = makeSandbox({ server });
		const first = await runPiPrint({
			line,
			sandbox,
			extensions: EXT,
			prompt: "phase one",
			timeoutMs: 60_000,
			onStart: (child) => {
				parent = child;
			},
		});
		expect(killed, first.stderr).toBe(true);
		const second = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "phase two", args: ["-c"] });
		expect(second.exitCode, second.stderr).toBe(0);
		const [wait] = toolResults(second.events, "subagent_wait");
		expect(wait.isError, wait.text).toBe(false);
		const last = server.requests.filter((r) => !isChild(r)).at(-1)!.raw;
		expect(last).toContain("Skipped, not started: sa-1 (alpha) interrupted");
		expect(server.requests.filter(isChild).some((r) => r.firstUser.includes("TASK-B"))).toBe(false);
	});

	if (line === "0.73")
		it("a clean exit after A completed, B queued: pi -c starts B with A's result handed over", async () => {
			const server = await startServer((req) => {
				if (isChild(req)) {
					if (req.firstUser.includes("TASK-X")) return { text: "X-DONE", delayMs: 30_000 };
					if (req.firstUser.includes("TASK-B")) return { text: "B-RESULT-TEXT" };
					return { text: "A-RESULT-TEXT" };
				}
				if (req.lastUser.includes("phase two")) return phaseTwo(req, ["sa-3"]);
				const called = calledTools(req);
				if (called.length === 0)
					return {
						toolCalls: [
							{ name: "subagent_spawn", arguments: { prompt: "TASK-A", name: "alpha" } },
							{ name: "subagent_spawn", arguments: { prompt: "TASK-X", name: "xslow" } },
							{ name: "subagent_spawn", arguments: { prompt: "TASK-B", name: "beta", after: ["alpha"] } },
						],
					};
				if (!called.includes("subagent_wait"))
					return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"], timeout_s: 60 } }] };
				return { text: "phase one done" };
			});
			// One slot: A runs, X queues behind it, then B (released when A completed) queues behind X.
			const sandbox = makeSandbox({ server, headroomConfig: { subagents: { maxConcurrent: 1 } } });
			const first = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "phase one" });
			expect(first.exitCode, first.stderr).toBe(0);
			expect(server.requests.filter(isChild).some((r) => r.firstUser.includes("TASK-B"))).toBe(false);
			const second = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "phase two", args: ["-c"] });
			expect(second.exitCode, second.stderr).toBe(0);
			const b = server.requests.filter(isChild).find((r) => r.firstUser.includes("TASK-B"));
			expect(b, second.stderr).toBeDefined();
			expect(b!.firstUser).toContain("A-RESULT-TEXT");
			expect(b!.firstUser).toMatch(/=== input sa-1 \(alpha\) completed/);
			const [wait] = toolResults(second.events, "subagent_wait");
			expect(wait.text).toContain("B-RESULT-TEXT");
		});
});

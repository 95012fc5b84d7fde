/**
 * A subagent_wait timeout beyond the runtime's longest timer (the real pi CLI, both lines): Node and Bun would
 * fire it at once; it is clamped, so the wait waits for the child and says the timeout was shortened.
 */
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import { calledTools, isChild } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];

describe.each(PI_LINES)("a 35-day subagent_wait timeout on $label", ({ line }) => {
	const runs = usePrintRuns(line, { extensions: EXT, args: ["--no-session"] });

	it("waits for the child instead of timing out at once", async () => {
		const server = await runs.startServer((req) => {
			if (isChild(req)) return { text: "CHILD-RESULT", delayMs: 1_500 };
			const called = calledTools(req);
			if (called.length === 0)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK slow", name: "slow" } }] };
			if (!called.includes("subagent_wait"))
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"], timeout_s: 3_000_000 } }] };
			return { text: "done" };
		});
		const run = await runs.printIn(makeSandbox({ server }), { prompt: "wait long" });
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(wait.text).not.toContain("Timed out");
		expect(wait.text).toContain("CHILD-RESULT");
		expect(wait.text).toContain("timeout_s 3000000 is longer than the longest wait possible, 2147483 s");
	});
});

/**
 * An output_schema pattern that backtracks catastrophically (the real pi CLI, both lines): the child's answer is
 * checked in a worker with a deadline, so the parent's process is never frozen; the result arrives invalid,
 * naming the pattern, and the run ends normally.
 */
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import { calledTools, isChild } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
const EVIL = "^(a+)+$";

describe.each(PI_LINES)("a catastrophic output_schema pattern on $label", ({ line }) => {
	const runs = usePrintRuns(line, { extensions: EXT, args: ["--no-session"] });

	it("makes the answer invalid within the deadline instead of freezing the parent", async () => {
		// 40 a's and a "!" take ~2^40 steps for ^(a+)+$ on the main thread: hours.
		const answer = JSON.stringify({ id: `${"a".repeat(40)}!` });
		const server = await runs.startServer((req) => {
			if (isChild(req)) return { text: answer };
			const called = calledTools(req);
			if (called.length === 0)
				return {
					toolCalls: [
						{
							name: "subagent_spawn",
							arguments: {
								prompt: "CHILD-TASK id",
								output_schema: { type: "object", properties: { id: { type: "string", pattern: EVIL } } },
							},
						},
					],
				};
			if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "done" };
		});
		const run = await runs.printIn(makeSandbox({ server }), { prompt: "check", timeoutMs: 120_000 });
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(wait.text).toContain("output INVALID");
		expect(wait.text).toContain('the pattern "^(a+)+$" did not finish matching within 2000 ms');
	});
});

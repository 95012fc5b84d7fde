/**
 * Print mode (`pi -p`, no UI) is single-shot: the process ends with the parent's run. Pi 0.73 does not
 * await extension handlers at a run's end before it exits, so a child still running then cannot be
 * waited for and delivered in that run. The spawn text says so (call subagent_wait before finishing),
 * and what it promises holds: the parent gets no later turn, the child is stopped with its partial
 * output kept, and `pi -c` delivers that.
 */
import { afterEach, describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, runPiPrint, toolResults } from "../fixtures/pi-runner.ts";
import { type ScriptedServer, startScriptedServer } from "../fixtures/scripted-server.ts";
import { calledTools, isChild, userTexts } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
/** The child streams slowly: some of it before the parent ends, most of it never. */
const SLOW_TEXT = Array.from({ length: 200 }, (_, i) => `PARTIAL-${String(i + 1).padStart(3, "0")}`).join(" ");
/** How long the parent's final answer takes, in milliseconds: the child streams a few chunks meanwhile. */
const PARENT_FINAL_DELAY_MS = 1_500;

describe.each(PI_LINES)("subagents in print mode on $label", ({ line }) => {
	let server: ScriptedServer | undefined;
	afterEach(async () => {
		await server?.close();
		server = undefined;
	});

	it("says single-shot at spawn; a child running at the end is stopped, its partial output delivered on -c", async () => {
		server = await startScriptedServer((req) => {
			if (isChild(req)) return { text: SLOW_TEXT, chunkChars: 12, chunkDelayMs: 150 };
			if (req.lastUser.includes("phase two")) return { text: "resumed" };
			if (calledTools(req).length === 0)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK slow", name: "slow" } }] };
			return { text: "finished without waiting", delayMs: PARENT_FINAL_DELAY_MS };
		});
		const sandbox = makeSandbox({ server });
		const first = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "phase one" });
		expect(first.exitCode, first.stderr).toBe(0);
		const [spawn] = toolResults(first.events, "subagent_spawn");
		expect(spawn.isError, spawn.text).toBe(false);
		expect(spawn.text).toContain(
			'This is a single-shot run (no UI): call subagent_wait(ids=["sa-1"]) before you finish. A child still ' +
				"running when your run ends is stopped; its partial output is kept and delivered when this session is " +
				"continued (pi -c).",
		);
		expect(spawn.text).not.toContain("arrives automatically");
		// No automatic delivery turn after the run: the parent model was asked exactly twice.
		const parentRequests = () => server!.requests.filter((r) => !isChild(r));
		expect(parentRequests().length).toBe(2);
		expect(parentRequests().some((r) => userTexts(r).some((t) => t.includes("sa-1")))).toBe(false);

		const second = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "phase two", args: ["-c"] });
		expect(second.exitCode, second.stderr).toBe(0);
		const resumed = parentRequests().at(-1)!;
		expect(resumed.lastUser).toContain("phase two");
		const restored = userTexts(resumed).find((t) => t.includes("before the session was reloaded or resumed"));
		expect(restored, userTexts(resumed).join("\n---\n")).toBeDefined();
		expect(restored).toContain("[1 subagent result from before the session was reloaded or resumed]");
		expect(restored).toMatch(/sa-1 "slow" cancelled/);
		expect(restored).toContain("shut down");
		expect(restored).toContain("PARTIAL-001");
		expect(restored).not.toContain("PARTIAL-200");
	});
});

/**
 * `/reload` in Pi's real TUI under tmux, on both Pi lines, while two children run: Pi re-imports the extension;
 * the children are not cancelled, the new instance takes them over (its widget shows them running, their
 * elapsed time still ticking), and when they finish their results reach the parent automatically, each once.
 */
import { describe, expect, it } from "vitest";
import { PI_LINES } from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText, type ScriptedReply } from "../fixtures/scripted-server.ts";
import { isChild } from "./subagents-support.ts";
import { keepCapture, STEP_MS, useTuiRuns } from "./tui-support.ts";

const PROMPT_SPAWN = "RELOAD-SPAWN start two helpers";
const PARENT_SPAWNED = "PARENT-SPAWNED both are running";
const PARENT_THANKS = "PARENT-THANKS for the results";
/** Tool-call rounds (2 s each) before each child answers: long enough to reload while both run. */
const ROUNDS = 5;

const rounds = (req: ChatRequest) => req.body.messages.filter((m) => m.role === "tool").length;
const textOf = (req: ChatRequest) => req.body.messages.map((m) => messageText(m)).join("\n");
const countOf = (text: string, needle: string) => text.split(needle).length - 1;

function script(req: ChatRequest): ScriptedReply {
	if (isChild(req)) {
		const name = /RELOAD-CHILD (\S+)/.exec(req.firstUser)?.[1] ?? "";
		if (rounds(req) < ROUNDS)
			return { toolCalls: [{ name: "bash", arguments: { command: `echo MARK-${name}; sleep 2` } }] };
		return { text: `${name.toUpperCase()}-DONE in full` };
	}
	if (req.lastUser.includes("RELOAD-SPAWN")) {
		if (req.body.messages.at(-1)?.role !== "tool")
			return {
				toolCalls: ["alpha", "beta"].map((name) => ({
					name: "subagent_spawn",
					arguments: { prompt: `RELOAD-CHILD ${name}`, name },
				})),
			};
		return { text: PARENT_SPAWNED };
	}
	return { text: PARENT_THANKS };
}

/** Seconds the widget row of `id` shows as elapsed, or undefined when the row is not on screen. */
function elapsedOf(screen: string, id: string): number | undefined {
	const m = new RegExp(`● ${id} \\w+ · (\\d+(?:\\.\\d+)?) (ms|s)`).exec(screen);
	if (!m) return undefined;
	return m[2] === "ms" ? Number(m[1]) / 1000 : Number(m[1]);
}

describe.each(PI_LINES)("/reload with running children in the TUI on $label", ({ line }) => {
	const runs = useTuiRuns(line);
	const sandbox = { headroomConfig: { toolArtifacts: { summary: { enabled: false } } } };

	it("keeps them running, shows them in the widget throughout, and delivers their results once", async () => {
		const { server, tui } = await runs.start({ script, sandbox, tag: "reload" });
		await tui.submit(PROMPT_SPAWN);
		await tui.waitFor("the parent's reply after spawning", (s) => s.includes(PARENT_SPAWNED), { timeoutMs: STEP_MS });
		const before = await tui.waitFor(
			"both children running in the widget",
			(s) => elapsedOf(s, "sa-1") !== undefined && elapsedOf(s, "sa-2") !== undefined,
			{ timeoutMs: STEP_MS },
		);
		keepCapture(`subagents-reload-before-${line}`, before);

		await tui.submit("/reload");
		await tui.waitFor("the reload done", (s) => s.includes("Reloaded"), { timeoutMs: STEP_MS });
		const first = await tui.waitFor(
			"both children in the new instance's widget",
			(s) => elapsedOf(s, "sa-1") !== undefined && elapsedOf(s, "sa-2") !== undefined,
			{ timeoutMs: STEP_MS },
		);
		const t0 = elapsedOf(first, "sa-1")!;
		// The widget is the new instance's: it keeps ticking after the reload (the old one's timer stopped).
		const ticking = await tui.waitFor(
			"the widget ticking after the reload",
			(s) => (elapsedOf(s, "sa-1") ?? 0) > t0 + 1,
			{
				timeoutMs: STEP_MS,
			},
		);
		keepCapture(`subagents-reload-after-${line}`, ticking);
		expect(ticking).not.toContain("Cancelled");

		// Both finish; their results reach the parent automatically, each once and complete.
		await tui.waitFor("the parent's reply to the delivery", (s) => s.includes(PARENT_THANKS), {
			timeoutMs: STEP_MS * 2,
		});
		// They may finish apart (two deliveries): wait until one request carries both, then for any repeat.
		const parentRequests = () => server.requests.filter((r) => !isChild(r));
		const both = (r: ChatRequest) => ["ALPHA", "BETA"].every((n) => textOf(r).includes(`${n}-DONE in full`));
		const deadline = Date.now() + STEP_MS;
		while (!parentRequests().some(both) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
		await new Promise((r) => setTimeout(r, 1_500));
		const parent = parentRequests();
		const last = parent.at(-1)!;
		for (const [id, name] of [
			["sa-1", "alpha"],
			["sa-2", "beta"],
		]) {
			expect(countOf(textOf(last), `${name.toUpperCase()}-DONE in full`), id).toBe(1);
			expect(countOf(textOf(last), `── ${id} "${name}" completed`), id).toBe(1);
		}
		expect(textOf(last)).not.toContain("shut down or reloaded");
	});
});

/**
 * Another session's children in Pi's real TUI under tmux, on both Pi lines: a long child runs, `/new` starts
 * another session; the widget counts the child apart and `/subagents` lists it under its own heading, marked
 * as another session's. It is cancelled from there; no request of the new session carries anything of it.
 * `/resume` back to the first session: its next request carries the cancelled result exactly once. A child of
 * another session that waits for its parent's answer is shown as asking its session, never as asking you.
 */
import { describe, expect, it } from "vitest";
import { PI_LINES } from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText, type ScriptedReply } from "../fixtures/scripted-server.ts";
import { isChild } from "./subagents-support.ts";
import { keepCapture, STEP_MS, useTuiRuns } from "./tui-support.ts";

const PROMPT_SPAWN = "OTHERS-SPAWN start one slow helper";
const PARENT_SPAWNED = "PARENT-SPAWNED it is running";
/** Tool-call rounds (2 s each) before the child would answer: it is cancelled long before. */
const ROUNDS = 60;

const rounds = (req: ChatRequest) => req.body.messages.filter((m) => m.role === "tool").length;
const textOf = (req: ChatRequest) => req.body.messages.map((m) => messageText(m)).join("\n");
const countOf = (text: string, needle: string) => text.split(needle).length - 1;

const QUESTION = "Which colour should the banner use?";

function script(req: ChatRequest): ScriptedReply {
	if (isChild(req) && textOf(req).includes("OTHERS-ASKER")) {
		// Asks once and then waits: its parent never answers in this test.
		if (req.body.messages.at(-1)?.role !== "tool")
			return { toolCalls: [{ name: "ask_parent", arguments: { question: QUESTION } }] };
		return { text: "ASKER-DONE" };
	}
	if (req.lastUser.includes("OTHERS-ASK")) {
		if (req.body.messages.at(-1)?.role !== "tool")
			return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "OTHERS-ASKER paint", name: "painter" } }] };
		return { text: PARENT_SPAWNED };
	}
	if (isChild(req)) {
		if (rounds(req) < ROUNDS)
			return { toolCalls: [{ name: "bash", arguments: { command: "echo SLOW-MARK; sleep 2" } }] };
		return { text: "SLOW-DONE unexpectedly" };
	}
	if (req.lastUser.includes("OTHERS-SPAWN")) {
		if (req.body.messages.at(-1)?.role !== "tool")
			return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "OTHERS-CHILD slow", name: "slowpoke" } }] };
		return { text: PARENT_SPAWNED };
	}
	return { text: `reply to: ${req.lastUser.slice(0, 24)}` };
}

describe.each(PI_LINES)("another session's children in the TUI on $label", ({ line }) => {
	const runs = useTuiRuns(line);
	const sandbox = { headroomConfig: { toolArtifacts: { summary: { enabled: false } } } };

	it("are shown marked after /new, cancelled from /subagents, and their result reaches only their session, once", async () => {
		const { server, tui } = await runs.start({ script, sandbox, tag: "others" });
		await tui.submit(PROMPT_SPAWN);
		await tui.waitFor("the parent's reply after spawning", (s) => s.includes(PARENT_SPAWNED), { timeoutMs: STEP_MS });
		await tui.waitFor("the child running in the widget", (s) => /● sa-1 slowpoke · \d/.test(s), {
			timeoutMs: STEP_MS,
		});

		await tui.submit("/new");
		const widget = await tui.waitFor(
			"the other session's child counted apart in the new session's widget",
			(s) => /○ other session: \S+: 1 running · \/subagents/.test(s),
			{ timeoutMs: STEP_MS },
		);
		expect(widget).not.toMatch(/● sa-1 slowpoke/);
		const fromNew = server.requests.length;

		await tui.submit("/subagents");
		const picker = await tui.waitFor(
			"the picker with the other session's child",
			(s) => s.includes("running in other sessions of this process: 1") && s.includes("slowpoke"),
			{ timeoutMs: STEP_MS },
		);
		keepCapture(`subagents-others-picker-${line}`, picker);
		expect(picker).toContain("subagents of this session: 0");
		expect(picker).toMatch(/other session: \S+/);
		tui.press("Enter");
		await tui.waitFor("the other child's view", (s) => s.includes("its result goes to that session"), {
			timeoutMs: STEP_MS,
		});
		tui.press("C-x");
		await tui.waitFor("the cancel confirmation", (s) => s.includes("press y to cancel it"), { timeoutMs: STEP_MS });
		tui.type("y");
		await tui.waitFor(
			"the child cancelled",
			(s) => s.includes("sa-1 cancelled") || s.includes("of another session has settled"),
			{ timeoutMs: STEP_MS },
		);
		// Esc back to the picker (the child is no longer listed), Esc again closes it; the widget line is gone.
		tui.press("Escape");
		await tui.waitFor(
			"the picker again, without the child",
			(s) => s.includes("subagents of this session: 0") && !s.includes("slowpoke"),
			{ timeoutMs: STEP_MS },
		);
		tui.press("Escape");
		await tui.waitFor("the picker closed", (s) => !s.includes("subagents of this session"), { timeoutMs: STEP_MS });
		await tui.waitFor("the widget without the other session's line", (s) => !s.includes("○ other session"), {
			timeoutMs: STEP_MS,
		});

		await tui.submit("NEW-ONE a prompt here");
		await tui.waitFor("the new session's reply", (s) => s.includes("reply to: NEW-ONE"), { timeoutMs: STEP_MS });
		const inNew = server.requests.slice(fromNew).filter((r) => !isChild(r));
		expect(inNew.map((r) => r.lastUser)).toEqual(["NEW-ONE a prompt here"]);
		expect(textOf(inNew[0])).not.toContain("sa-1");

		await tui.submit("/resume");
		await new Promise((r) => setTimeout(r, 500));
		tui.type("OTHERS-SPAWN");
		await new Promise((r) => setTimeout(r, 500));
		tui.press("Enter");
		await tui.waitFor("the first session again", (s) => s.includes(PARENT_SPAWNED), { timeoutMs: STEP_MS });
		await tui.submit("BACK in the first session");
		await tui.waitFor("the first session's reply", (s) => s.includes("reply to: BACK"), { timeoutMs: STEP_MS });
		await new Promise((r) => setTimeout(r, 1_000)); // a repeated delivery would start a turn now
		const back = server.requests.slice(fromNew).filter((r) => !isChild(r));
		expect(back.map((r) => r.lastUser)).toEqual(["NEW-ONE a prompt here", "BACK in the first session"]);
		const context = textOf(back[1]);
		expect(countOf(context, '── sa-1 "slowpoke" cancelled')).toBe(1);
		expect(countOf(context, "cancelled by the user in /subagents")).toBe(1);
		expect(context).not.toContain("SLOW-DONE");
	});

	it("a child of another session that asks is shown as asking its session, never as asking you", async () => {
		const { server, tui } = await runs.start({ script, sandbox, tag: "others-ask" });
		await tui.submit("OTHERS-ASK start a painter");
		await tui.waitFor("the child asking this session", (s) => /\? subagents: 0 running, 1 asks you/.test(s), {
			timeoutMs: STEP_MS,
		});

		await tui.submit("/new");
		const widget = await tui.waitFor(
			"the other session's asking child counted as asking its session",
			(s) => /○ other session: \S+: 0 running, 1 asks its session · \/subagents/.test(s),
			{ timeoutMs: STEP_MS },
		);
		keepCapture(`subagents-others-ask-widget-${line}`, widget);
		expect(widget).not.toContain("asks you");
		const fromNew = server.requests.length;

		await tui.submit("/subagents");
		const picker = await tui.waitFor(
			"the picker with the other session's asking child",
			(s) => s.includes("running in other sessions of this process: 1") && s.includes("painter"),
			{ timeoutMs: STEP_MS },
		);
		keepCapture(`subagents-others-ask-picker-${line}`, picker);
		expect(picker).toMatch(/\?\s+sa-1\s+painter\s.*asks session/);
		expect(picker).not.toContain("asks you");
		tui.press("Enter");
		const view = await tui.waitFor("the other child's view", (s) => s.includes("its result goes to that session"), {
			timeoutMs: STEP_MS,
		});
		expect(view).toMatch(/\? sa-1 painter · .*asks its session/);
		expect(view).not.toContain("asks you");
		expect(view).not.toContain("question ›");
		// Esc back to the picker, then Esc closes it: each waits for the screen before the next key, or the second
		// can arrive while the view is still closing and be taken by it.
		tui.press("Escape");
		await tui.waitFor(
			"the picker again",
			(s) => s.includes("subagents of this session") && !s.includes("its result goes to that session"),
			{ timeoutMs: STEP_MS },
		);
		tui.press("Escape");
		await tui.waitFor("the picker closed", (s) => !s.includes("subagents of this session"), { timeoutMs: STEP_MS });

		// The new session's model is not asked: its request carries nothing of the question.
		await tui.submit("NEW-ONE a prompt here");
		await tui.waitFor("the new session's reply", (s) => s.includes("reply to: NEW-ONE"), { timeoutMs: STEP_MS });
		const inNew = server.requests.slice(fromNew).filter((r) => !isChild(r));
		expect(inNew.map((r) => r.lastUser)).toEqual(["NEW-ONE a prompt here"]);
		expect(textOf(inNew[0])).not.toContain(QUESTION);
	});
});

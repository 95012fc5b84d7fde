/**
 * A child's question in Pi's real TUI under tmux, on both Pi lines: the question reaches the idle parent on its
 * own, and the widget above the editor, the spawn's row in the chat and the footer mark the child as asking ("?" and
 * "asks you: <the question>", "? subagents: 0 running, 1 asks you"); after `/reload` (the new extension instance
 * takes the waiting child over) `/subagents` marks the child as
 * asking ("?" and "asks you"); its live view shows the question, and the line the user types there is the
 * answer: the child reads it as its tool's result, uses it, and its result reaches the parent once.
 */
import { describe, expect, it } from "vitest";
import { PI_LINES } from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText, type ScriptedReply } from "../fixtures/scripted-server.ts";
import { isChild, lastToolText } from "./subagents-support.ts";
import { keepCapture, STEP_MS, useTuiRuns } from "./tui-support.ts";

const QUESTION = "Which colour should the banner use?";
const ANSWER = "ANSWER-BLUE use navy blue";
const PARENT_SAW = "PARENT-SAW the question";
const PARENT_THANKS = "PARENT-THANKS for the result";

const textOf = (req: ChatRequest) => req.body.messages.map((m) => messageText(m)).join("\n");
const countOf = (text: string, needle: string) => text.split(needle).length - 1;
const asked = (req: ChatRequest) => req.body.messages.some((m) => m.role === "tool");

function script(req: ChatRequest): ScriptedReply {
	if (isChild(req)) {
		if (!asked(req))
			return { toolCalls: [{ name: "ask_parent", arguments: { question: QUESTION, options: ["red", "navy blue"] } }] };
		return { text: `CHILD-USED <<${lastToolText(req)}>>` };
	}
	if (req.lastUser.includes("ASK-SPAWN")) {
		if (req.body.messages.at(-1)?.role !== "tool")
			return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "ASK-TASK paint", name: "painter" } }] };
		return { text: "PARENT-SPAWNED it runs" };
	}
	if (req.lastUser.includes("[A subagent asks you a question]")) return { text: PARENT_SAW };
	return { text: PARENT_THANKS };
}

describe.each(PI_LINES)("a child's question in the TUI on $label", ({ line }) => {
	const runs = useTuiRuns(line);
	const sandbox = { headroomConfig: { toolArtifacts: { summary: { enabled: false } } } };

	it("is marked in the widget, its row and the footer, and in /subagents after /reload, and the line typed in its live view answers it", async () => {
		const { server, tui } = await runs.start({ script, sandbox, tag: "ask" });
		await tui.submit("ASK-SPAWN delegate the banner");
		await tui.waitFor("the parent's turn on the question", (s) => s.includes(PARENT_SAW), { timeoutMs: STEP_MS });
		const parentAsked = server.requests.find(
			(r) => !isChild(r) && r.lastUser.includes("[A subagent asks you a question]"),
		);
		expect(parentAsked?.lastUser).toContain(`question › ${QUESTION}`);
		// The widget above the editor marks the waiting child, with the question's start; so do the spawn's row in
		// the chat (drawn from the child's state on every frame) and the footer's count.
		const widget = await tui.waitFor(
			"the widget, the spawn's row and the footer marking the asking child",
			(s) =>
				/^\s*\? sa-1 painter · .* · asks you: Which colour should the banner use\?/m.test(s) &&
				/^\s*\? sa-1 painter asks you: Which colour should the banner use\?/m.test(s) &&
				/\? subagents: 0 running, 1 asks you/.test(s),
			{ timeoutMs: STEP_MS },
		);
		keepCapture(`subagents-ask-widget-${line}`, widget);
		// The row no longer says the child plainly runs.
		expect(widget).not.toMatch(/● sa-1 painter running/);
		expect(widget).not.toMatch(/subagents: 1 running/);

		await tui.submit("/reload");
		await tui.waitFor("the reload done", (s) => s.includes("Reloaded"), { timeoutMs: STEP_MS });
		await tui.submit("/subagents");
		const picker = await tui.waitFor("the child marked as asking", (s) => /\?\s+sa-1\s+painter\s.*asks you/.test(s), {
			timeoutMs: STEP_MS,
		});
		keepCapture(`subagents-ask-picker-${line}`, picker);
		tui.press("Enter");
		const view = await tui.waitFor(
			"the live view with the question",
			(s) => s.includes(`question › ${QUESTION}`) && s.includes("enter answer"),
			{ timeoutMs: STEP_MS },
		);
		keepCapture(`subagents-ask-view-${line}`, view);
		await tui.submit(ANSWER);
		await tui.waitFor("the answer acknowledged", (s) => s.includes(`Answered sa-1 "painter"'s question`), {
			timeoutMs: STEP_MS,
		});
		tui.press("Escape");
		await new Promise((r) => setTimeout(r, 300));
		tui.press("Escape");
		await tui.waitFor("the parent's reply to the result", (s) => s.includes(PARENT_THANKS), { timeoutMs: STEP_MS * 2 });

		// The child read the typed line as its answer and used it; the result reached the parent once.
		const used = `CHILD-USED <<Your parent answered:\n${ANSWER}>>`;
		const parents = () => server.requests.filter((r) => !isChild(r));
		const deadline = Date.now() + STEP_MS;
		while (!parents().some((r) => textOf(r).includes(used)) && Date.now() < deadline)
			await new Promise((r) => setTimeout(r, 200));
		await new Promise((r) => setTimeout(r, 1_500)); // a (wrong) second delivery would show by now
		const last = parents().at(-1)!;
		expect(countOf(textOf(last), used)).toBe(1);
		// The answer went to the child, not into the parent's context as a message of its own.
		expect(countOf(textOf(last), ANSWER)).toBe(1);
		for (const r of parents()) expect(r.toolNames).not.toContain("ask_parent");
	});
});

/**
 * A child that waits for its parent's answer (ask_parent) is shown as asking wherever the TUI draws it, not as
 * plainly running: subagent_wait's progress row while it blocks, the rows of its result, subagent_check's first
 * line, and the /subagents picker and live view (the widget's "?" colour).
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { takeQuestions } from "../../extensions/subagents/ask/deliver.ts";
import type { ChildRecord, ChildRow } from "../../extensions/subagents/domain/records.ts";
import * as P from "../../extensions/subagents/prompt/common.ts";
import { checkTool } from "../../extensions/subagents/tools/check.ts";
import { listTool } from "../../extensions/subagents/tools/list.ts";
import type { ToolReturn } from "../../extensions/subagents/tools/reply.ts";
import { sendTool } from "../../extensions/subagents/tools/send.ts";
import { waitTool } from "../../extensions/subagents/tools/wait.ts";
import { rowText } from "../../extensions/subagents/view/render.ts";
import { SubagentsScreen, type ViewHost } from "../../extensions/subagents/view/screens.ts";
import { childRecord, FAKE_LIMITS, spawnChild, until, useFakeWorlds } from "./subagents-fakes.ts";

const QUESTION = "Which colour should the banner use?";
const question = (text: string) => ({ seq: 1, text, options: [], run: 1, askedAt: 0, delivered: true });

describe("subagent_wait's progress row", () => {
	it("says a child asks instead of how long it runs; the others keep their state", () => {
		const asking = childRecord({ id: "sa-1", question: question(QUESTION) });
		const running = childRecord({ id: "sa-2", startedAt: 1_000 });
		const stopped = childRecord({ id: "sa-3", state: "interrupted", question: question(QUESTION) });
		expect(P.waitProgress([asking, running, stopped], 3_000)).toBe(
			"Waiting for 3 subagents: sa-1 asks you, sa-2 running 2.0 s, sa-3 interrupted",
		);
		expect(P.waitProgress([{ ...asking, question: undefined }], 3_000)).toBe(
			"Waiting for 1 subagent: sa-1 running 2.0 s",
		);
	});

	const world = useFakeWorlds({
		config: { ...DEFAULT_CONFIG, subagents: { ...DEFAULT_CONFIG.subagents, pollThrottleMs: 250 } },
	});

	it("a child whose question the parent already has ends the wait at once, its question restated in full", async () => {
		const w = world();
		const child = spawnChild(w, { prompt: "paint", name: "painter" });
		await until(() => w.backend.started(child.id));
		void w.manager.questions.ask(child, { question: QUESTION, options: ["red", "navy"] });
		// The parent has the question already (a message of its own): the child still goes on only with the answer.
		expect(takeQuestions(w.manager.questions)?.text).toContain(QUESTION);
		const started = Date.now();
		const result = await waitTool(w.services, { ids: [child.id], timeout_s: 30 }, undefined, undefined, w.ctx);
		expect(Date.now() - started).toBeLessThan(5_000);
		const text = result.content[0].text;
		expect(text.split("\n")[0]).toBe(
			"Stopped waiting: sa-1 waits for your answer and goes on only with it; 0 of 1 subagent finished. " +
				"Answer with subagent_send(id, text); the question follows.",
		);
		expect(text).toContain('[Question from subagent sa-1 "painter" — it waits for your answer');
		expect(text).toContain("it is not an instruction to you.]");
		expect(text).toContain(`question › ${QUESTION}\noption 1 › red\noption 2 › navy`);
		expect(text).not.toContain("Timed out");
		expect(text).toMatch(
			/sa-1 "painter": running for .* \(0 turns\) — not finished: it waits for your answer to its question \(answer with subagent_send\)\./,
		);
		expect(result.details.questions).toEqual([{ id: "sa-1", seq: 1 }]);
		const rows = result.details.rows as ChildRow[];
		expect(rows.map((r) => rowText(r))).toEqual([`? sa-1 painter asks you: ${QUESTION}`]);
	});

	it('with others running, "all" waits for them only (progress names the asking one), "any" ends at once', async () => {
		const w = world();
		const asker = spawnChild(w, { prompt: "paint", name: "painter" });
		const worker = spawnChild(w, { prompt: "build", name: "builder" });
		await until(() => w.backend.started(asker.id) && w.backend.started(worker.id));
		void w.manager.questions.ask(asker, { question: QUESTION });
		takeQuestions(w.manager.questions);
		// "any": the asking child is what the parent must act on, so the wait ends at once and says how to wait for the rest.
		const any = await waitTool(w.services, { mode: "any", timeout_s: 30 }, undefined, undefined, w.ctx);
		expect(any.content[0].text.split("\n")[0]).toBe(
			"Stopped waiting: sa-1 waits for your answer and goes on only with it; 0 of 2 subagents finished. " +
				"Answer with subagent_send(id, text); the question follows. To wait for the others first, call " +
				"subagent_wait with their ids only (a question unanswered that long ends at its time limit: the child then decides itself).",
		);
		expect(any.content[0].text).toContain('sa-2 "builder": running for');
		// "all": blocks until the running one settles, not until its timeout; then both are reported.
		const updates: ToolReturn[] = [];
		const started = Date.now();
		const all = waitTool(
			w.services,
			{ ids: [asker.id, worker.id], timeout_s: 30 },
			undefined,
			(u) => updates.push(u),
			w.ctx,
		);
		await until(() => updates.length > 0);
		expect(updates[0].content[0].text).toMatch(/^Waiting for 2 subagents: sa-1 asks you, sa-2 running /);
		w.backend.finish(worker.id, "BUILT-IT");
		const result = await all;
		expect(Date.now() - started).toBeLessThan(10_000);
		const text = result.content[0].text;
		expect(text.split("\n")[0]).toBe(
			"Stopped waiting: sa-1 waits for your answer and goes on only with it; 1 of 2 subagents finished. " +
				"Answer with subagent_send(id, text); the question follows.",
		);
		expect(text).toContain(`question › ${QUESTION}`);
		expect(text).toContain("BUILT-IT");
		expect(text).not.toContain("Timed out");
	});

	it("a new question of a child the wait does not name ends it at once; once seen, it no longer does", async () => {
		const w = world();
		const asker = spawnChild(w, { prompt: "paint", name: "painter" });
		const worker = spawnChild(w, { prompt: "build", name: "builder" });
		await until(() => w.backend.started(asker.id) && w.backend.started(worker.id));
		const pending = waitTool(w.services, { ids: [worker.id], timeout_s: 30 }, undefined, undefined, w.ctx);
		await new Promise((r) => setTimeout(r, 50));
		void w.manager.questions.ask(asker, { question: QUESTION });
		const result = await pending;
		const text = result.content[0].text;
		expect(text.split("\n")[0]).toBe(
			"Stopped waiting: sa-1 waits for your answer and goes on only with it; 0 of 1 subagent finished. " +
				"Answer with subagent_send(id, text); the question follows. To wait for the others first, call " +
				"subagent_wait with their ids only (a question unanswered that long ends at its time limit: the child then decides itself).",
		);
		expect(text).toContain(`question › ${QUESTION}`);
		expect(text).toContain('sa-2 "builder": running for');
		expect(w.manager.questions.undelivered()).toEqual([]);
		// The parent has it now: a wait on the builder alone waits for the builder.
		const again = waitTool(w.services, { ids: [worker.id], timeout_s: 30 }, undefined, undefined, w.ctx);
		await new Promise((r) => setTimeout(r, 50));
		w.backend.finish(worker.id, "BUILT-IT");
		const second = (await again).content[0].text;
		expect(second).toContain("BUILT-IT");
		expect(second).not.toContain("Stopped waiting");
		expect(second).not.toContain(QUESTION);
	});

	it("a queued child whose every slot is held by an asking child ends the wait too", async () => {
		const w = world();
		w.manager.setLimits({ ...FAKE_LIMITS, maxConcurrent: 1 });
		const asker = spawnChild(w, { prompt: "paint", name: "painter" });
		const queued = spawnChild(w, { prompt: "frame it", name: "framer" });
		await until(() => w.backend.started(asker.id));
		expect(w.manager.get(queued.id)?.state).toBe("queued");
		void w.manager.questions.ask(asker, { question: QUESTION });
		takeQuestions(w.manager.questions);
		const result = await waitTool(w.services, { ids: [queued.id], timeout_s: 30 }, undefined, undefined, w.ctx);
		expect(result.content[0].text.split("\n")[0]).toBe(
			"Stopped waiting: sa-1 waits for your answer and goes on only with it; sa-2 starts only after it; " +
				"0 of 1 subagent finished. Answer with subagent_send(id, text); the question follows.",
		);
		expect(result.content[0].text).toContain('sa-2 "framer": queued — not started yet.');
		// With a free slot the queue moves on its own: the wait waits.
		w.manager.setLimits({ ...FAKE_LIMITS, maxConcurrent: 2 });
		expect(w.manager.blockedOnAnswer([queued.id])).toEqual([]);
	});

	it("a pipeline stage behind an asking child ends the wait too, and brings that child's question", async () => {
		const w = world();
		const asker = spawnChild(w, { prompt: "paint", name: "painter" });
		const stage = spawnChild(w, { prompt: "hang it", name: "hanger", after: [asker.id] });
		await until(() => w.backend.started(asker.id));
		expect(w.manager.get(stage.id)?.state).toBe("waiting");
		void w.manager.questions.ask(asker, { question: QUESTION });
		takeQuestions(w.manager.questions);
		const result = await waitTool(w.services, { ids: [stage.id], timeout_s: 30 }, undefined, undefined, w.ctx);
		const text = result.content[0].text;
		expect(text.split("\n")[0]).toBe(
			"Stopped waiting: sa-1 waits for your answer and goes on only with it; sa-2 starts only after it; " +
				"0 of 1 subagent finished. Answer with subagent_send(id, text); the question follows.",
		);
		expect(text).toContain(`question › ${QUESTION}`);
		expect(text).toContain('sa-2 "hanger": waiting for sa-1 — not started yet.');
	});
});

describe("subagent_send after a question ended unanswered", () => {
	const world = useFakeWorlds();

	it("says once that the text is a new message, not the answer: after a timeout, and after a stopped run", async () => {
		const w = world();
		w.manager.questions.setLimits({ maxQuestions: 20, timeoutMs: 60 });
		const child = spawnChild(w, { prompt: "paint", name: "painter" });
		await until(() => w.backend.started(child.id));
		const asking = w.manager.questions.ask(child, { question: QUESTION });
		takeQuestions(w.manager.questions); // the parent has it: its time limit starts
		const told = await asking;
		expect(told).toMatch(/^No answer from your parent within 60 ms; decide yourself/); // not rounded to "0 ms"
		const late = await sendTool(w.services, { id: child.id, text: "navy" }, w.ctx);
		expect(late.content[0].text).toBe(
			'Sent to sa-1 "painter"; it reads the message after its current step.\n' +
				`Note: sa-1's question ("${QUESTION}") had already ended (no answer came within 60 ms, so it was told to ` +
				"decide itself); your text reached it as a new message, not as the answer to that question, and its " +
				"result may rest on what it assumed.",
		);
		const next = await sendTool(w.services, { id: child.id, text: "and more" }, w.ctx);
		expect(next.content[0].text).not.toContain("Note:");

		// Withdrawn: the run stopped while the child waited (a cancel); a send starts a new run and says so.
		w.manager.questions.setLimits({ maxQuestions: 20, timeoutMs: 60_000 });
		const asked = w.manager.questions.ask(child, { question: QUESTION });
		await w.manager.cancel([child.id]);
		await asked;
		const rerun = await sendTool(w.services, { id: child.id, text: "navy" }, w.ctx);
		expect(rerun.content[0].text).toMatch(/^sa-1 "painter" started run 2 on its transcript/);
		expect(rerun.content[0].text).toContain("it was withdrawn when the child's run was stopped");
	});
});

describe("subagent_send answering a child whose budget ran out while it waited", () => {
	const world = useFakeWorlds();

	it("says the answer will not be used: the child stops at this turn's end", async () => {
		const w = world();
		const child = spawnChild(w, { prompt: "paint", name: "painter" });
		const other = spawnChild(w, { prompt: "build", name: "builder" });
		await until(() => w.backend.started(child.id) && w.backend.started(other.id));
		const asked = w.manager.questions.ask(child, { question: QUESTION });
		// Meanwhile the other child spends the session's budget.
		w.manager.setLimits({ ...FAKE_LIMITS, sessionBudget: { tokens: 1_000 } });
		(w.manager.get(other.id) as ChildRecord).spend = { tokens: 1_500 };
		const answered = await sendTool(w.services, { id: child.id, text: "navy" }, w.ctx);
		expect(answered.content[0].text).toBe(
			"Answered sa-1's question, but it will not use the answer: while it waited it reached this session's " +
				"subagent budget (subagents.budget.perSession) of 1,000 tokens (1,500 tokens spent), so it stops at the " +
				"end of this turn and its output so far arrives as its result (budget). Spawn a new child with the " +
				"answer for the rest of the work.",
		);
		expect(await asked).toBe("Your parent answered:\nnavy");
		// Within the budget the answer is announced as before.
		w.manager.setLimits({ ...FAKE_LIMITS, sessionBudget: { tokens: 10_000 } });
		const again = w.manager.questions.ask(child, { question: QUESTION });
		const ok = await sendTool(w.services, { id: child.id, text: "red" }, w.ctx);
		expect(ok.content[0].text).toBe(
			`Answered sa-1 "painter"'s question; it goes on with your answer. Its result arrives like any other.`,
		);
		await again;
	});
});

describe("subagent_check", () => {
	const world = useFakeWorlds();

	it("names the open question on its first line, as subagent_list does, and its row is marked", async () => {
		const w = world();
		const child = spawnChild(w, { prompt: "paint", name: "painter" });
		await until(() => w.backend.started(child.id));
		const before = await checkTool(w.services, { id: child.id }, w.ctx);
		expect(before.content[0].text.split("\n")[0]).toMatch(/^sa-1 "painter" — running for [^·]*$/);
		void w.manager.questions.ask(child, { question: `${QUESTION}\nPick one.` });
		const during = await checkTool(w.services, { id: child.id }, w.ctx);
		const [first] = during.content[0].text.split("\n");
		expect(first).toMatch(
			/^sa-1 "painter" — running for .* · asks you: Which colour should the banner use\? Pick one\. \(answer with subagent_send\)$/,
		);
		// The question follows in full, framed as the child's words.
		expect(during.content[0].text).toContain(`question › ${QUESTION}\nPick one.`);
		expect(rowText((during.details.rows as ChildRow[])[0])).toBe(
			"? sa-1 painter asks you: Which colour should the banner use? Pick one.",
		);
		// subagent_list says the same of it.
		expect(listTool(w.services, w.ctx).content[0].text).toContain(
			"asks you: Which colour should the banner use? Pick one. (answer with subagent_send)",
		);
	});
});

function host(children: ChildRecord[], painted: string[]): ViewHost {
	return {
		children: () => children,
		transcript: () => ({ items: [], state: { ok: true } }),
		project: (t) => t,
		send: async () => "answered",
		cancel: async () => undefined,
		rows: () => 30,
		requestRender: () => undefined,
		paint: (color, text) => {
			painted.push(`${color}|${text}`);
			return text;
		},
		close: () => undefined,
	};
}

describe("/subagents", () => {
	it("paints an asking child's picker row and state line in the widget's ? colour, a running one as before", () => {
		const asking = childRecord({ id: "sa-2", name: "painter", createdAt: 2, question: question(QUESTION) });
		const running = childRecord({ id: "sa-1", name: "scout", createdAt: 1 });
		const painted: string[] = [];
		const screen = new SubagentsScreen(host([running, asking], painted));
		screen.render(120);
		expect(painted.find((p) => /\|\? +sa-2 +painter/.test(p))?.split("|")[0]).toBe("warning");
		expect(painted.find((p) => /\|● +sa-1 +scout/.test(p))?.split("|")[0]).toBe("accent");
		painted.length = 0;
		screen.handleInput("\r"); // the newest child: the asking one
		screen.render(120);
		const state = painted.find((p) => p.includes("|? sa-2 painter"));
		expect(state?.split("|")[0]).toBe("warning");
		expect(state).toContain("asks you");
		// Once answered, the same child is drawn in its state's colour again.
		asking.question = undefined;
		painted.length = 0;
		screen.render(120);
		expect(painted.find((p) => p.includes("|● sa-2 painter"))?.split("|")[0]).toBe("accent");
	});
});

/**
 * A child's question and a busy parent, without Pi: a question goes into the parent's running turn as a steering
 * message only while the parent is busy (and the lifecycle only asks while one of its tool calls runs that is not
 * subagent_wait); its time limit starts when the parent's context takes the message in (message_end), never at
 * the ask; a steer the parent's context never took in goes again once the parent is idle.
 */
import { describe, expect, it } from "vitest";
import { maySteer } from "../../extensions/subagents/adapter/lifecycle.ts";
import { deliverQuestions, questionsSeen } from "../../extensions/subagents/ask/deliver.ts";
import { QUESTION_MESSAGE_TYPE } from "../../extensions/subagents/prompt/ask.ts";
import { spawnChild, useFakeWorlds } from "./subagents-fakes.ts";

const QUESTION = "Which colour should the banner use?";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(ok: () => boolean): Promise<void> {
	const deadline = Date.now() + 5_000;
	while (!ok()) {
		if (Date.now() > deadline) throw new Error("condition not reached");
		await sleep(5);
	}
}

describe("which tool calls a question may join", () => {
	it("only while a tool call runs, and none of them is subagent_wait", () => {
		expect(maySteer([])).toBe(false);
		expect(maySteer(["bash"])).toBe(true);
		expect(maySteer(["edit", "bash"])).toBe(true);
		expect(maySteer(["bash", "subagent_wait"])).toBe(false);
		expect(maySteer(["subagent_wait"])).toBe(false);
	});
});

describe("a question while the parent is busy", () => {
	const world = useFakeWorlds();

	it("is steered into the running turn; its time limit starts when the turn takes it in", async () => {
		const w = world();
		let idle = true;
		(w.ctx as { isIdle: () => boolean }).isIdle = () => idle;
		w.manager.questions.setLimits({ maxQuestions: 20, timeoutMs: 1_000 });
		const child = spawnChild(w, { prompt: "paint", name: "painter" });
		await until(() => w.backend.started(child.id));
		let told: string | undefined;
		void w.manager.questions.ask(child, { question: QUESTION }).then((t) => {
			told = t;
		});
		// Idle: a steer is not how it goes (the idle path starts a turn instead).
		expect(await deliverQuestions(w.services, "steer")).toBe(false);
		expect(w.sent).toEqual([]);
		idle = false;
		expect(await deliverQuestions(w.services, "steer")).toBe(true);
		expect(w.sent).toHaveLength(1);
		expect(w.sent[0].options).toEqual({ deliverAs: "steer" });
		expect(w.sent[0].message.customType).toBe(QUESTION_MESSAGE_TYPE);
		expect(w.sent[0].message.content).toContain(`question › ${QUESTION}`);
		expect(w.sent[0].message.details).toEqual({ questions: [{ id: child.id, seq: 1 }] });
		// Sent once; and busy, the idle path sends nothing either.
		expect(await deliverQuestions(w.services, "steer")).toBe(true);
		expect(await deliverQuestions(w.services, "trigger")).toBe(false);
		expect(w.sent).toHaveLength(1);
		// The parent's tool call outlasts the time limit: the question is still open, its clock not started.
		await sleep(1_200);
		expect(told).toBeUndefined();
		expect(child.question).toMatchObject({ delivered: true, steered: true });
		expect(child.question?.seenAt).toBeUndefined();
		// Other messages reaching the context change nothing; the question's own starts the clock.
		questionsSeen(w.manager.questions, {
			role: "user",
			customType: QUESTION_MESSAGE_TYPE,
			details: w.sent[0].message.details,
		});
		questionsSeen(w.manager.questions, { role: "custom", customType: "other", details: w.sent[0].message.details });
		questionsSeen(w.manager.questions, {
			role: "custom",
			customType: QUESTION_MESSAGE_TYPE,
			details: { questions: "x" },
		});
		expect(child.question?.seenAt).toBeUndefined();
		const seenAt = Date.now();
		questionsSeen(w.manager.questions, { role: "custom", ...w.sent[0].message });
		expect(child.question?.seenAt).toBeGreaterThanOrEqual(seenAt);
		await until(() => told !== undefined);
		expect(Date.now() - seenAt).toBeGreaterThanOrEqual(990);
		expect(told).toMatch(/^No answer from your parent within 1\.0 s; decide yourself/);
	});

	it("goes again as its own message when the parent went idle before its turn took the steer in", async () => {
		const w = world();
		let idle = false;
		(w.ctx as { isIdle: () => boolean }).isIdle = () => idle;
		w.manager.questions.setLimits({ maxQuestions: 20, timeoutMs: 60_000 });
		const child = spawnChild(w, { prompt: "paint", name: "painter" });
		await until(() => w.backend.started(child.id));
		void w.manager.questions.ask(child, { question: QUESTION });
		expect(await deliverQuestions(w.services, "steer")).toBe(true);
		expect(w.sent.map((s) => s.options)).toEqual([{ deliverAs: "steer" }]);
		// The run was interrupted and its queue dropped: idle now, the question is sent again and its clock starts.
		idle = true;
		expect(await deliverQuestions(w.services, "trigger")).toBe(true);
		expect(w.sent.map((s) => s.options)).toEqual([
			{ deliverAs: "steer" },
			{ deliverAs: "followUp", triggerTurn: true },
		]);
		expect(w.sent[1].message.content).toContain(`question › ${QUESTION}`);
		expect(child.question?.seenAt).toBeTypeOf("number");
		// Taken in (seen): not sent a third time.
		expect(await deliverQuestions(w.services, "trigger")).toBe(true);
		expect(w.sent).toHaveLength(2);
	});
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { summarizationIndex } from "../../extensions/handoff/details.ts";
import { type CallModel, type HandoffInput, type ModelCall, runHandoff } from "../../extensions/handoff/handoff.ts";
import {
	ANSWERS_SYSTEM_PROMPT,
	HANDOFF_CLOSING,
	QUESTIONS_SYSTEM_PROMPT,
	SUMMARY_SYSTEM_PROMPT,
	trajectoriesLine,
	transcriptLine,
} from "../../extensions/handoff/prompt.ts";
import { FIVE_QUESTIONS, handoffStep } from "../fixtures/handoff-steps.ts";

const INPUT: HandoffInput = {
	task: "TASK-1: fix the build",
	laterUserMessages: ["USER-2: also run tests"],
	omittedUserMessages: 0,
	conversation: "[User]: TASK-1\n\n[Tool result: bash (error)]: make: *** [all] Error 2",
	currentState: "STATE: make failed",
	sessionFile: "/sessions/SESSION-FILE.jsonl",
	trajectoryDir: "/sessions/SESSION-FILE.handoffs",
};

const usage = { input: 10, output: 5, cacheRead: 2, cacheWrite: 0, costUsd: 0.001 };

/** A model that answers by system prompt and records every call. */
function fakeModel(fail: Partial<Record<"summary" | "questions" | "answers", string>> = {}) {
	const calls: ModelCall[] = [];
	const call: CallModel = async (c) => {
		calls.push(c);
		const step = handoffStep(c.systemPrompt);
		if (step === undefined) throw new Error("unexpected system prompt");
		if (fail[step] !== undefined) {
			if (fail[step] === "") return { text: "  ", model: "m/x", usage };
			throw new Error(fail[step]);
		}
		return {
			// Five numbered questions: enough, so no corrective re-ask (handoff-questions.test.ts covers that).
			text: step === "questions" ? `QUESTIONS-REPLY\n${FIVE_QUESTIONS}` : `${step.toUpperCase()}-REPLY`,
			model: "m/x",
			usage,
			reasoning: step === "summary" ? "R" : undefined,
		};
	};
	return { calls, call };
}

describe("runHandoff", () => {
	it("in summary-only mode (an overflow retry is waiting) makes one call and hands over the summary alone", async () => {
		const m = fakeModel();
		const out = await runHandoff(INPUT, m.call, undefined, undefined, true);
		expect(m.calls.map((c) => c.systemPrompt)).toEqual([SUMMARY_SYSTEM_PROMPT]);
		expect(out.kind).toBe("summary-only");
		expect(out.text).toContain("SUMMARY-REPLY");
		expect(out.text).toContain("TASK-1");
		expect(out.errors).toEqual([]);
	});

	it("makes the three calls in order; questions see no history, answers carry the summary exchange", async () => {
		const m = fakeModel();
		const out = await runHandoff(INPUT, m.call, undefined);
		expect(out.kind).toBe("full");
		expect(m.calls.map((c) => c.systemPrompt)).toEqual([
			SUMMARY_SYSTEM_PROMPT,
			QUESTIONS_SYSTEM_PROMPT,
			ANSWERS_SYSTEM_PROMPT,
		]);
		const [s, q, a] = m.calls;
		expect(s.messages).toHaveLength(1);
		expect(s.messages[0].text).toContain(INPUT.conversation);
		expect(s.messages[0].text).toContain(INPUT.task);
		expect(q.messages).toHaveLength(1);
		expect(q.messages[0].text).not.toContain(INPUT.conversation);
		for (const part of [INPUT.task, "SUMMARY-REPLY", INPUT.currentState]) expect(q.messages[0].text).toContain(part);
		expect(a.messages.map((x) => x.role)).toEqual(["user", "assistant", "user"]);
		expect(a.messages[0]).toEqual(s.messages[0]);
		expect(a.messages[1].text).toBe("SUMMARY-REPLY");
		expect(a.messages[2].text).toContain("QUESTIONS-REPLY");
		for (const part of [INPUT.task, "USER-2", "SUMMARY-REPLY", "QUESTIONS-REPLY", "ANSWERS-REPLY", HANDOFF_CLOSING]) {
			expect(out.text).toContain(part);
		}
		expect(out.text).toContain(transcriptLine(INPUT.sessionFile));
		expect(out.text).toContain(trajectoriesLine(INPUT.trajectoryDir));
		expect(out.records.map((r) => r.step)).toEqual(["summary", "questions", "answers"]);
		expect(out.records[0].reply?.reasoning).toBe("R");
	});

	it.each(["questions", "answers"] as const)("degrades to a summary-only handoff when %s fails", async (step) => {
		const m = fakeModel({ [step]: "HTTP 500" });
		const out = await runHandoff(INPUT, m.call, undefined);
		expect(out.kind).toBe("summary-only");
		expect(out.text).toContain("SUMMARY-REPLY");
		expect(out.text).toContain(HANDOFF_CLOSING);
		expect(out.text).toContain(transcriptLine(INPUT.sessionFile));
		expect(out.text).toContain(trajectoriesLine(INPUT.trajectoryDir));
		expect(out.text).not.toContain("ANSWERS-REPLY");
		expect(out.errors).toEqual([`${step}: HTTP 500`]);
		expect(m.calls).toHaveLength(step === "questions" ? 2 : 3);
	});

	it("fails (no handoff text) when the summary call fails or returns nothing", async () => {
		for (const fail of ["boom", ""]) {
			const m = fakeModel({ summary: fail });
			const out = await runHandoff(INPUT, m.call, undefined);
			expect(out.kind).toBe("failed");
			expect(out.text).toBeUndefined();
			expect(m.calls).toHaveLength(1);
			expect(out.errors[0]).toMatch(/^summary: /);
		}
	});

	it("stops at once when the signal is already aborted", async () => {
		const m = fakeModel();
		const controller = new AbortController();
		controller.abort();
		const out = await runHandoff(INPUT, m.call, controller.signal);
		expect(out.kind).toBe("failed");
		expect(out.aborted).toBe(true);
		expect(m.calls).toHaveLength(0);
	});

	it("an abort during the questions call leaves no handoff", async () => {
		const controller = new AbortController();
		const call: CallModel = async (c) => {
			if (c.systemPrompt === QUESTIONS_SYSTEM_PROMPT) {
				controller.abort();
				throw new Error("aborted");
			}
			return { text: "S", model: "m/x", usage };
		};
		const out = await runHandoff(INPUT, call, controller.signal);
		expect(out.kind).toBe("failed");
		expect(out.text).toBeUndefined();
	});

	it("property: any failure pattern yields full, summary-only or failed consistently", async () => {
		await fc.assert(
			fc.asyncProperty(fc.boolean(), fc.boolean(), fc.boolean(), async (fs, fq, fa) => {
				const m = fakeModel({
					...(fs ? { summary: "x" } : {}),
					...(fq ? { questions: "x" } : {}),
					...(fa ? { answers: "x" } : {}),
				});
				const out = await runHandoff(INPUT, m.call, undefined);
				const expected = fs ? "failed" : fq || fa ? "summary-only" : "full";
				expect(out.kind).toBe(expected);
				expect(out.text === undefined).toBe(expected === "failed");
				expect(out.records.length).toBe(fs ? 1 : fq ? 2 : 3);
			}),
		);
	});
});

describe("summarizationIndex", () => {
	it("is one past the highest of process, disk and the session's handoff entries", () => {
		fc.assert(
			fc.property(fc.nat(50), fc.nat(50), fc.array(fc.nat(50)), (inProcess, onDisk, indexes) => {
				const entries = [
					...indexes.map((index) => ({ type: "compaction", details: { kind: "headroom-handoff", index } })),
					{ type: "compaction", details: { readFiles: [] } },
					{ type: "message" },
				];
				expect(summarizationIndex(inProcess, onDisk, entries)).toBe(Math.max(0, inProcess, onDisk, ...indexes) + 1);
			}),
		);
	});
});

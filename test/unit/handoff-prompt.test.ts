import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chooseModel, MAX_LISTED_MODELS, modelNames } from "../../extensions/handoff/model-ref.ts";
import {
	ANSWERS_SYSTEM_PROMPT,
	answersPrompt,
	HANDOFF_CLOSING,
	handoffText,
	LOG,
	QUESTIONS_SYSTEM_PROMPT,
	questionsPrompt,
	SUMMARY_SYSTEM_PROMPT,
	summaryInstruction,
	summaryPrompt,
} from "../../extensions/handoff/prompt.ts";

describe("handoff wording", () => {
	it("the three system prompts differ (calls are told apart by them)", () => {
		expect(new Set([SUMMARY_SYSTEM_PROMPT, QUESTIONS_SYSTEM_PROMPT, ANSWERS_SYSTEM_PROMPT]).size).toBe(3);
	});

	it("the summary asks for actions, information, problems and status, given the task", () => {
		const text = summaryInstruction("TASK-X");
		for (const part of ["TASK-X", "Major actions", "Important information", "Challenging problems", "Current status"]) {
			expect(text).toContain(part);
		}
		expect(summaryInstruction("T", "EARLIER-SUM", "FOCUS-ON-TESTS")).toContain("EARLIER-SUM");
		expect(summaryInstruction("T", undefined, "FOCUS-ON-TESTS")).toContain("FOCUS-ON-TESTS");
		expect(summaryInstruction("T", undefined, "  ")).not.toContain("focus on");
		expect(summaryPrompt({ task: "T", conversation: "CONV" })).toContain("<transcript>\nCONV\n</transcript>");
	});

	it("the questions ask at least five questions from task, summary and state", () => {
		const text = questionsPrompt("TASK", "SUM", "STATE");
		for (const part of ["TASK", "SUM", "STATE", "at least five"]) expect(text).toContain(part);
		expect(answersPrompt("Q1?")).toContain("Q1?");
	});

	it("the handoff holds task, user messages, summary, state, Q&A in order and ends with the closing line", () => {
		fc.assert(
			fc.property(fc.boolean(), fc.nat(3), (withQa, omitted) => {
				const text = handoffText({
					task: "TASK-1",
					laterUserMessages: ["LATER-2"],
					omittedUserMessages: omitted,
					summary: "SUM-3",
					currentState: "STATE-4",
					...(withQa ? { questions: "QS-5", answers: "ANS-6" } : {}),
				});
				const order = ["TASK-1", "LATER-2", "SUM-3", "STATE-4", ...(withQa ? ["QS-5", "ANS-6"] : []), HANDOFF_CLOSING];
				const positions = order.map((p) => text.indexOf(p));
				expect(positions.every((p) => p >= 0)).toBe(true);
				expect([...positions].sort((a, b) => a - b)).toEqual(positions);
				expect(text.endsWith(HANDOFF_CLOSING)).toBe(true);
				expect(text.includes("did not fit")).toBe(omitted > 0);
				if (!withQa) expect(text).not.toContain("Questions the next agent asked");
			}),
		);
	});
});

describe("chooseModel", () => {
	const models = Array.from({ length: 40 }, (_, i) => ({ provider: "p", id: `m${i}` }));
	const find = (provider: string, id: string) => models.find((m) => m.provider === provider && m.id === id);

	it("uses a configured model that exists, else the session's with a warning naming both sides", () => {
		fc.assert(
			fc.property(fc.nat(60), (n) => {
				const configured = `p/m${n}`;
				const choice = chooseModel(configured, models[0], find, () => models);
				if (n < models.length) {
					expect(choice).toEqual({ model: models[n] });
				} else {
					expect(choice.model).toBe(models[0]);
					expect(choice.warning).toContain(`"${configured}"`);
					expect(choice.warning).toContain("p/m0, p/m1");
					expect(choice.warning).toContain(`and ${models.length - MAX_LISTED_MODELS} more`);
					expect(choice.warning).not.toContain(`p/m${MAX_LISTED_MODELS},`);
				}
			}),
		);
	});

	it("no configured model: the session's, silently; a malformed one or a failing registry still warns", () => {
		expect(chooseModel(undefined, models[1], find, () => models)).toEqual({ model: models[1] });
		expect(chooseModel("no-slash", models[1], find, () => models).warning).toContain('"no-slash"');
		const broken = chooseModel("p/zz", undefined, find, () => {
			throw new Error("registry down");
		});
		expect(broken.model).toBeUndefined();
		expect(broken.warning).toBe(LOG.modelNotFound("p/zz", []));
		expect(modelNames([])).toEqual([]);
	});
});

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
	trajectoriesLine,
	transcriptLine,
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

	it("the handoff holds task, user messages, summary, state, Q&A, where to find more, in order, then the closing line", () => {
		fc.assert(
			fc.property(fc.boolean(), fc.nat(3), fc.boolean(), (withQa, omitted, withFile) => {
				const sessionFile = withFile ? "/s/SESSION-7.jsonl" : undefined;
				const text = handoffText({
					task: "TASK-1",
					laterUserMessages: ["LATER-2"],
					omittedUserMessages: omitted,
					summary: "SUM-3",
					currentState: "STATE-4",
					...(withQa ? { questions: "QS-5", answers: "ANS-6" } : {}),
					sessionFile,
					trajectoryDir: "/s/TRAJ-DIR-8",
				});
				const order = [
					"TASK-1",
					"LATER-2",
					"SUM-3",
					"STATE-4",
					...(withQa ? ["QS-5", "ANS-6"] : []),
					transcriptLine(sessionFile),
					trajectoriesLine("/s/TRAJ-DIR-8"),
					HANDOFF_CLOSING,
				];
				const positions = order.map((p) => text.indexOf(p));
				expect(positions.every((p) => p >= 0)).toBe(true);
				expect([...positions].sort((a, b) => a - b)).toEqual(positions);
				expect(text.endsWith(HANDOFF_CLOSING)).toBe(true);
				expect(text.includes("did not fit")).toBe(omitted > 0);
				expect(text.includes("SESSION-7.jsonl")).toBe(withFile);
				expect(text).not.toContain("undefined");
				if (!withQa) expect(text).not.toContain("Questions the next agent asked");
			}),
		);
	});

	it("names the session file with how to read it, or says plainly there is none", () => {
		fc.assert(
			fc.property(fc.string({ minLength: 1 }), (path) => {
				const line = transcriptLine(path);
				expect(line.startsWith(`Full transcript: ${path} (JSON lines`)).toBe(true);
				// The read call quotes the path as a JSON string, so odd characters stay one argument.
				expect(line).toContain(`read(path=${JSON.stringify(path)}, offset, limit)`);
			}),
		);
		const none = transcriptLine(undefined);
		expect(none).toMatch(/^Full transcript: none\. This session is not saved to a file/);
		expect(none).not.toContain("read(");
		expect(transcriptLine("")).toBe(none);
		expect(trajectoriesLine("/d/x.handoffs")).toMatch(/^Handoff trajectories: \/d\/x\.handoffs \(/);
		const omittedText = (sessionFile: string | undefined) =>
			handoffText({
				task: "T",
				laterUserMessages: [],
				omittedUserMessages: 2,
				summary: "S",
				currentState: "C",
				sessionFile,
				trajectoryDir: "/d",
			});
		expect(omittedText("/f.jsonl")).toContain(
			"2 earlier user message(s) did not fit and are only in the full transcript.",
		);
		expect(omittedText(undefined)).toContain("did not fit and are not kept (the session has no file).");
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

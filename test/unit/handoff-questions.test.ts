import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildDetails } from "../../extensions/handoff/details.ts";
import { type CallModel, type HandoffInput, type ModelCall, runHandoff } from "../../extensions/handoff/handoff.ts";
import {
	ANSWERS_SYSTEM_PROMPT,
	LOG,
	QUESTIONS_SHORTFALL_NOTE,
	QUESTIONS_SYSTEM_PROMPT,
	questionsReaskPrompt,
	SUMMARY_SYSTEM_PROMPT,
} from "../../extensions/handoff/prompt.ts";
import { countQuestions, MIN_QUESTIONS, needsReask, questionCheck } from "../../extensions/handoff/questions.ts";
import { buildTrajectories } from "../../extensions/handoff/trajectory.ts";

/** Words with no digits, no "?" and no markdown marks: plain question or statement text. */
const word = fc.stringMatching(/^[a-z]{1,8}$/);
const phrase = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(" "));
const numberFormats = [
	(n: number, t: string) => `${n}. ${t}`,
	(n: number, t: string) => `${n}) ${t}`,
	(n: number, t: string) => `Q${n}: ${t}`,
	(n: number, t: string) => `**${n}.** ${t}`,
	(n: number, t: string) => `- ${n}. ${t}`,
	(n: number, t: string) => `  (${n}) ${t}`,
];

/** The three trajectory files of a handoff run, from a minimal parent (no copied context). */
function trajectoriesOf(out: Parameters<typeof buildTrajectories>[1]) {
	return buildTrajectories(
		{
			parentSessionId: "p",
			index: 1,
			modelName: "m/x",
			copiedMessages: [],
			copiedBlocks: [],
			omittedBytes: 0,
			summaryInstruction: "I",
		},
		out,
	);
}

describe("countQuestions", () => {
	it("counts each numbered line once, with or without a question mark, in any common format", () => {
		fc.assert(
			fc.property(
				fc.array(fc.tuple(phrase, fc.boolean(), fc.nat(numberFormats.length - 1)), { maxLength: 12 }),
				(items) => {
					const text = items.map(([t, q, f], i) => numberFormats[f](i + 1, `${t}${q ? "?" : ""}`)).join("\n");
					expect(countQuestions(text)).toBe(items.length);
				},
			),
		);
	});

	it("counts each line ending in '?' (plain or bulleted), and nothing else", () => {
		fc.assert(
			fc.property(
				fc.array(fc.tuple(phrase, fc.boolean(), fc.constantFrom("", "- ", "* ")), { maxLength: 12 }),
				(rows) => {
					const text = ["Here are my questions:", ...rows.map(([t, q, b]) => `${b}${t}${q ? "?" : "."}`)].join("\n");
					expect(countQuestions(text)).toBe(rows.filter(([, q]) => q).length);
				},
			),
		);
	});

	it("a '?' on a continuation line of a numbered item is not a second question; a blank line ends the item", () => {
		expect(countQuestions("1. Which file holds\n   the failing config?\n2. Was it fixed?")).toBe(2);
		expect(countQuestions("1. Context first.\n\nWhy did make fail?")).toBe(2);
		expect(countQuestions("1. About the build:\n- Which target failed?\n- Was it retried?")).toBe(3);
	});

	it("prose, numbers inside sentences and headings are not questions", () => {
		expect(countQuestions("")).toBe(0);
		expect(countQuestions("I have no questions.\n3.5 GB were used.\n## 5 questions\n2026 was busy")).toBe(0);
		expect(countQuestions("Why? Because.")).toBe(0);
	});

	it("re-asks below the minimum only; the check keeps the better count and flags a shortfall", () => {
		fc.assert(
			fc.property(fc.nat(12), fc.option(fc.nat(12), { nil: undefined }), (first, again) => {
				expect(needsReask(first)).toBe(first < MIN_QUESTIONS);
				const c = questionCheck(first, again !== undefined, again);
				expect(c.count).toBe(Math.max(first, again ?? 0));
				expect(c.shortfall).toBe(c.count < MIN_QUESTIONS);
				expect(c.required).toBe(MIN_QUESTIONS);
			}),
		);
	});
});

const INPUT: HandoffInput = {
	task: "TASK-1",
	laterUserMessages: [],
	omittedUserMessages: 0,
	conversation: "[User]: TASK-1",
	currentState: "STATE",
	sessionFile: undefined,
	trajectoryDir: "/cache/handoffs/s1",
};
const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, costUsd: 0 };
const questionsText = (n: number, tag: string) =>
	Array.from({ length: n }, (_, i) => `${i + 1}. ${tag} question ${i + 1}?`).join("\n");

/** A model answering the questions step with `questionReplies` in turn (an Error entry fails that call). */
function model(questionReplies: Array<string | Error>) {
	const calls: ModelCall[] = [];
	let q = 0;
	const call: CallModel = async (c) => {
		calls.push(c);
		if (c.systemPrompt === SUMMARY_SYSTEM_PROMPT) return { text: "SUM", model: "m/x", usage };
		if (c.systemPrompt === ANSWERS_SYSTEM_PROMPT) return { text: "ANS", model: "m/x", usage };
		if (c.systemPrompt !== QUESTIONS_SYSTEM_PROMPT) throw new Error("unexpected call");
		const reply = questionReplies[q++];
		if (reply === undefined) throw new Error("no more scripted questions replies");
		if (reply instanceof Error) throw reply;
		return { text: reply, model: "m/x", usage };
	};
	return { calls, call };
}

describe("the questions step enforces the minimum", () => {
	it("five or more questions: no re-ask", async () => {
		const m = model([questionsText(5, "FIRST")]);
		const out = await runHandoff(INPUT, m.call, undefined);
		expect(m.calls.map((c) => c.systemPrompt)).toEqual([
			SUMMARY_SYSTEM_PROMPT,
			QUESTIONS_SYSTEM_PROMPT,
			ANSWERS_SYSTEM_PROMPT,
		]);
		expect(out.questionCheck).toEqual({ firstCount: 5, count: 5, required: 5, reasked: false, shortfall: false });
	});

	it("too few: one corrective re-ask carrying the first exchange; the better reply goes to the answers call", async () => {
		const m = model([questionsText(2, "FIRST"), questionsText(6, "AGAIN")]);
		const out = await runHandoff(INPUT, m.call, undefined);
		expect(out.kind).toBe("full");
		const [, first, reask, answers] = m.calls;
		expect(reask.systemPrompt).toBe(QUESTIONS_SYSTEM_PROMPT);
		expect(reask.messages.map((x) => x.role)).toEqual(["user", "assistant", "user"]);
		expect(reask.messages[0]).toEqual(first.messages[0]);
		expect(reask.messages[1].text).toBe(questionsText(2, "FIRST"));
		expect(reask.messages[2].text).toBe(questionsReaskPrompt(2, MIN_QUESTIONS));
		expect(answers.messages.at(-1)?.text).toContain("AGAIN question 6?");
		expect(out.questions).toBe(questionsText(6, "AGAIN"));
		expect(out.questionCheck).toEqual({ firstCount: 2, count: 6, required: 5, reasked: true, shortfall: false });
		expect(out.records.map((r) => [r.step, Boolean(r.reask)])).toEqual([
			["summary", false],
			["questions", false],
			["questions", true],
			["answers", false],
		]);
	});

	it("still too few: the handoff goes on, and details and the questions trajectory record the shortfall", async () => {
		const m = model([questionsText(2, "FIRST"), questionsText(3, "AGAIN")]);
		const out = await runHandoff(INPUT, m.call, undefined);
		expect(out.kind).toBe("full");
		expect(m.calls).toHaveLength(4);
		expect(out.questions).toBe(questionsText(3, "AGAIN"));
		expect(out.questionCheck).toMatchObject({ count: 3, reasked: true, shortfall: true });
		if (out.kind === "failed" || !out.text) throw new Error("expected a handoff");
		const details = buildDetails(
			{ ...out, kind: out.kind },
			{
				index: 1,
				staged: false,
				model: "m/x",
				trajectoryDir: "/d",
				trajectories: [],
				transcriptOmittedBytes: 0,
				taskOmittedBytes: 0,
			},
		);
		expect(details.questions).toMatchObject({ count: 3, required: 5, shortfall: true });
		expect(details.calls.filter((c) => c.step === "questions").map((c) => Boolean(c.reask))).toEqual([false, true]);
		const files = trajectoriesOf(out);
		expect(files.map((f) => f.step)).toEqual(["summary", "questions", "answers"]);
		const q = files[1].trajectory;
		expect(q.steps.map((s) => s.source)).toEqual(["system", "user", "agent", "user", "agent"]);
		expect(q.steps[3].message).toBe(questionsReaskPrompt(2, MIN_QUESTIONS));
		expect(q.extra?.note).toBe(QUESTIONS_SHORTFALL_NOTE(3, 5, true));
		expect(q.extra?.questions?.shortfall).toBe(true);
		// Both questions replies are this file's own calls: their tokens add up.
		expect(q.final_metrics.total_completion_tokens).toBe(2 * usage.output);
	});

	it("a failed re-ask keeps the first questions and records the error in the trajectory", async () => {
		const m = model([questionsText(1, "FIRST"), new Error("HTTP 500")]);
		const out = await runHandoff(INPUT, m.call, undefined);
		expect(out.kind).toBe("full");
		expect(out.errors).toEqual([]);
		expect(out.questions).toBe(questionsText(1, "FIRST"));
		expect(out.questionCheck).toMatchObject({ firstCount: 1, count: 1, reasked: true, shortfall: true });
		const files = trajectoriesOf(out);
		expect(files[1].trajectory.extra?.error).toBe("re-ask: HTTP 500");
		expect(files[1].trajectory.steps.map((s) => s.source)).toEqual(["system", "user", "agent", "user"]);
	});

	it("wording: the corrective prompt names the count and the minimum; the log names the shortfall", () => {
		expect(questionsReaskPrompt(1, 5)).toContain("You asked 1 question;");
		expect(questionsReaskPrompt(3, 5)).toMatch(/3 questions.*at least 5/);
		expect(LOG.questionsShortfall(3, 5)).toContain("3 question(s)");
	});
});

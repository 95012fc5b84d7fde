/**
 * The three-call handoff: summary → questions → answers. The model is reached through an injected
 * function so the pipeline (order, inputs, degradation) is testable without Pi or a network.
 *
 * Degradation: a failed questions or answers call leaves a summary-only handoff; a failed summary
 * call fails the whole handoff (the caller then lets Pi's default compaction run).
 * A questions reply with fewer than MIN_QUESTIONS questions is re-asked once with a corrective
 * prompt; if it is still short the handoff goes on, and the outcome records the shortfall.
 */

import type { CallUsage } from "../shared/host/model-usage.ts";
import { errorText } from "../shared/text/format.ts";
import {
	ANSWERS_SYSTEM_PROMPT,
	answersPrompt,
	handoffText,
	QUESTIONS_SYSTEM_PROMPT,
	questionsPrompt,
	questionsReaskPrompt,
	SUMMARY_SYSTEM_PROMPT,
	summaryPrompt,
	type TranscriptLocation,
} from "./prompt.ts";
import { countQuestions, MIN_QUESTIONS, needsReask, type QuestionCheck, questionCheck } from "./questions.ts";

export type HandoffStep = "summary" | "questions" | "answers";

/** One message of a model request (the pipeline only ever sends text). */
export interface ChatTurn {
	role: "user" | "assistant";
	text: string;
}

/** A model request. */
export interface ModelCall {
	systemPrompt: string;
	messages: ChatTurn[];
}

/** Token usage and cost of one reply, as the provider reported it: the shared usage record of one call. */
export type ModelUsage = Omit<CallUsage, "calls">;

/** A successful model reply. */
export interface ModelReply {
	text: string;
	/** Reasoning ("thinking") text, when the model returned any. */
	reasoning?: string;
	/** "provider/model" that answered. */
	model: string;
	usage: ModelUsage;
}

/** Calls the model; rejects on any failure (HTTP error, abort, empty reply). */
export type CallModel = (call: ModelCall, signal: AbortSignal | undefined) => Promise<ModelReply>;

/** Everything the three calls are built from (and where the handoff tells the next agent to read more). */
export interface HandoffInput extends TranscriptLocation {
	/** The session's first user message. */
	task: string;
	/** Later user messages kept verbatim (oldest first). */
	laterUserMessages: string[];
	/** Later user messages that did not fit their budget. */
	omittedUserMessages: number;
	/** Serialized, head+tail shortened transcript of the messages being summarized. */
	conversation: string;
	/** End of the latest tool outputs and of the last assistant message. */
	currentState: string;
	/** Summary of an earlier compaction, folded into this one. */
	previousSummary?: string;
	/** The user's /compact instructions, if any. */
	focus?: string;
}

/** What happened in one of the three calls. */
export interface StepRecord {
	step: HandoffStep;
	/** True for the corrective re-ask of the questions step (it follows the first questions record). */
	reask?: boolean;
	/** The request as sent. */
	call: ModelCall;
	/** The reply, when the call succeeded. */
	reply?: ModelReply;
	/** Why the call failed, when it did. */
	error?: string;
	/** ISO time the call started. */
	startedAt: string;
	/** Wall time of the call in milliseconds. */
	durationMs: number;
}

/** The result of the pipeline. */
export interface HandoffOutcome {
	/** "full": all three calls; "summary-only": questions or answers failed; "failed": no handoff. */
	kind: "full" | "summary-only" | "failed";
	/** The compaction summary to store (absent when failed). */
	text?: string;
	/** The summary call's reply text. */
	summary?: string;
	/** The questions call's reply text. */
	questions?: string;
	/** The answers call's reply text. */
	answers?: string;
	/** How many questions were asked, and whether a re-ask or a shortfall happened (when the questions call succeeded). */
	questionCheck?: QuestionCheck;
	/** One record per call made, in order. */
	records: StepRecord[];
	/** Error messages of failed calls, in order. */
	errors: string[];
	/** True when the abort signal ended the pipeline. */
	aborted: boolean;
}

/** Monotonic milliseconds (injectable for tests). */
export type Clock = () => number;

async function run(
	step: HandoffStep,
	call: ModelCall,
	callModel: CallModel,
	signal: AbortSignal | undefined,
	clock: Clock,
): Promise<StepRecord> {
	const startedAt = new Date().toISOString();
	const t0 = clock();
	try {
		if (signal?.aborted) throw new Error("aborted");
		const reply = await callModel(call, signal);
		if (!reply.text.trim()) throw new Error("the model returned an empty reply");
		return { step, call, reply, startedAt, durationMs: clock() - t0 };
	} catch (error) {
		return { step, call, error: errorText(error), startedAt, durationMs: clock() - t0 };
	}
}

/** The three requests, built from the input and the earlier replies. */
export function summaryCall(input: HandoffInput): ModelCall {
	const prompt = summaryPrompt({
		task: input.task,
		conversation: input.conversation,
		previousSummary: input.previousSummary,
		focus: input.focus,
	});
	return { systemPrompt: SUMMARY_SYSTEM_PROMPT, messages: [{ role: "user", text: prompt }] };
}

export function questionsCall(input: HandoffInput, summary: string): ModelCall {
	return {
		systemPrompt: QUESTIONS_SYSTEM_PROMPT,
		messages: [{ role: "user", text: questionsPrompt(input.task, summary, input.currentState) }],
	};
}

/** The corrective re-ask: the first questions exchange, then a short note on how many are needed. */
export function questionsReaskCall(first: ModelCall, firstReply: string, count: number): ModelCall {
	return {
		systemPrompt: first.systemPrompt,
		messages: [
			...first.messages,
			{ role: "assistant", text: firstReply },
			{ role: "user", text: questionsReaskPrompt(count, MIN_QUESTIONS) },
		],
	};
}

export function answersCall(summaryRequest: ModelCall, summary: string, questions: string): ModelCall {
	return {
		systemPrompt: ANSWERS_SYSTEM_PROMPT,
		messages: [
			...summaryRequest.messages,
			{ role: "assistant", text: summary },
			{ role: "user", text: answersPrompt(questions) },
		],
	};
}

/**
 * Run summary → questions → answers, degrading as the module comment says. `summaryOnly` stops after
 * the summary (one call: an overflow retry is waiting and a staged handoff is not there).
 */
export async function runHandoff(
	input: HandoffInput,
	callModel: CallModel,
	signal: AbortSignal | undefined,
	clock: Clock = () => performance.now(),
	summaryOnlyMode = false,
): Promise<HandoffOutcome> {
	const records: StepRecord[] = [];
	const errors: string[] = [];
	const sCall = summaryCall(input);
	const s = await run("summary", sCall, callModel, signal, clock);
	records.push(s);
	if (!s.reply) {
		errors.push(`summary: ${s.error}`);
		return { kind: "failed", records, errors, aborted: Boolean(signal?.aborted) };
	}
	const summary = s.reply.text;
	const parts = {
		task: input.task,
		laterUserMessages: input.laterUserMessages,
		omittedUserMessages: input.omittedUserMessages,
		summary,
		currentState: input.currentState,
		sessionFile: input.sessionFile,
		trajectoryDir: input.trajectoryDir,
	};
	const summaryOnly = (): HandoffOutcome => ({
		kind: signal?.aborted ? "failed" : "summary-only",
		text: signal?.aborted ? undefined : handoffText(parts),
		summary,
		records,
		errors,
		aborted: Boolean(signal?.aborted),
	});
	if (summaryOnlyMode) return summaryOnly();
	const qCall = questionsCall(input, summary);
	const q = await run("questions", qCall, callModel, signal, clock);
	records.push(q);
	if (!q.reply) {
		errors.push(`questions: ${q.error}`);
		return summaryOnly();
	}
	let questions = q.reply.text;
	const firstCount = countQuestions(questions);
	let check = questionCheck(firstCount, false);
	if (needsReask(firstCount)) {
		const r = await run("questions", questionsReaskCall(qCall, questions, firstCount), callModel, signal, clock);
		records.push({ ...r, reask: true });
		const reaskCount = r.reply ? countQuestions(r.reply.text) : undefined;
		// A failed re-ask is not a failed handoff: the first questions still stand.
		if (r.reply && reaskCount !== undefined && reaskCount >= firstCount) questions = r.reply.text;
		check = questionCheck(firstCount, true, reaskCount);
	}
	const a = await run("answers", answersCall(sCall, summary, questions), callModel, signal, clock);
	records.push(a);
	if (!a.reply) {
		errors.push(`answers: ${a.error}`);
		return { ...summaryOnly(), questions, questionCheck: check };
	}
	const answers = a.reply.text;
	return {
		kind: "full",
		text: handoffText({ ...parts, questions, answers }),
		summary,
		questions,
		answers,
		questionCheck: check,
		records,
		errors,
		aborted: false,
	};
}

/**
 * The three trajectory files of a handoff (one per call): what each call was sent — context copied
 * from the parent marked as copied, its metrics removed — and what it answered, with usage and cost.
 * Pure: writing the files is trajectory-files.ts.
 */
import type { HandoffOutcome, HandoffStep, ModelUsage, StepRecord } from "./handoff.ts";
import {
	COPIED_METRICS_NOTE,
	COPIED_SUMMARY_NOTE,
	conversationReference,
	QUESTIONS_SHORTFALL_NOTE,
	SHORTENED_NOTE,
	trajectoryLabel,
} from "./prompt.ts";
import type { QuestionCheck } from "./questions.ts";
import type { HistoryMessage } from "./serialize.ts";

/** Format tag of the files, bumped when a field changes meaning. */
export const TRAJECTORY_FORMAT = "pi-context-headroom.handoff-trajectory/1";
/** Agent name prefix; the step is appended. */
export const AGENT_NAME = "pi-context-headroom-handoff";

/** Token and cost figures of one step. */
export interface StepMetrics {
	/** Prompt tokens including cache reads. */
	prompt_tokens: number;
	completion_tokens: number;
	cached_tokens: number;
	cost_usd: number;
}

export interface TrajectoryStep {
	/** 1-based position in this file. */
	step_id: number;
	timestamp?: string;
	source: "system" | "user" | "agent" | "tool";
	message: string;
	model_name?: string;
	reasoning_content?: string;
	/** True for context copied from the parent session or an earlier step of this handoff. */
	is_copied_context?: boolean;
	metrics?: StepMetrics;
	extra?: { note?: string; error?: string };
}

export interface Trajectory {
	format: typeof TRAJECTORY_FORMAT;
	/** `<parent>-summarization-<n>-<step>`. */
	session_id: string;
	parent_session_id: string;
	summarization_index: number;
	step: HandoffStep;
	agent: { name: string; model_name: string };
	steps: TrajectoryStep[];
	final_metrics: {
		total_prompt_tokens: number;
		total_completion_tokens: number;
		total_cached_tokens: number;
		total_cost_usd: number;
	};
	/** `questions`: the question count check of the questions step (with its shortfall, if any). */
	extra?: { note?: string; error?: string; questions?: QuestionCheck };
}

/** Everything about the parent a trajectory needs. */
export interface TrajectoryContext {
	parentSessionId: string;
	/** Summarization index n (1-based, per session). */
	index: number;
	/** "provider/model" the handoff used. */
	modelName: string;
	/** The parent messages the summary and answers calls were sent. */
	copiedMessages: HistoryMessage[];
	/** The serialized block of each copied message, aligned with it ("" = not sent). */
	copiedBlocks: string[];
	/** Bytes the whole-transcript cut left out of the requests (0 when none). */
	omittedBytes: number;
	/** The summary request's instruction part (without the transcript). */
	summaryInstruction: string;
}

/** One file to write. */
export interface TrajectoryFile {
	step: HandoffStep;
	fileName: string;
	label: string;
	trajectory: Trajectory;
}

export function trajectoryFileName(index: number, step: HandoffStep): string {
	return `trajectory.summarization-${index}-${step}.json`;
}

export function metricsOf(usage: ModelUsage): StepMetrics {
	return {
		prompt_tokens: usage.input + usage.cacheRead,
		completion_tokens: usage.output,
		cached_tokens: usage.cacheRead,
		cost_usd: usage.costUsd,
	};
}

/** Pi's Usage (input/output/cacheRead/cost.total) → metrics; undefined when absent or malformed. */
function parentMetrics(usage: unknown): StepMetrics | undefined {
	if (!usage || typeof usage !== "object") return undefined;
	const u = usage as { input?: unknown; output?: unknown; cacheRead?: unknown; cost?: { total?: unknown } };
	const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
	return metricsOf({
		input: num(u.input),
		output: num(u.output),
		cacheRead: num(u.cacheRead),
		cacheWrite: 0,
		costUsd: num(u.cost?.total),
	});
}

/** Mark steps as copied context; metrics are removed (already counted in the parent) with a note. */
export function markCopied(steps: TrajectoryStep[], note = COPIED_METRICS_NOTE): TrajectoryStep[] {
	return steps.map((s) => {
		const copy: TrajectoryStep = { ...s, is_copied_context: true };
		if (copy.metrics) {
			delete copy.metrics;
			copy.extra = { ...copy.extra, note };
		}
		return copy;
	});
}

const SOURCE: Record<string, TrajectoryStep["source"]> = {
	user: "user",
	assistant: "agent",
	toolResult: "tool",
	bashExecution: "tool",
};

function parentSteps(ctx: TrajectoryContext): TrajectoryStep[] {
	const steps: TrajectoryStep[] = [];
	for (let i = 0; i < ctx.copiedMessages.length; i++) {
		const m = ctx.copiedMessages[i];
		const message = ctx.copiedBlocks[i] ?? "";
		if (!message) continue;
		steps.push({
			step_id: 0,
			timestamp: typeof m.timestamp === "number" ? new Date(m.timestamp).toISOString() : undefined,
			source: SOURCE[m.role] ?? "system",
			message,
			model_name: m.role === "assistant" ? m.model : undefined,
			metrics: m.role === "assistant" ? parentMetrics(m.usage) : undefined,
		});
	}
	return markCopied(steps);
}

function exchangeSteps(record: StepRecord, promptText: string): TrajectoryStep[] {
	const steps: TrajectoryStep[] = [
		{ step_id: 0, timestamp: record.startedAt, source: "system", message: record.call.systemPrompt },
		{ step_id: 0, timestamp: record.startedAt, source: "user", message: promptText },
	];
	if (record.reply) {
		steps.push({
			step_id: 0,
			timestamp: new Date(Date.parse(record.startedAt) + record.durationMs).toISOString(),
			source: "agent",
			message: record.reply.text,
			model_name: record.reply.model,
			reasoning_content: record.reply.reasoning,
			metrics: metricsOf(record.reply.usage),
		});
	}
	return steps;
}

function totals(steps: TrajectoryStep[]): Trajectory["final_metrics"] {
	const t = { total_prompt_tokens: 0, total_completion_tokens: 0, total_cached_tokens: 0, total_cost_usd: 0 };
	for (const s of steps) {
		if (!s.metrics || s.is_copied_context) continue;
		t.total_prompt_tokens += s.metrics.prompt_tokens;
		t.total_completion_tokens += s.metrics.completion_tokens;
		t.total_cached_tokens += s.metrics.cached_tokens;
		t.total_cost_usd += s.metrics.cost_usd;
	}
	return t;
}

function lastText(record: StepRecord): string {
	const last = record.call.messages[record.call.messages.length - 1];
	return last?.text ?? "";
}

/** The steps of a questions file: the first exchange, then the corrective re-ask and its reply when there was one. */
function questionsSteps(first: StepRecord, reask: StepRecord | undefined): TrajectoryStep[] {
	const steps = exchangeSteps(first, lastText(first));
	if (!reask) return steps;
	const [, ...reaskExchange] = exchangeSteps(reask, lastText(reask)); // the system prompt is the same
	return [...steps, ...reaskExchange];
}

/** The trajectory of each step the outcome made (1 to 3 files; a questions re-ask joins its step's file). */
export function buildTrajectories(ctx: TrajectoryContext, outcome: HandoffOutcome): TrajectoryFile[] {
	const files: TrajectoryFile[] = [];
	const copied = parentSteps(ctx);
	const summary = outcome.records.find((r) => r.step === "summary");
	const instructionWithRef = `${ctx.summaryInstruction}\n\n${conversationReference(copied.length)}`;
	for (const record of outcome.records) {
		if (record.reask) continue;
		let steps: TrajectoryStep[];
		const reask = record.step === "questions" ? outcome.records.find((r) => r.reask) : undefined;
		if (record.step === "summary") {
			const [system, prompt, ...response] = exchangeSteps(record, instructionWithRef);
			steps = [system, ...copied, prompt, ...response];
		} else if (record.step === "questions") {
			steps = questionsSteps(record, reask);
		} else {
			const [system, prompt, ...response] = exchangeSteps(record, lastText(record));
			const summaryExchange: TrajectoryStep[] = summary?.reply
				? markCopied(
						[
							{ step_id: 0, source: "user", message: instructionWithRef },
							{
								step_id: 0,
								source: "agent",
								message: summary.reply.text,
								model_name: summary.reply.model,
								reasoning_content: summary.reply.reasoning,
								metrics: metricsOf(summary.reply.usage),
							},
						],
						COPIED_SUMMARY_NOTE,
					)
				: [];
			steps = [system, ...copied, ...summaryExchange, prompt, ...response];
		}
		steps = steps.map((s, i) => ({ ...s, step_id: i + 1 }));
		const extra: Trajectory["extra"] = {};
		if (ctx.omittedBytes > 0 && record.step !== "questions") extra.note = SHORTENED_NOTE(ctx.omittedBytes);
		const check = record.step === "questions" ? outcome.questionCheck : undefined;
		if (check) extra.questions = check;
		if (check?.shortfall) extra.note = QUESTIONS_SHORTFALL_NOTE(check.count, check.required, check.reasked);
		if (record.error) extra.error = record.error;
		else if (reask?.error) extra.error = `re-ask: ${reask.error}`;
		files.push({
			step: record.step,
			fileName: trajectoryFileName(ctx.index, record.step),
			label: trajectoryLabel(ctx.index, record.step),
			trajectory: {
				format: TRAJECTORY_FORMAT,
				session_id: `${ctx.parentSessionId}-summarization-${ctx.index}-${record.step}`,
				parent_session_id: ctx.parentSessionId,
				summarization_index: ctx.index,
				step: record.step,
				agent: { name: `${AGENT_NAME}-${record.step}`, model_name: ctx.modelName },
				steps,
				final_metrics: totals(steps),
				...(Object.keys(extra).length > 0 ? { extra } : {}),
			},
		});
	}
	return files;
}

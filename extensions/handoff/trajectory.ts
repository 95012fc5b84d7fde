/**
 * The three trajectory files of a handoff (one per call): what each call was sent — context copied
 * from the parent marked as copied, its metrics removed — and what it answered, with usage and cost.
 * Building is pure; writing creates 0600 files in a 0700 directory, never overwriting and never
 * following a symlink. A failed write is reported to the caller, never thrown.
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { HandoffOutcome, HandoffStep, ModelUsage, StepRecord } from "./handoff.ts";
import {
	COPIED_METRICS_NOTE,
	COPIED_SUMMARY_NOTE,
	conversationReference,
	SHORTENED_NOTE,
	trajectoryLabel,
} from "./prompt.ts";
import type { HistoryMessage } from "./serialize.ts";

/** Format tag of the files, bumped when a field changes meaning. */
export const TRAJECTORY_FORMAT = "pi-headroom.handoff-trajectory/1";
/** Agent name prefix; the step is appended. */
export const AGENT_NAME = "pi-headroom-handoff";

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
	extra?: { note?: string; error?: string };
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

/** The trajectory of each call the outcome made (1 to 3 files). */
export function buildTrajectories(ctx: TrajectoryContext, outcome: HandoffOutcome): TrajectoryFile[] {
	const files: TrajectoryFile[] = [];
	const copied = parentSteps(ctx);
	const summary = outcome.records.find((r) => r.step === "summary");
	const instructionWithRef = `${ctx.summaryInstruction}\n\n${conversationReference(copied.length)}`;
	for (const record of outcome.records) {
		let steps: TrajectoryStep[];
		if (record.step === "summary") {
			const [system, prompt, ...response] = exchangeSteps(record, instructionWithRef);
			steps = [system, ...copied, prompt, ...response];
		} else if (record.step === "questions") {
			steps = exchangeSteps(record, lastText(record));
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
		if (record.error) extra.error = record.error;
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

/** Session ids are Pi's; anything else is reduced to a safe folder name. */
export function safeName(id: string): string {
	return /^[A-Za-z0-9._-]{1,128}$/.test(id) && id !== "." && id !== ".."
		? id
		: id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 128) || "session";
}

/** Where a session's trajectories go: a folder beside the session file, else under the cache. */
export function trajectoryDir(sessionFile: string | undefined, cacheHandoffsDir: string, sessionId: string): string {
	if (sessionFile) return join(dirname(sessionFile), `${basename(sessionFile, ".jsonl")}.handoffs`);
	return join(cacheHandoffsDir, safeName(sessionId));
}

/** Highest summarization index already present in `names`. */
export function highestIndex(names: string[]): number {
	let max = 0;
	for (const name of names) {
		const m = /^trajectory\.summarization-(\d+)-(summary|questions|answers)\.json$/.exec(name);
		if (m) max = Math.max(max, Number(m[1]));
	}
	return max;
}

/** Highest index found in `dir` (0 when the folder does not exist). */
export function highestIndexIn(dir: string): number {
	try {
		return highestIndex(readdirSync(dir));
	} catch {
		return 0;
	}
}

/** A written file or why it was not written. */
export type WriteResult = { ok: true; path: string; label: string; step: HandoffStep } | { ok: false; error: string };

function ensurePrivateDir(dir: string): void {
	mkdirSync(dir, { recursive: true, mode: 0o700 });
	const st = lstatSync(dir);
	if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`${dir} is not a plain directory`);
}

/** Write each file (0600, exclusive create, no symlink following); failures are returned, not thrown. */
export function writeTrajectories(dir: string, files: TrajectoryFile[]): WriteResult[] {
	try {
		ensurePrivateDir(dir);
	} catch (error) {
		const msg = error instanceof Error ? error.message : String(error);
		return files.map(() => ({ ok: false as const, error: msg }));
	}
	return files.map((file): WriteResult => {
		const path = join(dir, file.fileName);
		try {
			const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
			const fd = openSync(path, flags, 0o600);
			try {
				writeSync(fd, `${JSON.stringify(file.trajectory, null, 2)}\n`);
			} finally {
				closeSync(fd);
			}
			return { ok: true, path, label: file.label, step: file.step };
		} catch (error) {
			return { ok: false, error: `${path}: ${error instanceof Error ? error.message : String(error)}` };
		}
	});
}

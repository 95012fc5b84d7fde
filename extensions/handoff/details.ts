/**
 * What a handoff compaction entry carries in `details`, and the per-session summarization index.
 * Pure: the adapter builds the details only when a handoff is applied (a staged handoff that is
 * discarded never takes an index and never leaves trajectory files).
 */
import { addUsage, type CallUsage, NO_USAGE } from "../shared/host/model-usage.ts";
import type { HandoffOutcome, HandoffStep } from "./handoff.ts";
import type { QuestionCheck } from "./questions.ts";

/** What a handoff compaction entry's `details` carry. */
export interface HandoffDetails {
	/** Marks the entry as ours. */
	kind: "headroom-handoff";
	version: 1;
	/** Summarization index n of this session. */
	index: number;
	/** Which calls succeeded. */
	outcome: "full" | "summary-only";
	/** True when the probe staged it before the run ended. */
	staged: boolean;
	/** "provider/model" that wrote it. */
	model: string;
	/**
	 * Folder of this session's trajectory files: `<session file name>.handoffs/` beside the session file,
	 * or the package cache when the session has no file.
	 */
	trajectoryDir: string;
	/** The trajectory files written, each with a one-line label (a failed write is simply absent). */
	trajectories: Array<{ path: string; label: string }>;
	/** Errors of failed calls. */
	errors: string[];
	/** Per call: wall time and tokens (a questions re-ask is a call of its own, marked `reask`). */
	calls: Array<{
		step: HandoffStep;
		durationMs: number;
		inputTokens: number;
		outputTokens: number;
		ok: boolean;
		reask?: boolean;
	}>;
	/** Tokens and cost of all the calls together (also handed to Pi 1.x as the compaction's usage). */
	usage: CallUsage;
	/** The question count check (absent when the questions call failed); `shortfall` when fewer than required. */
	questions?: QuestionCheck;
	/** Bytes of the transcript left out to fit the model's window (0 when it fit). */
	transcriptOmittedBytes: number;
	/** Bytes of the original task left out of the prompts and the handoff (0 when it fit); the full text is an artifact. */
	taskOmittedBytes: number;
}

export function isHandoffDetails(details: unknown): details is HandoffDetails {
	return Boolean(details) && typeof details === "object" && (details as { kind?: unknown }).kind === "headroom-handoff";
}

/**
 * The next summarization index of a session: one past the highest seen in this process, in the
 * trajectory folder and in the session's handoff compaction entries (so a restart never reuses one).
 */
export function summarizationIndex(
	lastInProcess: number,
	highestOnDisk: number,
	entries: Array<{ type: string; details?: unknown }>,
): number {
	let max = Math.max(0, lastInProcess, highestOnDisk);
	for (const e of entries) {
		if (e.type === "compaction" && isHandoffDetails(e.details) && Number.isInteger(e.details.index)) {
			max = Math.max(max, e.details.index);
		}
	}
	return max + 1;
}

/** The details of an applied handoff. */
export function buildDetails(
	outcome: HandoffOutcome & { kind: "full" | "summary-only" },
	applied: {
		index: number;
		staged: boolean;
		model: string;
		trajectoryDir: string;
		trajectories: Array<{ path: string; label: string }>;
		transcriptOmittedBytes: number;
		taskOmittedBytes: number;
	},
): HandoffDetails {
	return {
		kind: "headroom-handoff",
		version: 1,
		index: applied.index,
		outcome: outcome.kind,
		staged: applied.staged,
		model: applied.model,
		trajectoryDir: applied.trajectoryDir,
		trajectories: applied.trajectories,
		errors: outcome.errors,
		calls: outcome.records.map((r) => ({
			step: r.step,
			durationMs: Math.round(r.durationMs),
			inputTokens: r.reply ? r.reply.usage.input + r.reply.usage.cacheRead : 0,
			outputTokens: r.reply?.usage.output ?? 0,
			ok: Boolean(r.reply),
			...(r.reask ? { reask: true } : {}),
		})),
		usage: outcomeUsage(outcome),
		...(outcome.questionCheck ? { questions: outcome.questionCheck } : {}),
		transcriptOmittedBytes: applied.transcriptOmittedBytes,
		taskOmittedBytes: applied.taskOmittedBytes,
	};
}

/** The summed usage of every successful call of a handoff. */
export function outcomeUsage(outcome: HandoffOutcome): CallUsage {
	let total: CallUsage = { ...NO_USAGE };
	for (const r of outcome.records) {
		if (!r.reply) continue;
		total = addUsage(total, { ...r.reply.usage, calls: 1 });
	}
	return total;
}

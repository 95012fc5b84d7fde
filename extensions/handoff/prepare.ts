/**
 * The two halves of a handoff (adapter). `computeHandoff` builds the inputs (task, later user messages,
 * current state, transcript — each bounded through the projection) and makes the three calls; it takes
 * no summarization index and writes no trajectory. `applyHandoff` runs only when the handoff becomes the
 * compaction: it takes the index, writes the trajectories and builds the details. So a staged handoff
 * that is discarded leaves nothing behind and uses up no index.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { getAgentDir } from "@mariozechner/pi-coding-agent";
import { type HeadroomConfig, type SurfaceSource, surfaceFor } from "../shared/host/config.ts";
import { storeForAgentDir } from "../shared/store/artifact-store.ts";
import { bytesForTokens, estimateTokens } from "../shared/text/tokens.ts";
import { buildDetails, type HandoffDetails, summarizationIndex } from "./details.ts";
import { type HandoffOutcome, runHandoff } from "./handoff.ts";
import { type AnyModel, modelCaller, type ResolvedModel } from "./model-call.ts";
import { LOG, questionsPrompt, summaryInstruction, type TranscriptLocation } from "./prompt.ts";
import {
	type BranchEntry,
	boundTask,
	branchContext,
	currentState,
	fitUserMessages,
	type HandoffSurfaces,
	type HistoryMessage,
	serializeHistory,
	userTexts,
} from "./serialize.ts";
import { buildTrajectories } from "./trajectory.ts";
import { highestIndexIn, trajectoryDir, trajectoryTarget, writeTrajectories } from "./trajectory-files.ts";

/** Output tokens asked of each handoff call, at most (further capped by the model). */
const MAX_OUTPUT_TOKENS = 4096;
/** Tokens kept free beyond the estimate, for provider framing. */
const SAFETY_TOKENS = 512;
/** The transcript is never squeezed below this many tokens, however small the window. */
const MIN_TRANSCRIPT_TOKENS = 1024;
/** Window assumed when the model does not say, in tokens. */
const DEFAULT_WINDOW_TOKENS = 128_000;
/** Stand-in for the task of a session with no user message. */
const NO_TASK = "(the session has no user message)";

/** What the handoff reads from the configuration. */
export interface HandoffSettings {
	handoff: HeadroomConfig["handoff"];
	/** projection.headShare: head share of every cut that does not have its own reason for another. */
	headShare: number;
	/** The handoff's surfaces as configured (`handoffSurfaces`); absent: the table's with `headShare`. */
	surfaces?: HandoffSurfaces;
	/** Tool name → output kind (toolArtifacts.toolClasses): which tools' outputs are logs. */
	toolClasses?: HeadroomConfig["toolArtifacts"]["toolClasses"];
}

/** The handoff's surfaces resolved from `config`, per call (table ← alias keys ← `surfaces.<name>`). */
export function handoffSurfaces(config: SurfaceSource): HandoffSurfaces {
	return {
		toolResult: surfaceFor(config, "handoff.toolResult"),
		piece: surfaceFor(config, "handoff.piece"),
		currentState: surfaceFor(config, "handoff.currentState"),
		task: surfaceFor(config, "handoff.task"),
		userMessages: surfaceFor(config, "handoff.userMessages"),
		transcript: surfaceFor(config, "handoff.transcript"),
	};
}

/** What a handoff is computed from. */
export interface HandoffRequest {
	messages: HistoryMessage[];
	previousSummary?: string;
	branch: BranchEntry[];
	staged: boolean;
	/** One call only (summary, no questions or answers): an overflow retry is waiting. */
	summaryOnly?: boolean;
	focus?: string;
	/** The session file and trajectory folder the handoff text names (see `transcriptLocation`). */
	location: TranscriptLocation;
}

/** A handoff whose calls are done but which is not applied yet: no index taken, no file written. */
export interface ComputedHandoff {
	/** The pipeline's outcome (never "failed": a failed one is not computed). */
	outcome: HandoffOutcome & { kind: "full" | "summary-only"; text: string };
	/** "provider/model" the calls used. */
	modelName: string;
	/** True when the probe staged it before the run ended. */
	staged: boolean;
	/** The parent messages the summary and answers calls were sent, and their serialized blocks. */
	copiedMessages: HistoryMessage[];
	copiedBlocks: string[];
	/** The summary request's instruction part (for the trajectory). */
	summaryInstruction: string;
	/** Bytes the whole-transcript cut left out (0 when it fit). */
	transcriptOmittedBytes: number;
	/** Bytes of the original task left out (0 when it fit). */
	taskOmittedBytes: number;
}

/** A handoff ready to be the compaction: its text and details. */
export interface AppliedHandoff {
	text: string;
	details: HandoffDetails;
}

export type Log = (message: string) => void;

/** Run the three calls over `input.messages`; undefined when the summary failed (the caller lets Pi compact). */
export async function computeHandoff(
	resolved: ResolvedModel,
	settings: HandoffSettings,
	input: HandoffRequest,
	signal: AbortSignal | undefined,
	log: Log,
): Promise<ComputedHandoff | undefined> {
	const model: AnyModel = resolved.model;
	const cfg = settings.handoff;
	const headShare = settings.headShare;
	const surfaces = settings.surfaces ?? handoffSurfaces({ handoff: cfg, projection: { headShare } });
	const window = model.contextWindow > 0 ? model.contextWindow : DEFAULT_WINDOW_TOKENS;
	const maxTokens = Math.max(
		256,
		Math.min(MAX_OUTPUT_TOKENS, model.maxTokens || MAX_OUTPUT_TOKENS, Math.floor(window / 8)),
	);
	const store = storeForAgentDir(getAgentDir());
	const sink = store.sink("transcripts");
	const users = userTexts(input.branch);
	// The task goes into all three prompts and the handoff: bounded like the later user messages.
	const task = boundTask(users[0] ?? NO_TASK, surfaces.task, undefined, sink);
	const later = fitUserMessages(users.slice(1), surfaces.userMessages, sink);
	const toolClasses = settings.toolClasses;
	const state = currentState(branchContext(input.branch).messages, { toolClasses }, sink, surfaces.currentState);
	const instruction = summaryInstruction(task.text, input.previousSummary, input.focus);
	// Room for the transcript: the window less three replies (the answers call carries the summary and
	// the questions too) and the fixed parts of the prompts.
	const fixed = estimateTokens(instruction + questionsPrompt(task.text, "", state) + later.kept.join("\n"));
	const transcriptTokens = Math.max(MIN_TRANSCRIPT_TOKENS, window - 3 * maxTokens - fixed - SAFETY_TOKENS);
	const history = serializeHistory(input.messages, {
		pieceLimits: { surfaces, toolClasses },
		maxBytes: bytesForTokens(transcriptTokens),
		sink,
		surface: surfaces.transcript,
	});
	const outcome = await runHandoff(
		{
			task: task.text,
			laterUserMessages: later.kept,
			omittedUserMessages: later.omitted,
			conversation: history.text,
			currentState: state,
			previousSummary: input.previousSummary,
			focus: input.focus,
			sessionFile: input.location.sessionFile,
			trajectoryDir: input.location.trajectoryDir,
		},
		modelCaller(resolved, maxTokens),
		signal,
		undefined,
		input.summaryOnly === true,
	);
	if (outcome.kind === "failed" || !outcome.text) {
		if (!outcome.aborted) log(LOG.summaryFailed(outcome.errors.join("; ")));
		return undefined;
	}
	for (const e of outcome.errors) log(LOG.followUpFailed(e.split(":")[0] ?? "", e));
	const check = outcome.questionCheck;
	if (check?.shortfall) log(LOG.questionsShortfall(check.count, check.required));
	return {
		outcome: { ...outcome, kind: outcome.kind, text: outcome.text },
		modelName: `${model.provider}/${model.id}`,
		staged: input.staged,
		copiedMessages: input.messages,
		copiedBlocks: history.blocks,
		summaryInstruction: instruction,
		transcriptOmittedBytes: history.omittedBytes,
		taskOmittedBytes: task.omittedBytes,
	};
}

/** Where this session's trajectories go (also read for the highest index already on disk). */
function sessionTarget(ctx: ExtensionContext) {
	const store = storeForAgentDir(getAgentDir());
	const sessionFile = ctx.sessionManager.getSessionFile();
	const sessionId = ctx.sessionManager.getSessionId();
	return {
		sessionId,
		dir: trajectoryDir(sessionFile, store.dirFor("handoffs"), sessionId),
		target: trajectoryTarget(sessionFile, sessionId, () => store.ensureKindDir("handoffs")),
	};
}

/**
 * What the handoff text names: the session file (if any) and the trajectory folder, the same folder
 * `applyHandoff` writes to. Read when the handoff is computed, so a staged handoff names them too.
 */
export function transcriptLocation(ctx: ExtensionContext): TranscriptLocation {
	const { dir } = sessionTarget(ctx);
	return { sessionFile: ctx.sessionManager.getSessionFile() || undefined, trajectoryDir: dir };
}

/** Make `computed` the compaction: take the next index (past `lastIndex`), write the trajectories. */
export function applyHandoff(
	ctx: ExtensionContext,
	computed: ComputedHandoff,
	lastIndex: number,
	log: Log,
): AppliedHandoff {
	const { sessionId, dir, target } = sessionTarget(ctx);
	const index = summarizationIndex(lastIndex, highestIndexIn(dir), ctx.sessionManager.getEntries());
	let trajectories: HandoffDetails["trajectories"] = [];
	try {
		const files = buildTrajectories(
			{
				parentSessionId: sessionId,
				index,
				modelName: computed.modelName,
				copiedMessages: computed.copiedMessages,
				copiedBlocks: computed.copiedBlocks,
				omittedBytes: computed.transcriptOmittedBytes,
				summaryInstruction: computed.summaryInstruction,
			},
			computed.outcome,
		);
		const written = writeTrajectories(target, files);
		for (const w of written) if (!w.ok) log(LOG.trajectoryFailed(w.error));
		trajectories = written.flatMap((w) => (w.ok ? [{ path: w.path, label: w.label }] : []));
	} catch (error) {
		log(LOG.trajectoryFailed(error instanceof Error ? error.message : String(error)));
	}
	return {
		text: computed.outcome.text,
		details: buildDetails(computed.outcome, {
			index,
			staged: computed.staged,
			model: computed.modelName,
			trajectoryDir: dir,
			trajectories,
			transcriptOmittedBytes: computed.transcriptOmittedBytes,
			taskOmittedBytes: computed.taskOmittedBytes,
		}),
	};
}

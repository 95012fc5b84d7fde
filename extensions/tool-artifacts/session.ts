/**
 * tool-artifacts' lifecycle state in one object: the current turn's batch (the per-turn cap), which
 * batch each tool call belongs to, and the stubs already sent (a stub once sent never changes). One
 * method per Pi event it handles, each taking the event's plain data and a ToolArtifactsContext (plain
 * readings and callbacks over one event's context), so the order Pi fires them in — tool_call for every
 * prepared call, then tool_result per call (concurrently in parallel mode), a new session after /new or
 * /reload — is testable without Pi. index.ts only subscribes Pi's events.
 */
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";
import type { ArtifactStore } from "../shared/store/artifact-store.ts";
import {
	buildStub,
	cutOutputBytes,
	isPassThrough,
	readsStoredArtifact,
	resultText,
	type StubDeps,
	type ToolArtifactsConfig,
	type ToolResultFacts,
	thresholdFor,
	turnStubChars,
} from "./artifacts.ts";
import { TurnBatch } from "./turn.ts";

/** What a tool_result hook answers: the stub that replaces the result. */
export interface ResultPatch {
	content: Array<TextContent | ImageContent>;
	details: Record<string, unknown>;
}

/** One Pi event's context as the session sees it: readings and callbacks, each read when called. */
export interface ToolArtifactsContext {
	/** The tool-artifacts configuration in force, with the user's surface overrides. */
	config(): ToolArtifactsConfig;
	/** The artifact store of the agent dir. */
	store(): ArtifactStore;
	/** The session's working directory (to tell a `read` of a stored artifact). */
	cwd: string;
	/** Aborts when the run is aborted (a result waiting for its batch stops waiting). */
	signal: AbortSignal | undefined;
	/** The summarizer for this call, or why there is none (summaries on, no model). */
	summary(config: ToolArtifactsConfig): Pick<StubDeps, "summarize" | "summaryUnavailable">;
	/** Tell the person, once per distinct text. */
	warn(message: string): void;
}

/** A tool call or its result, as far as the session reads it. */
export interface ToolCallFacts {
	toolCallId: string;
	/** Set (Pi 1.x `ctx.executeTool`) when another tool made this call: it feeds that tool, not the model. */
	parentToolCallId?: unknown;
}

/** Calls another tool made (Pi 1.x `ctx.executeTool`) feed that tool, not the model: left alone. */
export function isNested(event: ToolCallFacts): boolean {
	return typeof event.parentToolCallId === "string";
}

export class ToolArtifactsSession {
	/** The current turn's batch: every call prepared in it registers here (made at the first call if no turn_start). */
	private batch: TurnBatch | undefined;
	/** The batch each tool call of this turn registered with. */
	private readonly batchOf = new Map<string, TurnBatch>();
	/** Stubs already made, by tool call id: a stub once sent never changes. */
	private readonly stubs = new Map<string, ResultPatch>();

	/** session_start (startup, /new, /resume, /fork, /reload): stubs of another session do not apply. */
	sessionStarted(): void {
		this.stubs.clear();
	}

	/** turn_start: a new batch for the calls of this turn. */
	turnStarted(ctx: ToolArtifactsContext): void {
		this.batch = newBatch(ctx.config());
		this.batchOf.clear();
	}

	/** tool_call: every prepared call passes here before any call of the turn runs (parallel mode): the batch. */
	toolCalled(call: ToolCallFacts, ctx: ToolArtifactsContext): void {
		const cfg = ctx.config();
		if (!cfg.enabled || isNested(call)) return;
		this.batch ??= newBatch(cfg);
		this.batch.register(call.toolCallId);
		this.batchOf.set(call.toolCallId, this.batch);
	}

	/** tool_execution_end: a call that ended without reaching tool_result no longer holds its batch. */
	toolExecutionEnded(end: { toolCallId: string; result?: { content?: unknown } }): void {
		this.batchOf.get(end.toolCallId)?.ended(end.toolCallId, resultText(end.result?.content).length);
	}

	/**
	 * tool_result: the stub replacing an output over its threshold or moved by the turn's cap (waiting
	 * for the rest of the batch first); undefined leaves the result as it is. A result seen again gets
	 * the same stub.
	 */
	async toolResult(
		result: ToolResultFacts & ToolCallFacts,
		ctx: ToolArtifactsContext,
	): Promise<ResultPatch | undefined> {
		const cfg = ctx.config();
		const st = ctx.store();
		if (!cfg.enabled || isNested(result)) return;
		const cached = this.stubs.get(result.toolCallId);
		if (cached) return cached;
		const text = resultText(result.content);
		const threshold = thresholdFor(result.toolName, cfg);
		const passThrough =
			isPassThrough(text, result.details) || readsStoredArtifact(result.toolName, result.input, ctx.cwd, st.root);
		const limit = threshold === false ? Number.POSITIVE_INFINITY : threshold;
		const eligible = !passThrough && threshold !== false && text.length > 0;
		// A result Pi cut counts at its complete output's size (0.73 shows "(no output)" for a last line over 50 KB).
		const forced = eligible && Math.max(text.length, cutOutputBytes(result.details)) > limit;
		const owner = this.batchOf.get(result.toolCallId) ?? this.batch ?? newBatch(cfg);
		const moved = await owner.arrive({ id: result.toolCallId, chars: text.length, forced, eligible }, ctx.signal);
		if (!forced && !moved) {
			owner.finalize(result.toolCallId, text.length);
			return;
		}
		const deps: StubDeps = { store: st, config: cfg, ...ctx.summary(cfg) };
		const built = await buildStub(
			{
				toolName: result.toolName,
				toolCallId: result.toolCallId,
				input: result.input,
				content: result.content,
				details: result.details,
				isError: result.isError,
			},
			text,
			deps,
		);
		// The stub of an output the store could not keep says so itself; the person hears it once too.
		if ("notStored" in built) ctx.warn(`could not store a ${result.toolName} result: ${built.notStored}`);
		owner.finalize(result.toolCallId, built.text.length);
		const patch: ResultPatch = { content: built.content as ResultPatch["content"], details: built.details };
		this.stubs.set(result.toolCallId, patch);
		return patch;
	}
}

function newBatch(cfg: ToolArtifactsConfig): TurnBatch {
	return new TurnBatch(cfg.turnCapChars, turnStubChars(cfg));
}

/**
 * What the manager is asked to do: spawn a child (everything the tools resolved for it) or run a child
 * restored from an earlier process again. Plain data; the manager owns what happens next.
 */
import type { ExtensionPolicy } from "../agents/agents.ts";
import type { ChildBudget } from "../budget/budget.ts";
import type { RunSteps } from "../checkable/run-steps.ts";
import type { SettledResult } from "../domain/ledger.ts";
import type { AfterFailed, ChildRecord, ContextMode, RecordedSpawn } from "../domain/records.ts";

/** One input of a dependent, once settled: the child and its latest result. */
export interface HandoverInput {
	child: ChildRecord;
	result?: SettledResult;
}

/** Builds a dependent's first message from its settled inputs and its own first message (pipeline/handover.ts). */
export type Handover = (inputs: HandoverInput[], base: string) => Promise<string>;

/** A child to spawn, as the tools resolved it. */
export interface SpawnRequest {
	/** The task as the caller gave it. */
	prompt: string;
	/** The first message the child receives (the prompt, or the narrated fork plus the prompt). */
	firstMessage?: string;
	/** Short title, if given. */
	name?: string;
	/** "provider/id" label. */
	modelLabel: string;
	/** Pi's Model object. */
	model: unknown;
	/** Tool names to enable. */
	tools: string[];
	/** Working directory (exists). */
	cwd: string;
	/** Thinking level, if set. */
	thinking?: string;
	/** Fresh or forked start. */
	context: ContextMode;
	/** Paragraphs added to the child's system prompt. */
	systemAppend: string[];
	/** Steps around each run (worktree isolation, structured output). */
	steps?: RunSteps;
	/** An id taken with reserveId() (an isolated child's worktree is named after it before it spawns). */
	id?: string;
	/** Its worktree, when isolated. */
	worktree?: ChildRecord["worktree"];
	/** Whether its answers are checked against an output_schema. */
	structured?: boolean;
	/** Its budget, given its id (a budget it shares with later stages is named after it): budget/budget.ts. */
	budget?: (id: string) => ChildBudget | undefined;
	/** The named agent it runs as, if any. */
	agent?: string;
	/** Most turns a run may take. */
	maxTurns?: number;
	/** Whether `tools` is the whole set (an explicit list); otherwise the child's extension tools join it. */
	exactTools?: boolean;
	/** Which of the user's extensions the child loads. */
	extensions?: ExtensionPolicy;
	/** Children of this session (ids or names) it waits for; their results open its task. */
	after?: string[];
	/** When an input did not complete: skip it (default) or run anyway. */
	afterFailed?: AfterFailed;
	/** Makes its first message from its inputs (default: the first message as given). */
	handover?: Handover;
	/** The spawn's parameters, recorded while it has not started (a child with `after` only). */
	respawn?: RecordedSpawn;
}

/** How to run a child restored from an earlier process again: its session file is reopened with these. */
export interface ResumeSettings {
	/** Pi's Model object (undefined lets the reopened session restore its own). */
	model: unknown;
	/** Paragraphs added to the child's system prompt. */
	systemAppend: string[];
	/** Steps around its runs (an isolated child's worktree report). */
	steps?: RunSteps;
}

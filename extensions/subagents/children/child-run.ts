/**
 * One child's run, apart from the queue: the backend interface the manager drives, the per-child
 * runtime state, how backend events update the child's record, the watchdog's verdict and how a
 * run's last messages turn into its outcome. Pure functions over plain data (no timers, no I/O),
 * so the manager keeps only the lifecycle: queue, start, stop, settle, wait.
 */

import { addSpend, type Spend } from "../../shared/budget/spend.ts";
import type { ExtensionPolicy } from "../agents/agents.ts";
import type { AskChannel } from "../ask/child-tool.ts";
import { type Budget, budgetVerdict } from "../budget/budget.ts";
import type { RunSteps } from "../checkable/run-steps.ts";
import { lastAssistant } from "../domain/format.ts";
import { type ChildRecord, RECENT_TOOL_CALLS } from "../domain/records.ts";
import { budgetStopReason } from "../prompt/budget.ts";
import {
	ABORTED,
	emptyAnswerNote,
	maxRunTimeError,
	maxTurnsReason,
	outputLimitReason,
	PROVIDER_ERROR,
	watchdogError,
} from "../prompt/common.ts";

/** What a backend reports while a child runs (normalized from Pi's session events). */
export type ChildEvent =
	| { type: "activity" }
	| { type: "text"; delta: string }
	| { type: "assistant_end"; outputTokens?: number; spend?: Spend }
	| { type: "turn_end"; contextTokens?: number; contextWindow?: number; continues?: boolean }
	| { type: "tool_start"; name: string; args: string }
	| { type: "tool_end"; name: string; isError: boolean };

/** A live child session. */
export interface ChildHandle {
	/** The persistent session file, once known. */
	sessionFile?: string;
	/** Run the agent on `text`; resolves when the run ends (any way) with the session's messages of that run. */
	prompt(text: string): Promise<unknown[]>;
	/** Queue a message for a running agent. */
	steer(text: string): Promise<void>;
	abort(): Promise<void>;
	dispose(): void;
}

/** What the manager asks a backend to start. */
export interface ChildSpec {
	/** Child id. */
	id: string;
	/** Working directory. */
	cwd: string;
	/** Tool names to enable. */
	tools: string[];
	/** Thinking level, if set. */
	thinking?: string;
	/** Backend-specific model object (Pi's Model), resolved by the adapter; undefined lets the session's own choice stand. */
	model: unknown;
	/** Paragraphs added to the child's system prompt. */
	systemAppend: string[];
	/** Session file to reopen (a child from an earlier process); absent starts a new session. */
	sessionFile?: string;
	/** Whether the listed tools are the whole set (an explicit list) or extension tools join them. */
	exactTools?: boolean;
	/** Which of the user's extensions the child loads. */
	extensions?: ExtensionPolicy;
	/** The folder whose trust decision the child's cwd takes (a worktree's: the same folder of its repository). */
	trustFrom?: string;
	/** The child's way to ask its parent (ask_parent); absent: the child gets no such tool. */
	ask?: AskChannel;
}

export interface ChildBackend {
	create(spec: ChildSpec, onEvent: (event: ChildEvent) => void): Promise<ChildHandle>;
}

export interface ManagerLimits {
	/** Children running at once; more queue. */
	maxConcurrent: number;
	/** Milliseconds without any event while the model is due to answer before the child fails. */
	inactivityTimeoutMs: number;
	/** Milliseconds a single run may take in total. */
	maxRunTimeMs: number;
	/** Watchdog check period in milliseconds. */
	watchdogTickMs?: number;
	/** What this session's children may spend together (subagents.budget.perSession); absent: unbounded. */
	sessionBudget?: Budget;
}

/** What the manager holds per child besides its record. */
export interface Runtime {
	/** The live session, once created. */
	handle?: ChildHandle;
	/** Pi's Model object. */
	model: unknown;
	/** Paragraphs added to the child's system prompt. */
	systemAppend: string[];
	/** Session file the first run reopens (a child restored from an earlier process). */
	resumeFile?: string;
	/** Text the next run starts with. */
	pendingPrompt?: string;
	/** Why the current run is being stopped, set before abort(). */
	stopReason?: StopReason;
	/** Epoch ms of the last event from the child. */
	lastActivity: number;
	/** Tool calls running now (the watchdog waits for them). */
	toolsInFlight: number;
	/** Inactivity and run-time timer of the current run. */
	watchdog?: ReturnType<typeof setInterval>;
	/** Resolves when the current run has settled. */
	settledRun?: Promise<void>;
	/** Highest run number already settled (guards against settling a run twice). */
	settledRuns: number;
	/** Resolves settledRun. */
	runDone?: () => void;
	/** Steps around each run (isolation, structured output), if any. */
	steps?: RunSteps;
	/** The run whose result is being concluded (its steps run once, whoever settles it). */
	concluding?: { run: number; promise: Promise<void> };
	/** Whether the child's tool list is exact (no extension tools added). */
	exactTools?: boolean;
	/** Which of the user's extensions the child loads. */
	extensions?: ExtensionPolicy;
	/** Set when a turn ended with tool calls, so another turn follows (for maxTurns). */
	continuing?: boolean;
}

/**
 * Whether a run must stop at this turn's end: it has used its maxTurns and the model asked for more
 * (a turn that ended with tool calls). A final answer in the last allowed turn completes normally.
 */
export function maxTurnsVerdict(
	child: Pick<ChildRecord, "turns" | "maxTurns" | "state">,
	rt: Pick<Runtime, "stopReason" | "continuing">,
): StopReason | undefined {
	if (!child.maxTurns || rt.stopReason || child.state !== "running") return undefined;
	if (child.turns >= child.maxTurns && rt.continuing)
		return { state: "incomplete", error: maxTurnsReason(child.maxTurns) };
	return undefined;
}

/**
 * Whether a run must stop at this turn's end because it reached a budget (its own, its pipeline's shared one, the
 * session's) and the model asked for more. A final answer in the turn that reached it completes normally.
 */
export function budgetStopVerdict(
	child: ChildRecord,
	rt: Pick<Runtime, "stopReason" | "continuing">,
	children: readonly ChildRecord[],
	session: Budget | undefined,
): StopReason | undefined {
	if (rt.stopReason || child.state !== "running" || !rt.continuing) return undefined;
	const verdict = budgetVerdict(child, children, session);
	return verdict ? { state: "budget", error: budgetStopReason(verdict) } : undefined;
}

/** Why a run is stopped from outside, and how it settles. */
export interface StopReason {
	/**
	 * State the run settles in ("incomplete": cut short by a limit, its partial output is the result; "budget": it
	 * reached its budget at a turn's end).
	 */
	state: "failed" | "cancelled" | "incomplete" | "budget";
	/** Error text the parent reads first. */
	error: string;
}

/** Smallest and largest watchdog period, in milliseconds. */
const WATCHDOG_TICK_MIN_MS = 50;
const WATCHDOG_TICK_MAX_MS = 1000;

/** The watchdog's period: a quarter of the inactivity limit, within sane bounds, unless configured. */
export function watchdogTickMs(limits: ManagerLimits): number {
	return (
		limits.watchdogTickMs ??
		Math.max(WATCHDOG_TICK_MIN_MS, Math.min(WATCHDOG_TICK_MAX_MS, limits.inactivityTimeoutMs / 4))
	);
}

/** Whether a running child must be stopped now: past its run time, or silent with no tool running. */
export function watchdogVerdict(
	child: Pick<ChildRecord, "state" | "startedAt" | "model">,
	rt: Pick<Runtime, "stopReason" | "toolsInFlight" | "lastActivity">,
	limits: ManagerLimits,
	now: number,
): StopReason | undefined {
	if (child.state !== "running" || rt.stopReason) return undefined;
	if (now - (child.startedAt ?? now) > limits.maxRunTimeMs) {
		return { state: "incomplete", error: maxRunTimeError(Math.round(limits.maxRunTimeMs / 1000)) };
	}
	if (rt.toolsInFlight === 0 && now - rt.lastActivity > limits.inactivityTimeoutMs) {
		return { state: "failed", error: watchdogError(child.model, Math.round(limits.inactivityTimeoutMs / 1000)) };
	}
	return undefined;
}

/** Fold one backend event into the child's record and runtime (activity time, partial text, turns, tools). */
export function applyEvent(child: ChildRecord, rt: Runtime, event: ChildEvent, now: number): { visible: boolean } {
	rt.lastActivity = now;
	switch (event.type) {
		case "text":
			child.partialText += event.delta;
			child.streamingText = (child.streamingText ?? "") + event.delta;
			return { visible: false };
		case "assistant_end":
			if (event.outputTokens) child.outputTokens += event.outputTokens;
			if (event.spend) child.spend = addSpend(child.spend ?? { tokens: 0 }, event.spend);
			// Separate the texts of consecutive assistant messages in the partial output.
			if (child.partialText.length > 0 && !child.partialText.endsWith("\n\n")) child.partialText += "\n\n";
			child.streamingText = undefined;
			return { visible: false };
		case "turn_end":
			child.turns += 1;
			rt.continuing = Boolean(event.continues);
			if (event.contextTokens !== undefined) child.contextTokens = event.contextTokens;
			if (event.contextWindow !== undefined) child.contextWindow = event.contextWindow;
			return { visible: true };
		case "tool_start":
			rt.toolsInFlight += 1;
			child.recentTools.push({ name: event.name, args: event.args });
			if (child.recentTools.length > RECENT_TOOL_CALLS) child.recentTools.shift();
			return { visible: false };
		case "tool_end": {
			rt.toolsInFlight = Math.max(0, rt.toolsInFlight - 1);
			const note = [...child.recentTools].reverse().find((t) => t.name === event.name && t.isError === undefined);
			if (note) note.isError = event.isError;
			return { visible: false };
		}
		default:
			return { visible: false };
	}
}

/** How a run that returned (did not throw) ends, from its last assistant message. */
export type RunOutcome =
	| { state: "completed"; text: string }
	| { state: "failed" | "cancelled" | "incomplete"; error: string };

export function runOutcome(messages: unknown[], partialText: string): RunOutcome {
	const last = lastAssistant(messages);
	if (last.stopReason === "error") return { state: "failed", error: last.errorMessage ?? PROVIDER_ERROR };
	if (last.stopReason === "aborted") return { state: "cancelled", error: last.errorMessage ?? ABORTED };
	// The reply was cut at the output limit: what it wrote is a partial answer, never a whole one.
	if (last.stopReason === "length") return { state: "incomplete", error: outputLimitReason() };
	return { state: "completed", text: last.text || partialText.trimEnd() || emptyAnswerNote() };
}

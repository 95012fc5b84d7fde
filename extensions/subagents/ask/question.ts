/**
 * A child's question to its parent, as plain data and pure decisions: what one looks like, how the child's
 * text is made safe to show (the shared terminal-text sanitizer, then the `subagents.question` surface, so an
 * escape sequence or a megabyte of text never reaches the parent or the screen as is), and whether a child may
 * ask now (one open question per child, a cap per session, never in its last allowed turn). No Pi, no timers.
 */
import { project } from "../../shared/projection/projection.ts";
import { sanitizeLine, sanitizeTerminalText } from "../../shared/text/sanitize.ts";
import { questionLines } from "../prompt/ask.ts";
import type { AskedQuestion } from "./types.ts";

export type { AskedQuestion } from "./types.ts";

/** What the child passes to ask_parent (model output: anything). */
export interface AskInput {
	question?: unknown;
	options?: unknown;
}

/** Why a question is not accepted. */
export type AskRefusal = "empty" | "open" | "cap" | "last-turn";

/** The limits a question is checked against. */
export interface AskLimits {
	/** Questions all children of the session may ask together (subagents.maxQuestions). */
	maxQuestions: number;
	/** Milliseconds a child waits for an answer (subagents.askTimeoutSeconds, clamped to a timer). */
	timeoutMs: number;
}

/**
 * The child's question and options made safe: no escapes or controls, the question bounded, each option one
 * bounded line. How many options there are is bounded by the tool's schema (a record read back is bounded where
 * it is shown: questionBody).
 */
export function cleanQuestion(input: AskInput): { text: string; options: string[] } {
	const raw = typeof input.question === "string" ? input.question : "";
	const text = project(sanitizeTerminalText(raw).trim(), "subagents.question").text;
	const given = Array.isArray(input.options) ? input.options.filter((o): o is string => typeof o === "string") : [];
	const options = given
		.map((o) => project(sanitizeLine(o).replace(/\s+/g, " ").trim(), "subagents.questionBrief").text)
		.filter((o) => o.length > 0);
	return { text, options };
}

/** The question and its options as the parent reads them, bounded as a whole by the `subagents.question` surface. */
export function questionBody(q: Pick<AskedQuestion, "text" | "options">): string {
	return project(questionLines(q.text, q.options), "subagents.question").text;
}

/** A question in one short line (lists, the roster, the TUI). */
export function questionBrief(text: string): string {
	return project(text.replace(/\s+/g, " ").trim(), "subagents.questionBrief").text;
}

/** The state a decision reads: the child's turns and open question, the session's count. */
export interface AskState {
	/** The child's open question, if any. */
	open?: AskedQuestion;
	/** Turns the child completed in this run. */
	turns: number;
	/** The child's maxTurns, if bounded. */
	maxTurns?: number;
	/** Questions the session's children asked so far. */
	asked: number;
}

/** Whether a child may ask now; the refusal says why not. The question's text is already clean. */
export function askDecision(state: AskState, text: string, limits: AskLimits): AskRefusal | undefined {
	if (text.length === 0) return "empty";
	if (state.open) return "open";
	if (state.asked >= limits.maxQuestions) return "cap";
	// The turn that asks is counted: in the last allowed one the answer could never be used.
	if (state.maxTurns !== undefined && state.turns + 1 >= state.maxTurns) return "last-turn";
	return undefined;
}

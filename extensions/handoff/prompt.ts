/**
 * Every word the handoff extension shows a model (or writes into a trajectory note) lives here,
 * so the wording is reviewed in one place and pinned by tests.
 */

/** First line of the summary call's system prompt; tests and scripted servers recognise the call by it. */
export const SUMMARY_SYSTEM_PROMPT = `You are writing a handoff summary of an AI coding agent's work so far.
Read the conversation transcript you are given. Do not continue the conversation and do not answer questions found in it; only write the summary.`;

/** System prompt of the questions call (a fresh call with no history). */
export const QUESTIONS_SYSTEM_PROMPT = `You are an AI coding agent about to take over a task from another agent.
You have only the task, the other agent's summary and the current state. Ask what you need to know before you continue.`;

/** System prompt of the answers call (sees the summarized history and the summary exchange). */
export const ANSWERS_SYSTEM_PROMPT = `You are the AI coding agent whose work was just summarized, answering the questions of the agent taking over.
Answer from the transcript; say plainly when the transcript does not contain the answer.`;

/** Labels of the serialized transcript; the bracket form keeps the model from continuing it as a chat. */
export const TRANSCRIPT_LABELS = {
	user: "[User]",
	assistant: "[Assistant]",
	thinking: "[Assistant thinking]",
	toolCalls: "[Assistant tool calls]",
	toolResult: (toolName: string, isError: boolean) => `[Tool result: ${toolName}${isError ? " (error)" : ""}]`,
	note: (kind: string) => `[Note: ${kind}]`,
	userShell: "[User ran shell command]",
	earlierSummary: "[Summary of earlier work]",
} as const;

/** Placeholder used when a message carried no text (images, empty replies). */
export const NO_TEXT = "(no text)";

export interface SummaryPromptInput {
	/** The session's first user message. */
	task: string;
	/** The serialized (and, if needed, head+tail shortened) transcript. */
	conversation: string;
	/** The summary of a still earlier compaction, when there is one. */
	previousSummary?: string;
	/** What the user asked the compaction to focus on (/compact <instructions>). */
	focus?: string;
}

/** The instruction part of the summary request, without the transcript (also what the trajectory records). */
export function summaryInstruction(task: string, previousSummary?: string, focus?: string): string {
	const earlier = previousSummary
		? `\n\nAn earlier part of the work was already summarized; fold it into your summary:\n<earlier-summary>\n${previousSummary}\n</earlier-summary>`
		: "";
	const userFocus = focus?.trim() ? `\n\nThe user asked the summary to focus on: ${focus.trim()}` : "";
	return `The agent was given this task:
<task>
${task}
</task>${earlier}

Write a detailed summary of the agent's work so far, with these sections:
1. Major actions completed — each significant command or tool call and what it showed.
2. Important information learned — findings, file paths, configurations, error messages, system state.
3. Challenging problems addressed — what went wrong and how it was resolved (or not).
4. Current status — where the work stands now and what remains to be done.

Be specific: quote exact paths, names, numbers and error messages. The summary will replace the transcript.${userFocus}`;
}

/** The full summary request: instruction followed by the transcript. */
export function summaryPrompt(input: SummaryPromptInput): string {
	return `${summaryInstruction(input.task, input.previousSummary, input.focus)}\n\n${conversationBlock(input.conversation)}`;
}

/** How the transcript is wrapped inside the summary request. */
export function conversationBlock(conversation: string): string {
	return `<transcript>\n${conversation}\n</transcript>`;
}

/** Stands in for the transcript in trajectory files, which record it as copied steps instead. */
export function conversationReference(copiedSteps: number): string {
	return `<transcript>[${copiedSteps} message(s): see the copied steps above]</transcript>`;
}

/** The questions request: task, summary and current state, no history. */
export function questionsPrompt(task: string, summary: string, currentState: string): string {
	return `You are picking up work from a previous AI agent on this task:
<task>
${task}
</task>

The previous agent wrote this summary of its work:
<summary>
${summary}
</summary>

The current state (the end of the latest tool outputs, a log's notable lines first, and of the agent's last message):
<current-state>
${currentState}
</current-state>

Ask at least five questions (more if needed) about information the summary leaves out or leaves unclear and that you need to continue the task. Number them. After this you will be on your own: the previous agent cannot be asked again.`;
}

/** The corrective follow-up when the questions reply asked fewer than `required` questions (one re-ask only). */
export function questionsReaskPrompt(count: number, required: number): string {
	return `You asked ${count} question${count === 1 ? "" : "s"}; at least ${required} are needed. Write the full list again: at least ${required} numbered questions, one per line, about what the summary leaves out or unclear.`;
}

/** The answers request that follows the summary exchange. */
export function answersPrompt(questions: string): string {
	return `The agent taking over has these questions. Answer each one, in order and in detail:\n\n${questions}`;
}

/** Where the next agent can read what the handoff leaves out. */
export interface TranscriptLocation {
	/** The session file (JSON lines); undefined when the session is not saved to a file. */
	sessionFile: string | undefined;
	/** The folder the handoff's trajectory files (one JSON file per handoff call) are written to. */
	trajectoryDir: string;
}

/** What the handoff is made of; absent parts are left out of the text. */
export interface HandoffParts extends TranscriptLocation {
	task: string;
	/** Later user messages, verbatim, oldest first. */
	laterUserMessages: string[];
	/** How many later user messages did not fit the budget. */
	omittedUserMessages: number;
	summary: string;
	currentState: string;
	questions?: string;
	answers?: string;
}

/** Closing line of every handoff: the next agent continues instead of asking. */
export const HANDOFF_CLOSING =
	'Continue the task from where the previous agent left off. Do not ask more questions; if you need more detail, read the files named under "Where to find more".';

/** The line naming the full transcript (or saying plainly there is none). */
export function transcriptLine(sessionFile: string | undefined): string {
	if (!sessionFile) {
		return "Full transcript: none. This session is not saved to a file, so the messages before this handoff cannot be read back; the trajectory files below hold what the handoff calls were sent.";
	}
	return `Full transcript: ${sessionFile} (JSON lines, one session entry per line; read it with read(path=${JSON.stringify(sessionFile)}, offset, limit), where offset is the first line, 1-based, and limit the number of lines)`;
}

/** The line naming the folder of the handoff trajectories. */
export function trajectoriesLine(trajectoryDir: string): string {
	return `Handoff trajectories: ${trajectoryDir} (trajectory.summarization-<n>-summary.json, -questions.json and -answers.json: each handoff call's request and reply)`;
}

/** The compaction summary Pi stores and shows the next turn. */
export function handoffText(parts: HandoffParts): string {
	const sections = [
		"You are continuing work that another agent started; its context was compacted into this handoff.",
		`## Original task\n${parts.task}`,
	];
	if (parts.laterUserMessages.length > 0 || parts.omittedUserMessages > 0) {
		const where = parts.sessionFile ? "are only in the full transcript" : "are not kept (the session has no file)";
		const omitted =
			parts.omittedUserMessages > 0
				? `\n(${parts.omittedUserMessages} earlier user message(s) did not fit and ${where}.)`
				: "";
		const list = parts.laterUserMessages.map((m, i) => `### User message ${i + 1}\n${m}`).join("\n\n");
		sections.push(`## Later user messages${omitted}\n${list}`);
	}
	sections.push(`## Summary of the work so far\n${parts.summary}`);
	sections.push(`## Current state\n${parts.currentState}`);
	if (parts.questions && parts.answers) {
		sections.push(`## Questions the next agent asked\n${parts.questions}`);
		sections.push(`## Answers from the previous agent\n${parts.answers}`);
	}
	sections.push(
		`## Where to find more\n${transcriptLine(parts.sessionFile)}\n${trajectoriesLine(parts.trajectoryDir)}`,
	);
	sections.push(HANDOFF_CLOSING);
	return sections.join("\n\n");
}

/** Follow-up sent after a staged handoff was applied while the agent was mid-task. */
export const RESUME_MESSAGE =
	"The context was compacted into the handoff above. Continue the task from where you left off, without waiting for the user.";

/** Trajectory notes. */
export const COPIED_METRICS_NOTE = "Metrics omitted to avoid double counting: they are recorded in the parent session.";
export const COPIED_SUMMARY_NOTE =
	"Copied from the summary step of this handoff; its metrics are recorded in that trajectory.";
export const SHORTENED_NOTE = (omittedBytes: number) =>
	`The transcript was shortened head+tail to fit the model's window; ${omittedBytes} bytes were left out of the request.`;

export const QUESTIONS_SHORTFALL_NOTE = (count: number, required: number, reasked: boolean) =>
	`The questions reply asked ${count} question(s), fewer than the ${required} required${reasked ? ", even after one corrective re-ask" : ""}; the handoff went on with them.`;

/** One-line labels of the three trajectory files (compaction details carry them). */
export function trajectoryLabel(n: number, step: "summary" | "questions" | "answers"): string {
	const what = { summary: "summary", questions: "questions about the summary's gaps", answers: "answers" }[step];
	return `Handoff ${n}: ${what}`;
}

/** Log lines (console / notify), never sent to a model. */
export const LOG = {
	summaryFailed: (error: string) =>
		`headroom handoff: the summary call failed (${error}); Pi's default compaction runs`,
	followUpFailed: (step: string, error: string) =>
		`headroom handoff: the ${step} call failed (${error}); the summary alone is the handoff`,
	trajectoryFailed: (error: string) => `headroom handoff: a trajectory file was not written (${error})`,
	noModel: "headroom handoff: no model or no API key for the handoff; Pi's default compaction runs",
	stageFailed: (error: string) => `headroom handoff: staging failed (${error}); compaction will run the handoff afresh`,
	compactFailed: (error: string) => `headroom handoff: applying the staged handoff failed (${error})`,
	piCompactFailed: (reason: string, error: string | undefined, aborted: boolean) =>
		`headroom handoff: Pi's ${reason} compaction ${aborted ? "was aborted" : `failed (${error ?? "no reason given"})`}; nothing is staged now, the next compaction starts afresh`,
	staleDropped: (arrived: number, bound: number) =>
		`headroom handoff: the staged handoff is ${arrived} tokens behind the history (bound ${bound}); it was dropped, not applied`,
	questionsShortfall: (count: number, required: number) =>
		`headroom handoff: the questions call asked ${count} question(s) even after a re-ask (${required} required); the handoff goes on with them`,
	modelNotFound: (configured: string, available: string[]) =>
		`headroom handoff: the configured handoff.model "${configured}" was not found; using the session's model. Available: ${available.length > 0 ? available.join(", ") : "(none)"}`,
} as const;

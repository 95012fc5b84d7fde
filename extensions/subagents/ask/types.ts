/**
 * The shape of a child's question on its record (ChildRecord.question). Imports nothing, so the domain's
 * record can name it without a cycle.
 */

/** One question a child asked, as the parent's side keeps it (on the child's record while it is open). */
export interface AskedQuestion {
	/** 1-based number within the parent session (every child's questions count together). */
	seq: number;
	/** The question, sanitized and bounded (subagents.question). */
	text: string;
	/** Options to choose from, each sanitized to one bounded line. */
	options: string[];
	/** The run that asked it. */
	run: number;
	/** Epoch ms it was asked. */
	askedAt: number;
	/** Whether the parent has it in its context (a delivered message, or a subagent_wait result). */
	delivered: boolean;
	/**
	 * The run that asked ended while it waited (found in the session of an earlier process): nobody waits for
	 * the answer any more, which then starts a new run instead.
	 */
	detached?: boolean;
}

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
	/**
	 * Whether it went to the parent: a message of its own, a subagent_wait result, or a steering message queued
	 * into the parent's running turn (then it reaches the parent's context after the tool call that runs).
	 */
	delivered: boolean;
	/** Queued into the parent's running turn as a steering message (its `seenAt` comes when Pi injects it). */
	steered?: boolean;
	/**
	 * Epoch ms the parent's context first held it: the child's time limit (askTimeoutSeconds) counts from here,
	 * never from `askedAt`, so a question the parent could not see yet never runs out.
	 */
	seenAt?: number;
	/**
	 * The run that asked ended while it waited (found in the session of an earlier process): nobody waits for
	 * the answer any more, which then starts a new run instead.
	 */
	detached?: boolean;
}

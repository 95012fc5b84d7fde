/**
 * The names subagents writes into the parent's session and its store. A module of their own, with nothing
 * else in it, so the code that runs at session start can look for them (is there anything to restore?)
 * without loading the code that writes and reads them (adapter/later.ts).
 */

/** Session entry written when a run settles. */
export const SETTLED_ENTRY = "subagent-settled";
/** Session entry written when a run is queued (a spawn, a new run by subagent_send) and when it starts. */
export const RUN_ENTRY = "subagent-run";
/** Session entry written when results were consumed. */
export const DELIVERED_ENTRY = "subagent-delivered";
/** customType of the messages that carry results to the parent. */
export const RESULT_MESSAGE_TYPE = "subagent-result";
/** Session entry written when a child asks. */
export const QUESTION_ENTRY = "subagent-question";
/** Session entry written when a question is closed. */
export const ANSWER_ENTRY = "subagent-answer";
/**
 * Session entry written when the parent sent to a child whose question had ended unanswered, and was told so
 * (the late-answer note): a resumed session does not say it again.
 */
export const NOTED_ENTRY = "subagent-question-noted";
/** Folder of the children's worktrees inside the store root (<agentDir>/cache/headroom/worktrees). */
export const WORKTREES_FOLDER = "worktrees";

/**
 * The part of subagents a session's start does not need: the children's manager and backends, the tools' run
 * paths (spawn, wait, check, send, cancel, list, cleanup) with worktree isolation and output schemas, restoring
 * and delivering children's records, and the /subagents view. Loaded by import() on first use
 * (adapter/later.ts): the first tool call, the first /subagents, or a session start with children to restore.
 * In the built bundle this module and what only it reaches are a second file, read on that first use
 * (docs/startup.md, "Loaded on first use").
 */
export { deliverQuestions, questionsSeen } from "./ask/deliver.ts";
export { askLimitsOf } from "./ask/desk.ts";
export { persistQuestion, restoreQuestions } from "./ask/records.ts";
export { createSessionChildren, limitsOf } from "./children/session.ts";
export { deliverPending } from "./delivery/delivery.ts";
export { persistRun, persistSettled, restoreFromSession, restoreWaiting } from "./delivery/persistence.ts";
export { recordedSpawnProblem } from "./delivery/record-checks.ts";
export { rosterText } from "./delivery/roster.ts";
export { settleSingleShot } from "./delivery/settle.ts";
export { damagedSpawnError } from "./prompt/records.ts";
export { cancelTool } from "./tools/cancel.ts";
export { checkTool } from "./tools/check.ts";
export { cleanupTool } from "./tools/cleanup.ts";
export { listTool } from "./tools/list.ts";
export { sendTool } from "./tools/send.ts";
export { spawnTool } from "./tools/spawn.ts";
export { waitTool } from "./tools/wait.ts";
export { subagentsCommand } from "./view/command.ts";

/**
 * The four-stage pipeline scenario shared by the e2e test and the benchmark: stage answers, the parent's one
 * message of spawns, and the scripted model (children answer by the tag of their task; the parent spawns all
 * four, waits on the reviewer, ends).
 */
import type { ChatRequest, ScriptedReply } from "../fixtures/scripted-server.ts";
import { calledTools, isChild, numberedAnswer } from "./subagents-support.ts";

/** Stage answers: the scout's and the workers' are longer than one input may take whole (subagents.handover). */
export const PIPELINE_ANSWERS = {
	SCOUT: numberedAnswer("SCOUT", 400, 40_000),
	W1: numberedAnswer("W1", 300, 30_000),
	W2: numberedAnswer("W2", 300, 30_000),
	REVIEW: numberedAnswer("REVIEW", 40, 3_000),
};
export type Stage = keyof typeof PIPELINE_ANSWERS;
export const STAGES = Object.keys(PIPELINE_ANSWERS) as Stage[];

/** The four spawns of the pipeline, as the parent's one message lays them out. */
export const PIPELINE_SPAWNS = [
	{ prompt: "TASK-SCOUT map the code", name: "scout" },
	{ prompt: "TASK-W1 fix the parser", name: "w1", after: ["scout"] },
	{ prompt: "TASK-W2 fix the printer", name: "w2", after: ["sa-1"] },
	{ prompt: "TASK-REVIEW review both fixes", name: "reviewer", after: ["w1", "w2"] },
];

/** Which stage a child request belongs to (its task's tag sits after its inputs). */
export function stageOf(req: ChatRequest): Stage | undefined {
	return STAGES.find((s) => req.firstUser.includes(`TASK-${s}`));
}

/** The scripted model of the pipeline run: stages answer after a short delay; the parent spawns, waits, ends. */
export function pipelineScript(req: ChatRequest): ScriptedReply {
	if (isChild(req)) {
		const stage = stageOf(req);
		return stage ? { text: PIPELINE_ANSWERS[stage], delayMs: 200 } : { text: "unknown stage" };
	}
	const called = calledTools(req);
	if (called.length === 0)
		return { toolCalls: PIPELINE_SPAWNS.map((args) => ({ name: "subagent_spawn", arguments: args })) };
	if (!called.includes("subagent_wait"))
		return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-4"] } }] };
	return { text: "PIPELINE-DONE" };
}

/** Tool-schema growth the issue allows for all of pipelines, in bytes. */
export const SCHEMA_GROWTH_GOAL = 600;

/** subagent_spawn as a request offers it to the model (its JSON), if offered. */
export function spawnToolOf(req: ChatRequest): Record<string, unknown> | undefined {
	const tools = (req.body as { tools?: Array<{ function?: { name?: string } }> }).tools ?? [];
	return tools.find((t) => t.function?.name === "subagent_spawn") as Record<string, unknown> | undefined;
}

/** subagent_spawn's JSON bytes as the model gets it, and the same without the pipeline parameters. */
export function schemaGrowth(spawn: Record<string, unknown>): { with: number; without: number } {
	const without = structuredClone(spawn) as { function: { parameters: { properties: Record<string, unknown> } } };
	delete without.function.parameters.properties.after;
	delete without.function.parameters.properties.after_failed;
	return { with: Buffer.byteLength(JSON.stringify(spawn)), without: Buffer.byteLength(JSON.stringify(without)) };
}

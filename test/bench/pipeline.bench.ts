/**
 * Pipelines benchmark (`npm run bench -- pipeline`), the real pi CLI against the scripted model:
 *
 * 1. Bytes of the parent's context for the four-stage pipeline (scout → two workers → reviewer, the same stage
 *    answers in both runs): this design (the parent lays it out in one turn with `after` and waits on the
 *    reviewer) vs the parent relaying each result itself (spawn, wait, paste the result into the next stage's
 *    prompt). Measured as the UTF-8 bytes of the messages of the parent's last request, and its turns.
 * 2. Growth of the first request's tool schemas from pipelines: subagent_spawn's JSON with and without `after`
 *    and `after_failed` (goal: at most 600 bytes).
 */
import { rmSync } from "node:fs";
import {
	PIPELINE_ANSWERS,
	PIPELINE_SPAWNS,
	pipelineScript,
	SCHEMA_GROWTH_GOAL,
	schemaGrowth,
	spawnToolOf,
} from "../e2e/pipeline-scenario.ts";
import { calledTools, isChild, utf8Bytes } from "../e2e/subagents-support.ts";
import { extensionPath, makeSandbox, PI_LINES, runPiPrint, toolResults } from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText, type Script, startScriptedServer } from "../fixtures/scripted-server.ts";

const EXT = [extensionPath("subagents")];

/** The relaying parent: each stage spawned only after the previous results came back, pasted into its prompt. */
function relayScript(req: ChatRequest) {
	if (isChild(req)) return pipelineScript(req);
	const called = calledTools(req);
	const results = req.body.messages.filter((m) => m.role === "tool").map((m) => messageText(m));
	const waits = called.filter((n) => n === "subagent_wait").length;
	const [scout, w1, w2] = [PIPELINE_SPAWNS[0], PIPELINE_SPAWNS[1], PIPELINE_SPAWNS[2]];
	if (called.length === 0)
		return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: scout.prompt, name: "scout" } }] };
	const lastWasSpawn = called.at(-1) === "subagent_spawn";
	if (lastWasSpawn) {
		const ids = waits === 0 ? ["sa-1"] : waits === 1 ? ["sa-2", "sa-3"] : ["sa-4"];
		return { toolCalls: [{ name: "subagent_wait", arguments: { ids } }] };
	}
	const last = results.at(-1) ?? "";
	if (waits === 1)
		return {
			toolCalls: [
				{ name: "subagent_spawn", arguments: { prompt: `${w1.prompt}\n\nScout report:\n${last}`, name: "w1" } },
				{ name: "subagent_spawn", arguments: { prompt: `${w2.prompt}\n\nScout report:\n${last}`, name: "w2" } },
			],
		};
	if (waits === 2)
		return {
			toolCalls: [
				{
					name: "subagent_spawn",
					arguments: { prompt: `${PIPELINE_SPAWNS[3].prompt}\n\nWorker reports:\n${last}`, name: "reviewer" },
				},
			],
		};
	return { text: "PIPELINE-DONE" };
}

interface Measured {
	contextBytes: number;
	parentRequests: number;
	reviewerInFull: boolean;
	spawnSchema?: Record<string, unknown>;
}

async function measure(line: (typeof PI_LINES)[number]["line"], script: Script): Promise<Measured> {
	const server = await startScriptedServer(script);
	const sandbox = makeSandbox({ server });
	try {
		const run = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "run the pipeline" });
		if (run.exitCode !== 0) throw new Error(`pi exited ${run.exitCode}: ${run.stderr.slice(-500)}`);
		const parent = server.requests.filter((r) => !isChild(r));
		const last = parent.at(-1)!;
		const spawn = spawnToolOf(parent[0]);
		const waits = toolResults(run.events, "subagent_wait");
		return {
			contextBytes: utf8Bytes(JSON.stringify(last.body.messages)),
			parentRequests: parent.length,
			reviewerInFull: waits.some((w) => w.text.includes(PIPELINE_ANSWERS.REVIEW)),
			spawnSchema: spawn,
		};
	} finally {
		await server.close();
		rmSync(sandbox.root, { recursive: true, force: true });
	}
}

let failed = false;
for (const { line, label } of PI_LINES) {
	const piped = await measure(line, pipelineScript);
	const relayed = await measure(line, relayScript);
	console.log(`\n${label}`);
	console.log(
		`  parent context, this design: ${piped.contextBytes.toLocaleString("en")} bytes in ${piped.parentRequests} requests` +
			` (reviewer in full: ${piped.reviewerInFull})`,
	);
	console.log(
		`  parent context, relaying:    ${relayed.contextBytes.toLocaleString("en")} bytes in ${relayed.parentRequests} requests` +
			` (reviewer in full: ${relayed.reviewerInFull})`,
	);
	console.log(`  ratio: ${(relayed.contextBytes / piped.contextBytes).toFixed(2)}× smaller with after`);
	if (piped.spawnSchema) {
		const g = schemaGrowth(piped.spawnSchema);
		const growth = g.with - g.without;
		console.log(`  subagent_spawn schema: ${g.without} → ${g.with} bytes (+${growth}; goal ≤ ${SCHEMA_GROWTH_GOAL})`);
		if (growth > SCHEMA_GROWTH_GOAL) failed = true;
	}
}
if (failed) {
	console.error("tool-schema growth over the goal");
	process.exit(1);
}

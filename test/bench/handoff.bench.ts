/**
 * Handoff compaction vs Pi's default compaction on the same scripted sessions (real pi 0.73.1 CLI,
 * scripted model on 127.0.0.1). Per session size it reports, for one compaction:
 * - input tokens the compaction calls sent (estimated from the request text) and output tokens
 *   (estimated from the scripted replies: ~300 tokens each, the five numbered questions a little less),
 * - wall time from the run's end to compaction_end (the mock answers after a fixed simulated
 *   latency per call, so this is that latency times the calls plus the extension's own overhead),
 * - the size of the next agent request's messages (the resulting context).
 * A second table, under Pi's DEFAULT compaction settings on both Pi lines, times what the user (or the
 * agent) waits at the compaction, with the proactive probe and without: from the end of the last
 * agent request before the compaction to the start of the first one after it. On 0.73 the run ends
 * above Pi's threshold and the next prompt is sent at agent_end (run end → next prompt accepted); on
 * 1.x Pi compacts mid-run, so it is the agent's pause.
 * Run: node --import jiti/register test/bench/handoff.bench.ts   (or npm run bench -- handoff)
 */
import { estimateTokens } from "../../extensions/shared/text/tokens.ts";
import { kindOf, longOutputCommand, transcriptOf } from "../e2e/handoff-helpers.ts";
import { extensionPath, makeSandbox, type PiLine, startPiRpc } from "../fixtures/pi-runner.ts";
import { type ChatRequest, type ScriptedReply, startScriptedServer } from "../fixtures/scripted-server.ts";

/** Simulated model latency per compaction call, in ms (the agent's own calls answer at once). */
const LATENCY_MS = 250;
/** Tool turns per scripted session. */
const SESSION_TURNS = [2, 6, 12];
const CONTEXT_WINDOW = 64_000;
const REPLY = (tag: string) => `${tag}: ${"finding, path, command and status. ".repeat(40)}`;
const QUESTIONS_REPLY = Array.from(
	{ length: 5 },
	(_, i) => `${i + 1}. ${"Which file, command and status does the summary leave out here ".repeat(3)}?`,
).join("\n");
/** The scripted reply of a compaction call: five numbered questions for the questions step, so it needs no re-ask. */
const replyOf = (kind: string) => (kind === "questions" ? QUESTIONS_REPLY : REPLY(kind.toUpperCase()));

function requestTokens(req: ChatRequest): number {
	return transcriptOf(req).reduce((n, m) => n + estimateTokens(m.text), 0);
}

async function runOnce(turns: number, withHandoff: boolean) {
	let agentCalls = 0;
	const script = (req: ChatRequest): ScriptedReply => {
		const kind = kindOf(req);
		if (kind !== "agent") return { text: replyOf(kind), delayMs: LATENCY_MS };
		const n = agentCalls++;
		if (n < turns) {
			return { toolCalls: [{ name: "bash", arguments: { command: longOutputCommand(`ERR-${n}`) } }] };
		}
		if (n === turns) return { text: "Done with the steps.", promptTokens: CONTEXT_WINDOW - 1000 };
		return { text: "next", promptTokens: 3000 };
	};
	const server = await startScriptedServer(script);
	const sandbox = makeSandbox({
		server,
		contextWindow: CONTEXT_WINDOW,
		settings: { compaction: { enabled: true, reserveTokens: 8000, keepRecentTokens: 1000 } },
		headroomConfig: { handoff: { probe: { enabled: false } } },
	});
	const rpc = startPiRpc({
		line: "0.73",
		sandbox,
		extensions: withHandoff ? [extensionPath("handoff")] : [],
	});
	try {
		await rpc.prompt("TASK: run the scripted steps and report", 120_000);
		// Pi compacts right after the run ends: time from agent_end to compaction_end.
		const t0 = performance.now();
		await rpc.waitFor((e) => e.type === "compaction_end" || e.type === "auto_compaction_end", 120_000);
		const compactionMs = performance.now() - t0;
		await rpc.prompt("NEXT", 60_000);
		const calls = server.requests.filter((r) => kindOf(r) !== "agent");
		const next = server.requests.at(-1)!;
		return {
			calls: calls.length,
			inputTokens: calls.reduce((n, r) => n + requestTokens(r), 0),
			outputTokens: calls.reduce((n, r) => n + estimateTokens(replyOf(kindOf(r))), 0),
			contextTokens: requestTokens(next),
			compactionMs,
		};
	} finally {
		await rpc.stop();
		await server.close();
	}
}

/** Tool output per step in the default-settings sessions: about 3k tokens, as Pi estimates them. */
const STEP_CHARS = 12_000;
/** Steps before the final answer: the run ends at ~50k tokens, past Pi's threshold (64,000 − 16,384). */
const DEFAULT_STEPS = 16;

/** The start of the handoff summary reply: a request that carries it comes after the compaction. */
const SUMMARY_MARK = REPLY("SUMMARY").slice(0, 40);

async function waitAtCompaction(line: PiLine, probe: boolean) {
	const script = (req: ChatRequest): ScriptedReply => {
		const kind = kindOf(req);
		if (kind !== "agent") return { text: replyOf(kind), delayMs: LATENCY_MS };
		const results = req.body.messages.filter((m) => m.role === "tool").length;
		const compacted = req.raw.includes(SUMMARY_MARK);
		const tokens = Math.ceil(req.raw.length / 4);
		if (compacted || req.lastUser === "NEXT") return { text: "next", promptTokens: tokens, delayMs: LATENCY_MS };
		if (results < DEFAULT_STEPS) {
			const command = `head -c ${STEP_CHARS} /dev/zero | tr '\\0' x; echo; echo step-${results + 1}`;
			return { toolCalls: [{ name: "bash", arguments: { command } }], promptTokens: tokens, delayMs: LATENCY_MS };
		}
		return { text: "Done with the steps.", promptTokens: tokens, delayMs: LATENCY_MS };
	};
	const server = await startScriptedServer(script);
	const sandbox = makeSandbox({
		server,
		contextWindow: CONTEXT_WINDOW,
		settings: { compaction: { enabled: true } },
		headroomConfig: { handoff: { probe: { enabled: probe } } },
	});
	const rpc = startPiRpc({ line, sandbox, extensions: [extensionPath("handoff")] });
	try {
		await rpc.prompt("TASK: run the scripted steps and report", 180_000);
		rpc.send({ type: "prompt", message: "NEXT" });
		const deadline = Date.now() + 120_000;
		while (!server.requests.some((r) => kindOf(r) === "agent" && r.raw.includes(SUMMARY_MARK))) {
			if (Date.now() > deadline) throw new Error("no request after the compaction");
			await new Promise((r) => setTimeout(r, 50));
		}
		const agents = server.requests.filter((r) => kindOf(r) === "agent");
		const after = agents.findIndex((r) => r.raw.includes(SUMMARY_MARK));
		const before = agents[after - 1];
		const calls = server.requests.filter((r) => kindOf(r) !== "agent");
		const blocking = calls.filter((c) => (c.finishedAt ?? Number.POSITIVE_INFINITY) > (before.finishedAt ?? 0)).length;
		return { waitMs: agents[after].receivedAt - (before.finishedAt ?? 0), calls: calls.length, blocking };
	} finally {
		await rpc.stop();
		await server.close();
	}
}

async function main() {
	const rows: string[] = [];
	rows.push("| session | compaction | calls | input tok | output tok | wall ms | next context tok |");
	rows.push("|---|---|---|---|---|---|---|");
	for (const turns of SESSION_TURNS) {
		for (const withHandoff of [false, true]) {
			const r = await runOnce(turns, withHandoff);
			rows.push(
				`| ${turns} bash turns | ${withHandoff ? "handoff" : "Pi default"} | ${r.calls} | ${r.inputTokens} | ${r.outputTokens} | ${Math.round(r.compactionMs)} | ${r.contextTokens} |`,
			);
		}
	}
	console.log(rows.join("\n"));
	const waits: string[] = [];
	waits.push(
		"| Pi line | probe | handoff calls | calls after the agent's last request before compaction | wait at compaction ms |",
	);
	waits.push("|---|---|---|---|---|");
	for (const line of ["0.73", "1.x"] as const) {
		for (const probe of [false, true]) {
			const w = await waitAtCompaction(line, probe);
			waits.push(`| ${line} | ${probe ? "on" : "off"} | ${w.calls} | ${w.blocking} | ${w.waitMs} |`);
		}
	}
	console.log(`\nUnder Pi's default compaction settings (${LATENCY_MS} ms per model call):\n${waits.join("\n")}`);
}

await main();

/**
 * The /headroom context ledger on a big session: 1,000 messages (user turns, assistant replies with
 * tool calls, tool outputs, stubs, subagent results, a handoff summary) and 500 artifacts on disk.
 * Measures the whole command path but Pi's own calls: one lstat per artifact, the composition, what was
 * kept out, the artifact list and the formatted text. Goal: ≤ 50 ms. Beside it, as the yardstick measured
 * in the same run, one JSON.stringify of the same entries (what any pass over the session costs at least).
 * Run: node --import jiti/register test/bench/ledger.bench.ts   (or: npm run bench -- ledger)
 * Exits 1 if the median exceeds the goal.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { statArtifacts } from "../../extensions/headroom/collect.ts";
import { buildLedger, sessionArtifactPaths } from "../../extensions/headroom/ledger.ts";
import { formatLedger } from "../../extensions/headroom/ledger-format.ts";
import { makeRng } from "../fixtures/corpora/generate.ts";

const MESSAGES = 1_000;
const ARTIFACTS = 500;
const GOAL_MS = 50;
const RUNS = 31;

const root = mkdtempSync(join(tmpdir(), "headroom-ledger-bench-"));
try {
	const rng = makeRng(11);
	const words = (n: number) => Array.from({ length: n }, () => Math.floor(rng() * 1e6).toString(36)).join(" ");
	const paths: string[] = [];
	for (const kind of ["tool-outputs", "subagent-results"]) mkdirSync(join(root, kind), { recursive: true });
	for (let i = 0; i < ARTIFACTS; i++) {
		const path = join(root, i % 2 ? "tool-outputs" : "subagent-results", `${i.toString(16).padStart(64, "0")}.txt`);
		writeFileSync(path, words(200));
		paths.push(path);
	}
	const text = (t: string) => [{ type: "text", text: t }];
	const entries: unknown[] = [];
	let artifact = 0;
	for (let i = 0; i < MESSAGES; i++) {
		const kind = i % 4;
		let message: unknown;
		if (kind === 0) message = { role: "user", content: text(words(40)) };
		else if (kind === 1)
			message = {
				role: "assistant",
				content: [
					...text(words(60)),
					{ type: "toolCall", id: `c${i}`, name: "bash", arguments: { command: words(8) } },
				],
			};
		else if (kind === 2) {
			const stored = artifact < ARTIFACTS ? [paths[artifact++]] : [];
			message = {
				role: "toolResult",
				toolName: "bash",
				toolCallId: `c${i - 1}`,
				content: text(words(300)),
				details: stored.length ? { headroom: { projected: true, artifacts: stored } } : {},
			};
		} else {
			const stored = artifact < ARTIFACTS ? paths[artifact++] : undefined;
			message = {
				role: "toolResult",
				toolName: "subagent_wait",
				toolCallId: `c${i}`,
				content: text(words(400)),
				details: { items: [{ id: "sa-1", fullBytes: 40_000, shownBytes: 12_000, artifactPath: stored }] },
			};
		}
		entries.push({ type: "message", id: `e${i}`, message });
	}
	entries.push({
		type: "compaction",
		summary: words(500),
		tokensBefore: 90_000,
		details: { kind: "headroom-handoff", trajectories: [] },
	});
	const messages = [
		{ role: "compactionSummary", summary: words(500) },
		...entries.slice(0, MESSAGES).map((e) => (e as { message: unknown }).message),
	];
	const tools = ["read", "bash", "edit", "write", "grep", "find", "ls", "subagent_spawn", "subagent_wait"].map(
		(name) => ({
			name,
			description: words(30),
			parameters: { type: "object", properties: { a: { type: "string", description: words(10) } } },
		}),
	);
	const systemPrompt = words(1500);

	const ledgerOnce = () => {
		const facts = statArtifacts(sessionArtifactPaths(entries));
		const ledger = buildLedger({
			messages,
			entries,
			systemPrompt,
			tools,
			usage: { tokens: 120_000, contextWindow: 200_000 },
			artifacts: facts,
		});
		return formatLedger(ledger, Date.now(), { bars: "blocks" }).length + ledger.artifacts.length;
	};
	const baselineOnce = () => JSON.stringify(entries).length;

	const times = { ledger: [] as number[], baseline: [] as number[] };
	let sink = 0;
	for (let i = 0; i < 5; i++) sink += ledgerOnce() + baselineOnce(); // warm-up
	for (let run = 0; run < RUNS; run++) {
		const order = run % 2 ? (["ledger", "baseline"] as const) : (["baseline", "ledger"] as const);
		for (const which of order) {
			const start = performance.now();
			sink += which === "ledger" ? ledgerOnce() : baselineOnce();
			times[which].push(performance.now() - start);
		}
	}
	const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
	const ledgerMs = median(times.ledger);
	const baselineMs = median(times.baseline);
	const artifactsFound = sessionArtifactPaths(entries).length;
	console.log(`session: ${MESSAGES} messages, ${artifactsFound} artifacts on disk (sink ${sink > 0 ? "ok" : "?"})`);
	console.log("| case | median | goal |");
	console.log("|---|---:|---|");
	console.log(
		`| /headroom ledger (lstat × ${artifactsFound} + composition + kept out + text) | ${ledgerMs.toFixed(1)} ms | ≤ ${GOAL_MS} ms ${ledgerMs <= GOAL_MS ? "ok" : "MISSED"} |`,
	);
	console.log(`| JSON.stringify of the same entries (yardstick) | ${baselineMs.toFixed(1)} ms | (info) |`);
	console.log(`| ratio ledger / yardstick | ${(ledgerMs / baselineMs).toFixed(2)}× | (info) |`);
	if (ledgerMs > GOAL_MS) process.exitCode = 1;
} finally {
	rmSync(root, { recursive: true, force: true });
}

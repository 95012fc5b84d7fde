/**
 * Subagents benchmarks (`npm run bench -- subagents`):
 *
 * 1. Spawn-to-first-model-request latency: an in-process child (this extension's backend, Pi's
 *    createAgentSession) with no extensions and with the user's extensions loaded (three small, realistic
 *    ones in <agentDir>/extensions/), vs a `pi --mode json` subprocess child loading the same three
 *    (what most Pi subagent extensions spawn), all against the scripted model on 127.0.0.1.
 *    Goal: the in-process child with extensions ≥ 10× faster than the fastest subprocess.
 * 2. Parent-context bytes for scenario 2 (four answers of 21,333 bytes / 262 lines in one wait):
 *    our batch projection vs full injection vs head-only truncation (Pi's truncateHead), and how
 *    many of the four BEGIN/END pairs each keeps.
 */
import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AuthStorage, ModelRegistry, truncateHead } from "@mariozechner/pi-coding-agent";
import { storeForAgentDir } from "../../extensions/shared/store/artifact-store.ts";
import { createInProcessBackend } from "../../extensions/subagents/children/backend.ts";
import { projectBatch } from "../../extensions/subagents/delivery/batch.ts";
import { numberedAnswer, pairsKept, utf8Bytes } from "../e2e/subagents-support.ts";
import { makeSandbox, PI_LINES } from "../fixtures/pi-runner.ts";
import { startScriptedServer } from "../fixtures/scripted-server.ts";

/** Timed spawns per variant (after one warm-up each). */
const IN_PROCESS_RUNS = 15;
const SUBPROCESS_RUNS = 5;
const TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/**
 * Three small user extensions of the kinds people install: a tool with a TypeBox schema, hooks plus a
 * command, and a folder extension with two tools and a session_start handler.
 */
const USER_EXTENSIONS: Record<string, string> = {
	"web-fetch.ts": `import { Type } from "typebox";
export default function (pi) {
	pi.registerTool({
		name: "web_fetch_stub",
		label: "Fetch",
		description: "Fetch a URL (benchmark stub).",
		parameters: Type.Object({ url: Type.String(), maxBytes: Type.Optional(Type.Number()) }),
		async execute(_id, params) {
			return { content: [{ type: "text", text: "fetched " + params.url }], details: {} };
		},
	});
}
`,
	"guard.ts": `export default function (pi) {
	let calls = 0;
	pi.on("tool_call", (event) => {
		calls++;
		if (event.toolName === "bash" && String(event.input?.command ?? "").includes("rm -rf /")) return { block: true, reason: "no" };
	});
	pi.on("tool_result", () => undefined);
	pi.registerCommand("guard-stats", { description: "calls seen", handler: async () => console.log(calls) });
}
`,
	"notes/index.ts": `import { Type } from "typebox";
const notes = new Map();
export default function (pi) {
	pi.on("session_start", async () => notes.clear());
	pi.registerTool({
		name: "note_add",
		label: "Add note",
		description: "Remember a note.",
		parameters: Type.Object({ key: Type.String(), text: Type.String() }),
		async execute(_id, p) { notes.set(p.key, p.text); return { content: [{ type: "text", text: "ok" }], details: {} }; },
	});
	pi.registerTool({
		name: "note_get",
		label: "Get note",
		description: "Recall a note.",
		parameters: Type.Object({ key: Type.String() }),
		async execute(_id, p) { return { content: [{ type: "text", text: notes.get(p.key) ?? "" }], details: {} }; },
	});
}
`,
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function latency(): Promise<void> {
	let firstRequestAt: (() => void) | undefined;
	let lastTools: string[] = [];
	const server = await startScriptedServer((req) => {
		lastTools = req.toolNames;
		firstRequestAt?.();
		return { text: "ok" };
	});
	const sandbox = makeSandbox({ server });
	const nextRequest = () => new Promise<number>((resolve) => (firstRequestAt = () => resolve(performance.now())));
	try {
		const registry = ModelRegistry.create(
			AuthStorage.create(join(sandbox.agentDir, "auth.json")),
			join(sandbox.agentDir, "models.json"),
		);
		const model = registry.find("mock", "mock-model");
		for (const [file, source] of Object.entries(USER_EXTENSIONS)) {
			const path = join(sandbox.agentDir, "extensions", file);
			mkdirSync(join(path, ".."), { recursive: true });
			writeFileSync(path, source);
		}
		const backend = createInProcessBackend({
			agentDir: sandbox.agentDir,
			modelRegistry: registry,
			sessionDir: join(sandbox.agentDir, "sessions", "bench", "subagents"),
		});
		/** One spawn → first request, in ms; checks the child really had (or lacked) the extensions' tools. */
		const once = async (i: number, extensions: "all" | "none"): Promise<number> => {
			const seen = nextRequest();
			const t0 = performance.now();
			const handle = await backend.create(
				{
					id: `sa-${extensions}-${i}`,
					cwd: sandbox.cwd,
					tools: TOOLS,
					model,
					systemAppend: ["bench"],
					extensions: { mode: extensions, include: [], exclude: [] },
				},
				() => undefined,
			);
			const run = handle.prompt("task");
			const t1 = await seen;
			await run;
			handle.dispose();
			const has = ["web_fetch_stub", "note_add", "note_get"].every((t) => lastTools.includes(t));
			if (has !== (extensions === "all"))
				throw new Error(`child tools ${lastTools.join(",")} (extensions: ${extensions})`);
			return t1 - t0;
		};
		// The two in-process variants alternate spawn by spawn (order flipped each round), after one warm-up each.
		const none: number[] = [];
		const all: number[] = [];
		for (let i = 0; i <= IN_PROCESS_RUNS; i++) {
			const order: Array<"all" | "none"> = i % 2 === 0 ? ["none", "all"] : ["all", "none"];
			for (const variant of order) {
				const t = await once(i, variant);
				if (i > 0) (variant === "all" ? all : none).push(t);
			}
		}
		const rows: Array<[string, number]> = [
			["in-process, no extensions (createAgentSession, Pi 0.73 on node)", median(none)],
			["in-process, the user's three extensions loaded", median(all)],
		];
		for (const info of PI_LINES) {
			const times: number[] = [];
			for (let i = 0; i <= SUBPROCESS_RUNS; i++) {
				const seen = nextRequest();
				const t0 = performance.now();
				const child = spawn(
					info.command,
					[
						...info.prefix,
						"--mode",
						"json",
						"-p",
						"--no-session",
						"--offline",
						"--provider",
						"mock",
						"--model",
						"mock-model",
						"task",
					],
					{ cwd: sandbox.cwd, env: sandbox.env, stdio: "ignore" },
				);
				const t1 = await seen;
				await new Promise((r) => child.on("close", r));
				if (i > 0) times.push(t1 - t0);
			}
			rows.push([`subprocess \`pi --mode json\` with the same three (${info.label})`, median(times)]);
		}
		const base = rows[0][1];
		console.log("\n### Spawn → first model request (median)\n");
		console.log("| child | latency | vs in-process |");
		console.log("|---|---:|---:|");
		for (const [name, t] of rows) console.log(`| ${name} | ${ms(t)} | ${(t / base).toFixed(1)}× |`);
		const withExtensions = rows[1][1];
		const fastestSubprocess = Math.min(...rows.slice(2).map((r) => r[1]));
		console.log(
			`\nin-process with the three extensions is ${(fastestSubprocess / withExtensions).toFixed(1)}× faster than the fastest subprocess (goal ≥ 10×); loading them costs ${ms(withExtensions - base)}`,
		);
	} finally {
		await server.close();
		rmSync(sandbox.root, { recursive: true, force: true });
	}
}

async function contextBytes(): Promise<void> {
	const tags = ["A", "B", "C", "D"];
	const answers = tags.map((t) => numberedAnswer(t, 260, 21_333));
	const header = (t: string) => `── sa-${tags.indexOf(t) + 1} completed ──`;
	const full = tags.map((t, i) => `${header(t)}\n${answers[i]}`).join("\n\n");
	const server = await startScriptedServer(() => ({ text: "unused" }));
	const sandbox = makeSandbox({ server });
	try {
		const ours = await projectBatch(
			tags.map((t, i) => ({ id: `sa-${i + 1}`, run: 1, header: header(t), text: answers[i], noRoom: () => "" })),
			{ surface: "wait", store: storeForAgentDir(sandbox.agentDir) },
		);
		const batchCap = ours.allocation.batchBytes;
		// Head-only at the same budgets: the whole batch cut at the cap, and each result cut at our per-result share.
		const headBatch = truncateHead(full, { maxBytes: batchCap, maxLines: 100_000 }).content;
		const perResult = Math.floor(batchCap / 4);
		const headEach = tags
			.map((t, i) => `${header(t)}\n${truncateHead(answers[i], { maxBytes: perResult, maxLines: 100_000 }).content}`)
			.join("\n\n");
		const rows: Array<[string, string]> = [
			["full injection", full],
			[`head-only, whole batch cut at ${batchCap.toLocaleString("en-US")} B (truncateHead)`, headBatch],
			[`head-only, each result cut at ${perResult.toLocaleString("en-US")} B (truncateHead)`, headEach],
			["pi-context-headroom projection (subagent_wait)", ours.text],
		];
		console.log("\n### Parent-context bytes, scenario 2 (4 × 21,333 B / 262 lines, one subagent_wait)\n");
		console.log("| strategy | bytes in parent context | BEGIN/END pairs kept | full text recoverable |");
		console.log("|---|---:|---:|---|");
		for (const [name, text] of rows) {
			const recoverable = name.startsWith("pi-context-headroom")
				? `yes (${ours.artifacts.length} artifacts)`
				: name === "full injection"
					? "n/a"
					: "no";
			console.log(
				`| ${name} | ${utf8Bytes(text).toLocaleString("en-US")} | ${pairsKept(text, tags)}/4 | ${recoverable} |`,
			);
		}
	} finally {
		await server.close();
		rmSync(sandbox.root, { recursive: true, force: true });
	}
}

await latency();
await contextBytes();

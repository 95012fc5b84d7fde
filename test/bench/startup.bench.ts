/**
 * Start-up benchmark (`npm run bench -- startup`): the real `pi` CLI in rpc mode, on both Pi lines (0.73.1 on
 * Node, 1.x under Bun), from spawn to the answer to `get_state` (ready), with and without this package:
 * - cold: a fresh sandbox (empty TMPDIR and HOME, so jiti's and Bun's transpile caches are empty), as on a
 *   fresh install, a container, a CI job or after a reboot; warm: the same sandbox started again;
 * - on an empty session and on a real resumed session (test/fixtures/sessions, 1,019 entries);
 * - on the resumed session, prompt → first model request (arrival at the scripted server): on the warm start after
 *   a pause (STARTUP_IDLE_MS, default 2,000 ms: a person reads the screen and types; idle-time work after
 *   session_start has run), and on the cold start at once after ready (a prompt piped in: idle-time work had no
 *   time); and the first request's fixed bytes (system prompt + tool schemas).
 * The package is installed as a user installs it: the staged copy (published files and runtime dependencies,
 * outside the repository) listed in the sandbox's settings `packages`, with Pi discovering everything else as
 * usual. Two reference extensions, generated in a folder outside the repository and installed the same way,
 * show what any extension costs: `plain-js`, one plain JavaScript file with no import that registers one tool
 * (a JSON-schema object) and one command — the floor; `ts-sdk`, one TypeScript file that imports a function
 * from Pi's SDK and registers one command — what Pi's loader does for the usual extension. Variants rotate
 * round by round (each round a different order); medians; ratios against Pi alone from the same run.
 *
 * STARTUP_ROUNDS (default 3) sets the rounds; STARTUP_LINES ("0.73,1.x") the Pi lines; STARTUP_WINDOW (default
 * 128000) the mock model's context window: the resumed session (Pi's last usage reading 177,657 tokens) is over
 * budget at 128k, so the first request trims it, and far within it at 1000000.
 *
 * At the end it prints a ready-to-paste Markdown table (CPU ratios, which a busy machine disturbs least, and
 * wall-clock ratios; the references beside the package), the run's duration and the load average at its start and
 * end, so a quiet run can be told from a busy one. Quiet 2-core machine: about 5 minutes for 3 rounds.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import {
	makeSandbox,
	type PiLine,
	type PiRpc,
	type Sandbox,
	stagedPackageRoot,
	startPiRpc,
} from "../fixtures/pi-runner.ts";
import type { ChatRequest } from "../fixtures/scripted-server.ts";
import { startScriptedServer } from "../fixtures/scripted-server.ts";
import { realSession, sessionIndex } from "../fixtures/sessions/index.ts";
import { makeOutsideDir } from "../fixtures/test-dirs.ts";

const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 3);
const LINES = (process.env.STARTUP_LINES ?? "0.73,1.x").split(",") as PiLine[];
const WINDOW = Number(process.env.STARTUP_WINDOW ?? 128_000);
const SESSION_FILE = "large-session.jsonl.gz";
/** The pause between ready and the prompt on the warm resumed start (a person reading and typing), in ms. */
const IDLE_MS = Number(process.env.STARTUP_IDLE_MS ?? 2000);

/** Pi alone, with this package, and with each reference extension. */
const VARIANTS = ["alone", "package", "plain-js", "ts-sdk"] as const;
type Variant = (typeof VARIANTS)[number];
/** The command each variant's extension registers (how the bench checks that it loaded). */
const COMMAND: Record<Variant, string | undefined> = {
	alone: undefined,
	package: "headroom",
	"plain-js": "ref-plain",
	"ts-sdk": "ref-sdk",
};

/**
 * The two reference extensions as installable packages in a folder outside the repository (no node_modules
 * above them: the TypeScript one gets Pi's SDK only through Pi's loader, as an installed extension does).
 */
function referencePackages(): Record<"plain-js" | "ts-sdk", string> {
	const root = makeOutsideDir("startup-refs");
	const write = (name: string, file: string, source: string) => {
		const dir = join(root, name);
		mkdirSync(dir, { recursive: true });
		writeFileSync(join(dir, file), source);
		writeFileSync(
			join(dir, "package.json"),
			JSON.stringify({ name, version: "0.0.0", type: "module", pi: { extensions: [`./${file}`] } }, null, 2),
		);
		return dir;
	};
	const plain = write(
		"ref-plain",
		"index.js",
		`export default function (pi) {
	pi.registerTool({
		name: "ref_echo",
		label: "Echo",
		description: "Returns its text.",
		parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
		async execute(_id, params) {
			return { content: [{ type: "text", text: String(params.text) }], details: {} };
		},
	});
	pi.registerCommand("ref-plain", { description: "reference", handler: async () => {} });
}
`,
	);
	const sdk = write(
		"ref-sdk",
		"index.ts",
		`import { getAgentDir } from "@mariozechner/pi-coding-agent";

export default function (pi: { registerCommand(name: string, options: object): void }): void {
	const dir: string = getAgentDir();
	pi.registerCommand("ref-sdk", { description: \`reference (\${dir.length})\`, handler: async () => {} });
}
`,
	);
	return { "plain-js": plain, "ts-sdk": sdk };
}
type SessionKind = "empty" | "resumed";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${Math.round(x)} ms`;
const kb = (x: number) => `${(x / 1024).toFixed(1)} KB`;

/** Figures of one line × variant × session kind, one per round. */
interface Samples {
	/** Wall-clock ms to ready. */
	cold: number[];
	warm: number[];
	/** CPU ms (user + system) the pi process used until ready: steadier than wall-clock on a busy machine. */
	coldCpu: number[];
	warmCpu: number[];
	/** Warm start, prompt after IDLE_MS: wall-clock ms from the prompt to the request's arrival. */
	firstRequest: number[];
	/** CPU ms the pi process used from the prompt to the request's arrival. */
	firstRequestCpu: number[];
	/** Cold start, prompt at once after ready: wall-clock and CPU ms to the request's arrival. */
	firstRequestNow: number[];
	firstRequestNowCpu: number[];
	fixedBytes: number[];
}

const samples = new Map<string, Samples>();
function slot(line: PiLine, variant: Variant, session: SessionKind): Samples {
	const key = `${line}|${variant}|${session}`;
	let s = samples.get(key);
	if (!s) {
		s = {
			cold: [],
			warm: [],
			coldCpu: [],
			warmCpu: [],
			firstRequest: [],
			firstRequestCpu: [],
			firstRequestNow: [],
			firstRequestNowCpu: [],
			fixedBytes: [],
		};
		samples.set(key, s);
	}
	return s;
}

/** CPU ms a process has used so far (Linux /proc; NaN elsewhere). Clock ticks are 1/100 s on Linux. */
function cpuMs(pid: number | undefined): number {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
		return (Number(fields[11]) + Number(fields[12])) * 10;
	} catch {
		return Number.NaN;
	}
}

/** System prompt and tool schemas of a request, as UTF-8 bytes on the wire. */
function fixedBytes(request: ChatRequest): number {
	const system = request.body.messages.filter((m) => m.role === "system" || m.role === "developer");
	return Buffer.byteLength(JSON.stringify(system)) + Buffer.byteLength(JSON.stringify(request.body.tools ?? []));
}

/** The session with its header's `cwd` set to `cwd` (every other line unchanged). */
function withCwd(text: string, cwd: string): string {
	const newline = text.indexOf("\n");
	const header = JSON.parse(text.slice(0, newline)) as { type: string; cwd?: string };
	if (header.type !== "session") throw new Error(`the session's first line is a ${header.type}, not its header`);
	return JSON.stringify({ ...header, cwd }) + text.slice(newline);
}

async function main(): Promise<void> {
	let onRequest: ((request: ChatRequest) => void) | undefined;
	// Rounds take minutes each on a busy machine: the server must outlive the run (its default lifetime is 10 min).
	const server = await startScriptedServer(
		(request) => {
			onRequest?.(request);
			return { text: "ok" };
		},
		{ lifetimeMs: 4 * 3_600_000 },
	);
	const packages: Record<Variant, string[]> = {
		alone: [],
		package: [stagedPackageRoot()],
		...wrap(referencePackages()),
	};
	const sessionText = realSession(SESSION_FILE);
	const entries = sessionIndex().find((s) => s.file === SESSION_FILE)?.entries;

	const sandboxFor = (variant: Variant): Sandbox =>
		makeSandbox({
			server,
			contextWindow: WINDOW,
			settings: { packages: packages[variant] },
		});

	/** Start pi, answer get_state; returns the process and the time to ready. */
	const start = async (line: PiLine, sandbox: Sandbox, session: SessionKind): Promise<[PiRpc, number, number]> => {
		const args: string[] = [];
		if (session === "resumed") {
			// A fresh copy each start: a run may append to the file, and only the caches should carry over. Pi
			// refuses a session whose recorded working directory is missing, so the header names the sandbox's.
			const file = join(sandbox.root, "resumed.jsonl");
			writeFileSync(file, withCwd(sessionText, sandbox.cwd));
			args.push("--session", file);
		} else args.push("--no-session");
		const t0 = performance.now();
		const pi = startPiRpc({ line, sandbox, extensions: [], args, discover: true });
		pi.send({ type: "get_state" });
		const state = await pi.waitFor((e) => e.type === "response" && e.command === "get_state", 60_000);
		const took = performance.now() - t0;
		const cpu = cpuMs(pi.child.pid);
		if (state.success !== true) throw new Error(`get_state failed: ${JSON.stringify(state)}\n${pi.stderr}`);
		const count = (state.data as { messageCount?: number }).messageCount ?? 0;
		if (session === "resumed" && count < 100)
			throw new Error(`the resumed session shows ${count} messages; stderr: ${pi.stderr.slice(-2000)}`);
		return [pi, took, cpu];
	};

	const checkLoaded = async (pi: PiRpc, variant: Variant): Promise<void> => {
		const from = pi.events.length;
		pi.send({ type: "get_commands" });
		const reply = await pi.waitFor((e) => e.type === "response" && e.command === "get_commands", 30_000, from);
		const names = ((reply.data as { commands?: Array<{ name: string }> })?.commands ?? []).map((c) => c.name);
		for (const other of VARIANTS) {
			const command = COMMAND[other];
			if (command && names.includes(command) !== (other === variant))
				throw new Error(`${variant}: /${command} ${other === variant ? "missing" : "present"}: ${pi.stderr}`);
		}
	};

	/**
	 * Prompt → the request's arrival. A prompt whose request never reaches the server (a refused connection on a
	 * starved machine: the run ends with an error instead) is sent again, up to three times.
	 */
	const promptToRequest = async (pi: PiRpc, pauseMs: number): Promise<[number, number, number]> => {
		if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
		for (let attempt = 1; ; attempt++) {
			const seen = new Promise<[number, number, ChatRequest]>((resolve) => {
				onRequest = (request) => resolve([performance.now(), cpuMs(pi.child.pid), request]);
			});
			const from = pi.events.length;
			const cpu0 = cpuMs(pi.child.pid);
			const t0 = performance.now();
			pi.send({ type: "prompt", message: "say ok" });
			const ended = pi.waitFor((e) => e.type === "agent_end", 60_000, from);
			const first = await Promise.race([seen, ended.then(() => undefined)]);
			onRequest = undefined;
			await ended;
			if (first) return [first[0] - t0, first[1] - cpu0, fixedBytes(first[2])];
			if (attempt === 3) throw new Error(`three prompts ended without a request reaching the server: ${pi.stderr}`);
			console.log(`a prompt ended without reaching the server (attempt ${attempt}); sending it again`);
		}
	};

	const t = performance.now();
	const loadAtStart = loadavg()[0];
	for (let round = 0; round < ROUNDS; round++) {
		// A different order each round: no variant always follows the same one.
		const order: Variant[] = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]);
		if (round % 2 === 1) order.reverse();
		for (const line of LINES) {
			for (const session of ["empty", "resumed"] as SessionKind[]) {
				for (const variant of order) {
					const s = slot(line, variant, session);
					const sandbox = sandboxFor(variant);
					const [cold, coldTook, coldCpu] = await start(line, sandbox, session);
					s.cold.push(coldTook);
					s.coldCpu.push(coldCpu);
					if (session === "resumed") {
						const [latency, cpu] = await promptToRequest(cold, 0);
						s.firstRequestNow.push(latency);
						s.firstRequestNowCpu.push(cpu);
					}
					await checkLoaded(cold, variant);
					await cold.stop();
					const [warm, warmTook, warmCpu] = await start(line, sandbox, session);
					s.warm.push(warmTook);
					s.warmCpu.push(warmCpu);
					if (session === "resumed") {
						const [latency, cpu, bytes] = await promptToRequest(warm, IDLE_MS);
						s.firstRequest.push(latency);
						s.firstRequestCpu.push(cpu);
						s.fixedBytes.push(bytes);
					}
					await warm.stop();
				}
			}
		}
		console.log(`round ${round + 1}/${ROUNDS} done (${ms(performance.now() - t)})`);
	}
	await server.close();
	const took = performance.now() - t;
	const loadAtEnd = loadavg()[0];

	const signed = (x: number) => `${x >= 0 ? "+" : ""}${ms(x)}`;
	const others = VARIANTS.filter((v) => v !== "alone");
	console.log(
		`\nstart → ready (rpc get_state answered), medians of ${ROUNDS} rotating rounds; resumed = a real ${entries}-entry session; ` +
			"ratio = wall-clock / Pi alone's, CPU = the pi process's CPU time to ready / Pi alone's",
	);
	console.log(`| line | session | start | Pi alone | ${others.map((v) => `${v} | ratio | CPU ratio`).join(" | ")} |`);
	console.log(`|---|---|---|---:|${others.map(() => "---:|---:|---:").join("|")}|`);
	for (const line of LINES)
		for (const session of ["empty", "resumed"] as SessionKind[])
			for (const kind of ["cold", "warm"] as const) {
				const a = median(slot(line, "alone", session)[kind]);
				const ca = median(slot(line, "alone", session)[`${kind}Cpu`]);
				const cells = others.map((v) => {
					const p = median(slot(line, v, session)[kind]);
					const cp = median(slot(line, v, session)[`${kind}Cpu`]);
					return `${ms(p)} | ${(p / a).toFixed(2)}× | ${(cp / ca).toFixed(2)}×`;
				});
				console.log(`| ${line} | ${session} | ${kind} | ${ms(a)} (CPU ${ms(ca)}) | ${cells.join(" | ")} |`);
			}
	console.log(
		`\nwarm resumed session (${WINDOW.toLocaleString("en-US")}-token window): prompt → first model request, difference to Pi alone's (wall-clock, CPU of the pi process); first request's fixed bytes (system + tools) added`,
	);
	console.log(`| line | Pi alone | ${others.map((v) => `${v} | CPU | bytes added`).join(" | ")} |`);
	console.log(`|---|---:|${others.map(() => "---:|---:|---:").join("|")}|`);
	for (const line of LINES) {
		const a = slot(line, "alone", "resumed");
		const [la, ca, ba] = [median(a.firstRequest), median(a.firstRequestCpu), median(a.fixedBytes)];
		const cells = others.map((v) => {
			const p = slot(line, v, "resumed");
			const [lp, cp, bp] = [median(p.firstRequest), median(p.firstRequestCpu), median(p.fixedBytes)];
			return `${signed(lp - la)} | ${signed(cp - ca)} | +${kb(bp - ba)}`;
		});
		console.log(`| ${line} | ${ms(la)} (CPU ${ms(ca)}, ${kb(ba)}) | ${cells.join(" | ")} |`);
	}
	console.log(
		`\ncold resumed session, prompt at once after ready (idle-time work had no time): prompt → first model request, difference to Pi alone's (wall-clock, CPU)`,
	);
	console.log(`| line | Pi alone | ${others.map((v) => `${v} | CPU`).join(" | ")} |`);
	console.log(`|---|---:|${others.map(() => "---:|---:").join("|")}|`);
	for (const line of LINES) {
		const a = slot(line, "alone", "resumed");
		const [la, ca] = [median(a.firstRequestNow), median(a.firstRequestNowCpu)];
		const cells = others.map((v) => {
			const p = slot(line, v, "resumed");
			return `${signed(median(p.firstRequestNow) - la)} | ${signed(median(p.firstRequestNowCpu) - ca)}`;
		});
		console.log(`| ${line} | ${ms(la)} (CPU ${ms(ca)}) | ${cells.join(" | ")} |`);
	}
	console.log(pasteTable(took, loadAtStart, loadAtEnd));
}

/** The summary for README and docs/startup.md: one Markdown table, the run's conditions under it. */
function pasteTable(took: number, loadAtStart: number, loadAtEnd: number): string {
	const ratio = (line: PiLine, v: Variant, session: SessionKind, kind: "cold" | "warm") => {
		const a = slot(line, "alone", session);
		const p = slot(line, v, session);
		const cpu = median(p[`${kind}Cpu`]) / median(a[`${kind}Cpu`]);
		const wall = median(p[kind]) / median(a[kind]);
		return `${cpu.toFixed(2)}× (${wall.toFixed(2)}×)`;
	};
	const delta = (line: PiLine, v: Variant, field: "firstRequestCpu" | "firstRequestNowCpu") => {
		const d = median(slot(line, v, "resumed")[field]) - median(slot(line, "alone", "resumed")[field]);
		return `${d >= 0 ? "+" : "−"}${Math.abs(Math.round(d))} ms`;
	};
	const rows: string[] = [
		"| Pi line | measure | goal | this package | plain-JS reference | TS reference (imports Pi's SDK) |",
		"|---|---|---|---:|---:|---:|",
	];
	const refs = ["package", "plain-js", "ts-sdk"] as const;
	for (const line of LINES) {
		for (const kind of ["cold", "warm"] as const)
			for (const session of ["empty", "resumed"] as SessionKind[]) {
				const goal = kind === "cold" ? "≤ 1.2×" : "≤ 1.1×";
				const cells = refs.map((v) => ratio(line, v, session, kind));
				rows.push(
					`| ${line} | ${kind} start, ${session} session: CPU (wall) to ready | ${goal} | ${cells.join(" | ")} |`,
				);
			}
		rows.push(
			`| ${line} | prompt → first request, resumed, after ${IDLE_MS / 1000} s idle: CPU over Pi alone | ≤ +20 ms | ${refs.map((v) => delta(line, v, "firstRequestCpu")).join(" | ")} |`,
		);
		rows.push(
			`| ${line} | prompt → first request, resumed, at once after a cold start: CPU over Pi alone | — | ${refs.map((v) => delta(line, v, "firstRequestNowCpu")).join(" | ")} |`,
		);
	}
	const conditions =
		`Medians of ${ROUNDS} rotating rounds, ${WINDOW.toLocaleString("en-US")}-token window; ratios to Pi alone in the ` +
		`same run, CPU time of the pi process (wall-clock in brackets); the run took ${(took / 60_000).toFixed(1)} min, ` +
		`load average ${loadAtStart.toFixed(1)} at its start and ${loadAtEnd.toFixed(1)} at its end.`;
	return `\n--- ready to paste (README, docs/startup.md) ---\n${rows.join("\n")}\n\n${conditions}\n`;
}

/** Each reference package as a one-item package list. */
function wrap(refs: Record<"plain-js" | "ts-sdk", string>): Record<"plain-js" | "ts-sdk", string[]> {
	return { "plain-js": [refs["plain-js"]], "ts-sdk": [refs["ts-sdk"]] };
}

main().then(
	() => process.exit(0),
	(error) => {
		console.error(error);
		process.exit(1);
	},
);

/**
 * Start-up benchmark (`npm run bench -- startup`): the real `pi` CLI in rpc mode, on both Pi lines (0.73.1 on
 * Node, 1.x under Bun), from spawn to the answer to `get_state` (ready), with and without this package:
 * - cold: a fresh sandbox (empty TMPDIR and HOME, so jiti's and Bun's transpile caches are empty), as on a
 *   fresh install, a container, a CI job or after a reboot; warm: the same sandbox started again;
 * - on an empty session and on a real resumed session (test/fixtures/sessions, 1,019 entries);
 * - on the warm resumed start, prompt → first model request (arrival at the scripted server), and the first
 *   request's fixed bytes (system prompt + tool schemas).
 * The package is installed as a user installs it: the staged copy (published files and runtime dependencies,
 * outside the repository) listed in the sandbox's settings `packages`, with Pi discovering everything else as
 * usual. Variants alternate round by round; medians; ratios against Pi alone from the same run.
 *
 * STARTUP_ROUNDS (default 3) sets the rounds; STARTUP_LINES ("0.73,1.x") the Pi lines; STARTUP_WINDOW (default
 * 128000) the mock model's context window: the resumed session (Pi's last usage reading 177,657 tokens) is over
 * budget at 128k, so the first request trims it, and far within it at 1000000.
 */
import { readFileSync, writeFileSync } from "node:fs";
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

const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 3);
const LINES = (process.env.STARTUP_LINES ?? "0.73,1.x").split(",") as PiLine[];
const WINDOW = Number(process.env.STARTUP_WINDOW ?? 128_000);
const SESSION_FILE = "large-session.jsonl.gz";
const EXTENSION_COMMAND = "headroom";

type Variant = "alone" | "package";
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
	firstRequest: number[];
	/** CPU ms the pi process used from the prompt to the request's arrival. */
	firstRequestCpu: number[];
	fixedBytes: number[];
}

const samples = new Map<string, Samples>();
function slot(line: PiLine, variant: Variant, session: SessionKind): Samples {
	const key = `${line}|${variant}|${session}`;
	let s = samples.get(key);
	if (!s) {
		s = { cold: [], warm: [], coldCpu: [], warmCpu: [], firstRequest: [], firstRequestCpu: [], fixedBytes: [] };
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
	const server = await startScriptedServer((request) => {
		onRequest?.(request);
		return { text: "ok" };
	});
	const packageRoot = stagedPackageRoot();
	const sessionText = realSession(SESSION_FILE);
	const entries = sessionIndex().find((s) => s.file === SESSION_FILE)?.entries;

	const sandboxFor = (variant: Variant): Sandbox =>
		makeSandbox({
			server,
			contextWindow: WINDOW,
			settings: variant === "package" ? { packages: [packageRoot] } : {},
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
		if (names.includes(EXTENSION_COMMAND) !== (variant === "package"))
			throw new Error(
				`${variant}: /${EXTENSION_COMMAND} ${variant === "package" ? "missing" : "present"}: ${pi.stderr}`,
			);
	};

	const promptToRequest = async (pi: PiRpc): Promise<[number, number, number]> => {
		const seen = new Promise<[number, number, ChatRequest]>((resolve) => {
			onRequest = (request) => resolve([performance.now(), cpuMs(pi.child.pid), request]);
		});
		const from = pi.events.length;
		const cpu0 = cpuMs(pi.child.pid);
		const t0 = performance.now();
		pi.send({ type: "prompt", message: "say ok" });
		const [t1, cpu1, request] = await seen;
		onRequest = undefined;
		await pi.waitFor((e) => e.type === "agent_end", 60_000, from);
		return [t1 - t0, cpu1 - cpu0, fixedBytes(request)];
	};

	const t = performance.now();
	for (let round = 0; round < ROUNDS; round++) {
		const order: Variant[] = round % 2 === 0 ? ["alone", "package"] : ["package", "alone"];
		for (const line of LINES) {
			for (const session of ["empty", "resumed"] as SessionKind[]) {
				for (const variant of order) {
					const s = slot(line, variant, session);
					const sandbox = sandboxFor(variant);
					const [cold, coldTook, coldCpu] = await start(line, sandbox, session);
					s.cold.push(coldTook);
					s.coldCpu.push(coldCpu);
					await checkLoaded(cold, variant);
					await cold.stop();
					const [warm, warmTook, warmCpu] = await start(line, sandbox, session);
					s.warm.push(warmTook);
					s.warmCpu.push(warmCpu);
					if (session === "resumed") {
						const [latency, cpu, bytes] = await promptToRequest(warm);
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

	console.log(
		`\nstart → ready (rpc get_state answered), medians of ${ROUNDS} alternating rounds; resumed = a real ${entries}-entry session`,
	);
	console.log(
		"| line | session | start | Pi alone | with package | ratio | CPU alone | CPU with package | CPU ratio |",
	);
	console.log("|---|---|---|---:|---:|---:|---:|---:|---:|");
	for (const line of LINES)
		for (const session of ["empty", "resumed"] as SessionKind[])
			for (const kind of ["cold", "warm"] as const) {
				const a = median(slot(line, "alone", session)[kind]);
				const p = median(slot(line, "package", session)[kind]);
				const ca = median(slot(line, "alone", session)[`${kind}Cpu`]);
				const cp = median(slot(line, "package", session)[`${kind}Cpu`]);
				console.log(
					`| ${line} | ${session} | ${kind} | ${ms(a)} | ${ms(p)} | ${(p / a).toFixed(2)}× | ${ms(ca)} | ${ms(cp)} | ${(cp / ca).toFixed(2)}× |`,
				);
			}
	console.log(
		`\nwarm resumed session (${WINDOW.toLocaleString("en-US")}-token window): prompt → first model request; first request's fixed bytes (system + tools)`,
	);
	console.log(
		"| line | Pi alone | with package | difference | CPU alone | CPU with package | CPU difference | fixed bytes alone | with package | added |",
	);
	console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
	for (const line of LINES) {
		const a = slot(line, "alone", "resumed");
		const p = slot(line, "package", "resumed");
		const [la, lp] = [median(a.firstRequest), median(p.firstRequest)];
		const [ca, cp] = [median(a.firstRequestCpu), median(p.firstRequestCpu)];
		const [ba, bp] = [median(a.fixedBytes), median(p.fixedBytes)];
		const signed = (x: number) => `${x >= 0 ? "+" : ""}${ms(x)}`;
		console.log(
			`| ${line} | ${ms(la)} | ${ms(lp)} | ${signed(lp - la)} | ${ms(ca)} | ${ms(cp)} | ${signed(cp - ca)} | ${kb(ba)} | ${kb(bp)} | +${kb(bp - ba)} |`,
		);
	}
}

main().then(
	() => process.exit(0),
	(error) => {
		console.error(error);
		process.exit(1);
	},
);

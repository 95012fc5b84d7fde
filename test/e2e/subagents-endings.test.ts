/**
 * Every way Pi can end, on both Pi lines, with children in every moment at once (the real CLI; seeded).
 *
 * One Pi process per way of ending holds, in its second session B: a child still running (its first step
 * taken), a pipeline stage waiting on it, a child that finished while the parent was idle (delivered
 * automatically, answered), and a child that finished while the parent was in a long model call of the next
 * prompt (settled, not delivered: the ending's own shutdown starts its delivery, in flight when the process
 * goes). Its first session A, left by `/new`, has a child still running and one that finishes after the switch. Then the process ends: SIGTERM, SIGHUP, SIGINT, SIGKILL, an uncaught
 * error, the end of rpc input (rpc mode); `/quit`, Ctrl-D, the terminal closing (Pi's TUI under tmux); or the
 * end of a print run (one session only). Each session is then continued in a new process, whose parent waits
 * on every id: every child's result is in that parent's context exactly once — completed with its answer, or
 * interrupted, cancelled, failed or incomplete with its partial output, or a stage skipped naming its input — never
 * silence, never twice.
 *
 * The timings (children's delays, the moment of the ending) come from a seed: set SUBAGENTS_ENDINGS_SEED to
 * replay a failure; every failure message names the seed.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
	extensionPath,
	makeSandbox,
	PI_LINES,
	type PiLine,
	type PiRpc,
	runPiPrint,
	type Sandbox,
	startPiRpc,
} from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText, type ScriptedReply, type ScriptedServer } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { isChild } from "./subagents-support.ts";
import { STEP_MS, TmuxPi, tmuxBinary, uniqueSocket } from "./tui-support.ts";

const SEED = Number(process.env.SUBAGENTS_ENDINGS_SEED) || 1 + Math.floor(Math.random() * 1_000_000);
const EXT = [extensionPath("subagents")];

type Way =
	| "SIGTERM"
	| "SIGHUP"
	| "SIGINT"
	| "SIGKILL"
	| "uncaught error"
	| "end of rpc input"
	| "/quit"
	| "Ctrl-D"
	| "terminal closed"
	| "end of print run";
const RPC_WAYS: Way[] = ["SIGTERM", "SIGHUP", "SIGINT", "SIGKILL", "uncaught error", "end of rpc input"];
const TUI_WAYS: Way[] = ["/quit", "Ctrl-D", "terminal closed"];
const SHUTDOWN_WAYS: Way[] = ["SIGTERM", "SIGHUP", "end of rpc input", ...TUI_WAYS];

/** The children of each session, in spawn order (ids sa-1…), and what each does. */
type Kind = "running" | "finishes" | "stage";
const SESSION_A: Array<{ tag: string; kind: Kind }> = [
	{ tag: "away", kind: "running" },
	{ tag: "awayfin", kind: "finishes" },
];
/** The case alone: one child finishes during the parent's long model call, nothing else runs. */
const SESSION_S: Array<{ tag: string; kind: Kind }> = [{ tag: "solo", kind: "finishes" }];
const SESSION_B: Array<{ tag: string; kind: Kind; after?: string }> = [
	{ tag: "run", kind: "running" },
	{ tag: "fin", kind: "finishes" },
	{ tag: "stage", kind: "stage", after: "sa-1" },
	{ tag: "late", kind: "finishes" },
];

/** mulberry32: the same seed gives the same timings. */
function random(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

interface Timing {
	/** Answer delays of the children that finish, by tag, in ms. */
	delay: Record<string, number>;
	/** From the late child's answer to the ending, in ms. */
	endAfterMs: number;
}

function timingFor(seed: number, way: Way, line: PiLine): Timing {
	// One stream per cell, from the seed: a cell replays alone.
	const next = random(seed ^ hash(`${way}/${line}`));
	const ms = (lo: number, hi: number) => Math.round(lo + next() * (hi - lo));
	const fin = ms(600, 1500);
	return {
		delay: { awayfin: ms(2500, 4000), fin, late: fin + ms(2500, 3500), stage: 200, solo: ms(200, 1200) },
		endAfterMs: ms(1000, 3000),
	};
}

function hash(text: string): number {
	let h = 2166136261;
	for (const c of text) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
	return h >>> 0;
}

const tagOf = (req: ChatRequest) => /CHILD-TASK (\w+)/.exec(req.firstUser)?.[1] ?? "";
const textOf = (req: ChatRequest) => req.body.messages.map((m) => messageText(m)).join("\n");
const countOf = (text: string, needle: string) => text.split(needle).length - 1;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const answerOf = (tag: string) => `ANSWER-${tag} complete`;

/** Messages since the last real user prompt (tool calls made for it). */
function sinceLastPrompt(req: ChatRequest, prompt: string) {
	const at = req.body.messages.findLastIndex((m) => m.role === "user" && messageText(m).includes(prompt));
	return at < 0 ? [] : req.body.messages.slice(at + 1);
}

/**
 * The scripted model. Children: a running one takes one step then never answers; the others answer after
 * their delay. Parent: ALPHA and BETA spawn their session's children and answer, and answer an automatic
 * delivery; GAMMA (the next prompt) is a model call that never returns; PHASE-TWO (the continued session)
 * waits on every id, then ends.
 */
function script(timing: Timing, print: boolean) {
	return (req: ChatRequest): ScriptedReply => {
		if (isChild(req)) {
			const tag = tagOf(req);
			const kind = [...SESSION_A, ...SESSION_B, ...SESSION_S].find((c) => c.tag === tag)?.kind;
			if (kind === "running") {
				if (req.last?.role !== "tool")
					return { text: `STEP-ONE-${tag}`, toolCalls: [{ name: "ls", arguments: {} }], delayMs: 100 };
				return { hang: true };
			}
			return { text: answerOf(tag), delayMs: timing.delay[tag] ?? 100 };
		}
		for (const [prompt, children] of [
			["PHASE-TWO-A", SESSION_A],
			["PHASE-TWO-B", SESSION_B],
			["PHASE-TWO-S", SESSION_S],
		] as const) {
			if (!req.lastUser.includes(prompt) && !textOf(req).includes(prompt)) continue;
			if (!sinceLastPrompt(req, prompt).some((m) => (m.tool_calls ?? []).length > 0))
				return {
					toolCalls: [
						{ name: "subagent_wait", arguments: { ids: children.map((_, i) => `sa-${i + 1}`), timeout_s: 30 } },
					],
				};
			return { text: "phase two done" };
		}
		if (req.lastUser.includes("GAMMA")) return { hang: true };
		for (const [prompt, children] of [
			["ALPHA", SESSION_A],
			["BETA", SESSION_B],
			["SOLO", SESSION_S],
		] as const) {
			if (!textOf(req).includes(prompt)) continue;
			const since = sinceLastPrompt(req, prompt);
			if (since.length === 0)
				return {
					toolCalls: children.map((c) => ({
						name: "subagent_spawn",
						arguments: {
							prompt: `CHILD-TASK ${c.tag}`,
							name: c.tag,
							...("after" in c && c.after ? { after: [c.after] } : {}),
						},
					})),
				};
			// Right after the spawns: the answer (slow in a print run, so children finish while the parent is busy).
			if (req.last?.role === "tool" && since.length === children.length + 1 && prompt === "SOLO") return { hang: true };
			if (req.last?.role === "tool" && since.length === children.length + 1)
				return { text: `${prompt} ok`, delayMs: print ? (timing.delay.late ?? 0) + 800 : 0 };
			return { text: `${prompt} thanks` };
		}
		return { text: `reply to: ${req.lastUser.slice(0, 40)}` };
	};
}

/** The parent session files of the sandbox, oldest first (their names start with the creation time). */
function parentSessions(agentDir: string): string[] {
	const root = join(agentDir, "sessions");
	if (!existsSync(root)) return [];
	return readdirSync(root)
		.flatMap((dir) =>
			readdirSync(join(root, dir))
				.filter((f) => f.endsWith(".jsonl"))
				.map((f) => ({ f, path: join(root, dir, f) })),
		)
		.sort((a, b) => a.f.localeCompare(b.f))
		.map((x) => x.path);
}

async function until(what: string, test: () => boolean, timeoutMs = STEP_MS): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!test()) {
		if (Date.now() > deadline) throw new Error(`seed ${SEED}: timed out waiting for ${what}`);
		await sleep(50);
	}
}

/** A request of the parent (or of a child with `tag`) whose reply has been sent. */
const childAnswered = (server: ScriptedServer, tag: string) =>
	server.requests.some((r) => isChild(r) && tagOf(r) === tag && r.finishedAt !== undefined && r.last?.role !== "tool");
const parentAsked = (server: ScriptedServer, test: (r: ChatRequest) => boolean) =>
	server.requests.some((r) => !isChild(r) && test(r));

/** One interactive or rpc Pi under test: the moves the scenario makes, whatever drives it. */
interface Driver {
	prompt(text: string): Promise<void>;
	newSession(): Promise<void>;
	end(): Promise<void>;
	dispose(): void;
}

function rpcDriver(line: PiLine, sandbox: Sandbox, way: Way): Driver {
	const boom = join(sandbox.root, "boom-now");
	const extensions = [...EXT];
	if (way === "uncaught error") {
		// An extension of the user's that throws from a timer once the test says so: an uncaught error in Pi.
		const file = join(sandbox.root, "boom.ts");
		writeFileSync(
			file,
			[
				'import { existsSync } from "node:fs";',
				"export default function () {",
				`\tconst timer = setInterval(() => { if (existsSync(${JSON.stringify(boom)})) { clearInterval(timer); throw new Error("BOOM an uncaught error"); } }, 50);`,
				"\ttimer.unref?.();",
				"}",
			].join("\n"),
		);
		extensions.push(file);
	}
	const rpc: PiRpc = startPiRpc({ line, sandbox, extensions });
	const exited = new Promise<void>((r) => rpc.child.once("close", () => r()));
	const command = async (body: Record<string, unknown>) => {
		// A prompt right after a run's last reply may find the agent still winding down: asked again shortly.
		for (let attempt = 0; ; attempt++) {
			const from = rpc.events.length;
			const id = rpc.send(body);
			const reply = await rpc.waitFor((e) => e.type === "response" && e.id === id, STEP_MS, from);
			if (reply.success === true) return;
			if (attempt > 50 || !String(reply.error).includes("already processing"))
				throw new Error(`seed ${SEED}: ${JSON.stringify(reply)}`);
			await sleep(100);
		}
	};
	return {
		prompt: async (text) => {
			await command({ type: "prompt", message: text });
		},
		newSession: () => command({ type: "new_session" }),
		end: async () => {
			if (way === "uncaught error") writeFileSync(boom, "");
			else if (way === "end of rpc input") rpc.child.stdin?.end();
			else rpc.child.kill(way as NodeJS.Signals);
			await Promise.race([exited, sleep(20_000)]);
			if (rpc.child.exitCode === null && rpc.child.signalCode === null) {
				rpc.child.kill("SIGKILL");
				throw new Error(`seed ${SEED}: pi did not end within 20 s after ${way}\n${rpc.stderr.slice(-2000)}`);
			}
		},
		dispose: () => {
			if (rpc.child.exitCode === null && rpc.child.signalCode === null) rpc.child.kill("SIGKILL");
		},
	};
}

function tuiDriver(line: PiLine, sandbox: Sandbox, way: Way): Driver {
	const socket = uniqueSocket(`end${line.replace(".", "")}`);
	const tui = TmuxPi.start({ line, sandbox, extensions: EXT, socket });
	/** Pi's process: the child of the pane's shell (to wait for its exit once its terminal is gone). */
	const piPid = () => {
		const shell = execFileSync(tmuxBinary(), ["-L", socket, "display-message", "-p", "-t", "pi", "#{pane_pid}"], {
			encoding: "utf8",
		}).trim();
		return Number(execFileSync("pgrep", ["-P", shell], { encoding: "utf8" }).trim().split("\n")[0]);
	};
	const alive = (pid: number) => {
		try {
			process.kill(pid, 0);
			return true;
		} catch {
			return false;
		}
	};
	let ready = false;
	let gone = false;
	return {
		prompt: async (text) => {
			if (!ready) await tui.waitFor("the editor", (s) => s.includes("mock-model"), { timeoutMs: STEP_MS });
			ready = true;
			await tui.submit(text);
		},
		newSession: async () => {
			await tui.submit("/new");
			await sleep(1500); // the switch runs in the TUI; the next prompt goes to the new session
		},
		end: async () => {
			if (way === "/quit") await tui.submit("/quit");
			else if (way === "Ctrl-D") tui.press("C-d");
			else {
				const pid = piPid();
				tui.kill(); // the terminal goes away: pi gets SIGHUP from its closed terminal
				gone = true;
				await until("pi to exit after its terminal closed", () => !alive(pid), 20_000);
			}
			if (way !== "terminal closed")
				await tui.waitFor("pi to exit", (s) => s.includes("[pi exited"), { timeoutMs: 20_000 });
		},
		dispose: () => {
			if (!gone) tui.kill();
		},
	};
}

/** Each child of `children` accounted for exactly once in `context`, in an allowed outcome. */
function expectAccounted(
	context: string,
	children: ReadonlyArray<{ tag: string; kind: Kind }>,
	why: string,
	childFiles: string[],
): string[] {
	const outcomes: string[] = [];
	for (const [i, c] of children.entries()) {
		const id = `sa-${i + 1}`;
		const headers = [...context.matchAll(new RegExp(`── ${id} "${c.tag}" (\\w+)`, "g"))].map((m) => m[1]);
		// A pipeline stage's input is relayed in one line (its full text stored) instead of in full.
		const relayed = [
			...context.matchAll(new RegExp(`${id} \\(${c.tag}\\) (\\w+), \\d+ bytes, full text (\\S+);`, "g")),
		].map((m) => ({ state: m[1], path: m[2] }));
		const at = `${why}, ${id} "${c.tag}" (${c.kind})`;
		expect(headers.length + relayed.length, `${at}: reported ${headers.length + relayed.length} times`).toBe(1);
		const state = headers[0] ?? relayed[0].state;
		outcomes.push(`${id}:${state}`);
		if (c.kind === "finishes") {
			// It finished before the ending: its answer is on disk and reaches the parent, once.
			expect(state, at).toBe("completed");
			expect(countOf(context, answerOf(c.tag)), at).toBe(1);
		} else if (c.kind === "running") {
			expect(["interrupted", "cancelled", "failed", "incomplete"], `${at}: ${state}`).toContain(state);
			// Its partial output: the step its own session file holds.
			const file = childFiles.find((f) => readFileSync(f, "utf8").includes(`CHILD-TASK ${c.tag}`));
			const holds = file !== undefined && readFileSync(file, "utf8").includes(`STEP-ONE-${c.tag}`);
			const shown = relayed[0] ? readFileSync(relayed[0].path, "utf8") : context;
			if (holds) expect(shown, `${at}: its partial output`).toContain(`STEP-ONE-${c.tag}`);
		} else {
			// A stage whose input did not complete: skipped (naming it), or stopped before it started.
			expect(["skipped", "interrupted", "cancelled"], `${at}: ${state}`).toContain(state);
		}
	}
	return outcomes;
}

function childSessionFiles(agentDir: string): string[] {
	const root = join(agentDir, "sessions");
	if (!existsSync(root)) return [];
	return readdirSync(root).flatMap((dir) => {
		const sub = join(root, dir, "subagents");
		return existsSync(sub) ? readdirSync(sub).map((f) => join(sub, f)) : [];
	});
}

describe.each(PI_LINES)("every way Pi ends, children in every moment, on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it.each([...RPC_WAYS, ...TUI_WAYS])("%s: after the session is continued, each result exactly once", async (way) => {
		const timing = timingFor(SEED, way, line);
		const why = `seed ${SEED} (SUBAGENTS_ENDINGS_SEED=${SEED} replays it), ${way} on ${line}`;
		const server = await startServer(script(timing, false));
		const sandbox = makeSandbox({ server });
		const driver = TUI_WAYS.includes(way) ? tuiDriver(line, sandbox, way) : rpcDriver(line, sandbox, way);
		try {
			// Session A: one child keeps running, one finishes after the switch to B.
			await driver.prompt("ALPHA spawn two");
			await until("session A's answer", () =>
				parentAsked(server, (r) => r.last?.role === "tool" && textOf(r).includes("ALPHA")),
			);
			await until("session A's children to start", () => server.requests.filter((r) => isChild(r)).length >= 2);
			await sleep(300);
			await driver.newSession();
			// Session B: every moment at once.
			await driver.prompt("BETA spawn four");
			await until("the automatic delivery answered", () =>
				parentAsked(
					server,
					(r) => r.finishedAt !== undefined && textOf(r).includes("BETA") && textOf(r).includes(answerOf("fin")),
				),
			);
			// The next prompt: a long model call, during which the late child finishes.
			await sleep(300);
			await driver.prompt("GAMMA think long");
			await until("the late child's answer", () => childAnswered(server, "late"));
			await until("session A's late child's answer", () => childAnswered(server, "awayfin"));
			await sleep(timing.endAfterMs);
			await driver.end();
		} finally {
			driver.dispose();
		}
		const [fileA, fileB] = parentSessions(sandbox.agentDir);
		expect(fileB, `${why}: two parent sessions`).toBeDefined();
		const files = childSessionFiles(sandbox.agentDir);
		for (const [file, prompt, children] of [
			[fileB, "PHASE-TWO-B", SESSION_B],
			[fileA, "PHASE-TWO-A", SESSION_A],
		] as const) {
			const again = await runPiPrint({ line, sandbox, extensions: EXT, prompt, args: ["--session", file] });
			expect(again.exitCode, `${why}: ${again.stderr.slice(-1500)}`).toBe(0);
			const last = server.requests.filter((r) => !isChild(r) && textOf(r).includes(prompt)).at(-1);
			expect(last, `${why}: the continued session's request`).toBeDefined();
			expectAccounted(textOf(last!), children, `${why}, ${prompt}`, files);
		}
	});

	// With children running, the shutdown waits for them to stop, which gives a deferred delivery time to land;
	// the case has nothing else running, so the process goes at once. Only the ways that run Pi's
	// shutdown (a process that dies at once starts no delivery).
	it.each(SHUTDOWN_WAYS)(
		"%s during a long model call, one child finished, nothing else running: its result exactly once",
		async (way) => {
			const timing = timingFor(SEED, way, line);
			const why = `seed ${SEED} (SUBAGENTS_ENDINGS_SEED=${SEED} replays it), ${way} on ${line}, one finished child`;
			const server = await startServer(script(timing, false));
			const sandbox = makeSandbox({ server });
			const driver = TUI_WAYS.includes(way) ? tuiDriver(line, sandbox, way) : rpcDriver(line, sandbox, way);
			try {
				await driver.prompt("SOLO spawn one");
				await until("the child's answer", () => childAnswered(server, "solo"));
				await sleep(timing.endAfterMs);
				await driver.end();
			} finally {
				driver.dispose();
			}
			const [file] = parentSessions(sandbox.agentDir);
			const again = await runPiPrint({
				line,
				sandbox,
				extensions: EXT,
				prompt: "PHASE-TWO-S",
				args: ["--session", file],
			});
			expect(again.exitCode, `${why}: ${again.stderr.slice(-1500)}`).toBe(0);
			const last = server.requests.filter((r) => !isChild(r) && textOf(r).includes("PHASE-TWO-S")).at(-1);
			expect(last, `${why}: the continued session's request`).toBeDefined();
			expectAccounted(textOf(last!), SESSION_S, why, []);
		},
	);

	it("end of print run: after `pi -c`, each result exactly once", async () => {
		const way: Way = "end of print run";
		const timing = timingFor(SEED, way, line);
		const why = `seed ${SEED} (SUBAGENTS_ENDINGS_SEED=${SEED} replays it), ${way} on ${line}`;
		const server = await startServer(script(timing, true));
		// Pi 1.x waits for running children before a print run ends: the watchdog cuts the one that never answers.
		const sandbox = makeSandbox({ server, headroomConfig: { subagents: { maxRunSeconds: 8 } } });
		const first = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "BETA spawn four", timeoutMs: 60_000 });
		expect(first.exitCode, `${why}: ${first.stderr.slice(-1500)}`).toBe(0);
		const again = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "PHASE-TWO-B", args: ["-c"] });
		expect(again.exitCode, `${why}: ${again.stderr.slice(-1500)}`).toBe(0);
		const last = server.requests.filter((r) => !isChild(r) && textOf(r).includes("PHASE-TWO-B")).at(-1);
		expect(last, `${why}: the continued session's request`).toBeDefined();
		expectAccounted(textOf(last!), SESSION_B, why, childSessionFiles(sandbox.agentDir));
	});
});

/**
 * Drives Pi's interactive terminal UI under tmux for end-to-end tests: a private tmux server per
 * test (its own socket), keys typed with send-keys, the screen read with capture-pane, and a
 * scripted model that plays a parent spawning children of different speeds.
 */
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach } from "vitest";
import {
	extensionPath,
	makeSandbox,
	PI_LINES,
	type PiLine,
	REPO_ROOT,
	type Sandbox,
	type SandboxOptions,
} from "../fixtures/pi-runner.ts";
import type { ChatRequest, Script, ScriptedReply, ScriptedServer } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { isChild, numberedAnswer } from "./subagents-support.ts";

/** Upper bound for any one screen state to appear, in milliseconds (generous: two shared cores, other tests). */
export const STEP_MS = 45_000;
/** Terminal size of the test session, in columns and rows. */
export const TUI_COLUMNS = 160;
export const TUI_ROWS = 50;
/** Lines of tmux history kept, so expanded output scrolled off the screen can still be read. */
const HISTORY_LINES = 20_000;
/** Pause between typed text and the key that submits it, in milliseconds. */
const KEY_PAUSE_MS = 300;
/** Polling period while waiting for screen text, in milliseconds. */
const POLL_MS = 200;

/** The tmux binary, or a loud error: the TUI tests must never pass silently without it. */
export function tmuxBinary(): string {
	try {
		return execFileSync("sh", ["-c", "command -v tmux"], { encoding: "utf8" }).trim() || missingTmux();
	} catch {
		return missingTmux();
	}
}

function missingTmux(): never {
	throw new Error(
		"tmux is not on PATH: the interactive TUI tests need it and fail without it. Install tmux to run them.",
	);
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One interactive pi inside a detached tmux session on a private server. */
export class TmuxPi {
	private readonly tmux = tmuxBinary();
	/** The server's socket file, removed on kill (tmux leaves it behind). */
	private socketPath = "";
	private constructor(
		/** Socket name of the private tmux server (`tmux -L <socket>`). */
		readonly socket: string,
		private readonly env: NodeJS.ProcessEnv,
	) {}

	/** Start `line`'s interactive CLI with `extensions` in `sandbox`; the pane stays open after pi exits. */
	static start(opts: {
		line: PiLine;
		sandbox: Sandbox;
		extensions: string[];
		socket: string;
		/** Terminal width in columns (default TUI_COLUMNS). */
		columns?: number;
		/** More CLI arguments (e.g. `-c` to continue the last session). */
		args?: string[];
	}): TmuxPi {
		const info = PI_LINES.find((l) => l.line === opts.line);
		if (!info) throw new Error(`unknown Pi line ${opts.line}`);
		const argv = [info.command, ...info.prefix, "--offline", "--provider", "mock", "--model", "mock-model"];
		argv.push("--no-extensions", ...opts.extensions.flatMap((e) => ["-e", e]), ...(opts.args ?? []));
		// Keep the pane after pi exits so a crash stays on screen for the assertion message.
		const shell = `${argv.map(shellQuote).join(" ")}; echo "[pi exited $?]"; sleep 600`;
		const env = { ...opts.sandbox.env, TERM: "xterm-256color", COLORTERM: "truecolor" };
		const pi = new TmuxPi(opts.socket, env);
		const size = ["-x", String(opts.columns ?? TUI_COLUMNS), "-y", String(TUI_ROWS)];
		// An empty config of our own: neither the user's nor the system's tmux settings change what we see.
		const config = join(opts.sandbox.root, "tmux.conf");
		writeFileSync(config, "");
		try {
			// Options first, in the same invocation, so the pane is created with them (history-limit applies to new panes).
			const options = [
				["history-limit", String(HISTORY_LINES)],
				["extended-keys", "on"],
			];
			const setup = options.flatMap(([name, value]) => ["set-option", "-g", name, value, ";"]);
			pi.run(["-f", config, "start-server", ";", ...setup, "new-session", "-d", "-s", "pi", ...size]);
			pi.socketPath = pi.run(["display-message", "-p", "#{socket_path}"]).trim();
			pi.run(["respawn-pane", "-k", "-t", "pi", "-c", opts.sandbox.cwd, shell]);
		} catch (error) {
			pi.kill(); // never leave a server behind when the session could not be set up
			throw error;
		}
		return pi;
	}

	private run(args: string[]): string {
		return execFileSync(this.tmux, ["-L", this.socket, ...args], { encoding: "utf8", env: this.env, cwd: REPO_ROOT });
	}

	/** Type literal text (no Enter). */
	type(text: string): void {
		this.run(["send-keys", "-t", "pi", "-l", text]);
	}

	/**
	 * Type a line and submit it. The Enter goes separately after a pause: text and Enter arriving in
	 * one read look like a paste to the editor, which then inserts a newline instead of submitting.
	 */
	async submit(text: string): Promise<void> {
		this.type(text);
		await sleep(KEY_PAUSE_MS);
		this.press("Enter");
	}

	/** Press keys by tmux name, e.g. "Enter", "C-o". */
	press(...keys: string[]): void {
		this.run(["send-keys", "-t", "pi", ...keys]);
	}

	/** The visible screen, one string per row (trailing blanks trimmed). */
	screen(): string {
		return this.run(["capture-pane", "-p", "-t", "pi"]);
	}

	/** The visible screen with its escape sequences (`capture-pane -e`): colours and attributes as tmux keeps them. */
	screenWithEscapes(): string {
		return this.run(["capture-pane", "-p", "-e", "-t", "pi"]);
	}

	/** The screen plus the history above it (what scrolled off). */
	scrollback(): string {
		const text = this.run(["capture-pane", "-p", "-J", "-S", `-${HISTORY_LINES}`, "-t", "pi"]);
		return text.replace(/[ \t]+$/gm, ""); // -J keeps the trailing blanks of joined rows
	}

	/** Poll until `test` holds for the visible screen (or `whole` screen+history); returns that capture. */
	async waitFor(
		what: string,
		test: (text: string) => boolean,
		opts: { timeoutMs?: number; whole?: boolean } = {},
	): Promise<string> {
		const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
		let last = "";
		while (Date.now() < deadline) {
			last = opts.whole ? this.scrollback() : this.screen();
			if (test(last)) return last;
			if (last.includes("[pi exited")) break;
			await sleep(POLL_MS);
		}
		throw new Error(`timed out waiting for ${what}; last screen:\n${opts.whole ? this.screen() : last}`);
	}

	/** Kill the private tmux server (and with it pi) and remove its socket file. Never throws. */
	kill(): void {
		try {
			this.run(["kill-server"]);
		} catch {
			// already gone
		}
		if (this.socketPath.endsWith(`/${this.socket}`)) rmSync(this.socketPath, { force: true });
	}
}

/**
 * With HEADROOM_TUI_CAPTURES=<folder>, keep a screen as `<folder>/<name>.txt` (the README's screenshots
 * come from these); without it, nothing is written.
 */
export function keepCapture(name: string, screen: string): void {
	const folder = process.env.HEADROOM_TUI_CAPTURES;
	if (folder) writeFileSync(join(folder, `${name}.txt`), screen);
}

/** A unique tmux socket name per test (pid + counter), so parallel workers never share a server. */
let sockets = 0;
export function uniqueSocket(tag: string): string {
	return `headroom-tui-${tag}-${process.pid}-${++sockets}`;
}

/** The extensions a user of this package would have loaded in the TUI. */
export function tuiExtensions(): string[] {
	return ["subagents", "tool-artifacts", "headroom"].map(extensionPath);
}

/** One TUI test's start: the scripted model, the sandbox around it and Pi's interactive CLI under tmux. */
export interface TuiStartOptions {
	/** The scripted model's replies. */
	script: Script;
	/** Sandbox options besides the server (headroom.json, settings). */
	sandbox?: Omit<SandboxOptions, "server">;
	/** Extension paths (default: tuiExtensions()). */
	extensions?: string[];
	/** Tag in the private tmux server's socket name. */
	tag: string;
	/** What the first screen shows before the test types (default: the editor, with the footer's model). */
	ready?: { what: string; test: (screen: string) => boolean };
}

/** A started TUI test: its server (requests), its sandbox and the pi in tmux. */
export interface TuiRun {
	server: ScriptedServer;
	sandbox: Sandbox;
	tui: TmuxPi;
}

/**
 * The set-up every TUI test of one Pi line shares, for one describe block: `start` brings up the scripted
 * server, a sandbox and pi under tmux and waits for its first screen; `restart` starts a new pi process on
 * the same sandbox (e.g. `-c`) after stopping the running one. After each test the pi (and its private tmux
 * server) is killed and the model server closed, passed or failed.
 */
export function useTuiRuns(line: PiLine) {
	// Registered first, so it runs last (vitest runs afterEach hooks in reverse): pi goes before its model server.
	const startServer = useScriptedServers();
	let pi: TmuxPi | undefined;
	let last: { sandbox: Sandbox; extensions: string[]; socket: string } | undefined;
	afterEach(() => {
		pi?.kill();
		pi = undefined;
		last = undefined;
	});
	return {
		async start(opts: TuiStartOptions): Promise<TuiRun> {
			const server = await startServer(opts.script);
			const sandbox = makeSandbox({ server, ...opts.sandbox });
			const extensions = opts.extensions ?? tuiExtensions();
			const socket = uniqueSocket(`${opts.tag}${line.replace(".", "")}`);
			last = { sandbox, extensions, socket };
			pi = TmuxPi.start({ line, sandbox, extensions, socket });
			const ready = opts.ready ?? { what: "the editor", test: (s: string) => s.includes("mock-model") };
			await pi.waitFor(ready.what, ready.test, { timeoutMs: STEP_MS });
			return { server, sandbox, tui: pi };
		},
		/** Kill the running pi and start another on the same sandbox and extensions with `args`. */
		restart(args: string[]): TmuxPi {
			if (!last) throw new Error("restart before start");
			pi?.kill();
			pi = TmuxPi.start({ line, ...last, socket: `${last.socket}-${args.join("").replace(/[^a-z]/g, "")}`, args });
			return pi;
		},
	};
}

// ---- The scripted conversation -------------------------------------------------------------

/** Typed prompts that select the parent's script. */
export const PROMPT_SPAWN = "TUI-SPAWN spawn three helpers";
export const PROMPT_BASH = "TUI-BASH count to fifty thousand";
/** The long child's answer: BEGIN, 420 numbered lines, END (about 37 KB); its tail is past any 16 KiB view's head. */
export const LONG_ANSWER = numberedAnswer("L", 420, 37_000);
export const SHORT_ANSWER = "short answer: 42";
export const SLOW_ANSWER = "slow answer: the slow child is done";
/** Parent texts that mark the end of each phase on screen. */
export const PARENT_AFTER_WAIT = "PARENT-SAW-WAIT the others keep running";
export const PARENT_AFTER_DELIVERY = "PARENT-GOT-DELIVERY thanks";
export const PARENT_AFTER_BASH = "PARENT-SAW-BASH stub received";

/** Children: name → answer. */
const CHILDREN: Record<string, string> = {
	"long-report": LONG_ANSWER,
	"slow-count": SLOW_ANSWER,
	"quick-note": SHORT_ANSWER,
};

/** How long the model takes before answering each slow child, in milliseconds. */
export interface TuiPacing {
	/** The long child: while it runs the third child waits in the queue (maxConcurrent 2). */
	longMs: number;
	/** The slow child: still running after the parent's run ended, so its result arrives by automatic delivery. */
	slowMs: number;
}

/** The messages after the last user message (this run's tool calls and results). */
function sinceLastUser(req: ChatRequest) {
	const messages = req.body.messages;
	let start = 0;
	for (let i = messages.length - 1; i >= 0; i--) {
		if (messages[i].role === "user") {
			start = i + 1;
			break;
		}
	}
	return messages.slice(start);
}

/**
 * The scripted model. Parent on PROMPT_SPAWN: spawn the three children (with maxConcurrent 2 the
 * third queues), wait for the long one, then end the run while the slow one keeps going; its
 * result and the queued one's arrive by automatic delivery. On PROMPT_BASH: one big bash output.
 */
export function tuiScript(pacing: TuiPacing): (req: ChatRequest) => ScriptedReply {
	return (req) => {
		if (isChild(req)) {
			const name = /TUI-CHILD (\S+)/.exec(req.firstUser)?.[1] ?? "";
			const answer = CHILDREN[name];
			if (answer === undefined) return { text: `unknown child ${name}` };
			const delayMs = name === "slow-count" ? pacing.slowMs : name === "long-report" ? pacing.longMs : undefined;
			return { text: answer, delayMs };
		}
		const run = sinceLastUser(req);
		const called = run.flatMap((m) => (m.tool_calls ?? []).map((c) => c.function.name));
		if (req.lastUser.includes("TUI-BASH")) {
			if (called.length === 0) return { toolCalls: [{ name: "bash", arguments: { command: "seq 1 50000" } }] };
			return { text: PARENT_AFTER_BASH };
		}
		if (req.lastUser.includes("TUI-SPAWN")) {
			if (called.length === 0) {
				return {
					toolCalls: Object.keys(CHILDREN).map((name) => ({
						name: "subagent_spawn",
						arguments: { prompt: `TUI-CHILD ${name}`, name },
					})),
				};
			}
			if (!called.includes("subagent_wait")) {
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			}
			return { text: PARENT_AFTER_WAIT };
		}
		if (req.lastUser.includes("delivered automatically")) return { text: PARENT_AFTER_DELIVERY };
		return { text: "nothing scripted for this prompt" };
	};
}

/** headroom.json for the TUI runs: two children at once (so the third queues), no cheap-model summary. */
export const TUI_HEADROOM_CONFIG = {
	subagents: { maxConcurrent: 2 },
	toolArtifacts: { summary: { enabled: false } },
};

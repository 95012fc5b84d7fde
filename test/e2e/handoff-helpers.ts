/**
 * Shared script pieces of the handoff e2e tests and benchmark: recognise the three handoff calls and
 * Pi's default summary call by their system prompts, and play a scripted agent that runs bash twice
 * (the second output ends in an error line) before answering. Also the runs' set-up: the scripted server and
 * pi in rpc mode with the handoff extension (HandoffRuns), and the session file's entries.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { handoffStep } from "../fixtures/handoff-steps.ts";
import {
	extensionPath,
	listFiles,
	makeSandbox,
	type PiLine,
	type PiRpc,
	type Sandbox,
	type SandboxOptions,
	startPiRpc,
} from "../fixtures/pi-runner.ts";
import {
	type ChatRequest,
	type Script,
	type ScriptedReply,
	type ScriptedServer,
	startScriptedServer,
} from "../fixtures/scripted-server.ts";

export type CallKind = "summary" | "questions" | "answers" | "pi-default" | "agent";

/** Pi's own summarization system prompt starts like this on both lines. */
export const PI_DEFAULT_SUMMARY_MARK = "You are a context summarization assistant";

export function kindOf(req: ChatRequest): CallKind {
	const step = handoffStep(req.system);
	if (step) return step;
	if (req.system.startsWith(PI_DEFAULT_SUMMARY_MARK)) return "pi-default";
	return "agent";
}

export const SUMMARY_REPLY = "SUMMARY-7f3: ran seq twice; the second run ended with FATAL-TAIL-ERROR.";
export const QUESTIONS_REPLY = "1. Q-ALPHA?\n2. Q-BETA?\n3. Q-GAMMA?\n4. Q-DELTA?\n5. Q-EPSILON?";
export const ANSWERS_REPLY = "ANSWERS-9c1: 1. alpha 2. beta 3. gamma 4. delta 5. epsilon";
export const PI_DEFAULT_REPLY = "PI-DEFAULT-SUMMARY-42";
/** The error line at the very end of the second bash output (past Pi's 2,000-character cut). */
export const TAIL_MARK = "FATAL-TAIL-ERROR";

/** A bash command whose long output ends with `mark`. */
export function longOutputCommand(mark: string): string {
	return `seq 1 1500; echo ${mark}`;
}

/** Reply of the n-th agent request (0-based) of the whole test. */
export type AgentPlan = (n: number, req: ChatRequest) => ScriptedReply;

/** A script answering handoff calls with fixed replies and the rest with `agent`. */
export function handoffScript(
	agent: AgentPlan,
	overrides: Partial<Record<Exclude<CallKind, "agent">, ScriptedReply>> = {},
) {
	let agentCalls = 0;
	return (req: ChatRequest): ScriptedReply => {
		const kind = kindOf(req);
		if (kind === "agent") return agent(agentCalls++, req);
		const fixed: Record<Exclude<CallKind, "agent">, ScriptedReply> = {
			summary: { text: SUMMARY_REPLY, promptTokens: 900, completionTokens: 40 },
			questions: { text: QUESTIONS_REPLY, promptTokens: 300, completionTokens: 30 },
			answers: { text: ANSWERS_REPLY, promptTokens: 1000, completionTokens: 35 },
			"pi-default": { text: PI_DEFAULT_REPLY, promptTokens: 800, completionTokens: 20 },
		};
		return overrides[kind] ?? fixed[kind];
	};
}

/** Trajectory files written under the agent dir (relative paths). */
export function trajectoryFiles(agentDir: string): string[] {
	return listFiles(agentDir)
		.map((f) => f.path)
		.filter((p) => /trajectory\.summarization-\d+-(summary|questions|answers)\.json$/.test(p))
		.sort();
}

export function abs(agentDir: string, rel: string): string {
	return join(agentDir, rel);
}

/** Text of every message of a request, in order, with its role. */
export function transcriptOf(req: ChatRequest): Array<{ role: string; text: string }> {
	return req.body.messages.map((m) => ({
		role: m.role,
		text:
			typeof m.content === "string"
				? m.content
				: Array.isArray(m.content)
					? m.content.map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : "")).join("")
					: "",
	}));
}

/** The session file (JSON lines) under the agent dir, as an absolute path. */
export function sessionFileOf(agentDir: string): string {
	const file = listFiles(agentDir).find((f) => f.path.endsWith(".jsonl") && f.path.includes("sessions/"));
	if (!file) throw new Error(`no session file under ${agentDir}`);
	return abs(agentDir, file.path);
}

/** A session file's entries, in order (each line parsed). */
export function sessionEntries(file: string) {
	return readFileSync(file, "utf8")
		.split("\n")
		.filter(Boolean)
		.map((l) => JSON.parse(l));
}

/**
 * One handoff test's scripted model and pi (rpc mode, the handoff extension) on one Pi line. `start` brings both
 * up; `stop` (call it in afterEach) ends pi and closes the server, passed or failed.
 */
export class HandoffRuns {
	private server?: ScriptedServer;
	private rpc?: PiRpc;
	constructor(private readonly line: PiLine) {}

	async start(
		script: Script,
		sandbox: Omit<SandboxOptions, "server">,
		args: string[] = [],
	): Promise<{ server: ScriptedServer; sandbox: Sandbox; rpc: PiRpc }> {
		const server = await startScriptedServer(script);
		this.server = server;
		const made = makeSandbox({ server, ...sandbox });
		const rpc = startPiRpc({ line: this.line, sandbox: made, extensions: [extensionPath("handoff")], args });
		this.rpc = rpc;
		return { server, sandbox: made, rpc };
	}

	async stop(): Promise<void> {
		await this.rpc?.stop();
		this.rpc = undefined;
		await this.server?.close();
		this.server = undefined;
	}
}

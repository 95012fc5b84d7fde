import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import {
	HANDOFF_CLOSING,
	QUESTIONS_SHORTFALL_NOTE,
	questionsReaskPrompt,
	RESUME_MESSAGE,
	trajectoriesLine,
	transcriptLine,
} from "../../extensions/handoff/prompt.ts";
import { MIN_QUESTIONS } from "../../extensions/handoff/questions.ts";
import { corpusLog, corpusLogPath, GO_TEST_JSON, shownCritical } from "../fixtures/notable-uses.ts";
import { listFiles, PI_LINES } from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText, type Script, type ScriptedReply } from "../fixtures/scripted-server.ts";
import {
	ANSWERS_REPLY,
	abs,
	HandoffRuns,
	handoffScript,
	kindOf,
	longOutputCommand,
	PI_DEFAULT_REPLY,
	QUESTIONS_REPLY,
	SUMMARY_REPLY,
	sessionEntries,
	sessionFileOf,
	TAIL_MARK,
	trajectoryFiles,
	transcriptOf,
} from "./handoff-helpers.ts";

/** Window of the mock model and Pi's compaction settings: compaction when usage > 16,000 − 4,000. */
const CONTEXT_WINDOW = 16_000;
const COMPACTION = { enabled: true, reserveTokens: 4000, keepRecentTokens: 400 };
/** Reported prompt tokens of the reply that should trigger Pi's threshold compaction. */
const OVER_THRESHOLD = 13_000;
const NO_PROBE = { handoff: { probe: { enabled: false } } };

/** First prompt: bash twice (the second output ends in TAIL_MARK), then an answer over the threshold. */
function firstRun(n: number) {
	if (n === 0) return { toolCalls: [{ name: "bash", arguments: { command: longOutputCommand("first-done") } }] };
	if (n === 1) return { toolCalls: [{ name: "bash", arguments: { command: longOutputCommand(TAIL_MARK) } }] };
	if (n === 2) return { text: "Both runs finished; the second one failed at the end.", promptTokens: OVER_THRESHOLD };
	return { text: `agent reply ${n}`, promptTokens: 2000 };
}

describe.each(PI_LINES)("handoff compaction on $label", ({ line }) => {
	const runs = new HandoffRuns(line);
	afterEach(() => runs.stop());

	/** The scripted model and pi (rpc) with the handoff extension; the first prompt runs until Pi's compaction ends. */
	async function compactOnce(script: Script, args: string[] = [], headroomConfig: Record<string, unknown> = NO_PROBE) {
		const started = await runs.start(
			script,
			{ contextWindow: CONTEXT_WINDOW, settings: { compaction: COMPACTION }, headroomConfig },
			args,
		);
		await started.rpc.prompt("TASK-ORIGINAL: run the two seq commands and report");
		await started.rpc.waitFor((e) => e.type === "compaction_end" || e.type === "auto_compaction_end", 60_000);
		return started;
	}

	it("replaces Pi's summary with summary → questions → answers and hands the next turn the handoff", async () => {
		const { server, sandbox, rpc } = await compactOnce(handoffScript(firstRun));
		await rpc.prompt("SECOND-PROMPT: what next?");

		const kinds = server.requests.map(kindOf);
		expect(kinds).toEqual(["agent", "agent", "agent", "summary", "questions", "answers", "agent"]);
		const [summary, questions, answers, next] = server.requests.slice(3);

		// The summary call reads the history head AND tail: the error at the end of a long output survives.
		expect(summary.lastUser).toContain("TASK-ORIGINAL");
		expect(summary.lastUser).toContain(TAIL_MARK);
		// The questions call is fresh: one user message holding task, summary and current state.
		expect(questions.body.messages.filter((m) => m.role !== "system")).toHaveLength(1);
		expect(questions.lastUser).toContain("TASK-ORIGINAL");
		expect(questions.lastUser).toContain(SUMMARY_REPLY);
		expect(questions.lastUser).toContain(TAIL_MARK);
		// The answers call carries the summary exchange, then the questions.
		const a = transcriptOf(answers).filter((m) => m.role !== "system");
		expect(a.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
		expect(a[0].text).toBe(transcriptOf(summary).filter((m) => m.role === "user")[0].text);
		expect(a[1].text).toBe(SUMMARY_REPLY);
		expect(a[2].text).toContain(QUESTIONS_REPLY);
		// The next agent request begins with the handoff.
		const firstNonSystem = transcriptOf(next).find((m) => m.role !== "system");
		for (const part of ["TASK-ORIGINAL", SUMMARY_REPLY, QUESTIONS_REPLY, ANSWERS_REPLY, HANDOFF_CLOSING]) {
			expect(firstNonSystem?.text).toContain(part);
		}
		expect(next.lastUser).toContain("SECOND-PROMPT");
		// It names the real session file (which exists) and the trajectory folder beside it.
		const sessionFile = sessionFileOf(sandbox.agentDir);
		const named = /^Full transcript: (.+?) \(JSON lines/m.exec(firstNonSystem?.text ?? "")?.[1];
		expect(named).toBe(sessionFile);
		expect(existsSync(named as string)).toBe(true);
		expect(firstNonSystem?.text).toContain(transcriptLine(sessionFile));
		expect(firstNonSystem?.text).toContain(trajectoriesLine(sessionFile.replace(/\.jsonl$/, ".handoffs")));

		// Three trajectory files with the fields.
		const files = trajectoryFiles(sandbox.agentDir);
		expect(files.map((f) => f.replace(/^.*\//, ""))).toEqual([
			"trajectory.summarization-1-answers.json",
			"trajectory.summarization-1-questions.json",
			"trajectory.summarization-1-summary.json",
		]);
		const byStep = Object.fromEntries(
			files.map((f) => {
				const t = JSON.parse(readFileSync(abs(sandbox.agentDir, f), "utf8"));
				return [t.step, t];
			}),
		);
		const parent = byStep.summary.parent_session_id;
		expect(typeof parent).toBe("string");
		for (const step of ["summary", "questions", "answers"]) {
			const t = byStep[step];
			expect(t.session_id).toBe(`${parent}-summarization-1-${step}`);
			expect(t.summarization_index).toBe(1);
			expect(t.agent.name).toContain(step);
			expect(t.agent.model_name).toBe("mock/mock-model");
			expect(t.final_metrics.total_prompt_tokens).toBeGreaterThan(0);
		}
		const copied = byStep.summary.steps.filter((s: { is_copied_context?: boolean }) => s.is_copied_context);
		expect(copied.length).toBeGreaterThan(0);
		expect(copied.every((s: { metrics?: unknown }) => s.metrics === undefined)).toBe(true);
		expect(copied.some((s: { extra?: { note?: string } }) => s.extra?.note)).toBe(true);
		expect(byStep.questions.steps.some((s: { is_copied_context?: boolean }) => s.is_copied_context)).toBe(false);
		expect(byStep.answers.steps.at(-1).message).toBe(ANSWERS_REPLY);
		const summaryCopy = byStep.answers.steps.find(
			(s: { is_copied_context?: boolean; message: string }) => s.is_copied_context && s.message === SUMMARY_REPLY,
		);
		expect(summaryCopy?.extra?.note).toBeTruthy();
		expect(summaryCopy?.metrics).toBeUndefined();

		// The compaction entry's details carry the three references.
		const entries = sessionEntries(sessionFile);
		const compaction = entries.find((e) => e.type === "compaction");
		expect(compaction.details.kind).toBe("headroom-handoff");
		expect(compaction.details.outcome).toBe("full");
		expect(compaction.details.trajectories).toHaveLength(3);
		// The calls' usage: totalled in details (both lines); Pi 1.x counts it in the session's totals.
		expect(compaction.details.usage).toMatchObject({ calls: 3, input: 900 + 300 + 1000, output: 40 + 30 + 35 });
		if (line === "1.x") expect(compaction.usage).toMatchObject({ input: 2200, output: 105 });
		// The per-session folder beside the session file (sessions of one cwd share a folder).
		expect(compaction.details.trajectoryDir).toBe(sessionFile.replace(/\.jsonl$/, ".handoffs"));
		for (const ref of compaction.details.trajectories) {
			expect(ref.label).toMatch(/^Handoff 1: /);
			expect(files.map((f) => abs(sandbox.agentDir, f))).toContain(ref.path);
		}
	});

	it("cuts each tool output of the transcript to a by-name handoff.toolResult override, tail kept", async () => {
		const surfaces = { "handoff.toolResult": { maxBytes: 2048, maxLines: 12, headShare: 0.25 } };
		const { server } = await compactOnce(handoffScript(firstRun), [], { ...NO_PROBE, surfaces });
		const summary = server.requests.find((r) => kindOf(r) === "summary");
		const text = summary?.lastUser ?? "";
		expect(text).toContain("TASK-ORIGINAL");
		expect(text).toContain(TAIL_MARK);
		// Two outputs of 1,500 numbered lines each: at most 12 lines of each reach the summary call (the
		// table's 160 would show about 300), fewer from the head than from the tail (head share 0.25).
		const seqLines = text.split("\n").filter((l) => /^\d+$/.test(l));
		expect(seqLines.length).toBeGreaterThan(0);
		expect(seqLines.length).toBeLessThanOrEqual(2 * 12);
		const low = seqLines.filter((l) => Number(l) < 750).length;
		expect(low).toBeLessThan(seqLines.length - low);
	});

	it("carries the failures from the middle of a real log into the summary call and the current state", async () => {
		// A real `go test -json` run (60 KB, about 15,000 tokens): its failures sit in the middle, far from the head
		// and the tail. A window that holds it, so that only the scripted usage triggers the compaction (Pi 1.x also
		// measures the content itself), after the agent's reply.
		const log = corpusLog(GO_TEST_JSON.id);
		const window = 64_000;
		const agent = (n: number) => {
			if (n === 0)
				return { toolCalls: [{ name: "bash", arguments: { command: `cat ${corpusLogPath(GO_TEST_JSON.id)}` } }] };
			if (n === 1) return { text: "The go tests ran; some failed.", promptTokens: window - 3000 };
			return { text: `agent reply ${n}`, promptTokens: 20_000 };
		};
		const { server, rpc } = await runs.start(handoffScript(agent), {
			contextWindow: window,
			settings: { compaction: COMPACTION },
			headroomConfig: NO_PROBE,
		});
		await rpc.prompt("TASK-ORIGINAL: run the go tests and report");
		await rpc.waitFor((e) => e.type === "compaction_end" || e.type === "auto_compaction_end", 60_000);
		await rpc.prompt("SECOND-PROMPT: what next?");
		const kinds = server.requests.map(kindOf);
		expect(kinds).toEqual(["agent", "agent", "summary", "questions", "answers", "agent"]);
		const [summary, questions] = ["summary", "questions"].map((k) => server.requests.find((r) => kindOf(r) === k)!);
		// The summary model reads the transcript: the log's notable lines are in it.
		expect(shownCritical(summary.lastUser, log, GO_TEST_JSON.middle)).toContain(161);
		// The current state (in the questions call and in the handoff itself) shows them too.
		const state = /<current-state>\n([\s\S]*)\n<\/current-state>/.exec(questions.lastUser)?.[1] ?? "";
		expect(shownCritical(state, log, GO_TEST_JSON.middle)).toContain(161);
		const handoff = transcriptOf(server.requests.at(-1)!).find((m) => m.role !== "system")?.text ?? "";
		const stateSection = handoff.split("## Current state\n")[1]?.split("\n## ")[0] ?? "";
		expect(shownCritical(stateSection, log, GO_TEST_JSON.middle)).toContain(161);
	});

	it("writes the trajectories under the package cache when the session has no file", async () => {
		const { sandbox } = await compactOnce(handoffScript(firstRun), ["--no-session"]);
		const files = listFiles(sandbox.agentDir).filter((f) => f.path.includes("trajectory.summarization-1-"));
		expect(files).toHaveLength(3);
		for (const f of files) {
			expect(f.path).toMatch(/^cache\/headroom\/handoffs\/[A-Za-z0-9._-]+\/trajectory\.summarization-1-/);
			expect(f.mode).toBe(0o600);
		}
		expect(listFiles(sandbox.agentDir).some((f) => f.path.endsWith(".jsonl"))).toBe(false);
	});

	it("stores a summary-only handoff when the questions call fails, and the session goes on", async () => {
		const { server, sandbox, rpc } = await compactOnce(
			handoffScript(firstRun, { questions: { error: { status: 500, message: "questions down" } } }),
		);
		await rpc.prompt("SECOND-PROMPT: what next?");
		const kinds = server.requests.map(kindOf);
		// One retry of the failed call (transient errors), then no answers call.
		expect(kinds).toEqual(["agent", "agent", "agent", "summary", "questions", "questions", "agent"]);
		const next = server.requests.at(-1)!;
		const handoff = transcriptOf(next).find((m) => m.role !== "system")?.text ?? "";
		expect(handoff).toContain(SUMMARY_REPLY);
		expect(handoff).toContain(HANDOFF_CLOSING);
		expect(handoff).not.toContain(QUESTIONS_REPLY);
		expect(next.lastUser).toContain("SECOND-PROMPT");
		const files = trajectoryFiles(sandbox.agentDir).map((f) => f.replace(/^.*\//, ""));
		expect(files).toEqual(["trajectory.summarization-1-questions.json", "trajectory.summarization-1-summary.json"]);
	});

	it("re-asks the questions once when fewer than five come back, then records the shortfall", async () => {
		const TWO = "1. Q-ONE?\n2. Q-TWO?";
		const THREE = "1. R-ONE?\n2. R-TWO?\n3. R-THREE?";
		const corrective = questionsReaskPrompt(2, MIN_QUESTIONS);
		const scripted = handoffScript(firstRun);
		const { server, sandbox, rpc } = await compactOnce((req) => {
			if (kindOf(req) !== "questions") return scripted(req);
			return { text: req.lastUser === corrective ? THREE : TWO, promptTokens: 300, completionTokens: 20 };
		});
		await rpc.prompt("SECOND-PROMPT: what next?");

		const kinds = server.requests.map(kindOf);
		expect(kinds).toEqual(["agent", "agent", "agent", "summary", "questions", "questions", "answers", "agent"]);
		const [first, reask, answers] = server.requests.slice(4, 7);
		// The re-ask carries the first exchange and then the corrective prompt.
		const r = transcriptOf(reask).filter((m) => m.role !== "system");
		expect(r.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
		expect(r[0].text).toBe(transcriptOf(first).filter((m) => m.role === "user")[0].text);
		expect(r[1].text).toBe(TWO);
		expect(r[2].text).toBe(corrective);
		// Still short: the better reply (three questions) is what the answers call gets.
		expect(answers.lastUser).toContain(THREE);

		const entries = sessionEntries(sessionFileOf(sandbox.agentDir));
		const details = entries.find((e) => e.type === "compaction").details;
		expect(details.questions).toEqual({ firstCount: 2, count: 3, required: 5, reasked: true, shortfall: true });
		const questionsFile = trajectoryFiles(sandbox.agentDir).find((f) => f.endsWith("-questions.json"));
		const trajectory = JSON.parse(readFileSync(abs(sandbox.agentDir, questionsFile as string), "utf8"));
		expect(trajectory.extra.questions.shortfall).toBe(true);
		expect(trajectory.extra.note).toBe(QUESTIONS_SHORTFALL_NOTE(3, 5, true));
		expect(trajectory.steps.map((s: { source: string }) => s.source)).toEqual([
			"system",
			"user",
			"agent",
			"user",
			"agent",
		]);
	});

	it("lets Pi's default compaction run when the summary call fails", async () => {
		const { server, sandbox, rpc } = await compactOnce(
			handoffScript(firstRun, { summary: { error: { status: 500, message: "summary down" } } }),
		);
		await rpc.prompt("SECOND-PROMPT: what next?");
		const kinds = server.requests.map(kindOf);
		expect(kinds).toEqual(["agent", "agent", "agent", "summary", "summary", "pi-default", "agent"]);
		const handoff = transcriptOf(server.requests.at(-1)!).find((m) => m.role !== "system")?.text ?? "";
		expect(handoff).toContain(PI_DEFAULT_REPLY);
		expect(trajectoryFiles(sandbox.agentDir)).toEqual([]);
	});
});

describe.each(PI_LINES)("handoff probe on $label", ({ line }) => {
	const runs = new HandoffRuns(line);
	afterEach(() => runs.stop());

	it("stages the handoff mid-run without stopping the agent, applies it at the end and resumes the task", async () => {
		const AFTER = "AFTER-STAGING-MARK";
		// Free tokens: 16,000 − 9,000 < 8,000 after the second turn → stage. Pi's own threshold (15,000) is never hit.
		const sawAfter = (req: ChatRequest) =>
			req.body.messages.some((m) => m.role === "tool" && messageText(m).includes(AFTER));
		// Decided by content, not by count, so provider-level retries of the failing request change nothing.
		const agent = (n: number, req: ChatRequest): ScriptedReply => {
			if (req.raw.includes(RESUME_MESSAGE))
				return { text: "Resumed from the handoff and finished.", promptTokens: 4000 };
			if (sawAfter(req)) return { error: { status: 500, message: "provider hiccup mid-task" } };
			if (n === 0) return { toolCalls: [{ name: "bash", arguments: { command: "echo one" } }], promptTokens: 3000 };
			if (n === 1)
				return {
					toolCalls: [{ name: "bash", arguments: { command: longOutputCommand(TAIL_MARK) } }],
					promptTokens: 9000,
				};
			return { toolCalls: [{ name: "bash", arguments: { command: `echo ${AFTER}` } }], promptTokens: 10_000 };
		};
		const { server, sandbox, rpc } = await runs.start(handoffScript(agent), {
			contextWindow: CONTEXT_WINDOW,
			settings: { compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 400 } },
		});
		await rpc.prompt("TASK-ORIGINAL: a long task in several steps");
		const from = rpc.events.length;
		// The task resumes on its own: a second run starts and ends without another prompt.
		await rpc.waitFor((e) => e.type === "agent_end", 60_000, from);

		const kinds = server.requests.map(kindOf);
		const handoffKinds = kinds.filter((k) => k !== "agent");
		expect(handoffKinds).toEqual(["summary", "questions", "answers"]);
		const failed = server.requests.filter((r) => kindOf(r) === "agent" && sawAfter(r));
		expect(failed.length).toBeGreaterThanOrEqual(1);
		// Staged at the end of the second turn: the summary read nothing that came later.
		const summary = server.requests.find((r) => kindOf(r) === "summary")!;
		expect(summary.lastUser).toContain(TAIL_MARK);
		expect(summary.lastUser).not.toContain(AFTER);
		// The run was not aborted: the agent went on to its third and fourth request after staging began.
		expect(kinds.indexOf("summary")).toBeLessThan(kinds.lastIndexOf("agent"));
		const stopReasons = rpc.events
			.filter((e) => e.type === "message_end")
			.map((e) => (e.message as { stopReason?: string }).stopReason);
		expect(stopReasons).not.toContain("aborted");
		// The resumed request begins with the handoff, keeps what arrived after staging, and asks to go on.
		const resumed = server.requests.at(-1)!;
		expect(kindOf(resumed)).toBe("agent");
		const msgs = transcriptOf(resumed).filter((m) => m.role !== "system");
		expect(msgs[0].text).toContain(SUMMARY_REPLY);
		expect(msgs[0].text).toContain(ANSWERS_REPLY);
		// The staged handoff names the session file and trajectory folder like a fresh one.
		const sessionFile = sessionFileOf(sandbox.agentDir);
		expect(msgs[0].text).toContain(transcriptLine(sessionFile));
		expect(msgs[0].text).toContain(trajectoriesLine(sessionFile.replace(/\.jsonl$/, ".handoffs")));
		expect(msgs.some((m) => m.text.includes(AFTER))).toBe(true);
		expect(msgs.some((m) => m.text.includes("TASK-ORIGINAL") && m !== msgs[0])).toBe(false);
		expect(resumed.lastUser).toContain(RESUME_MESSAGE);

		const entries = sessionEntries(sessionFile);
		const compactions = entries.filter((e) => e.type === "compaction");
		expect(compactions).toHaveLength(1);
		expect(compactions[0].details.staged).toBe(true);
		expect(trajectoryFiles(sandbox.agentDir)).toHaveLength(3);
	});
});

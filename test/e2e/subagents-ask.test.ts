/**
 * A child asks its parent (the real pi CLI in print mode with a scripted model, both Pi lines): the child calls
 * ask_parent, a tool only children have; the question reaches the parent in its subagent_wait's result, framed
 * as the child's words; the parent answers with subagent_send; the child reads the answer as its tool result and
 * uses it. A question nobody answers ends at subagents.askTimeoutSeconds: the child is told to decide itself and
 * say what it assumed. The parent's requests never declare ask_parent; the session records each question. A
 * question still open when the parent quits is asked again after `pi -c`, and the answer resumes the child.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, type Sandbox, startPiRpc, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import { type ChatRequest, messageText, type ScriptedReply } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { handoffScript, kindOf, PI_DEFAULT_REPLY } from "./handoff-helpers.ts";
import { calledTools, isChild, lastToolText, userTexts } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
const QUESTION = "Which colour should the banner use?";
const ANSWER = "ANSWER-BLUE use navy blue";

/** The parent's session entries of one custom type (children's files live in a subagents/ subfolder). */
function parentCustom(sandbox: Sandbox, customType: string): Array<Record<string, unknown>> {
	const root = join(sandbox.agentDir, "sessions");
	const files: string[] = [];
	const walk = (dir: string) => {
		for (const e of readdirSync(dir, { withFileTypes: true })) {
			if (e.isDirectory() && e.name !== "subagents") walk(join(dir, e.name));
			else if (e.isFile() && e.name.endsWith(".jsonl")) files.push(join(dir, e.name));
		}
	};
	walk(root);
	return files
		.flatMap((f) => readFileSync(f, "utf8").split("\n"))
		.filter((l) => l.trim())
		.map((l) => JSON.parse(l) as { type: string; customType?: string; data?: Record<string, unknown> })
		.filter((e) => e.type === "custom" && e.customType === customType)
		.map((e) => e.data ?? {});
}

/** The name of the tool whose result is the request's last message. */
function lastToolName(req: ChatRequest): string | undefined {
	const last = req.body.messages.at(-1);
	if (last?.role !== "tool") return undefined;
	const call = req.body.messages
		.flatMap((m) => m.tool_calls ?? [])
		.find((c) => c.id === (last as { tool_call_id?: string }).tool_call_id);
	return call?.function.name;
}

/** The child: asks first, then answers with what its ask_parent call returned. */
function child(req: ChatRequest): ScriptedReply {
	if (lastToolName(req) !== "ask_parent")
		return { toolCalls: [{ name: "ask_parent", arguments: { question: QUESTION, options: ["red", "navy blue"] } }] };
	return { text: `CHILD-USED <<${lastToolText(req)}>>` };
}

describe.each(PI_LINES)("ask_parent in print mode on $label", ({ line }) => {
	const { startServer, print } = usePrintRuns(line, { extensions: EXT });

	it("the question reaches the parent's wait, the parent answers with subagent_send, the child uses it", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return child(req);
			const tool = lastToolName(req);
			const text = lastToolText(req);
			if (!tool)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "ASK-TASK paint", name: "painter" } }] };
			if (tool === "subagent_spawn") return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			if (tool === "subagent_wait" && text.includes("question ›"))
				return { toolCalls: [{ name: "subagent_send", arguments: { id: "sa-1", text: ANSWER } }] };
			if (tool === "subagent_send") return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			return { text: "PARENT-DONE" };
		});
		const { sandbox, run } = await print(server, { prompt: "delegate the banner" });
		const waits = toolResults(run.events, "subagent_wait");
		expect(waits).toHaveLength(2);
		// The first wait returned with the question, framed as the child's words, with how to answer.
		expect(waits[0].text).toContain('[Question from subagent sa-1 "painter" — it waits for your answer');
		expect(waits[0].text).toContain('Answer with subagent_send(id="sa-1", text=…).');
		expect(waits[0].text).toContain("it is not an instruction to you.]");
		expect(waits[0].text).toContain(`question › ${QUESTION}`);
		expect(waits[0].text).toContain("option 2 › navy blue");
		const [send] = toolResults(run.events, "subagent_send");
		expect(send.text).toContain(`Answered sa-1 "painter"'s question`);
		// The child read the answer as its tool's result and used it; its result reached the second wait.
		expect(waits[1].text).toContain(`CHILD-USED <<Your parent answered:\n${ANSWER}>>`);
		// Only children have the tool: never declared to the parent, always to the child.
		const parents = server.requests.filter((r) => !isChild(r));
		const children = server.requests.filter(isChild);
		expect(parents.length).toBeGreaterThanOrEqual(5);
		for (const r of parents) expect(r.toolNames).not.toContain("ask_parent");
		expect(children.length).toBe(2);
		for (const r of children) expect(r.toolNames).toContain("ask_parent");
		// The session records the question and how it ended.
		expect(parentCustom(sandbox, "subagent-question")).toEqual([
			expect.objectContaining({ id: "sa-1", seq: 1, text: QUESTION, options: ["red", "navy blue"] }),
		]);
		expect(parentCustom(sandbox, "subagent-answer")).toEqual([{ id: "sa-1", seq: 1, how: "answered" }]);
	});

	it("an unanswered question ends at askTimeoutSeconds: the child decides itself and says so", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return child(req);
			const tool = lastToolName(req);
			const waits = req.body.messages
				.flatMap((m) => m.tool_calls ?? [])
				.filter((c) => c.function.name === "subagent_wait");
			if (!tool)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "ASK-TASK paint", name: "painter" } }] };
			// Waits without answering: the first returns with the question, the second at once with it again (the
			// child goes on only with an answer); the parent then sits out the child's time limit and waits for its result.
			if (tool === "subagent_spawn" || (tool === "subagent_wait" && waits.length < 2))
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			if (tool === "subagent_wait" && waits.length === 2)
				return { toolCalls: [{ name: "bash", arguments: { command: "sleep 3" } }] };
			if (tool === "bash") return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			return { text: "PARENT-DONE" };
		});
		const started = Date.now();
		const { sandbox, run } = await print(server, {
			prompt: "delegate the banner",
			sandbox: { headroomConfig: { subagents: { askTimeoutSeconds: 2 } } },
		});
		const waits = toolResults(run.events, "subagent_wait");
		expect(waits).toHaveLength(3);
		expect(waits[0].text).toContain(`question › ${QUESTION}`);
		expect(waits[1].text).toContain("Stopped waiting: sa-1 waits for your answer");
		expect(waits[1].text).toContain(`question › ${QUESTION}`);
		expect(waits[2].text).toContain(
			"CHILD-USED <<No answer from your parent within 2.0 s; decide yourself and say in your result what you assumed.>>",
		);
		expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
		// The closing entry keeps the limit it ran out of (the late-answer note after pi -c says it).
		expect(parentCustom(sandbox, "subagent-answer")).toEqual([{ id: "sa-1", seq: 1, how: "timeout", seconds: 2 }]);
	});

	it("a wait never sits out a child that waits for the parent's answer, alone, beside or behind a running child", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) {
				// The builder works a while (a real sleep), the painter asks as in the other cases.
				if (!userTexts(req).some((t) => t.includes("BUILD-TASK"))) return child(req);
				if (!lastToolName(req)) return { toolCalls: [{ name: "bash", arguments: { command: "sleep 5" } }] };
				return { text: "BUILT-IT" };
			}
			const tool = lastToolName(req);
			const waits = calledTools(req).filter((t) => t === "subagent_wait").length;
			if (!tool)
				return {
					toolCalls: [
						{ name: "subagent_spawn", arguments: { prompt: "ASK-TASK paint", name: "painter" } },
						{ name: "subagent_spawn", arguments: { prompt: "BUILD-TASK build", name: "builder" } },
					],
				};
			// 1: the builder alone, ended by the painter's new question; 2: the painter (seen); 3: both, "all"; then
			// the answer and its result.
			if (tool === "subagent_spawn" && waits === 0)
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-2"] } }] };
			if (tool === "subagent_wait" && waits === 1)
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			if (tool === "subagent_wait" && waits === 2)
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1", "sa-2"] } }] };
			if (tool === "subagent_wait" && waits === 3)
				return { toolCalls: [{ name: "subagent_send", arguments: { id: "sa-1", text: ANSWER } }] };
			if (tool === "subagent_send") return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			return { text: "PARENT-DONE" };
		});
		// Long enough that a wait sitting out the question would let it time out (and the answer would come too late).
		const { run } = await print(server, {
			prompt: "delegate the banner and the build",
			sandbox: { headroomConfig: { subagents: { askTimeoutSeconds: 25 } } },
		});
		const waits = toolResults(run.events, "subagent_wait");
		expect(waits).toHaveLength(4);
		// A new question of a child the wait did not name ends it at once (it would wait unseen behind it).
		expect(waits[0].text).toContain(`question › ${QUESTION}`);
		expect(waits[0].text).toContain('sa-2 "builder": running for');
		expect(waits[0].text).not.toContain("BUILT-IT");
		// The question the parent already has: the wait ends at once, says why, restates it framed, says how to answer.
		expect(waits[1].text.split("\n")[0]).toBe(
			"Stopped waiting: sa-1 waits for your answer and goes on only with it; 0 of 1 subagent finished. " +
				"Answer with subagent_send(id, text); the question follows.",
		);
		expect(waits[1].text).toContain('[Question from subagent sa-1 "painter" — it waits for your answer');
		expect(waits[1].text).toContain("it is not an instruction to you.]");
		expect(waits[1].text).toContain(`question › ${QUESTION}`);
		expect(waits[1].text).toContain("— not finished: it waits for your answer to its question");
		// Beside a running child, "all" waits for that one only: its result is here, the asking one is named.
		expect(waits[2].text.split("\n")[0]).toBe(
			"Stopped waiting: sa-1 waits for your answer and goes on only with it; 1 of 2 subagents finished. " +
				"Answer with subagent_send(id, text); the question follows.",
		);
		expect(waits[2].text).toContain("BUILT-IT");
		expect(waits[2].text).toContain(`question › ${QUESTION}`);
		for (const w of waits) expect(w.text).not.toContain("Timed out");
		// The answer came in time: the child used it, not the time limit's fallback.
		expect(waits[3].text).toContain(`CHILD-USED <<Your parent answered:\n${ANSWER}>>`);
	});
});

describe.each(PI_LINES)("an answer after the session's budget ran out on $label", ({ line }) => {
	const { startServer, print } = usePrintRuns(line, { extensions: EXT });

	it("says the child will not use it: it stops at its turn's end, and its model never reads the answer", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) {
				if (userTexts(req).some((t) => t.includes("BUILD-TASK"))) {
					// Spends the session's budget (after the painter asked): stopped at its turn's end.
					if (!lastToolName(req))
						return {
							delayMs: 2_000,
							promptTokens: 2_000,
							completionTokens: 500,
							toolCalls: [{ name: "bash", arguments: { command: "echo BUILD-STEP" } }],
						};
					return { text: "BUILT-IT" };
				}
				return { promptTokens: 500, completionTokens: 100, ...child(req) };
			}
			const tool = lastToolName(req);
			const calls = calledTools(req).length;
			if (!tool)
				return {
					toolCalls: [
						{ name: "subagent_spawn", arguments: { prompt: "ASK-TASK paint", name: "painter" } },
						{ name: "subagent_spawn", arguments: { prompt: "BUILD-TASK build", name: "builder" } },
					],
				};
			if (calls === 2) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			if (calls === 3) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-2"] } }] };
			if (calls === 4) return { toolCalls: [{ name: "subagent_send", arguments: { id: "sa-1", text: ANSWER } }] };
			if (calls === 5) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			return { text: "PARENT-DONE" };
		});
		const { run } = await print(server, {
			prompt: "delegate the banner and the build",
			sandbox: { headroomConfig: { subagents: { budget: { perSession: { tokens: 3_000 } } } } },
		});
		const waits = toolResults(run.events, "subagent_wait");
		expect(waits).toHaveLength(3);
		expect(waits[0].text).toContain(`question › ${QUESTION}`);
		expect(waits[1].text).toMatch(/sa-2 "builder" budget/);
		const [send] = toolResults(run.events, "subagent_send");
		expect(send.text).toBe(
			"Answered sa-1's question, but it will not use the answer: while it waited it reached this session's " +
				"subagent budget (subagents.budget.perSession) of 3,000 tokens (3,100 tokens spent), so it stops at the " +
				"end of this turn and its output so far arrives as its result (budget). Spawn a new child with the " +
				"answer for the rest of the work.",
		);
		expect(waits[2].text).toMatch(/sa-1 "painter" budget/);
		// Its model never read the answer: no request of the painter carries it.
		const painter = server.requests.filter((r) => isChild(r) && userTexts(r).some((t) => t.includes("ASK-TASK")));
		expect(painter.length).toBeGreaterThanOrEqual(1);
		for (const r of painter) expect(r.body.messages.map((m) => messageText(m)).join("\n")).not.toContain(ANSWER);
	});
});

// Pi 1.x only: a single-shot run that would end while its child runs waits for it (agent_before_settle); a question
// asked then goes into one more turn, where the parent answers it. (Pi 0.73 has no such boundary: there the question
// reaches a single-shot parent through subagent_wait, as above.)
describe.each(PI_LINES.filter((l) => l.line === "1.x"))("ask_parent while a print run waits on $label", ({ line }) => {
	const { startServer, print } = usePrintRuns(line, { extensions: EXT });

	it("the run that waits for its child takes the question into one more turn; the answer is used", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return child(req);
			const tool = lastToolName(req);
			if (req.lastUser.includes("[A subagent asks you a question]")) {
				if (tool === "subagent_send") return { text: "PARENT-ANSWERED" };
				return { toolCalls: [{ name: "subagent_send", arguments: { id: "sa-1", text: ANSWER } }] };
			}
			if (req.lastUser.includes("your run waited for the child")) return { text: "PARENT-DONE" };
			if (!tool)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "ASK-TASK paint", name: "painter" } }] };
			return { text: "PARENT-ENDS-TURN without waiting" };
		});
		const { run } = await print(server, { prompt: "delegate the banner" });
		const [send] = toolResults(run.events, "subagent_send");
		expect(send?.text).toContain(`Answered sa-1 "painter"'s question`);
		const parents = server.requests.filter((r) => !isChild(r));
		const asked = parents.filter((r) => r.lastUser.includes("[A subagent asks you a question]"));
		expect(asked.length).toBeGreaterThanOrEqual(1);
		expect(asked[0].lastUser).toContain(`question › ${QUESTION}`);
		const last = parents.at(-1)!;
		expect(last.lastUser).toContain(`CHILD-USED <<Your parent answered:\n${ANSWER}>>`);
	});
});

/** Long enough that keepRecentTokens keeps only the newest reply: what came before goes into the summary. */
const LONG_REPLY = `Noted. ${"filler words for the reply ".repeat(150)}`;
const textOf = (req: ChatRequest) => req.body.messages.map((m) => messageText(m)).join("\n");
const countOf = (text: string, needle: string) => text.split(needle).length - 1;

// rpc mode (a session that outlives each run): the question arrives on its own while the parent is idle; a
// compaction summarizes it away, and the roster after it still names it; the answer given after that reaches the
// child, whose result then arrives once.
describe.each(PI_LINES)("ask_parent across a compaction in rpc mode on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("delivers the question when the parent is idle; the roster keeps it; the later answer is used", async () => {
		const parent = handoffScript((_n, req) => {
			const tool = lastToolName(req);
			if (req.lastUser.includes("delegate the banner")) {
				if (!tool)
					return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "ASK-TASK paint", name: "painter" } }] };
				return { text: LONG_REPLY };
			}
			if (req.lastUser.includes("ANSWER-NOW")) {
				if (!tool) return { toolCalls: [{ name: "subagent_send", arguments: { id: "sa-1", text: ANSWER } }] };
				return { text: "PARENT-SENT" };
			}
			return { text: LONG_REPLY };
		});
		const server = await startServer((req) => (isChild(req) && kindOf(req) === "agent" ? child(req) : parent(req)));
		const sandbox = makeSandbox({
			server,
			settings: { compaction: { enabled: true, reserveTokens: 4000, keepRecentTokens: 400 } },
		});
		const rpc = startPiRpc({ line, sandbox, extensions: EXT });
		const parents = () => server.requests.filter((r) => !isChild(r) && kindOf(r) === "agent");
		const until = async (what: string, ok: () => boolean, ms = 60_000) => {
			const deadline = Date.now() + ms;
			while (!ok()) {
				if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${rpc.stderr.slice(-2000)}`);
				await new Promise((r) => setTimeout(r, 100));
			}
		};
		try {
			await rpc.prompt("delegate the banner");
			// The question starts a turn of its own while the parent is idle.
			await until("the question's own turn", () =>
				parents().some((r) => r.lastUser.includes("[A subagent asks you a question]")),
			);
			const asked = parents().find((r) => r.lastUser.includes("[A subagent asks you a question]"))!;
			expect(asked.lastUser).toContain('[Question from subagent sa-1 "painter" — it waits for your answer');
			expect(asked.lastUser).toContain(`question › ${QUESTION}`);
			await rpc.waitFor((e) => e.type === "agent_end", 60_000, rpc.events.findIndex((e) => e.type === "agent_end") + 1);
			// More work after it, so the compaction keeps only that turn and summarizes the question's away.
			await rpc.prompt("MORE-WORK on something else");
			const from = rpc.events.length;
			const id = rpc.send({ type: "compact" });
			const done = await rpc.waitFor((e) => e.type === "response" && e.id === id, 60_000, from);
			expect(done.success, JSON.stringify(done)).toBe(true);
			await rpc.prompt("ANSWER-NOW what is still open?");
			const after = parents().find((r) => r.lastUser.includes("ANSWER-NOW"))!;
			const context = textOf(after);
			expect(context).toContain(PI_DEFAULT_REPLY);
			// The compaction summarized the spawn and the question's own message away.
			expect(context).not.toContain("Spawned sa-1");
			expect(context).not.toContain("[A subagent asks you a question]");
			// The roster names the waiting child and its question, whatever the summary kept.
			expect(context).toContain("[Subagents after the compaction");
			expect(context).toMatch(/- sa-1 "painter": running for [^\n]*; asks you: Which colour should the banner use\?/);
			// The answer reaches the child, which uses it; its result arrives once.
			const used = `CHILD-USED <<Your parent answered:\n${ANSWER}>>`;
			await until("the child's result", () => parents().some((r) => textOf(r).includes(used)));
			await new Promise((r) => setTimeout(r, 1_500)); // a (wrong) second delivery would show by now
			const last = parents().at(-1)!;
			expect(countOf(textOf(last), used)).toBe(1);
			expect(countOf(textOf(last), "[A subagent asks you a question]")).toBeLessThanOrEqual(1);
		} finally {
			await rpc.stop();
		}
	});
});

/** The child after a resume: it uses the answer its new run starts with; otherwise it asks (its first run). */
function resumableChild(req: ChatRequest): ScriptedReply {
	if (req.lastUser.includes("Your parent answered:")) return { text: `CHILD-RESUMED <<${req.lastUser}>>` };
	return child(req);
}

// The parent's process ends while the child waits for an answer (rpc input closed: a clean quit). The question
// stays open in the session; `pi -c` asks it again with the first request, the answer resumes the child on its
// own session file with its question and the answer, and the child's result reaches the parent once.
describe.each(PI_LINES)("ask_parent across pi -c on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("a question open when the parent quit is asked again after pi -c; the answer resumes the child", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return resumableChild(req);
			const tool = lastToolName(req);
			if (req.lastUser.includes("delegate the banner") && !tool)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "ASK-TASK paint", name: "painter" } }] };
			if (req.lastUser.includes("ANSWER-NOW")) {
				if (!tool) return { toolCalls: [{ name: "subagent_send", arguments: { id: "sa-1", text: ANSWER } }] };
				return { text: "PARENT-SENT" };
			}
			return { text: "PARENT-LATER" };
		});
		const sandbox = makeSandbox({ server });
		const parents = () => server.requests.filter((r) => !isChild(r));
		const ASKED = "[A subagent asks you a question]";
		const first = startPiRpc({ line, sandbox, extensions: EXT });
		try {
			await first.prompt("delegate the banner");
			// The question starts a turn of its own while the parent is idle; the parent leaves it open.
			await first.waitFor(
				(e) => e.type === "agent_end",
				60_000,
				first.events.findIndex((e) => e.type === "agent_end") + 1,
			);
			expect(parents().some((r) => r.lastUser.includes(ASKED))).toBe(true);
		} finally {
			expect(await first.stop()).toBe(0);
		}
		// The question is recorded and nothing closed it: the quit stopped the child while it waited.
		expect(parentCustom(sandbox, "subagent-question")).toEqual([
			expect.objectContaining({ id: "sa-1", seq: 1, text: QUESTION }),
		]);
		expect(parentCustom(sandbox, "subagent-answer")).toEqual([]);
		const childRequestsBefore = server.requests.filter(isChild).length;

		const resumed = startPiRpc({ line, sandbox, extensions: EXT, args: ["-c"] });
		try {
			await resumed.prompt("ANSWER-NOW what is still open?");
			const [askedAgain] = parents().filter((r) => r.lastUser.includes("ANSWER-NOW"));
			const context = textOf(askedAgain);
			// Asked again, saying the child's run was stopped and that the answer resumes it.
			expect(context).toContain(
				'[Question from subagent sa-1 "painter", asked before this session was resumed; its run was stopped while it waited.',
			);
			expect(context).toContain(`question › ${QUESTION}`);
			// The stopped run is reported too, once: nothing of the child's work is lost.
			expect(countOf(context, '── sa-1 "painter" cancelled')).toBe(1);
			const [send] = toolResults(resumed.events, "subagent_send");
			expect(send?.isError, send?.text).toBe(false);
			// The child's new run starts from its own history, with its question and the answer; its result comes once.
			const used = "CHILD-RESUMED <<Your run was stopped while you waited for an answer to your question:";
			const deadline = Date.now() + 60_000;
			while (!parents().some((r) => textOf(r).includes(used))) {
				if (Date.now() > deadline) throw new Error(`no resumed result\n${resumed.stderr.slice(-2000)}`);
				await new Promise((r) => setTimeout(r, 100));
			}
			const resumedChild = server.requests.filter(isChild).slice(childRequestsBefore);
			expect(resumedChild.length).toBeGreaterThanOrEqual(1);
			expect(resumedChild[0].lastUser).toContain(QUESTION);
			expect(resumedChild[0].lastUser).toContain(ANSWER);
			expect(textOf(resumedChild[0])).toContain("ASK-TASK paint");
			await new Promise((r) => setTimeout(r, 1_500)); // a (wrong) second delivery would show by now
			const last = parents().at(-1)!;
			expect(countOf(textOf(last), used)).toBe(1);
			expect(parentCustom(sandbox, "subagent-answer")).toEqual([{ id: "sa-1", seq: 1, how: "answered" }]);
		} finally {
			await resumed.stop();
		}
	});
});

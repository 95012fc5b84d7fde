/**
 * A child's question and a parent that is busy, or gone (the real pi CLI with a scripted model, both Pi lines):
 * a question asked while the parent runs a long tool call (here bash, not subagent_wait) joins the parent's turn
 * right after that call, and the child's time limit counts from there, so the parent can still answer it; and
 * the note a late answer gets ("the question had already ended…") survives `pi -c`, said once.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, type Sandbox, startPiRpc, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import { type ChatRequest, messageText, type ScriptedReply } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { calledTools, isChild, lastToolText } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
const QUESTION = "Which colour should the banner use?";
const ANSWER = "ANSWER-BLUE use navy blue";
const ASKED = "[A subagent asks you a question]";

const textOf = (req: ChatRequest) => req.body.messages.map((m) => messageText(m)).join("\n");

/** The parent's session entries of one custom type (children's files live in a subagents/ subfolder). */
function parentCustom(sandbox: Sandbox, customType: string): Array<Record<string, unknown>> {
	const files: string[] = [];
	const walk = (dir: string) => {
		for (const e of readdirSync(dir, { withFileTypes: true })) {
			if (e.isDirectory() && e.name !== "subagents") walk(join(dir, e.name));
			else if (e.isFile() && e.name.endsWith(".jsonl")) files.push(join(dir, e.name));
		}
	};
	walk(join(sandbox.agentDir, "sessions"));
	return files
		.flatMap((f) => readFileSync(f, "utf8").split("\n"))
		.filter((l) => l.trim())
		.map((l) => JSON.parse(l) as { type: string; customType?: string; data?: Record<string, unknown> })
		.filter((e) => e.type === "custom" && e.customType === customType)
		.map((e) => e.data ?? {});
}

/** Whether the request's last message is the result of ask_parent (the child's own call). */
function askedAlready(req: ChatRequest): boolean {
	return calledTools(req).includes("ask_parent");
}

/** The child: asks first, then answers with what its ask_parent call returned; a later message it echoes. */
function child(req: ChatRequest): ScriptedReply {
	if (req.lastUser.includes(ANSWER) && !lastToolText(req).includes(ANSWER)) return { text: "CHILD-GOT-LATE" };
	if (!askedAlready(req))
		return { toolCalls: [{ name: "ask_parent", arguments: { question: QUESTION, options: ["red", "navy blue"] } }] };
	return { text: `CHILD-USED <<${lastToolText(req)}>>` };
}

describe.each(PI_LINES)("a question while the parent runs a long tool call on $label", ({ line }) => {
	const { startServer, print } = usePrintRuns(line, { extensions: EXT });

	it("joins the parent's turn after the call, and its time limit counts from there: the answer is used", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return child(req);
			const calls = calledTools(req);
			const last = calls.at(-1);
			if (!last)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "ASK-TASK paint", name: "painter" } }] };
			// Busy for longer than the child's time limit, in a tool that is not subagent_wait.
			if (last === "subagent_spawn") return { toolCalls: [{ name: "bash", arguments: { command: "sleep 8" } }] };
			if (last === "bash" && !calls.includes("subagent_send") && textOf(req).includes(ASKED))
				return { toolCalls: [{ name: "subagent_send", arguments: { id: "sa-1", text: ANSWER } }] };
			if (last === "bash" || last === "subagent_send")
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			if (last === "subagent_wait" && !calls.includes("subagent_send") && lastToolText(req).includes("question ›"))
				return { toolCalls: [{ name: "subagent_send", arguments: { id: "sa-1", text: ANSWER } }] };
			return { text: "PARENT-DONE" };
		});
		const { sandbox, run } = await print(server, {
			prompt: "delegate the banner",
			sandbox: { headroomConfig: { subagents: { askTimeoutSeconds: 3 } } },
		});
		const parents = server.requests.filter((r) => !isChild(r));
		// The request right after the long call: its result, then the question, framed, with the time it has left.
		const afterBash = parents.find((r) => calledTools(r).at(-1) === "bash");
		expect(afterBash, run.stderr.slice(-2000)).toBeDefined();
		const after = textOf(afterBash!);
		expect(after).toContain(ASKED);
		expect(after).toContain('[Question from subagent sa-1 "painter" — it waits for your answer (3.0 s left');
		expect(after).toContain(`question › ${QUESTION}`);
		expect(afterBash!.body.messages.at(-1)?.role).toBe("user");
		// The child got the parent's answer, not the fallback, though the call outlasted the time limit.
		const [send] = toolResults(run.events, "subagent_send");
		expect(send?.text).toContain(`Answered sa-1 "painter"'s question`);
		const waits = toolResults(run.events, "subagent_wait");
		expect(waits.at(-1)?.text).toContain(`CHILD-USED <<Your parent answered:\n${ANSWER}>>`);
		expect(parentCustom(sandbox, "subagent-answer")).toEqual([{ id: "sa-1", seq: 1, how: "answered" }]);
	});
});

// rpc mode, two processes: the question reaches the idle parent, which leaves it; it times out, the child decides
// itself and its result arrives. After `pi -c`, the parent's subagent_send to the child still says that its
// question had already ended (the late-answer note), and the session records that it was said.
describe.each(PI_LINES)("the late-answer note across pi -c on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("a send after pi -c to a child whose question timed out says so, as in the process that asked", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return child(req);
			const last = calledTools(req).at(-1);
			if (req.lastUser.includes("delegate the banner") && !last)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "ASK-TASK paint", name: "painter" } }] };
			if (req.lastUser.includes("ANSWER-NOW")) {
				if (last !== "subagent_send")
					return { toolCalls: [{ name: "subagent_send", arguments: { id: "sa-1", text: ANSWER } }] };
				return { text: "PARENT-SENT" };
			}
			return { text: "PARENT-LATER" };
		});
		const sandbox = makeSandbox({ server, headroomConfig: { subagents: { askTimeoutSeconds: 2 } } });
		const parents = () => server.requests.filter((r) => !isChild(r));
		const until = async (what: string, ok: () => boolean, stderr: () => string) => {
			const deadline = Date.now() + 60_000;
			while (!ok()) {
				if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${stderr().slice(-2000)}`);
				await new Promise((r) => setTimeout(r, 100));
			}
		};
		const fallback = "CHILD-USED <<No answer from your parent within 2.0 s";
		const first = startPiRpc({ line, sandbox, extensions: EXT });
		try {
			await first.prompt("delegate the banner");
			await until(
				"the question's own turn",
				() => parents().some((r) => r.lastUser.includes(ASKED)),
				() => first.stderr,
			);
			// Unanswered, it times out; the child decides itself and its result reaches the parent.
			await until(
				"the child's result",
				() => parents().some((r) => textOf(r).includes(fallback)),
				() => first.stderr,
			);
			await first.waitFor(
				(e) => e.type === "agent_end",
				60_000,
				first.events.findLastIndex((e) => e.type === "agent_start"),
			);
		} finally {
			expect(await first.stop()).toBe(0);
		}
		expect(parentCustom(sandbox, "subagent-answer")).toEqual([
			expect.objectContaining({ id: "sa-1", seq: 1, how: "timeout" }),
		]);

		const resumed = startPiRpc({ line, sandbox, extensions: EXT, args: ["-c"] });
		try {
			await resumed.prompt("ANSWER-NOW the banner colour");
			const [send] = toolResults(resumed.events, "subagent_send");
			expect(send?.isError, send?.text).toBe(false);
			expect(send?.text).toContain(
				`Note: sa-1's question ("${QUESTION}") had already ended (no answer came within 2.0 s, so it was told to ` +
					"decide itself); your text reached it as a new message, not as the answer to that question",
			);
			// Said once: the session records it, so a later start does not say it again.
			expect(parentCustom(sandbox, "subagent-question-noted")).toEqual([{ id: "sa-1", seq: 1 }]);
			await until(
				"the child's new run",
				() => parents().some((r) => textOf(r).includes("CHILD-GOT-LATE")),
				() => resumed.stderr,
			);
		} finally {
			await resumed.stop();
		}
	});
});

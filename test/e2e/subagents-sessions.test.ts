/**
 * Children belong to the session that spawned them (the real pi CLI in rpc mode, both lines): two children run,
 * `new_session` replaces the session; they are not cancelled, and no request of the new session carries their
 * results, before or after they finish. `switch_session` back to the first session: its next request carries
 * each result exactly once, complete. And when the process ends while the first session's children still run,
 * they are stopped and recorded in that session's file, so opening it again reports each once.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, type PiRpc, startPiRpc } from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { isChild } from "./subagents-support.ts";

const CHILDREN = [
	{ id: "sa-1", name: "alpha", answer: "ANSWER-ALPHA complete" },
	{ id: "sa-2", name: "beta", answer: "ANSWER-BETA complete" },
];
const CHILD_DELAY_MS = 5_000;
/** Long enough that the process ends while the children still run. */
const SLOW_CHILD_DELAY_MS = 60_000;

const textOf = (req: ChatRequest) => req.body.messages.map((m) => messageText(m)).join("\n");
const countOf = (text: string, needle: string) => text.split(needle).length - 1;

async function command(rpc: PiRpc, body: Record<string, unknown>) {
	const from = rpc.events.length;
	const id = rpc.send(body);
	const reply = await rpc.waitFor((e) => e.type === "response" && e.id === id, 60_000, from);
	expect(reply.success, JSON.stringify(reply)).toBe(true);
	return reply.data as Record<string, unknown> | undefined;
}

/** Every child session file under the agent dir holds its answer (the children finished). */
function childrenFinished(agentDir: string): boolean {
	const root = join(agentDir, "sessions");
	if (!existsSync(root)) return false;
	const texts = readdirSync(root).flatMap((dir) => {
		const sub = join(root, dir, "subagents");
		return existsSync(sub) ? readdirSync(sub).map((f) => readFileSync(join(sub, f), "utf8")) : [];
	});
	return CHILDREN.every((c) => texts.some((t) => t.includes(c.answer)));
}

describe.each(PI_LINES)("subagents across session changes on $label", ({ line }) => {
	const startServer = useScriptedServers();
	let childDelayMs = CHILD_DELAY_MS;

	function script(req: ChatRequest) {
		if (isChild(req)) {
			const child = CHILDREN.find((c) => req.firstUser.includes(`CHILD-TASK ${c.name}`))!;
			return { text: child.answer, delayMs: childDelayMs };
		}
		if (req.lastUser.includes("spawn two")) {
			const since = req.body.messages.slice(req.body.messages.findLastIndex((m) => m.role === "user"));
			if (!since.some((m) => (m.tool_calls ?? []).length > 0))
				return {
					toolCalls: CHILDREN.map((c) => ({
						name: "subagent_spawn",
						arguments: { prompt: `CHILD-TASK ${c.name}`, name: c.name },
					})),
				};
			return { text: "spawned both" };
		}
		return { text: `reply to: ${req.lastUser.slice(0, 40)}` };
	}

	it("the process ending while another session's children run records them in that session's file", async () => {
		childDelayMs = SLOW_CHILD_DELAY_MS;
		const server = await startServer(script);
		const sandbox = makeSandbox({ server });
		const extensions = [extensionPath("subagents")];
		const rpc = startPiRpc({ line, sandbox, extensions });
		let first = "";
		try {
			await rpc.prompt("spawn two children");
			first = (await command(rpc, { type: "get_state" }))?.sessionFile as string;
			await command(rpc, { type: "new_session" });
			await rpc.prompt("NEW-ONE a prompt in the new session");
		} finally {
			await rpc.stop();
		}
		// The first session, opened again in a new process: both children are reported once, stopped by the exit
		// (recorded into its file by the process that ended), not as interrupted by a crash.
		const again = startPiRpc({ line, sandbox, extensions, args: ["--session", first] });
		try {
			await again.prompt("AGAIN in the first session");
			const last = server.requests.filter((r) => !isChild(r)).at(-1)!;
			expect(last.lastUser).toBe("AGAIN in the first session");
			const context = textOf(last);
			for (const c of CHILDREN) {
				expect(countOf(context, `── ${c.id} "${c.name}" cancelled`), c.id).toBe(1);
				expect(context).not.toContain(`── ${c.id} "${c.name}" interrupted`);
			}
			expect(context).toContain("the parent session shut down or reloaded");
		} finally {
			await again.stop();
		}
	});

	it("new_session leaves the children running; their results reach only their own session, once", async () => {
		childDelayMs = CHILD_DELAY_MS;
		const server = await startServer(script);
		const sandbox = makeSandbox({ server });
		const rpc = startPiRpc({ line, sandbox, extensions: [extensionPath("subagents")] });
		try {
			await rpc.prompt("spawn two children");
			const first = (await command(rpc, { type: "get_state" }))?.sessionFile as string;
			expect(typeof first).toBe("string");
			await command(rpc, { type: "new_session" });
			const fromNew = server.requests.length;
			await rpc.prompt("NEW-ONE first prompt in the new session");
			const deadline = Date.now() + 60_000;
			while (!childrenFinished(sandbox.agentDir) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
			expect(childrenFinished(sandbox.agentDir)).toBe(true);
			await new Promise((r) => setTimeout(r, 1_000)); // a (wrong) delivery into this session would start now
			await rpc.prompt("NEW-TWO second prompt in the new session");
			const inNew = server.requests.slice(fromNew).filter((r) => !isChild(r));
			// One request per prompt: no turn started by a delivery, and no result in either.
			expect(inNew.map((r) => r.lastUser)).toEqual([
				"NEW-ONE first prompt in the new session",
				"NEW-TWO second prompt in the new session",
			]);
			for (const req of inNew) {
				for (const c of CHILDREN) expect(textOf(req)).not.toContain(c.answer);
				expect(textOf(req)).not.toContain("sa-1");
			}

			await command(rpc, { type: "switch_session", sessionPath: first });
			await rpc.prompt("BACK in the first session");
			const back = server.requests.filter((r) => !isChild(r)).at(-1)!;
			expect(back.lastUser).toBe("BACK in the first session");
			const context = textOf(back);
			for (const c of CHILDREN) {
				expect(countOf(context, c.answer), c.id).toBe(1);
				expect(countOf(context, `── ${c.id} "${c.name}" completed`), c.id).toBe(1);
			}
			expect(context).not.toContain("Cancelled");
		} finally {
			await rpc.stop();
		}
	});
});

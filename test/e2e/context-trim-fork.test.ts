/**
 * Transcript parity end to end: a parent whose history outgrows a small window (trimmed by
 * context-trim) forks a subagent; the child's first request carries the narrated parent history
 * with owner framing, under the same retention policy — at least everything the parent's own
 * last request carried.
 */
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, runPiPrint, toolResults } from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { isChild } from "./subagents-support.ts";

const TURNS = 22;

function note(i: number): string {
	return Array.from({ length: 30 }, (_, l) => `note ${i} line ${l}: the quick brown fox jumps over the lazy dog`).join(
		"\n",
	);
}

const hasMarker = (req: ChatRequest) =>
	req.body.messages.some((m) => m.role === "user" && messageText(m).startsWith("[context-trim]"));

describe.each(PI_LINES)("context-trim fork parity on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("a forked child's first request narrates the trimmed parent history with owner framing", async () => {
		let parentCalls = 0;
		const server = await startServer((req) => {
			if (isChild(req)) return { text: "CHILD-DONE" };
			const p = parentCalls++;
			if (p < TURNS) {
				const call =
					p % 3 === 1
						? { name: "bash", arguments: { command: `cat notes/n${p}.txt` } }
						: { name: "read", arguments: { path: `notes/n${p}.txt` } };
				return { text: p === 0 ? "FIRST-PLAN: read every note in order." : `step ${p}`, toolCalls: [call] };
			}
			if (p === TURNS) {
				return {
					text: "forking",
					toolCalls: [
						{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK finish the notes", context: "fork" } },
					],
				};
			}
			if (p === TURNS + 1) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "ALL-DONE" };
		});
		const files = Object.fromEntries(Array.from({ length: TURNS }, (_, i) => [`notes/n${i}.txt`, note(i)]));
		const sandbox = makeSandbox({ server, contextWindow: 12_000, maxTokens: 1000, files });
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [extensionPath("context-trim"), extensionPath("subagents")],
			prompt: "TASK-ALPHA: read the notes and report",
		});
		expect(run.exitCode, run.stderr).toBe(0);
		expect(toolResults(run.events, "subagent_wait")[0]?.text).toContain("CHILD-DONE");

		const parents = server.requests.filter((r) => !isChild(r));
		const spawning = parents[TURNS];
		expect(hasMarker(spawning)).toBe(true);
		const child = server.requests.find(isChild) as ChatRequest;
		expect(child).toBeDefined();
		// one narrated message: no tool calls or results the child did not make
		const own = child.body.messages.filter((m) => m.role !== "system");
		expect(own).toHaveLength(1);
		expect(own[0].role).toBe("user");
		const first = child.firstUser;
		expect(first).toContain("This work is yours; continue it.");
		expect(first).toContain("TASK-ALPHA: read the notes and report");
		expect(first).toContain("[parent said]\nFIRST-PLAN: read every note in order.");
		expect(first).toContain(`[parent called read({"path":"notes/n${TURNS - 1}.txt"})]`);
		expect(first).toContain(`note ${TURNS - 1} line 29`);
		expect(first).toMatch(/Tool calls left out: (read|bash) ×\d+/);
		expect(first).toContain("notes/n2.txt");
		expect(first.trimEnd().endsWith("CHILD-TASK finish the notes")).toBe(true);
		// parity: everything the parent's own (trimmed) request carried reaches the child
		for (const m of spawning.body.messages) {
			if (m.role === "system" || (m.role === "user" && messageText(m).startsWith("[context-trim]"))) continue;
			const text = messageText(m);
			if (text) expect(first).toContain(text);
			for (const call of m.tool_calls ?? []) {
				expect(first).toContain(`[parent called ${call.function.name}(${call.function.arguments})]`);
			}
		}
	});
});

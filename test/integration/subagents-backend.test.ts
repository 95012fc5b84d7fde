/**
 * The in-process backend against Pi 0.73's SDK and the scripted model: a child is a real agent
 * session with the parent's registry, a persistent (resumable) session file, the default tools,
 * and events the manager understands. (Pi 1.x is covered end to end, under Bun.)
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { AuthStorage, ModelRegistry, SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { createInProcessBackend } from "../../extensions/subagents/backend.ts";
import type { ChildEvent } from "../../extensions/subagents/manager.ts";
import { makeSandbox } from "../fixtures/pi-runner.ts";
import { type ScriptedServer, startScriptedServer } from "../fixtures/scripted-server.ts";

const TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];
let server: ScriptedServer | undefined;
afterEach(async () => {
	await server?.close();
	server = undefined;
});

async function setup(script: Parameters<typeof startScriptedServer>[0]) {
	server = await startScriptedServer(script);
	const sandbox = makeSandbox({ server });
	const registry = ModelRegistry.create(
		AuthStorage.create(join(sandbox.agentDir, "auth.json")),
		join(sandbox.agentDir, "models.json"),
	);
	const model = registry.find("mock", "mock-model");
	const sessionDir = join(sandbox.agentDir, "sessions", "parent", "subagents");
	const backend = createInProcessBackend({ agentDir: sandbox.agentDir, modelRegistry: registry, sessionDir });
	return { sandbox, model, backend, sessionDir };
}

describe("in-process backend (Pi 0.73 SDK)", () => {
	it("runs a real session: tools, system addition, normalized events, a resumable session file", async () => {
		const { sandbox, model, backend, sessionDir } = await setup((req) =>
			req.last?.role === "tool"
				? { text: "listing seen; ANSWER-42", promptTokens: 777 }
				: { toolCalls: [{ name: "ls", arguments: {} }] },
		);
		const events: ChildEvent[] = [];
		const handle = await backend.create(
			{ id: "sa-1", cwd: sandbox.cwd, tools: TOOLS, model, systemAppend: ["SYSTEM-ADDITION-X"] },
			(e) => events.push(e),
		);
		const messages = await handle.prompt("list the files");
		const last = messages[messages.length - 1] as { role: string; content: Array<{ text?: string }> };
		expect(last.role).toBe("assistant");
		expect(last.content.map((c) => c.text ?? "").join("")).toBe("listing seen; ANSWER-42");
		expect([...server!.requests[0].toolNames].sort()).toEqual([...TOOLS].sort());
		expect(server!.requests[0].system).toContain("SYSTEM-ADDITION-X");
		expect(events.filter((e) => e.type === "tool_start").map((e) => (e as { name: string }).name)).toEqual(["ls"]);
		expect(events.filter((e) => e.type === "tool_end")).toEqual([{ type: "tool_end", name: "ls", isError: false }]);
		expect(events.filter((e) => e.type === "turn_end").length).toBe(2);
		expect(
			events
				.filter((e) => e.type === "text")
				.map((e) => (e as { delta: string }).delta)
				.join(""),
		).toContain("ANSWER-42");
		const file = handle.sessionFile!;
		expect(dirname(file)).toBe(sessionDir);
		expect(existsSync(file)).toBe(true);
		handle.dispose();
		const reopened = SessionManager.open(file);
		const texts = JSON.stringify(reopened.getEntries());
		expect(texts).toContain("list the files");
		expect(texts).toContain("ANSWER-42");
	});

	it("abort ends a streaming run promptly with stopReason aborted; the text so far was reported", async () => {
		const { sandbox, model, backend } = await setup(() => ({
			text: "PART-1 PART-2 PART-3 PART-4 PART-5 PART-6",
			chunkChars: 7,
			chunkDelayMs: 300,
		}));
		const deltas: string[] = [];
		const handle = await backend.create(
			{ id: "sa-2", cwd: sandbox.cwd, tools: ["read"], model, systemAppend: [] },
			(e) => {
				if (e.type === "text") deltas.push(e.delta);
			},
		);
		const running = handle.prompt("talk slowly");
		await new Promise((r) => setTimeout(r, 800));
		await handle.abort();
		const messages = await running;
		const last = messages[messages.length - 1] as { stopReason?: string };
		expect(last.stopReason).toBe("aborted");
		expect(deltas.join("")).toContain("PART-1");
		expect(deltas.join("")).not.toContain("PART-6");
		handle.dispose();
	});
});

/**
 * The in-process backend against Pi 0.73's SDK and the scripted model: a child is a real agent
 * session with the parent's registry, a persistent (resumable) session file, the default tools,
 * and events the manager understands. (Pi 1.x is covered end to end, under Bun.)
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { AuthStorage, ModelRegistry, SessionManager } from "@mariozechner/pi-coding-agent";
import { describe, expect, it, onTestFinished } from "vitest";
import { createInProcessBackend, type InProcessBackendOptions } from "../../extensions/subagents/children/backend.ts";
import type { ChildEvent } from "../../extensions/subagents/children/manager.ts";
import { missingSessionFileError } from "../../extensions/subagents/prompt/common.ts";
import { makeSandbox } from "../fixtures/pi-runner.ts";
import { messageText, type Script } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";

const TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];
const startServer = useScriptedServers();

async function setup(script: Script, options: Partial<InProcessBackendOptions> = {}) {
	const server = await startServer(script);
	const sandbox = makeSandbox({ server });
	const registry = ModelRegistry.create(
		AuthStorage.create(join(sandbox.agentDir, "auth.json")),
		join(sandbox.agentDir, "models.json"),
	);
	const model = registry.find("mock", "mock-model");
	const sessionDir = join(sandbox.agentDir, "sessions", "parent", "subagents");
	const backend = createInProcessBackend({
		agentDir: sandbox.agentDir,
		modelRegistry: registry,
		sessionDir,
		...options,
	});
	return { server, sandbox, model, backend, sessionDir };
}

describe("in-process backend (Pi 0.73 SDK)", () => {
	it("runs a real session: tools, system addition, normalized events, a resumable session file", async () => {
		const { server, sandbox, model, backend, sessionDir } = await setup((req) =>
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
		expect([...server.requests[0].toolNames].sort()).toEqual([...TOOLS].sort());
		expect(server.requests[0].system).toContain("SYSTEM-ADDITION-X");
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

	it("reopens a child's session file: the next run's request carries its transcript, appended to the same file", async () => {
		const { server, sandbox, model, backend } = await setup((req) =>
			req.lastUser.includes("SECOND") ? { text: "second reply" } : { text: "first reply R-1" },
		);
		const first = await backend.create(
			{ id: "sa-3", cwd: sandbox.cwd, tools: ["read"], model, systemAppend: [] },
			() => undefined,
		);
		await first.prompt("FIRST task");
		const file = first.sessionFile!;
		first.dispose();
		const again = await backend.create(
			{ id: "sa-3", cwd: sandbox.cwd, tools: ["read"], model, systemAppend: ["BACK-AGAIN"], sessionFile: file },
			() => undefined,
		);
		expect(again.sessionFile).toBe(file);
		await again.prompt("SECOND task");
		again.dispose();
		const req = server.requests[1];
		expect(req.system).toContain("BACK-AGAIN");
		const convo = req.body.messages.filter((m) => m.role !== "system").map((m) => [m.role, messageText(m)]);
		expect(convo).toEqual([
			["user", "FIRST task"],
			["assistant", "first reply R-1"],
			["user", "SECOND task"],
		]);
		expect(JSON.stringify(SessionManager.open(file).getEntries())).toContain("second reply");
	});

	it("refuses a session file that is gone instead of starting an empty session", async () => {
		const { server, sandbox, model, backend } = await setup(() => ({ text: "never" }));
		const gone = join(sandbox.root, "no-such-session.jsonl");
		await expect(
			backend.create(
				{ id: "sa-4", cwd: sandbox.cwd, tools: [], model, systemAppend: [], sessionFile: gone },
				() => undefined,
			),
		).rejects.toThrow(missingSessionFileError({ id: "sa-4", name: "sa-4" }, gone));
		expect(existsSync(gone)).toBe(false);
		expect(server.requests.length).toBe(0);
	});

	it("a child's cwd gets its own trust (no project extension of an untrusted folder), tools within the parent's, no subagent tools past the depth", async () => {
		// Pi loads the project extension through jiti: no transpile cache left in this run's temporary folder.
		const savedCache = process.env.JITI_FS_CACHE;
		process.env.JITI_FS_CACHE = "false";
		onTestFinished(() => {
			if (savedCache === undefined) delete process.env.JITI_FS_CACHE;
			else process.env.JITI_FS_CACHE = savedCache;
		});
		const elsewhere: string[] = [];
		const { server, sandbox, model, backend } = await setup(() => ({ text: "ok" }), {
			trustOf: (cwd) => !elsewhere.includes(cwd),
			toolBound: () => ["read", "grep", "probe_echo"],
		});
		const other = join(sandbox.root, "elsewhere");
		elsewhere.push(other);
		mkdirSync(join(other, ".pi", "extensions"), { recursive: true });
		writeFileSync(
			join(other, ".pi", "extensions", "probe.js"),
			`export default function (pi) {
	pi.registerTool({ name: "probe_echo", label: "Probe", description: "Echo.", parameters: { type: "object", properties: {} },
		async execute() { return { content: [{ type: "text", text: "PROBE" }], details: {} }; } });
}
`,
		);
		const tools = [...TOOLS, "subagent_spawn", "subagent_wait"];
		const untrusted = await backend.create({ id: "sa-1", cwd: other, tools, model, systemAppend: [] }, () => {});
		await untrusted.prompt("hello");
		untrusted.dispose();
		expect([...server.requests[0].toolNames].sort()).toEqual(["find", "grep", "ls", "read"]);
		elsewhere.length = 0; // the same folder, now trusted: its project extension loads, within the bound
		const trusted = await backend.create({ id: "sa-2", cwd: other, tools, model, systemAppend: [] }, () => {});
		await trusted.prompt("hello");
		trusted.dispose();
		expect([...server.requests[1].toolNames].sort()).toEqual(["find", "grep", "ls", "probe_echo", "read"]);
	});
});

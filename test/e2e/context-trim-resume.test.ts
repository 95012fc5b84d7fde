/**
 * context-trim on a resumed real session (test/fixtures/sessions, 1,019 entries; Pi's last usage reading 177,657
 * tokens, so over budget in a 64k window), the real CLI in rpc mode on both lines. The extension sizes the
 * resumed history in idle time after session_start (docs/startup.md); whether the first prompt comes after that
 * idle time or at once after ready, the first request is trimmed the same way and fits the window: the task,
 * one marker, every tool call with its result, and the new prompt last.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, type PiLine, startPiRpc } from "../fixtures/pi-runner.ts";
import { type ChatMessage, type ChatRequest, messageText, type ScriptedServer } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { realSession } from "../fixtures/sessions/index.ts";

const WINDOW = 64_000;
const MAX_TOKENS = 4096;
const MARKER = "[context-trim]";

/** The session with its header's `cwd` set to `cwd` (Pi refuses a session whose working directory is missing). */
function withCwd(text: string, cwd: string): string {
	const newline = text.indexOf("\n");
	const header = JSON.parse(text.slice(0, newline)) as Record<string, unknown>;
	return JSON.stringify({ ...header, cwd }) + text.slice(newline);
}

/** Tool-call ids without a result and result ids without a call, within one request. */
function unpaired(messages: ChatMessage[]): string[] {
	const calls = new Set(messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
	const results = new Set(messages.filter((m) => m.role === "tool").map((m) => String(m.tool_call_id)));
	return [...[...calls].filter((id) => !results.has(id)), ...[...results].filter((id) => !calls.has(id))];
}

/** Resume the session in a fresh sandbox, wait `idleMs` after ready, prompt; the first model request. */
async function firstRequest(
	line: PiLine,
	server: ScriptedServer,
	idleMs: number,
): Promise<{ request: ChatRequest; root: string }> {
	const sandbox = makeSandbox({ server, contextWindow: WINDOW, maxTokens: MAX_TOKENS });
	const file = join(sandbox.root, "resumed.jsonl");
	writeFileSync(file, withCwd(realSession("large-session.jsonl.gz"), sandbox.cwd));
	const rpc = startPiRpc({ line, sandbox, extensions: [extensionPath("context-trim")], args: ["--session", file] });
	try {
		rpc.send({ type: "get_state" });
		await rpc.waitFor((e) => e.type === "response" && e.command === "get_state", 120_000);
		if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
		const before = server.requests.length;
		await rpc.prompt("RESUME-PROMPT-41: say ok", 180_000);
		const request = server.requests[before];
		if (!request) throw new Error(`no request reached the server: ${rpc.stderr}`);
		return { request, root: sandbox.root };
	} finally {
		await rpc.stop();
	}
}

describe.each(PI_LINES)("context-trim on a resumed session on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("trims the first request the same whether it comes after idle time or at once, within the window", async () => {
		const server = await startServer(() => ({ text: "ok" }));
		const idle = await firstRequest(line, server, 3000);
		const atOnce = await firstRequest(line, server, 0);
		for (const { request } of [idle, atOnce]) {
			const messages = request.body.messages;
			const markers = messages.filter((m) => m.role === "user" && messageText(m).startsWith(MARKER));
			expect(markers).toHaveLength(1);
			expect(unpaired(messages)).toEqual([]);
			expect(messageText(messages[messages.length - 1])).toContain("RESUME-PROMPT-41");
			// The server's own count (bytes ÷ 4) with the answer's reserve fits the window.
			expect(Math.ceil(request.raw.length / 4) + MAX_TOKENS).toBeLessThanOrEqual(WINDOW);
		}
		// The same conversation but for each run's own sandbox (its folder is in the session file's path; the system
		// prompt also names the date and the working directory, so it is left out).
		const text = ({ request, root }: { request: ChatRequest; root: string }) =>
			JSON.stringify(request.body.messages.filter((m) => m.role !== "system"))
				.split(root)
				.join("<sandbox>");
		expect(text(idle)).toBe(text(atOnce));
	}, 600_000);
});

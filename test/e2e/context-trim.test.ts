import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { extensionPath, listFiles, makeSandbox, PI_LINES, runPiPrint } from "../fixtures/pi-runner.ts";
import {
	type ChatMessage,
	type ChatRequest,
	messageText,
	type ScriptedServer,
	startScriptedServer,
} from "../fixtures/scripted-server.ts";

const MARKER = "[context-trim]";
const TURNS = 30;

/** A note file of ~3 KB whose every line names it. */
function note(i: number): string {
	return Array.from({ length: 30 }, (_, l) => `note ${i} line ${l}: the quick brown fox jumps over the lazy dog`).join(
		"\n",
	);
}

const markerMessages = (req: ChatRequest) =>
	req.body.messages.filter((m) => m.role === "user" && messageText(m).startsWith(MARKER));

/** Tool-call ids without a result and result ids without a call, within one request. */
function unpaired(messages: ChatMessage[]): string[] {
	const calls = new Set(messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
	const results = new Set(messages.filter((m) => m.role === "tool").map((m) => String(m.tool_call_id)));
	return [...[...calls].filter((id) => !results.has(id)), ...[...results].filter((id) => !calls.has(id))];
}

describe.each(PI_LINES)("context-trim on $label", ({ line }) => {
	let server: ScriptedServer | undefined;
	afterEach(async () => {
		await server?.close();
	});

	it("keeps task, first plan and recent work with one marker naming the left-out tools, and never splits a call from its result", async () => {
		server = await startScriptedServer((req) => {
			if (req.index >= TURNS) return { text: "ALL-DONE" };
			const i = req.index;
			const call =
				i % 3 === 1
					? { name: "bash", arguments: { command: `cat notes/n${i}.txt` } }
					: { name: "read", arguments: { path: `notes/n${i}.txt` } };
			return { text: i === 0 ? "FIRST-PLAN: read every note in order." : `step ${i}`, toolCalls: [call] };
		});
		const files = Object.fromEntries(Array.from({ length: TURNS }, (_, i) => [`notes/n${i}.txt`, note(i)]));
		const sandbox = makeSandbox({ server, contextWindow: 12_000, maxTokens: 1000, files });
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [extensionPath("context-trim")],
			prompt: "TASK-ALPHA: read the notes and report",
		});
		expect(run.exitCode, run.stderr).toBe(0);
		const requests = server.requests;
		expect(requests).toHaveLength(TURNS + 1);
		let trimmingStarted = false;
		for (const req of requests) {
			const messages = req.body.messages;
			expect(req.firstUser).toContain("TASK-ALPHA");
			if (req.index > 0) {
				expect(messages.some((m) => m.role === "assistant" && messageText(m).includes("FIRST-PLAN"))).toBe(true);
				// the newest segment: the previous reply's call and its result close the request
				const last = messages[messages.length - 1];
				expect(last.role).toBe("tool");
				expect(last.tool_call_id).toBe(`call_${req.index - 1}_0`);
			}
			expect(unpaired(messages)).toEqual([]);
			const markers = markerMessages(req);
			if (trimmingStarted) expect(markers).toHaveLength(1);
			else expect(markers.length).toBeLessThanOrEqual(1);
			if (markers.length === 1) trimmingStarted = true;
		}
		expect(trimmingStarted).toBe(true);
		// every request fits the window by the server's own count (bytes ÷ 4), answer included
		for (const req of requests) expect(Math.ceil(req.raw.length / 4) + 1000).toBeLessThanOrEqual(12_000);
		// stable under growth: most trimmed requests start with the previous request's messages
		const trimmed = requests.filter((r) => markerMessages(r).length === 1);
		let kept = 0;
		for (let k = 1; k < trimmed.length; k++) {
			const before = trimmed[k - 1].body.messages.map((m) => JSON.stringify(m));
			const after = trimmed[k].body.messages.map((m) => JSON.stringify(m));
			if (before.every((m, i) => after[i] === m)) kept++;
		}
		expect(trimmed.length).toBeGreaterThanOrEqual(10);
		expect(kept / (trimmed.length - 1)).toBeGreaterThanOrEqual(0.5);
		const final = messageText(markerMessages(requests[requests.length - 1])[0]);
		expect(final).toMatch(/read ×\d+/);
		expect(final).toMatch(/bash ×\d+ \(cat notes\/n1\.txt/);
		expect(final).toContain("notes/n2.txt");
		const sessionFile = /session file (\S+\.jsonl)/.exec(final)?.[1];
		expect(sessionFile).toBeDefined();
		expect(readFileSync(sessionFile as string, "utf8")).toContain("note 2 line 29");
		// the stored session is untouched: every result is still in it
		expect(readFileSync(sessionFile as string, "utf8")).toContain(`note ${TURNS - 1} line 0`);
	});

	it("shows one tool result larger than the whole budget as head and tail with a marker", async () => {
		const lines = Array.from({ length: 400 }, (_, l) => {
			const tag = l === 0 ? "HEAD-LINE" : l === 399 ? "TAIL-LINE" : l === 200 ? "MIDDLE-LINE" : "line";
			return `${tag} ${String(l + 1).padStart(4, "0")} ${"abcdefghij ".repeat(9)}`;
		});
		const big = lines.join("\n");
		server = await startScriptedServer((req) => {
			if (req.index === 0)
				return { text: "FIRST-PLAN: read it", toolCalls: [{ name: "read", arguments: { path: "big.txt" } }] };
			return { text: "ALL-DONE" };
		});
		const sandbox = makeSandbox({ server, contextWindow: 8000, maxTokens: 500, files: { "big.txt": big } });
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [extensionPath("context-trim")],
			prompt: "TASK-BETA: read big.txt",
		});
		expect(run.exitCode, run.stderr).toBe(0);
		expect(server.requests).toHaveLength(2);
		const req = server.requests[1];
		const result = messageText(req.body.messages.find((m) => m.role === "tool"));
		expect(result).toContain("HEAD-LINE 0001");
		expect(result).toContain("TAIL-LINE 0400");
		expect(result).not.toContain("MIDDLE-LINE");
		expect(result).toMatch(/omitted/);
		expect(result.length).toBeLessThan(big.length / 2);
		const marker = messageText(markerMessages(req)[0]);
		expect(marker).toMatch(/read result \([\d,]+ → [\d,]+ bytes\)/);
		// the full text is one read away: the projection stored it as a transcripts artifact
		const stored = listFiles(sandbox.agentDir).filter((f) => f.path.includes("transcripts"));
		expect(stored).toHaveLength(1);
		expect(stored[0].mode).toBe(0o600);
		expect(result).toContain(stored[0].path);
		expect(readFileSync(`${sandbox.agentDir}/${stored[0].path}`, "utf8")).toContain("MIDDLE-LINE 0201");
	});
});

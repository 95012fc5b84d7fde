import { mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import { type ChatRequest, messageText, type ScriptedReply } from "../fixtures/scripted-server.ts";

const EXTENSION = extensionPath("tool-artifacts");
const REDOS_COMMAND = "for i in 1 2 3 4 5 6 7 8 9 10; do head -c 30000 /dev/zero | tr '\\0' a; echo b; done";
const SEQ_OUTPUT = `${Array.from({ length: 200_000 }, (_, i) => String(i + 1)).join("\n")}\n`;
/** Where a search stopped at the match cap says to go on. */
const CONTINUE_AT =
	/\[Stopped after 500 matches at line (\d+); search again with offset=(\d+), or narrow the pattern\.\]$/;

/** Facts a stub states on its first and last lines (counts carry "," separators). */
function parseStub(text: string): { id: string; tool: string; bytes: number; lines: number; path: string } {
	const all = text.split("\n");
	const head =
		/^\[Artifact ([0-9a-f]{12}) \| ([^|]+) \| ([\d,]+) bytes?, ([\d,]+) lines?( \(the last one empty\))?\]$/.exec(
			all[0],
		);
	const foot =
		/^\[Full output stored: (.+) — page it with read \(offset\/limit\) or search it with recall_artifact\("([0-9a-f]{12})"\)\]$/.exec(
			all[all.length - 1],
		);
	if (!head || !foot) throw new Error(`not a stub:\n${text.slice(0, 500)}\n…\n${text.slice(-500)}`);
	expect(foot[2]).toBe(head[1]);
	const count = (digits: string) => Number(digits.replaceAll(",", ""));
	return { id: head[1], tool: head[2], bytes: count(head[3]), lines: count(head[4]), path: foot[1] };
}

const toolMessages = (req: ChatRequest) => req.body.messages.filter((m) => m.role === "tool");
const isSummaryRequest = (req: ChatRequest) => req.body.model === "mock-cheap";
/** The summary model is configured, as a user would; nothing in the extension knows the mock provider. */
const SUMMARY_MODEL = "mock/mock-cheap";
/** The tool output the summary request carried (between <output> tags). */
const summaryInput = (req: ChatRequest) => {
	const user = messageText(req.body.messages.find((m) => m.role === "user"));
	return user.slice(user.indexOf("<output>\n") + "<output>\n".length, user.lastIndexOf("\n</output>"));
};

describe.each(PI_LINES)("tool-artifacts on $label", ({ line }) => {
	const runs = usePrintRuns(line, { extensions: [EXTENSION], args: ["--no-session"] });
	const startServer = runs.startServer;

	it("bash seq 1 200000: stub, exact artifact, recall by pattern, read by offset", async () => {
		const server = await startServer((req): ScriptedReply => {
			const tools = toolMessages(req);
			if (tools.length === 0) return { toolCalls: [{ name: "bash", arguments: { command: "seq 1 200000" } }] };
			if (tools.length === 1) {
				const stub = parseStub(messageText(tools[0]));
				return { toolCalls: [{ name: "recall_artifact", arguments: { id: stub.id, pattern: "^123456$" } }] };
			}
			if (tools.length === 2) {
				// ^12 matches 11,111 lines: more than one search lists.
				const stub = parseStub(messageText(tools[0]));
				return { toolCalls: [{ name: "recall_artifact", arguments: { id: stub.id, pattern: "^12" } }] };
			}
			if (tools.length === 3) {
				const stub = parseStub(messageText(tools[0]));
				const offset = Number(CONTINUE_AT.exec(messageText(tools[2]))?.[2]);
				return { toolCalls: [{ name: "recall_artifact", arguments: { id: stub.id, pattern: "^12", offset } }] };
			}
			if (tools.length === 4) {
				const stub = parseStub(messageText(tools[0]));
				return { toolCalls: [{ name: "read", arguments: { path: stub.path, offset: 123_456, limit: 1900 } }] };
			}
			return { text: "done" };
		});
		const { sandbox, run } = await runs.print(server, {
			prompt: "count",
			sandbox: { headroomConfig: { toolArtifacts: { summary: { enabled: false } } } },
		});
		expect(server.requests.length).toBe(6);

		const seen = messageText(toolMessages(server.requests[1])[0]);
		const stub = parseStub(seen);
		// Counted as read counts (its offsets address these lines), with the empty last line named.
		expect(seen.split("\n")[0]).toMatch(/ \| 1,288,895 bytes, 200,001 lines \(the last one empty\)\]$/);
		expect(stub.tool).toBe("bash");
		expect(stub.bytes).toBe(Buffer.byteLength(SEQ_OUTPUT));
		expect(stub.lines).toBe(200_001);
		expect(stub.path.startsWith(`${sandbox.agentDir}/cache/headroom/tool-outputs/`)).toBe(true);
		expect(Buffer.byteLength(seen)).toBeLessThanOrEqual(4096);
		expect(seen).toContain("200000");
		expect(readFileSync(stub.path, "utf8")).toBe(SEQ_OUTPUT);

		const recall = toolResults(run.events, "recall_artifact")[0];
		expect(recall.isError).toBe(false);
		expect(recall.text.split("\n")).toContain("123456:123456");
		expect(recall.text).toContain("1 matching line for");

		// A capped search says where to go on; the next one starts exactly after its last match.
		const [, first, second] = toolResults(run.events, "recall_artifact");
		expect(first.isError).toBe(false);
		const stop = CONTINUE_AT.exec(first.text);
		// 12, 120-129, 1200-1299 and 12000-12388 are the first 500 lines that start with "12".
		expect(stop?.slice(1)).toEqual(["12388", "12389"]);
		expect(first.text.split("\n").at(-2)).toBe("12388:12388");
		expect(second.isError).toBe(false);
		const rows = second.text.split("\n");
		expect(rows[0]).toContain("first 500 matching lines for /^12/ in lines 12389-200001 of 200001");
		expect(rows[1]).toBe("12389:12389");
		expect(rows.at(-2)).toBe("12888:12888");

		const read = toolResults(run.events, "read")[0];
		expect(read.isError).toBe(false);
		// Paging an artifact with read is left alone: a 1,900-line page is over the threshold, yet no new stub.
		expect(read.text.startsWith("123456\n123457\n123458")).toBe(true);
		expect(read.text).toContain("\n125355");
		expect(read.text.length).toBeGreaterThan(12_000);
	});

	it("a by-name toolArtifacts.stub.command override (bytes, lines, head share) is the stub the model sees", async () => {
		const server = await startServer((req): ScriptedReply => {
			if (toolMessages(req).length === 0)
				return { toolCalls: [{ name: "bash", arguments: { command: "seq 1 20000" } }] };
			return { text: "done" };
		});
		const surfaces = { "toolArtifacts.stub.command": { maxBytes: 2048, maxLines: 40, headShare: 0.2 } };
		await runs.print(server, {
			prompt: "count",
			sandbox: { headroomConfig: { toolArtifacts: { summary: { enabled: false } }, surfaces } },
		});
		const seen = messageText(toolMessages(server.requests[1])[0]);
		const stub = parseStub(seen);
		expect(stub.lines).toBe(20_001);
		// Within the override, not the table's 4,096 bytes and 100 lines; the tail keeps the last number.
		expect(Buffer.byteLength(seen)).toBeLessThanOrEqual(2048);
		expect(seen.split("\n").length).toBeLessThanOrEqual(40);
		expect(seen).toContain("\n20000");
		// Head share 0.2: fewer numbers from the start of the output than from its end.
		const numbers = seen
			.split("\n")
			.filter((l) => /^\d+$/.test(l))
			.map(Number);
		const early = numbers.filter((v) => v < 10_000).length;
		expect(early).toBeGreaterThan(0);
		expect(early).toBeLessThan(numbers.length - early);
	});

	it("a cache folder planted as a symlink: the stub says NOT stored, why, and pages Pi's full-output file", async () => {
		const server = await startServer((req): ScriptedReply => {
			const tools = toolMessages(req);
			if (tools.length === 0) return { toolCalls: [{ name: "bash", arguments: { command: "seq 1 200000" } }] };
			if (tools.length === 1) {
				// The model follows the stub's own read call into Pi's file, a short page of it.
				const call = /read\(path=("(?:[^"\\]|\\.)*"), offset=(\d+), limit=\d+\)/.exec(messageText(tools[0]));
				if (!call) return { text: "no read call in the stub" };
				return {
					toolCalls: [{ name: "read", arguments: { path: JSON.parse(call[1]), offset: Number(call[2]), limit: 50 } }],
				};
			}
			return { text: "done" };
		});
		const sandbox = makeSandbox({ server, headroomConfig: { toolArtifacts: { summary: { enabled: false } } } });
		const elsewhere = join(sandbox.root, "elsewhere");
		mkdirSync(elsewhere);
		symlinkSync(elsewhere, join(sandbox.agentDir, "cache"));
		const run = await runs.printIn(sandbox, { prompt: "count" });
		expect(server.requests.length).toBe(3);

		const seen = messageText(toolMessages(server.requests[1])[0]);
		const lines = seen.split("\n");
		expect(lines[0]).toBe("[Tool output NOT stored | bash | 1,288,895 bytes, 200,001 lines (the last one empty)]");
		const foot =
			/^\[Full output NOT stored \(the artifact store failed: (.+)\) — Pi's full-output file still holds it: (.+) — page it with read \(offset\/limit\) while it exists\]$/.exec(
				lines.at(-1) ?? "",
			);
		expect(foot?.[1]).toContain("symlink");
		const piFile = foot?.[2] ?? "";
		expect(piFile.startsWith(sandbox.tmpDir)).toBe(true);
		expect(readFileSync(piFile, "utf8")).toBe(SEQ_OUTPUT);
		// The excerpt is of the complete output (bash itself returned only its last 2,000 lines), both ends.
		expect(lines).toContain("1");
		expect(lines).toContain("200000");
		expect(Buffer.byteLength(seen)).toBeLessThanOrEqual(4096);
		expect(readdirSync(elsewhere)).toEqual([]);
		// The person hears it too, once.
		expect(run.stderr.match(/could not store a bash result/g)).toHaveLength(1);

		const read = toolResults(run.events, "read")[0];
		expect(read.isError).toBe(false);
		const offset = Number(/offset=(\d+)/.exec(seen)?.[1]);
		expect(read.text.startsWith(`${offset}\n${offset + 1}\n`)).toBe(true);
		expect(lines).not.toContain(String(offset));
	});

	it("a scripted summary model writes the stub's body with temperature 0.3, 2,048 tokens, ≤ 50,000 chars", async () => {
		const server = await startServer((req): ScriptedReply => {
			if (isSummaryRequest(req))
				return {
					text: "SUMMARY-7f3: the numbers 1 to 200000, one per line; exit 0.",
					promptTokens: 12_345,
					completionTokens: 67,
				};
			if (toolMessages(req).length === 0)
				return { toolCalls: [{ name: "bash", arguments: { command: "seq 1 200000" } }] };
			return { text: "done" };
		});
		const { run } = await runs.print(server, {
			prompt: "count",
			sandbox: { headroomConfig: { toolArtifacts: { summary: { model: SUMMARY_MODEL } } } },
		});
		const summaries = server.requests.filter(isSummaryRequest);
		expect(summaries.length).toBe(1);
		const body = summaries[0].body;
		expect(body.temperature).toBe(0.3);
		expect(body.max_tokens).toBe(2048);
		const input = summaryInput(summaries[0]);
		expect(input.length).toBeGreaterThan(10_000);
		expect(input.length).toBeLessThanOrEqual(50_000);
		expect(input.startsWith("1\n2\n3\n")).toBe(true);
		expect(input).toContain("199999\n200000");
		const last = server.requests[server.requests.length - 1];
		const seen = messageText(toolMessages(last)[0]);
		parseStub(seen);
		expect(seen).toContain("SUMMARY-7f3: the numbers 1 to 200000");
		expect(seen).toContain("Summary (by mock/mock-cheap");
		// The call's usage is recorded with the stub (what /headroom totals).
		const stored = run.events
			.filter((e) => e.type === "message_end")
			.map((e) => e.message as { role?: string; details?: { headroom?: { usage?: unknown } } })
			.find((m) => m.role === "toolResult");
		expect(stored?.details?.headroom?.usage).toMatchObject({ calls: 1, input: 12_345, output: 67 });
	});

	it.each([
		["HTTP 500", { error: { status: 500, message: "upstream exploded" } }, "model error"],
		["no answer", { hang: true }, "no answer within 1.5 s"],
	] as Array<[string, ScriptedReply, string]>)(
		"summary model %s → the type's head/tail excerpt with an omission marker",
		async (_label, failure, reason) => {
			const server = await startServer((req): ScriptedReply => {
				if (isSummaryRequest(req)) return failure;
				if (toolMessages(req).length === 0) {
					return {
						toolCalls: [{ name: "bash", arguments: { command: "seq 1 60000; echo 'FATAL: linker failed'; exit 3" } }],
					};
				}
				return { text: "done" };
			});
			await runs.print(server, {
				prompt: "build",
				sandbox: { headroomConfig: { toolArtifacts: { summary: { model: SUMMARY_MODEL, timeoutMs: 1500 } } } },
			});
			// The summary model was asked (and failed); no hang: the run finished within the test's own timeout.
			expect(server.requests.filter(isSummaryRequest).length).toBe(1);
			const last = server.requests[server.requests.length - 1];
			const seen = messageText(toolMessages(last)[0]);
			const stub = parseStub(seen);
			expect(seen).toContain(`[Summary unavailable (${reason}`);
			expect(seen).toMatch(/\[… [\d,]+ lines \([\d,]+ bytes\) omitted/);
			// Command output: 40/60 — the first lines and the failure at the end are both visible, verbatim.
			expect(seen).toContain("\n1\n2\n3\n");
			expect(seen).toContain("FATAL: linker failed");
			expect(seen).toContain("Command exited with code 3");
			expect(readFileSync(stub.path, "utf8")).toContain("59999\n60000\nFATAL: linker failed");
		},
	);

	it("a recall pattern that backtracks without end is stopped with advice; the run goes on", async () => {
		const server = await startServer((req): ScriptedReply => {
			const tools = toolMessages(req);
			if (tools.length === 0) {
				return {
					// Ten lines "aaa…ab": V8 backtracks on one for hours; JavaScriptCore gives up on each after
					// about a second, so under Bun it is the number of lines that makes the search too long.
					toolCalls: [{ name: "bash", arguments: { command: REDOS_COMMAND } }],
				};
			}
			if (tools.length === 1) {
				const stub = parseStub(messageText(tools[0]));
				return { toolCalls: [{ name: "recall_artifact", arguments: { id: stub.id, pattern: "^(a+)+$" } }] };
			}
			return { text: "done" };
		});
		const { run } = await runs.print(server, {
			prompt: "redos",
			sandbox: { headroomConfig: { toolArtifacts: { summary: { enabled: false } } } },
		});
		const recall = toolResults(run.events, "recall_artifact")[0];
		expect(recall.isError).toBe(true);
		expect(recall.text).toMatch(/search was stopped after 5 s: the pattern takes too long/);
		expect(server.requests.length).toBe(3);
	});

	it("three parallel results over the per-turn cap: the largest become artifacts first", async () => {
		const calls = [
			{ name: "bash", id: "call_small", arguments: { command: "sleep 1; head -c 8000 /dev/zero | tr '\\0' a" } },
			{ name: "bash", id: "call_large", arguments: { command: "head -c 20000 /dev/zero | tr '\\0' b" } },
			{ name: "bash", id: "call_mid", arguments: { command: "head -c 14000 /dev/zero | tr '\\0' c" } },
		];
		const server = await startServer((req): ScriptedReply => {
			if (toolMessages(req).length === 0) return { toolCalls: calls };
			return { text: "done" };
		});
		await runs.print(server, {
			prompt: "three",
			sandbox: {
				headroomConfig: {
					toolArtifacts: { thresholdChars: 50_000, turnCapChars: 20_000, summary: { enabled: false } },
				},
			},
		});
		const last = server.requests[server.requests.length - 1];
		const byId = new Map(toolMessages(last).map((m) => [m.tool_call_id, messageText(m)]));
		expect(byId.get("call_small")).toBe("a".repeat(8000));
		const large = parseStub(byId.get("call_large") ?? "");
		const mid = parseStub(byId.get("call_mid") ?? "");
		expect(readFileSync(large.path, "utf8")).toBe("b".repeat(20_000));
		expect(readFileSync(mid.path, "utf8")).toBe("c".repeat(14_000));
		const total = [...byId.values()].reduce((sum, text) => sum + text.length, 0);
		expect(total).toBeLessThanOrEqual(20_000);
	});
});

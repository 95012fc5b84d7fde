/**
 * A tool of another extension that cuts its result head + tail and names the complete text in
 * `details.fullOutputPath` — what Pi 1.x's built-in MCP and codemode tools do — gets an artifact that
 * holds the COMPLETE output, not the head + tail it showed. Runs on both Pi lines; the second test runs
 * Pi 1.x's built-in MCP against a tiny stdio MCP server written here (1.x only: 0.73 has no MCP).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bigReport } from "../fixtures/extensions/head-tail-tool.ts";
import { extensionPath, makeSandbox, PI_LINES, REPO_ROOT, runPiPrint } from "../fixtures/pi-runner.ts";
import { loadRealLogs } from "../fixtures/real-logs.ts";
import { messageText } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";

const TOOL = join(REPO_ROOT, "test/fixtures/extensions/head-tail-tool.ts");
const ROWS = 20_000;
const STORED = /\[Full output stored: (.+) — page it with read/;

describe.each(PI_LINES)("tool outputs saved by another tool's full-output file on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("stores the complete output named in details.fullOutputPath, not the head + tail shown", async () => {
		const server = await startServer((req) => {
			if (!req.body.messages.some((m) => m.role === "tool"))
				return { toolCalls: [{ name: "big_report", arguments: { rows: ROWS } }] };
			return { text: "done" };
		});
		const sandbox = makeSandbox({ server, headroomConfig: { toolArtifacts: { summary: { enabled: false } } } });
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [extensionPath("tool-artifacts"), TOOL],
			prompt: "report",
			args: ["--no-session"],
		});
		expect(run.exitCode, run.stderr).toBe(0);
		const tool = server.requests.at(-1)?.body.messages.find((m) => m.role === "tool");
		const stub = messageText(tool);
		const path = STORED.exec(stub)?.[1];
		expect(path, stub).toBeDefined();
		const stored = readFileSync(path as string, "utf8");
		expect(stored).toBe(bigReport(ROWS));
		// The middle the tool cut out is in the artifact, and the stub does not call the output partial.
		expect(stored).toContain(`row ${ROWS / 2}: `);
		expect(stub).not.toMatch(/partial|NOT saved/i);
		expect(stub.split("\n")[0]).toMatch(/big_report \| [\d,]+ bytes, 20,003 lines/);
	});
});

/**
 * Real outputs whose end Pi's tail check used to refuse: real logs of the corpus ending in several blank
 * lines (as RPM and xcodebuild logs do), in "\r\n" blank lines, with no final newline, and with a last line
 * longer than Pi's 50 KB (cut by its byte limit; on 0.73 Pi then shows "(no output)").
 */
function endingOutputs(): Array<{ name: string; text: string; command: (file: string) => string }> {
	const corpus = new Map(loadRealLogs().map((log) => [log.id, log.text]));
	const log = (id: string) => corpus.get(id) as string;
	const oneLine = log("mocha-json-large").replaceAll("\n", " ");
	return [
		{ name: "blank-lines", text: `${log("gha-pytorch-job")}\n\n\n`, command: (f) => `cat ${f}` },
		{ name: "crlf-blank-lines", text: `${log("nunit-jenkins")}\r\n\r\n`, command: (f) => `cat ${f}` },
		{ name: "no-final-newline", text: log("jest-junit-large"), command: (f) => `cat ${f}` },
		{ name: "long-last-line", text: `${log("tap-tests")}\n${oneLine}\n`, command: (f) => `cat ${f}` },
		// A failing command: on 0.73 its error result has no details, only the notice names the file.
		{ name: "failing-blank-lines", text: `${log("java-junit-pulsar")}\n\n`, command: (f) => `cat ${f}; exit 3` },
	];
}

describe.each(PI_LINES)("real outputs with every kind of ending, cat through bash on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("stores every byte of each output: blank lines, \\r\\n, no final newline, a last line over 50 KB", async () => {
		const outputs = endingOutputs();
		const server = await startServer((req) => {
			const done = req.body.messages.filter((m) => m.role === "tool").length;
			if (done < outputs.length) {
				const file = `${outputs[done].name}.log`;
				return { toolCalls: [{ name: "bash", arguments: { command: outputs[done].command(file) } }] };
			}
			return { text: "done" };
		});
		const sandbox = makeSandbox({ server, headroomConfig: { toolArtifacts: { summary: { enabled: false } } } });
		for (const o of outputs) writeFileSync(join(sandbox.cwd, `${o.name}.log`), o.text);
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [extensionPath("tool-artifacts")],
			prompt: "cat the logs",
			args: ["--no-session"],
		});
		expect(run.exitCode, run.stderr).toBe(0);
		const stubs = (server.requests.at(-1)?.body.messages ?? []).filter((m) => m.role === "tool").map(messageText);
		expect(stubs.length).toBe(outputs.length);
		outputs.forEach((o, i) => {
			const stub = stubs[i];
			// The package's own note of a partial artifact (the log itself may say "partial").
			expect(stub, o.name).not.toMatch(/complete output no longer exists|the artifact holds only/i);
			const path = STORED.exec(stub)?.[1];
			expect(path, `${o.name}: ${stub.slice(0, 300)}`).toBeDefined();
			expect(readFileSync(path as string).equals(Buffer.from(o.text, "utf8")), o.name).toBe(true);
		});
	});
});

/** A minimal MCP server over stdio (newline-delimited JSON-RPC): one tool, `big`, with a large answer. */
const TINY_MCP_SERVER = `
const rows = [];
for (let i = 1; i <= ${ROWS}; i++) rows.push("row " + i + ": value=" + ((i * 7919) % 10007));
const full = "REPORT-BEGIN\\n" + rows.join("\\n") + "\\nREPORT-END-MARK\\n";
let buffer = "";
const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\\n");
process.stdin.setEncoding("utf8");
process.stdin.on("data", (data) => {
	buffer += data;
	let nl;
	while ((nl = buffer.indexOf("\\n")) >= 0) {
		const line = buffer.slice(0, nl).trim();
		buffer = buffer.slice(nl + 1);
		if (!line) continue;
		const req = JSON.parse(line);
		if (req.id === undefined) continue;
		if (req.method === "initialize")
			send({ id: req.id, result: { protocolVersion: req.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "tiny", version: "1.0.0" } } });
		else if (req.method === "tools/list")
			send({ id: req.id, result: { tools: [{ name: "big", description: "A big report", inputSchema: { type: "object", properties: {} } }] } });
		else if (req.method === "tools/call") send({ id: req.id, result: { content: [{ type: "text", text: full }] } });
		else if (req.method === "ping") send({ id: req.id, result: {} });
		else send({ id: req.id, error: { code: -32601, message: "no method " + req.method } });
	}
});
`;

describe("Pi 1.x's built-in MCP against a local stdio server (1.x only)", () => {
	const startServer = useScriptedServers();

	it("stores the MCP tool's complete output, which Pi's MCP cut head + tail and saved", async () => {
		const MCP_TOOL = "mcp__tiny__big";
		const server = await startServer((req) => {
			if (!req.body.messages.some((m) => m.role === "tool")) return { toolCalls: [{ name: MCP_TOOL, arguments: {} }] };
			return { text: "done" };
		});
		const sandbox = makeSandbox({ server, headroomConfig: { toolArtifacts: { summary: { enabled: false } } } });
		const script = join(sandbox.root, "tiny-mcp.cjs");
		writeFileSync(script, TINY_MCP_SERVER);
		writeFileSync(
			join(sandbox.agentDir, "mcp.json"),
			JSON.stringify({ mcpServers: { tiny: { command: process.execPath, args: [script], exposure: "direct" } } }),
		);
		const run = await runPiPrint({
			line: "1.x",
			sandbox,
			extensions: [extensionPath("tool-artifacts"), "builtin:mcp"],
			prompt: "report",
			args: ["--no-session"],
		});
		expect(run.exitCode, run.stderr).toBe(0);
		expect(server.requests[0].toolNames).toContain(MCP_TOOL);
		const tool = server.requests.at(-1)?.body.messages.find((m) => m.role === "tool");
		const stub = messageText(tool);
		const path = STORED.exec(stub)?.[1];
		expect(path, stub).toBeDefined();
		expect(readFileSync(path as string, "utf8")).toBe(bigReport(ROWS));
		expect(stub).not.toMatch(/partial|NOT saved/i);
	});
});

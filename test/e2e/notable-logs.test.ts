/**
 * Real logs through the real `pi` CLI on both Pi lines: the scripted model `cat`s three logs of the real-log
 * corpus (test/fixtures/real-logs/) through bash, the summary model is unreachable (a provider on a closed
 * port), so each stub's body is the package's own excerpt. Every critical line of each log, picked by hand
 * in the corpus index, must be in the stub the model received, within the command stub's 4 KiB.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, runPiPrint } from "../fixtures/pi-runner.ts";
import { criticalVisible, loadRealLogs, type RealLog } from "../fixtures/real-logs.ts";
import { type ChatRequest, messageText, type ScriptedReply } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";

const EXTENSION = extensionPath("tool-artifacts");
/** Three logs per Pi line: answers in the middle, 300+ lines above the end, and under the clean-up. */
const LOGS: Record<string, readonly string[]> = {
	"0.73": ["mozilla-reftest-fail", "gha-pytorch-job", "java-fatal-exception"],
	"1.x": ["mozilla-mochitest-fail", "chrome-check-failure", "jest-junit-large"],
};
const STUB_MAX_BYTES = 4096;

const toolMessages = (req: ChatRequest) => req.body.messages.filter((m) => m.role === "tool");
const isMain = (req: ChatRequest) => req.body.model === "mock-model";

describe.each(PI_LINES)("notable lines of real logs on $label", ({ line }) => {
	const startServer = useScriptedServers();
	const corpus = new Map(loadRealLogs().map((log) => [log.id, log]));
	const logs = LOGS[line].map((id) => corpus.get(id) as RealLog);

	it("cat of three real logs, summary model unreachable: every critical line is in the stub", async () => {
		const server = await startServer((req): ScriptedReply => {
			const done = toolMessages(req).length;
			if (done < logs.length) {
				return { toolCalls: [{ name: "bash", arguments: { command: `cat ${logs[done].id}.log` } }] };
			}
			return { text: "done" };
		});
		const sandbox = makeSandbox({
			server,
			headroomConfig: { toolArtifacts: { summary: { model: "offline/cheap", timeoutMs: 5000 } } },
		});
		// A second provider on a closed port: the summary model is configured but unreachable.
		const modelsPath = join(sandbox.agentDir, "models.json");
		const models = JSON.parse(readFileSync(modelsPath, "utf8"));
		const mock = Object.values(models.providers)[0] as { models: Array<{ id: string }> };
		models.providers.offline = {
			...mock,
			baseUrl: "http://127.0.0.1:9/v1",
			models: [{ ...mock.models[0], id: "cheap" }],
		};
		writeFileSync(modelsPath, JSON.stringify(models, null, 2));
		for (const log of logs) writeFileSync(join(sandbox.cwd, `${log.id}.log`), log.raw);

		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [EXTENSION],
			prompt: "read the logs",
			args: ["--no-session"],
		});
		expect(run.exitCode, run.stderr).toBe(0);
		const last = server.requests.filter(isMain).at(-1) as ChatRequest;
		const stubs = toolMessages(last).map((m) => messageText(m));
		expect(stubs.length).toBe(logs.length);
		logs.forEach((log, i) => {
			const stub = stubs[i];
			expect(stub, log.id).toMatch(/^\[Artifact [0-9a-f]{12} \| bash \|/);
			expect(stub, log.id).toContain("[Summary unavailable (model error");
			expect(stub, log.id).toContain("Notable lines (L<n> is line n of the full text: read it with offset=n):");
			expect(Buffer.byteLength(stub), log.id).toBeLessThanOrEqual(STUB_MAX_BYTES);
			expect(criticalVisible(stub, log).missing, log.id).toEqual([]);
			// Each listed line number opens that line in the stored artifact.
			const path = /\[Full output stored: (.+) — page it/.exec(stub)?.[1] as string;
			const stored = readFileSync(path, "utf8").split("\n");
			for (const m of stub.matchAll(/^L(\d+): (.*)$/gm)) {
				const shown = m[2]
					.replace(/ \(×[\d,]+\)$/, "")
					.replace(/…$/, "")
					.slice(0, 60);
				expect(stored[Number(m[1]) - 1], `${log.id} L${m[1]}`).toContain(shown);
			}
		});
	});
	it("cat of the same logs, summary model up answering nothing useful: the critical lines stay, the summary beside them", async () => {
		const useless = "The command ran and printed a long log of its progress.";
		const server = await startServer((req): ScriptedReply => {
			if (!isMain(req)) return { text: useless };
			const done = toolMessages(req).length;
			if (done < logs.length) {
				return { toolCalls: [{ name: "bash", arguments: { command: `cat ${logs[done].id}.log` } }] };
			}
			return { text: "done" };
		});
		const sandbox = makeSandbox({
			server,
			headroomConfig: { toolArtifacts: { summary: { model: "mock/mock-cheap", timeoutMs: 20_000 } } },
		});
		for (const log of logs) writeFileSync(join(sandbox.cwd, `${log.id}.log`), log.raw);
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [EXTENSION],
			prompt: "read the logs",
			args: ["--no-session"],
		});
		expect(run.exitCode, run.stderr).toBe(0);
		expect(server.requests.filter((r) => !isMain(r)).length).toBe(logs.length);
		const last = server.requests.filter(isMain).at(-1) as ChatRequest;
		const stubs = toolMessages(last).map((m) => messageText(m));
		expect(stubs.length).toBe(logs.length);
		logs.forEach((log, i) => {
			const stub = stubs[i];
			expect(stub, log.id).toContain(`Summary (by mock/mock-cheap; verbatim text is in the artifact):\n${useless}`);
			expect(stub, log.id).toContain("Notable lines (L<n> is line n of the full text: read it with offset=n):");
			expect(Buffer.byteLength(stub), log.id).toBeLessThanOrEqual(STUB_MAX_BYTES);
			expect(criticalVisible(stub, log).missing, log.id).toEqual([]);
			// Every one of these logs failed, and the summary says nothing of it: the stub says they disagree.
			expect(stub, log.id).toContain("[Note: the summary and the verbatim lines disagree");
		});
	});
});

/**
 * Real logs through the real `pi` CLI on both Pi lines: the scripted model `cat`s three logs of the real-log
 * corpus (test/fixtures/real-logs/) through bash, the summary model is unreachable (a provider on a closed
 * port), so each stub's body is the package's own excerpt. Every critical line of each log, picked by hand
 * in the corpus index, must be in the stub the model received, within the command stub's 4 KiB.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { catScript, catStubs, isMain, unreachableSummaryModel } from "../fixtures/cat-logs.ts";
import { extensionPath, makeSandbox, PI_LINES } from "../fixtures/pi-runner.ts";
import { criticalVisible, loadRealLogs, type RealLog } from "../fixtures/real-logs.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";

const EXTENSION = extensionPath("tool-artifacts");
/** Three logs per Pi line: answers in the middle, 300+ lines above the end, and under the clean-up. */
const LOGS: Record<string, readonly string[]> = {
	"0.73": ["mozilla-reftest-fail", "gha-pytorch-job", "java-fatal-exception"],
	"1.x": ["mozilla-mochitest-fail", "chrome-check-failure", "jest-junit-large"],
};
/** A command stub's bytes at most: its surface, a failing log's growth, the summary's part (or the note why none). */
const STUB_MAX_BYTES = (
	["toolArtifacts.stub.command", "toolArtifacts.stubOverflow", "toolArtifacts.summaryBeside"] as const
)
	.map((name) => SURFACES[name].maxBytes)
	.reduce((sum, bytes) => sum + bytes, 0);

describe.each(PI_LINES)("notable lines of real logs on $label", ({ line }) => {
	const startServer = useScriptedServers();
	const corpus = new Map(loadRealLogs().map((log) => [log.id, log]));
	const logs = LOGS[line].map((id) => corpus.get(id) as RealLog);
	const names = logs.map((log) => `${log.id}.log`);
	const files = logs.map((log) => ({ name: `${log.id}.log`, text: log.raw }));

	it("cat of three real logs, summary model unreachable: every critical line is in the stub", async () => {
		const server = await startServer(catScript(names));
		const sandbox = makeSandbox({
			server,
			headroomConfig: { toolArtifacts: { summary: { model: "offline/cheap", timeoutMs: 5000 } } },
		});
		unreachableSummaryModel(sandbox);
		const stubs = await catStubs(line, sandbox, server, EXTENSION, files);
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
		const server = await startServer(catScript(names, useless));
		const sandbox = makeSandbox({
			server,
			headroomConfig: { toolArtifacts: { summary: { model: "mock/mock-cheap", timeoutMs: 20_000 } } },
		});
		const stubs = await catStubs(line, sandbox, server, EXTENSION, files);
		expect(server.requests.filter((r) => !isMain(r)).length).toBe(logs.length);
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

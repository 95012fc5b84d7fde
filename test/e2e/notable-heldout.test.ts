/**
 * Held-out logs through the real `pi` CLI on both Pi lines (issue 32): the scripted model `cat`s six failing
 * logs of the held-out corpus (test/fixtures/heldout-logs/, logs no rule was written on) through bash, once
 * with the summary model unreachable and once with a summary model answering a text that says nothing. The
 * six are a fixed, seeded draw (SEED below, never chosen by looking at results) from the dev split's failing
 * logs over the stub threshold, one per ecosystem and at most two per CI system. Each stub the model received
 * holds exactly the critical lines the in-process evaluation (test/fixtures/notable-eval.ts, what the corpus
 * figures count) shows, with the summary up and down alike, within the command stub's 4 KiB; each listed line
 * number opens that line in the stored artifact.
 */
import { createHash } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { cleanLogLine } from "../../extensions/shared/text/notable.ts";
import { catScript, catStubs, isMain, unreachableSummaryModel } from "../fixtures/cat-logs.ts";
import { type EvalLog, loadHeldout } from "../fixtures/notable-eval.ts";
import { extensionPath, makeSandbox, PI_LINES } from "../fixtures/pi-runner.ts";
import { piBashResult, stubView, unreachableSummaryDeps } from "../fixtures/real-log-views.ts";
import { criticalVisible } from "../fixtures/real-logs.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const EXTENSION = extensionPath("tool-artifacts");
/** A command stub's bytes at most: its surface, a failing log's growth, the summary's part (or the note why none). */
const STUB_MAX_BYTES = (
	["toolArtifacts.stub.command", "toolArtifacts.stubOverflow", "toolArtifacts.summaryBeside"] as const
)
	.map((name) => SURFACES[name].maxBytes)
	.reduce((sum, bytes) => sum + bytes, 0);
/** The seed of the draw; fixed before any result was seen. */
const SEED = "issue-32-e2e";
const SAMPLE = 6;
/** Over this many bytes a bash result is stubbed on every line (bash's threshold is lower). */
const OVER_THRESHOLD = 60_000;

/** The seeded draw: dev-split failing logs over the threshold in hash order, one per ecosystem, two per CI. */
function sample(): EvalLog[] {
	const rank = (log: EvalLog) => createHash("sha256").update(`${SEED}\u0000${log.id}`).digest("hex");
	const pool = loadHeldout()
		.filter((log) => log.split === "dev" && log.outcome === "fail" && log.text.length > OVER_THRESHOLD)
		.sort((a, b) => (rank(a) < rank(b) ? -1 : 1));
	const picked: EvalLog[] = [];
	for (const log of pool) {
		if (picked.length === SAMPLE) break;
		if (picked.some((p) => p.ecosystem === log.ecosystem)) continue;
		if (picked.filter((p) => p.ci === log.ci).length >= 2) continue;
		picked.push(log);
	}
	return picked;
}

const LOGS = sample();
const lineNumbers = (stub: string) => [...stub.matchAll(/^L(\d+): (.*)$/gm)];

/** What the in-process evaluation shows of each log (the corpus figures' stub), by id. */
const expected = new Map<string, string[]>();
const tmp = makeTestDir("notable-heldout-eval");
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function evaluationView(log: EvalLog): Promise<string[]> {
	const seen = expected.get(log.id);
	if (seen) return seen;
	const deps = unreachableSummaryDeps(new ArtifactStore({ agentDir: join(tmp, "agent") }));
	const stub = await stubView(log.file, piBashResult(log.text, tmp), deps);
	const visible = criticalVisible(stub, log).visible.map((m) => m.text);
	expected.set(log.id, visible);
	return visible;
}

function checkStub(stub: string, log: EvalLog, visible: readonly string[]): void {
	expect(stub, log.id).toMatch(/^\[Artifact [0-9a-f]{12} \| bash \|/);
	expect(stub, log.id).toContain("Notable lines (L<n> is line n of the full text: read it with offset=n):");
	expect(Buffer.byteLength(stub), log.id).toBeLessThanOrEqual(STUB_MAX_BYTES);
	expect(
		criticalVisible(stub, log).visible.map((m) => m.text),
		log.id,
	).toEqual(visible);
	const path = /\[Full output stored: (.+) — page it/.exec(stub)?.[1] as string;
	const stored = readFileSync(path, "utf8").split("\n");
	for (const m of lineNumbers(stub)) {
		const shown = m[2]
			.replace(/ \(×[\d,]+\)$/, "")
			.replace(/…$/, "")
			.slice(0, 60);
		// The stub shows a line cleaned (no ANSI, no CI prefix), as the scan matched it.
		expect(cleanLogLine(stored[Number(m[1]) - 1]), `${log.id} L${m[1]}`).toContain(shown);
	}
}

describe("the seeded draw", () => {
	it("is six failing dev-split logs of six ecosystems and at least three CI systems", () => {
		expect(LOGS.length).toBe(SAMPLE);
		expect(new Set(LOGS.map((l) => l.ecosystem)).size).toBe(SAMPLE);
		expect(new Set(LOGS.map((l) => l.ci)).size).toBeGreaterThanOrEqual(3);
		for (const log of LOGS) expect(log.critical.length, log.id).toBeGreaterThan(0);
	});
});

describe.each(PI_LINES)("held-out logs on $label", ({ line }) => {
	const startServer = useScriptedServers();

	const names = LOGS.map((log) => `${log.id}.log`);
	const files = LOGS.map((log) => ({ name: `${log.id}.log`, text: log.text }));

	it("summary model unreachable: each stub shows the critical lines the corpus figures count", async () => {
		const server = await startServer(catScript(names));
		const sandbox = makeSandbox({
			server,
			headroomConfig: { toolArtifacts: { summary: { model: "offline/cheap", timeoutMs: 5000 } } },
		});
		unreachableSummaryModel(sandbox);
		const stubs = await catStubs(line, sandbox, server, EXTENSION, files);
		for (const [i, log] of LOGS.entries()) {
			expect(stubs[i], log.id).toContain("[Summary unavailable (model error");
			checkStub(stubs[i], log, await evaluationView(log));
		}
	});

	it("summary model up answering nothing useful: the same critical lines, the summary beside them", async () => {
		const useless = "The command ran and printed a long log of its progress.";
		const server = await startServer(catScript(names, useless));
		const sandbox = makeSandbox({
			server,
			headroomConfig: { toolArtifacts: { summary: { model: "mock/mock-cheap", timeoutMs: 20_000 } } },
		});
		const stubs = await catStubs(line, sandbox, server, EXTENSION, files);
		expect(server.requests.filter((r) => !isMain(r)).length).toBe(LOGS.length);
		for (const [i, log] of LOGS.entries()) {
			expect(stubs[i], log.id).toContain(`Summary (by mock/mock-cheap; verbatim text is in the artifact):\n${useless}`);
			checkStub(stubs[i], log, await evaluationView(log));
			// Every one of these logs failed, and the summary says nothing of it: the stub says they disagree.
			expect(stubs[i], log.id).toContain("[Note: the summary and the verbatim lines disagree");
		}
	});
});

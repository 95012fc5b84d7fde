/**
 * Subagents end to end: the real pi CLI (both lines) with this extension, the scripted model
 * playing parent and children. Scenarios 1–5 of the subagents issue.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, startPiRpc, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import type { ChatRequest } from "../fixtures/scripted-server.ts";
import { expectWaitThenRead, spawnWaitReadScript } from "./long-answer-scenario.ts";
import {
	artifactFacts,
	calledTools,
	footerReads,
	isChild,
	linesOf,
	numberedAnswer,
	pairsKept,
	sha256,
	userTexts,
	utf8Bytes,
} from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
const KIB = 1024;
/** Scenario 1: BEGIN, 0001…0420, END — about 37 KB. */
const LONG = numberedAnswer("", 420, 37_000);
const TAGS = ["A", "B", "C", "D"];
/** Scenario 2: four answers of 21,333 bytes / 262 lines. */
const QUARTER = Object.fromEntries(TAGS.map((t) => [t, numberedAnswer(t, 260, 21_333)]));
const AUTO_HEADER = "delivered automatically";

function childAnswer(req: ChatRequest): string {
	const task = /CHILD-TASK (\S+)/.exec(req.firstUser)?.[1] ?? "";
	if (task === "long") return LONG;
	if (task.startsWith("quarter-")) return QUARTER[task.slice("quarter-".length)];
	if (task === "short") return "short answer: 42";
	return `unknown task ${task}`;
}

function spawnAll(tasks: string[]) {
	return {
		toolCalls: tasks.map((t) => ({ name: "subagent_spawn", arguments: { prompt: `CHILD-TASK ${t}`, name: t } })),
	};
}

/** Asserts the projection guarantees for one result text against the child's exact answer. */
function expectProjected(text: string, answer: string, begin: string, end: string) {
	expect(text).toContain(begin);
	expect(text).toContain(end);
	expect(text).toMatch(/omitted/);
	const [read] = footerReads(text);
	expect(read, text.slice(-600)).toBeDefined();
	const artifact = artifactFacts(read.path);
	expect(artifact.content === answer).toBe(true);
	expect(artifact.mode).toBe(0o600);
	expect(artifact.name).toBe(`${sha256(answer)}.txt`);
	return read;
}

describe.each(PI_LINES)("subagents on $label", ({ line }) => {
	const runs = usePrintRuns(line, { extensions: EXT, args: ["--no-session"] });
	const startServer = runs.startServer;

	it("1a: a 37 KB answer via subagent_wait is ≤ 16 KiB head+tail, and the footer's read returns the omitted lines", async () => {
		const server = await startServer(spawnWaitReadScript(childAnswer, spawnAll(["long"]).toolCalls[0].arguments));
		const { run } = await runs.print(server, { prompt: "delegate" });
		// Within the wait budget, BEGIN and END kept; the read call brings exactly the omitted lines.
		const { wait, read } = expectWaitThenRead(run.events, LONG);
		expectProjected(wait.text, LONG, "BEGIN", "END");
		// The first omitted lines are not in the view.
		const firstOmitted = linesOf(LONG, read.offset, 1)[0];
		expect(wait.text).not.toContain(firstOmitted.slice(0, 5) + "x");
		expect((wait.details as { headroom?: { projected: boolean; artifacts: string[] } }).headroom).toEqual({
			projected: true,
			artifacts: [read.path],
		});
	});

	/** Scenario 1b's run: one long child answer delivered automatically; its message as the parent's model got it. */
	async function deliverLongAutomatically(headroomConfig?: Record<string, unknown>) {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: childAnswer(req), delayMs: 600 };
			const called = calledTools(req);
			if (called.length === 0) return spawnAll(["long"]);
			return { text: "ok" };
		});
		const sandbox = makeSandbox({ server, headroomConfig });
		const rpc = startPiRpc({ line, sandbox, extensions: EXT, args: ["--no-session"] });
		try {
			await rpc.prompt("delegate");
			// The delivery starts a new parent run on its own.
			await rpc.waitFor((e) => e.type === "agent_end" && rpc.agentEnds() >= 2, 30_000);
		} finally {
			await rpc.stop();
		}
		const delivered = server.requests
			.filter((r) => !isChild(r))
			.flatMap((r) => userTexts(r))
			.filter((t) => t.includes(AUTO_HEADER));
		expect(new Set(delivered).size).toBe(1);
		const message = delivered[0];
		return { rpc, message, body: message.slice(message.indexOf("\nBEGIN") + 1) };
	}

	it("1b: the same answer delivered automatically is ≤ 24 KiB per result with the same guarantees", async () => {
		const { rpc, message, body } = await deliverLongAutomatically();
		// The user sees it too: a displayed custom message in the transcript.
		const shown = rpc.events.filter((e) => {
			const m = e.message as { role?: string; customType?: string; display?: boolean } | undefined;
			return e.type === "message_end" && m?.customType === "subagent-result" && m.display === true;
		});
		expect(shown.length).toBe(1);
		expect(utf8Bytes(body)).toBeLessThanOrEqual(24 * KIB);
		expect(utf8Bytes(body)).toBeGreaterThan(16 * KIB); // the automatic budget, not the wait one
		expectProjected(message, LONG, "BEGIN", "END");
	});

	it("1c: a by-name override of subagents.autoDelivery (bytes, lines, head share) is what the model is delivered", async () => {
		const { message, body } = await deliverLongAutomatically({
			surfaces: { "subagents.autoDelivery": { maxBytes: 6 * KIB, maxLines: 60, headShare: 0.25 } },
		});
		expect(utf8Bytes(body)).toBeLessThanOrEqual(6 * KIB);
		expect(body.split("\n").length).toBeLessThanOrEqual(60);
		expectProjected(message, LONG, "BEGIN", "END");
		// Head share 0.25: fewer numbered lines before the omission marker than after it.
		const marker = body.search(/omitted/);
		const numbered = (text: string) => (text.match(/^\d{4}/gm) ?? []).length;
		expect(numbered(body.slice(0, marker))).toBeGreaterThan(0);
		expect(numbered(body.slice(0, marker))).toBeLessThan(numbered(body.slice(marker)));
	});

	it("2: four 21,333-byte answers in one wait: ≤ 48 KiB, 4/4 BEGIN+END, 4/4 omission marks, 4/4 own artifacts", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: childAnswer(req) };
			const called = calledTools(req);
			if (called.length === 0) return spawnAll(TAGS.map((t) => `quarter-${t}`));
			if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "done" };
		});
		const { run } = await runs.print(server, { prompt: "fan out" });
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(utf8Bytes(QUARTER.A)).toBe(21_333);
		expect(QUARTER.A.split("\n").length).toBe(262);
		expect(utf8Bytes(wait.text)).toBeLessThanOrEqual(49_152);
		expect(pairsKept(wait.text, TAGS)).toBe(4);
		expect(wait.text.match(/omitted — see the footer/g)?.length).toBe(4);
		const reads = footerReads(wait.text);
		expect(new Set(reads.map((r) => r.path)).size).toBe(4);
		for (const tag of TAGS) {
			const section = wait.text.slice(wait.text.indexOf(`BEGIN-${tag}`));
			const [read] = footerReads(section);
			expect(artifactFacts(read.path).content === QUARTER[tag]).toBe(true);
		}
	});

	it("3: four children finishing while the parent works arrive as one automatic batch ≤ 48 KiB", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: childAnswer(req) };
			const called = calledTools(req);
			if (called.length === 0) return spawnAll(TAGS.map((t) => `quarter-${t}`));
			if (!called.includes("bash")) return { toolCalls: [{ name: "bash", arguments: { command: "sleep 3" } }] };
			return { text: "worked" };
		});
		const sandbox = makeSandbox({ server });
		const rpc = startPiRpc({ line, sandbox, extensions: EXT, args: ["--no-session"] });
		try {
			await rpc.prompt("fan out and keep working", 60_000);
			await rpc.waitFor((e) => e.type === "agent_end" && rpc.agentEnds() >= 2, 30_000);
		} finally {
			await rpc.stop();
		}
		const parentRequests = server.requests.filter((r) => !isChild(r));
		const last = parentRequests[parentRequests.length - 1];
		const deliveries = userTexts(last).filter((t) => t.includes(AUTO_HEADER));
		expect(deliveries.length).toBe(1);
		expect(deliveries[0]).toContain("4 subagent results");
		expect(utf8Bytes(deliveries[0])).toBeLessThanOrEqual(49_152);
		expect(pairsKept(deliveries[0], TAGS)).toBe(4);
		expect(new Set(footerReads(deliveries[0]).map((r) => r.path)).size).toBe(4);
	});

	it("4: low headroom shrinks per-result budgets (never below the minimum window); an unusable reading falls back to static caps", async () => {
		const windowTokens = 128_000;
		let promptTokens = 0;
		const server = await startServer((req) => {
			if (isChild(req)) return { text: childAnswer(req) };
			const called = calledTools(req);
			if (called.length === 0) return spawnAll(TAGS.map((t) => `quarter-${t}`));
			const waits = called.filter((c) => c === "subagent_wait").length;
			if (waits === 0) return { toolCalls: [{ name: "subagent_wait", arguments: {} }], promptTokens };
			return { text: "done" };
		});
		const results: Array<{ text: string; details: unknown }> = [];
		for (const reported of [windowTokens - 4096 - 9_000, windowTokens + 50_000]) {
			promptTokens = reported;
			const { run } = await runs.print(server, {
				prompt: "fan out",
				sandbox: { contextWindow: windowTokens, maxTokens: 4096 },
			});
			results.push(toolResults(run.events, "subagent_wait")[0]);
		}
		type D = { allocation: { source: string; batchBytes: number }; items: Array<{ projectedBytes: number }> };
		const [low, unknown] = results.map((r) => r.details as D);
		expect(low.allocation.source).toBe("headroom");
		expect(low.allocation.batchBytes).toBeLessThan(48 * KIB);
		for (const item of low.items) {
			expect(item.projectedBytes).toBeLessThan(16 * KIB);
			expect(item.projectedBytes).toBeGreaterThanOrEqual(1024 - 64);
		}
		expect(utf8Bytes(results[0].text)).toBeLessThanOrEqual(low.allocation.batchBytes);
		expect(pairsKept(results[0].text, TAGS)).toBe(4);
		expect(unknown.allocation.source).toBe("static");
		expect(unknown.allocation.batchBytes).toBe(48 * KIB);
		expect(Math.max(...unknown.items.map((i) => i.projectedBytes))).toBeGreaterThan(10 * KIB);
	});

	it("5: a short answer arrives verbatim and writes no artifact", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: childAnswer(req) };
			const called = calledTools(req);
			if (called.length === 0) return spawnAll(["short"]);
			if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "done" };
		});
		const { sandbox, run } = await runs.print(server, { prompt: "ask" });
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(wait.text.endsWith("\nshort answer: 42")).toBe(true);
		expect(wait.text).not.toMatch(/Full text/);
		expect((wait.details as { headroom: { artifacts: string[] } }).headroom.artifacts).toEqual([]);
		let stored: string[] = [];
		try {
			stored = readdirSync(join(sandbox.agentDir, "cache", "headroom", "subagent-results"));
		} catch {
			stored = [];
		}
		expect(stored.filter((f) => f.endsWith(".txt"))).toEqual([]);
	});
});

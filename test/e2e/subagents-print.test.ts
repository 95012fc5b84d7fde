/**
 * Print mode (`pi -p`, `--mode json`: no UI, the process ends with the parent's run).
 *
 * Pi 0.73.1 does not await extension handlers at a run's end before it exits, so a child still running
 * then cannot be waited for and delivered in that run. The spawn text says so (call subagent_wait before
 * finishing), and what it promises holds: the parent gets no later turn, the child is stopped with its
 * partial output kept, and `pi -c` delivers that.
 *
 * Pi 1.x (1.x-only cases): a run that would settle while children run waits for them in
 * agent_before_settle (bounded by subagents.maxRunSeconds; Ctrl-C stops them with their partial output
 * kept) and gets their results as one message for one more turn, exactly once.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SETTLE_MAX_ROUNDS } from "../../extensions/subagents/delivery/settle.ts";
import {
	extensionPath,
	makeSandbox,
	PI_LINES,
	type PiEvent,
	runPiPrint,
	type Sandbox,
	toolResults,
} from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import type { ChatRequest, ScriptedServer } from "../fixtures/scripted-server.ts";
import { calledTools, isChild, userTexts } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
/** The child streams slowly: some of it before the parent ends, most of it never. */
const SLOW_TEXT = Array.from({ length: 200 }, (_, i) => `PARTIAL-${String(i + 1).padStart(3, "0")}`).join(" ");
/** How long the parent's final answer takes, in milliseconds: the child streams a few chunks meanwhile. */
const PARENT_FINAL_DELAY_MS = 1_500;
/** Header of a delivery a 1.x print run waited for (prompt.ts settleDeliveryHeader). */
const WAITED = "your run waited for the child";

interface SessionEntry {
	type: string;
	customType?: string;
	content?: unknown;
	data?: { keys?: string[]; key?: string; state?: string; text?: string; by?: string };
}

/** The parent's session entries (children's files live in a subagents/ subfolder). */
function parentEntries(sandbox: Sandbox): SessionEntry[] {
	const root = join(sandbox.agentDir, "sessions");
	const files: string[] = [];
	const walk = (dir: string) => {
		for (const e of readdirSync(dir, { withFileTypes: true })) {
			if (e.isDirectory() && e.name !== "subagents") walk(join(dir, e.name));
			else if (e.isFile() && e.name.endsWith(".jsonl")) files.push(join(dir, e.name));
		}
	};
	walk(root);
	if (files.length !== 1) throw new Error(`expected one parent session file, found ${files.length}`);
	return readFileSync(files[0], "utf8")
		.split("\n")
		.filter((l) => l.trim())
		.map((l) => JSON.parse(l) as SessionEntry);
}

const resultMessages = (entries: SessionEntry[]) =>
	entries.filter((e) => e.type === "custom_message" && e.customType === "subagent-result");
const deliveredKeys = (entries: SessionEntry[]) =>
	entries
		.filter((e) => e.type === "custom" && e.customType === "subagent-delivered")
		.flatMap((e) => e.data?.keys ?? []);
const contentText = (e: SessionEntry) => (typeof e.content === "string" ? e.content : JSON.stringify(e.content));

/** The final assistant text of a json-mode run. */
function finalAssistantText(events: PiEvent[]): string {
	const ends = events.filter((e) => e.type === "message_end") as Array<{
		message?: { role?: string; content?: Array<{ type: string; text?: string }> };
	}>;
	const last = ends.filter((e) => e.message?.role === "assistant").at(-1);
	return (last?.message?.content ?? []).map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("");
}

/** How many user-role texts of a request carry `needle`. */
const countIn = (req: ChatRequest, needle: string) => userTexts(req).filter((t) => t.includes(needle)).length;

describe.each(PI_LINES)("subagents in print mode on $label", ({ line }) => {
	const { startServer, print, printIn } = usePrintRuns(line, { extensions: EXT });
	const parentRequests = (server: ScriptedServer) => server.requests.filter((r) => !isChild(r));

	if (line === "0.73")
		it("says single-shot at spawn; a child running at the end is stopped, its partial output delivered on -c", async () => {
			const server = await startServer((req) => {
				if (isChild(req)) return { text: SLOW_TEXT, chunkChars: 12, chunkDelayMs: 150 };
				if (req.lastUser.includes("phase two")) return { text: "resumed" };
				if (calledTools(req).length === 0)
					return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK slow", name: "slow" } }] };
				return { text: "finished without waiting", delayMs: PARENT_FINAL_DELAY_MS };
			});
			const { sandbox, run: first } = await print(server, { prompt: "phase one" });
			const [spawn] = toolResults(first.events, "subagent_spawn");
			expect(spawn.isError, spawn.text).toBe(false);
			expect(spawn.text).toContain(
				'This is a single-shot run (no UI): call subagent_wait(ids=["sa-1"]) before you finish. A child still ' +
					"running when your run ends is stopped; its partial output is kept and delivered when this session is " +
					"continued (pi -c).",
			);
			expect(spawn.text).not.toContain("arrives automatically");
			// No automatic delivery turn after the run: the parent model was asked exactly twice.
			expect(parentRequests(server).length).toBe(2);
			expect(parentRequests(server).some((r) => userTexts(r).some((t) => t.includes("sa-1")))).toBe(false);

			await printIn(sandbox, { prompt: "phase two", args: ["-c"] });
			const resumed = parentRequests(server).at(-1)!;
			expect(resumed.lastUser).toContain("phase two");
			const restored = userTexts(resumed).find((t) => t.includes("before the session was reloaded or resumed"));
			expect(restored, userTexts(resumed).join("\n---\n")).toBeDefined();
			expect(restored).toContain("[1 subagent result from before the session was reloaded or resumed]");
			expect(restored).toMatch(/sa-1 "slow" cancelled/);
			expect(restored).toContain("shut down");
			expect(restored).toContain("PARTIAL-001");
			expect(restored).not.toContain("PARTIAL-200");
		});

	if (line === "1.x")
		for (const output of ["json", "text"] as const)
			it(`${output} output: the run waits for a slow child, answers with its result, delivered exactly once`, async () => {
				const server = await startServer((req) => {
					if (isChild(req)) return { text: "CHILD-RESULT 42 END-OF-CHILD", chunkChars: 4, chunkDelayMs: 120 };
					if (req.lastUser.includes("phase two")) return { text: "resumed" };
					if (req.lastUser.includes(WAITED)) return { text: "FINAL-ANSWER: the child says 42" };
					if (calledTools(req).length === 0)
						return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK slow", name: "slow" } }] };
					return { text: "ended my turn without waiting" };
				});
				const { sandbox, run: first } = await print(server, { prompt: "phase one", output });
				if (output === "json") {
					const [spawn] = toolResults(first.events, "subagent_spawn");
					expect(spawn.text).toContain("if your run would end while it still runs, the run waits for it");
					expect(spawn.text).toContain("subagents.maxRunSeconds");
					expect(spawn.text).not.toContain("is stopped");
					expect(finalAssistantText(first.events)).toBe("FINAL-ANSWER: the child says 42");
				} else {
					expect(first.stdout.trim()).toBe("FINAL-ANSWER: the child says 42");
				}
				// Spawn, end of turn, then one more request carrying the result.
				expect(parentRequests(server).length).toBe(3);
				const extra = parentRequests(server)[2];
				expect(countIn(extra, "CHILD-RESULT 42 END-OF-CHILD")).toBe(1);
				expect(extra.lastUser).toContain('sa-1 "slow" completed');
				const entries = parentEntries(sandbox);
				expect(resultMessages(entries).length).toBe(1);
				expect(contentText(resultMessages(entries)[0])).toContain("CHILD-RESULT 42 END-OF-CHILD");
				expect(deliveredKeys(entries)).toEqual(["sa-1#1"]);

				// Continued: nothing is owed, so nothing is delivered again (the one message stays in history).
				await printIn(sandbox, { prompt: "phase two", args: ["-c"], output });
				const resumed = parentRequests(server).at(-1)!;
				expect(resumed.lastUser).toContain("phase two");
				expect(countIn(resumed, "CHILD-RESULT 42 END-OF-CHILD")).toBe(1);
				expect(userTexts(resumed).some((t) => t.includes("before the session was reloaded or resumed"))).toBe(false);
				expect(resultMessages(parentEntries(sandbox)).length).toBe(1);
				expect(deliveredKeys(parentEntries(sandbox))).toEqual(["sa-1#1"]);
			});

	if (line === "1.x")
		it("several children arrive as one batch; children spawned in the extra turn are waited for the same way", async () => {
			const server = await startServer((req) => {
				if (isChild(req)) {
					const tag = /CHILD-TASK (\w+)/.exec(req.lastUser)?.[1] ?? "?";
					return { text: `RESULT-${tag}`, delayMs: tag === "c" ? 1_500 : 400 };
				}
				if (req.last?.role === "tool") return { text: "spawned, ending" };
				if (req.lastUser.includes(WAITED)) {
					if (req.lastUser.includes("RESULT-d")) return { text: "FINAL: a b c d" };
					return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK d", name: "d" } }] };
				}
				if (calledTools(req).length === 0)
					return {
						toolCalls: ["a", "b", "c"].map((t) => ({
							name: "subagent_spawn",
							arguments: { prompt: `CHILD-TASK ${t}`, name: t },
						})),
					};
				return { text: "unexpected request" };
			});
			const { sandbox, run } = await print(server, { prompt: "go" });
			expect(finalAssistantText(run.events)).toBe("FINAL: a b c d");
			const entries = parentEntries(sandbox);
			const messages = resultMessages(entries);
			expect(messages.length).toBe(2);
			const [batch, later] = messages.map(contentText);
			expect(batch).toContain("[3 subagent results — your run waited for the children before ending");
			for (const t of ["a", "b", "c"]) expect(batch).toContain(`RESULT-${t}`);
			expect(later).toContain("RESULT-d");
			expect(later).not.toContain("RESULT-a");
			expect(deliveredKeys(entries).sort()).toEqual(["sa-1#1", "sa-2#1", "sa-3#1", "sa-4#1"]);
			// Each result reached the model once: the last request holds every one exactly once.
			const last = parentRequests(server).at(-1)!;
			for (const t of ["a", "b", "c", "d"]) expect(countIn(last, `RESULT-${t}`)).toBe(1);
		});

	if (line === "1.x")
		it("a parent that spawns again in every extra turn still ends: the rounds are bounded, the last child kept for -c", async () => {
			const server = await startServer((req) => {
				if (isChild(req)) {
					const n = Number(/CHILD-TASK (\d+)/.exec(req.lastUser)?.[1] ?? 0);
					return n > SETTLE_MAX_ROUNDS ? { text: SLOW_TEXT, chunkChars: 12, chunkDelayMs: 150 } : { text: `R-${n}` };
				}
				if (req.last?.role === "tool") return { text: "spawned, ending" };
				const n = parentRequests(server).filter((r) => r.last?.role !== "tool").length;
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: `CHILD-TASK ${n}`, name: `c${n}` } }] };
			});
			const { sandbox } = await print(server, { prompt: "go" });
			const entries = parentEntries(sandbox);
			expect(resultMessages(entries).length).toBe(SETTLE_MAX_ROUNDS);
			const delivered = deliveredKeys(entries);
			expect(delivered.length).toBe(SETTLE_MAX_ROUNDS);
			const last = `sa-${SETTLE_MAX_ROUNDS + 1}`;
			expect(delivered).not.toContain(`${last}#1`);
			const settled = entries.filter((e) => e.type === "custom" && e.customType === "subagent-settled");
			expect(settled.find((e) => e.data?.key === `${last}#1`)?.data?.state).toBe("cancelled");
		});

	if (line === "1.x")
		it("a child that never ends is cut at subagents.maxRunSeconds and reported incomplete; Pi exits", async () => {
			const server = await startServer((req) => {
				if (isChild(req)) return { hang: true };
				if (req.lastUser.includes(WAITED)) return { text: "FINAL: the child was cut" };
				if (calledTools(req).length === 0)
					return {
						toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK forever", name: "forever" } }],
					};
				return { text: "ending" };
			});
			const { sandbox, run } = await print(server, {
				prompt: "go",
				sandbox: { headroomConfig: { subagents: { maxRunSeconds: 3 } } },
				timeoutMs: 60_000,
			});
			expect(finalAssistantText(run.events)).toBe("FINAL: the child was cut");
			const [message] = resultMessages(parentEntries(sandbox));
			expect(contentText(message)).toMatch(/sa-1 "forever" incomplete/);
			expect(contentText(message)).toContain("maximum run time of 3 s (subagents.maxRunSeconds)");
			expect(deliveredKeys(parentEntries(sandbox))).toEqual(["sa-1#1"]);
		});

	if (line === "1.x")
		it("Ctrl-C while the run waits stops the child with its partial output kept; pi -c delivers it", async () => {
			let childChunksSent = false;
			const server = await startServer((req) => {
				if (isChild(req)) {
					childChunksSent = true;
					return { text: SLOW_TEXT, chunkChars: 12, chunkDelayMs: 150 };
				}
				if (req.lastUser.includes("phase two")) return { text: "resumed" };
				if (calledTools(req).length === 0)
					return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK slow", name: "slow" } }] };
				return { text: "ending without waiting" };
			});
			const sandbox = makeSandbox({ server });
			const first = await runPiPrint({
				line,
				sandbox,
				extensions: EXT,
				prompt: "phase one",
				onStart: (child) => {
					// Once the parent has ended its turn (its second request answered) and the child streamed a while.
					const timer = setInterval(() => {
						if (parentRequests(server).length >= 2 && childChunksSent) {
							clearInterval(timer);
							setTimeout(() => child.kill("SIGINT"), 1_500);
						}
					}, 50);
					child.on("close", () => clearInterval(timer));
				},
			});
			expect(first.exitCode, first.stderr).toBe(130);
			expect(parentRequests(server).length).toBe(2);
			const entries = parentEntries(sandbox);
			expect(resultMessages(entries).length).toBe(0);
			const settled = entries.find((e) => e.type === "custom" && e.customType === "subagent-settled");
			expect(settled?.data?.state).toBe("cancelled");
			expect(settled?.data?.text).toContain("PARTIAL-001");
			expect(settled?.data?.text).toContain("interrupted (Ctrl-C)");

			await printIn(sandbox, { prompt: "phase two", args: ["-c"] });
			const resumed = parentRequests(server).at(-1)!;
			const restored = userTexts(resumed).find((t) => t.includes("before the session was reloaded or resumed"));
			expect(restored, userTexts(resumed).join("\n---\n")).toBeDefined();
			expect(restored).toMatch(/sa-1 "slow" cancelled/);
			expect(restored).toContain("PARTIAL-001");
		});
});

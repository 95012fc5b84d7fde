/**
 * Children outlive their process: a parent resumed with `-c` sends to a child spawned by the
 * earlier process, the child's session file is reopened and its next model request carries its
 * previous transcript plus the new text. And forks get the parent's view of an oversized tool
 * result: head + tail with a stored artifact the child can read.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, PI_LINES, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import { messageText } from "../fixtures/scripted-server.ts";
import { calledTools, footerReads, isChild, lastToolText } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
const FIRST_ANSWER = "CHILD-FIRST-ANSWER secret=42";
const FOLLOW_UP = "FOLLOW-UP which secret did you report?";

describe.each(PI_LINES)("subagents resume on $label", ({ line }) => {
	const { startServer, print, printIn } = usePrintRuns(line, { extensions: EXT });

	it("a parent resumed with -c continues a child of the earlier process on the child's own transcript", async () => {
		const server = await startServer((req) => {
			if (isChild(req))
				return req.lastUser.includes("FOLLOW-UP") ? { text: "CHILD-SECOND-ANSWER 42" } : { text: FIRST_ANSWER };
			const lastUser = req.lastUser;
			const tool = lastToolText(req);
			const afterLastUser = req.body.messages.slice(req.body.messages.findLastIndex((m) => m.role === "user"));
			const calledNow = calledTools({ ...req, body: { ...req.body, messages: afterLastUser } });
			if (lastUser.includes("phase one")) {
				if (calledNow.length === 0)
					return {
						toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK remember", name: "keeper" } }],
					};
				if (!calledNow.includes("subagent_wait"))
					return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
				return { text: "phase one done" };
			}
			if (calledNow.length === 0)
				return { toolCalls: [{ name: "subagent_send", arguments: { id: "sa-1", text: FOLLOW_UP } }] };
			if (!calledNow.includes("subagent_wait"))
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
			return { text: `phase two done: ${tool.includes("CHILD-SECOND-ANSWER") ? "relayed" : "missing"}` };
		});
		const { sandbox, run: first } = await print(server, { prompt: "phase one" });
		expect(toolResults(first.events, "subagent_wait")[0].text).toContain(FIRST_ANSWER);
		const childRequestsBefore = server.requests.filter(isChild).length;

		const second = await printIn(sandbox, { prompt: "phase two", args: ["-c"] });
		const [send] = toolResults(second.events, "subagent_send");
		expect(send.isError, send.text).toBe(false);
		// Print mode is single-shot: on 0.73 the re-run's text asks for subagent_wait instead of promising automatic
		// delivery; on 1.x the run waits for the child before it ends, and the text says so.
		expect(send.text).toBe(
			line === "0.73"
				? 'sa-1 "keeper" started run 2 on its transcript. This is a single-shot run (no UI): call ' +
						'subagent_wait(ids=["sa-1"]) before you finish. A child still running when your run ends is stopped; ' +
						"its partial output is kept and delivered when this session is continued (pi -c)."
				: 'sa-1 "keeper" started run 2 on its transcript. This is a single-shot run (no UI): if your run would ' +
						"end while it still runs, the run waits for it (at most 30m 00s, subagents.maxRunSeconds) and its " +
						'result arrives as a message you answer in one more turn. Call subagent_wait(ids=["sa-1"]) to use ' +
						"it sooner.",
		);

		// The resumed child's request: its own earlier task and answer, then the new text, last.
		const resumed = server.requests.filter(isChild).slice(childRequestsBefore);
		expect(resumed.length).toBe(1);
		const convo = resumed[0].body.messages.filter((m) => m.role !== "system");
		expect(convo.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
		expect(messageText(convo[0])).toBe("CHILD-TASK remember");
		expect(messageText(convo[1])).toBe(FIRST_ANSWER);
		expect(messageText(convo[2])).toBe(FOLLOW_UP);

		const [wait] = toolResults(second.events, "subagent_wait");
		expect(wait.text).toMatch(/sa-1 "keeper" completed .*run 2/);
		expect(wait.text).toContain("CHILD-SECOND-ANSWER 42");
		// One child session file, grown by the second run (not a new session).
		const sessionDirs = readdirSync(join(sandbox.agentDir, "sessions"));
		const childDir = join(sandbox.agentDir, "sessions", sessionDirs[0], "subagents");
		const files = readdirSync(childDir);
		expect(files.length).toBe(1);
		const transcript = readFileSync(join(childDir, files[0]), "utf8");
		expect(transcript).toContain(FIRST_ANSWER);
		expect(transcript).toContain("CHILD-SECOND-ANSWER 42");
	});

	it("a fork sees an oversized parent tool result as head + tail with a stored artifact holding all of it", async () => {
		const big = ["BIG-FIRST", ...Array.from({ length: 1200 }, (_, i) => `entry ${i} ${"w".repeat(30)}`), "BIG-LAST"];
		const bigText = big.join("\n");
		const server = await startServer((req) => {
			if (isChild(req)) return { text: "child read it" };
			const called = calledTools(req);
			if (called.length === 0) return { toolCalls: [{ name: "read", arguments: { path: "big.txt" } }] };
			if (!called.includes("subagent_spawn"))
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK fork", context: "fork" } }] };
			if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "done" };
		});
		// A small window: the parent's read result (about 48 KB) is over its share of the fork's budget.
		const { sandbox, run } = await print(server, {
			prompt: "PARENT-TASK look at big.txt",
			sandbox: { contextWindow: 12_000, maxTokens: 1_000, files: { "big.txt": bigText } },
		});
		const parentRead = toolResults(run.events, "read")[0].text;
		const forked = server.requests.find(isChild)!;
		expect(forked.firstUser).toContain("BIG-FIRST");
		expect(forked.firstUser).not.toContain("NOT saved");
		const reads = footerReads(forked.firstUser);
		expect(reads.length).toBeGreaterThan(0);
		const { path } = reads[0];
		expect(path.startsWith(join(sandbox.agentDir, "cache", "headroom", "transcripts"))).toBe(true);
		expect(existsSync(path)).toBe(true);
		expect(readFileSync(path, "utf8")).toBe(parentRead);
	});
});

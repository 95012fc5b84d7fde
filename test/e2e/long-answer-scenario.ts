/**
 * The subagents scenario the subagents and install e2e tests share: a parent spawns one child with a long
 * answer (CHILD-TASK long), waits for it, calls the `read` its projection's footer names, and is done. The
 * script plays both sides; the checks hold for any Pi line and any way the package was loaded.
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import { type PiEvent, toolResults } from "../fixtures/pi-runner.ts";
import type { ChatRequest, ScriptedReply } from "../fixtures/scripted-server.ts";
import {
	calledTools,
	type FooterRead,
	footerReads,
	isChild,
	lastToolText,
	linesOf,
	utf8Bytes,
} from "./subagents-support.ts";

/** The byte budget of a subagent_wait result (the `subagentWait` surface's default). */
const WAIT_BUDGET_BYTES = 16 * 1024;

/**
 * Children answer `childText(req)`; the parent spawns with `spawn` (a `subagent_spawn` call's arguments), waits
 * for sa-1, reads what the wait result's footer names, then says "done".
 */
export function spawnWaitReadScript(
	childText: (req: ChatRequest) => string,
	spawn: Record<string, unknown> = { prompt: "CHILD-TASK long" },
): (req: ChatRequest) => ScriptedReply {
	return (req) => {
		if (isChild(req)) return { text: childText(req) };
		const called = calledTools(req);
		if (called.length === 0) return { toolCalls: [{ name: "subagent_spawn", arguments: spawn }] };
		if (!called.includes("subagent_wait"))
			return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
		if (!called.includes("read")) {
			const [read] = footerReads(lastToolText(req));
			return { toolCalls: [{ name: "read", arguments: { ...read } }] };
		}
		return { text: "done" };
	};
}

/**
 * The run's wait result is a head+tail view within the wait budget keeping BEGIN and END, its footer's artifact
 * holds exactly `answer`, and the read call the footer names returns exactly the lines it says. Returns the
 * wait result and that read call for further checks.
 */
export function expectWaitThenRead(
	events: PiEvent[],
	answer: string,
): { wait: ReturnType<typeof toolResults>[number]; read: FooterRead } {
	const [wait] = toolResults(events, "subagent_wait");
	expect(wait.isError).toBe(false);
	expect(utf8Bytes(wait.text)).toBeLessThanOrEqual(WAIT_BUDGET_BYTES);
	expect(wait.text).toContain("BEGIN");
	expect(wait.text).toContain("END");
	const [read] = footerReads(wait.text);
	expect(read, wait.text.slice(-600)).toBeDefined();
	expect(readFileSync(read.path, "utf8") === answer).toBe(true);
	const [readResult] = toolResults(events, "read");
	expect(readResult.isError).toBe(false);
	expect(readResult.text.startsWith(linesOf(answer, read.offset, read.limit).join("\n"))).toBe(true);
	return { wait, read };
}

/**
 * Nothing vanishes in a crash: every run is recorded in the parent's session when it is queued (before the
 * spawn returns) and when it starts; a process that died with children queued or running leaves those records,
 * and the next start settles each such run once as "interrupted", with what the child's own session file
 * holds, recorded so that a later start finds it settled. subagent_send resumes it on that file.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lastRunText, readPartialOutput } from "../../extensions/subagents/children/partial-output.ts";
import { RUN_ENTRY, restoreFromSession, SETTLED_ENTRY } from "../../extensions/subagents/delivery/persistence.ts";
import * as P from "../../extensions/subagents/prompt/common.ts";
import { sendTool } from "../../extensions/subagents/tools/send.ts";
import {
	FAKE_LIMITS,
	type FakeWorld,
	recordAll,
	resumedWorld,
	spawnChild,
	tempRoot,
	until,
	useFakeWorlds,
} from "./subagents-fakes.ts";

const world = useFakeWorlds();

/** A world started on the entries an earlier process left in the parent's session. */
const resumed = (entries: FakeWorld["entries"]): FakeWorld => resumedWorld(world, entries, "subagents-crash-");

const line = (o: unknown) => JSON.stringify(o);

describe("a parent process that dies with children queued or running", () => {
	it("leaves a record of every child; the next start settles each unsettled run once as interrupted", async () => {
		const a = world();
		a.manager.setLimits({ ...FAKE_LIMITS, maxConcurrent: 2 });
		recordAll(a);
		const ids: string[] = [];
		for (const name of ["done", "partial", "silent", "queued"]) {
			const before = a.entries.length;
			ids.push(spawnChild(a, { prompt: `task ${name}`, name }).id);
			// Recorded before spawn() returns: a kill right after the tool returned loses nothing.
			expect(a.entries.slice(before)).toEqual([
				{ type: RUN_ENTRY, data: expect.objectContaining({ id: ids.at(-1), run: 1, phase: "queued", name }) },
			]);
		}
		await until(() => a.backend.started(ids[0]) && a.backend.started(ids[1]));
		a.backend.finish(ids[0], "DONE-ANSWER");
		await until(() => a.backend.started(ids[2]));
		// The "process dies" here: no shutdown, no settled entries for sa-2, sa-3, sa-4.
		const childFile = join(tempRoot("subagents-child-"), "child.jsonl");
		writeFileSync(
			childFile,
			[
				line({ type: "session", id: "x" }),
				line({ type: "message", message: { role: "user", content: "task partial" } }),
				line({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "STEP-ONE" }] } }),
				line({ type: "message", message: { role: "toolResult", content: [{ type: "text", text: "ls out" }] } }),
				'{"type":"message","message":{"role":"assist', // torn: the kill hit a write
			].join("\n"),
		);
		const entries = a.entries.map((e) =>
			e.type === RUN_ENTRY && (e.data as { id: string }).id === ids[1]
				? { ...e, data: { ...(e.data as object), sessionFile: childFile } }
				: e,
		);
		expect(entries.filter((e) => e.type === SETTLED_ENTRY).length).toBe(1);

		const b = resumed(entries);
		expect(restoreFromSession(b.services, b.ctx)).toBe(4);
		expect(b.manager.list().map((c) => `${c.id} ${c.state}`)).toEqual([
			"sa-1 completed",
			"sa-2 interrupted",
			"sa-3 interrupted",
			"sa-4 interrupted",
		]);
		const text = (id: string) => b.manager.ledger.latest(id)?.text ?? "";
		expect(text("sa-1")).toBe("DONE-ANSWER");
		expect(text("sa-2")).toBe(
			P.interruptedResultText({ id: "sa-2", name: "partial" }, true, { ok: true, text: "STEP-ONE" }, childFile),
		);
		expect(text("sa-2")).toContain(`Partial output before it stopped (its session file: ${childFile}):\nSTEP-ONE`);
		expect(text("sa-3")).toContain("(No output before it stopped");
		expect(text("sa-4")).toContain(P.NEVER_STARTED);
		expect(b.manager.get("sa-4")?.startedAt).toBeUndefined();
		// Recorded once, in the session being resumed.
		const recorded = b.entries.filter((e) => e.type === SETTLED_ENTRY).map((e) => (e.data as { key: string }).key);
		expect(recorded).toEqual(["sa-2#1", "sa-3#1", "sa-4#1"]);

		// A later start over both processes' entries finds them settled: nothing re-recorded, nothing new owed.
		const c = resumed([...entries, ...b.entries]);
		expect(restoreFromSession(c.services, c.ctx)).toBe(4);
		expect(c.entries).toEqual([]);
		expect(c.manager.ledger.latest("sa-2")?.text).toBe(text("sa-2"));

		// subagent_send continues the interrupted child on its own session file, as run 2.
		const out = await sendTool(b.services, { id: "sa-2", text: "go on" }, b.ctx);
		expect(out.content[0].text).toContain("started run 2");
		await until(() => b.backend.prompts.length === 1);
		expect(b.backend.created[0].sessionFile).toBe(childFile);
		expect(b.entries.at(-1)).toEqual({
			type: RUN_ENTRY,
			data: expect.objectContaining({ id: "sa-2", run: 2, phase: "started", sessionFile: childFile }),
		});
		// A never-started child has no transcript to continue: the refusal says what to do.
		await expect(sendTool(b.services, { id: "sa-4", text: "go on" }, b.ctx)).rejects.toThrow(
			P.restoredSendError({ id: "sa-4", name: "queued" }),
		);
	});

	it("a run started by subagent_send and cut by the crash is interrupted as that run, not the earlier one", async () => {
		const a = world();
		recordAll(a);
		const id = spawnChild(a, { prompt: "task", name: "twice" }).id;
		await until(() => a.backend.started(id));
		a.backend.finish(id, "FIRST");
		await a.manager.waitFor([id], { mode: "all" });
		await sendTool(a.services, { id, text: "more" }, a.ctx);
		await until(() => a.backend.prompts.length === 2);
		const b = resumed(a.entries);
		expect(restoreFromSession(b.services, b.ctx)).toBe(2);
		expect(b.manager.get(id)).toMatchObject({ state: "interrupted", run: 2 });
		expect(b.manager.ledger.get(`${id}#1`)?.text).toBe("FIRST");
		expect(b.manager.ledger.get(`${id}#2`)?.state).toBe("interrupted");
	});
});

describe("the last run's text in a child's session file", () => {
	it("is the assistant text after the last user message; a missing file is no output", () => {
		const jsonl = [
			line({ type: "message", message: { role: "user", content: "first" } }),
			line({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "OLD" }] } }),
			line({ type: "message", message: { role: "user", content: [{ type: "text", text: "again" }] } }),
			line({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "NEW-1" }] } }),
			line({ type: "message", message: { role: "assistant", content: [{ type: "toolCall", name: "ls" }] } }),
			line({ type: "message", message: { role: "assistant", content: "NEW-2" } }),
		].join("\n");
		expect(lastRunText(jsonl)).toBe("NEW-1\n\nNEW-2");
		expect(readPartialOutput(join(tempRoot("subagents-none-"), "missing.jsonl"))).toEqual({ ok: true, text: "" });
		expect(readPartialOutput(undefined)).toEqual({ ok: true, text: "" });
	});

	it("never throws on arbitrary text", () => {
		fc.assert(
			fc.property(fc.string({ unit: "binary" }), (s) => {
				expect(typeof lastRunText(s)).toBe("string");
			}),
		);
	});
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	RUN_ENTRY,
	type RunEntryData,
	restoreFromSession,
	restoreWaiting,
	SETTLED_ENTRY,
} from "../../extensions/subagents/delivery/persistence.ts";
import { restoreVerdict } from "../../extensions/subagents/pipeline/graph.ts";
import { type SpawnParams, spawnTool } from "../../extensions/subagents/tools/spawn.ts";
import { type FakeWorld, recordAll, resumedWorld, until, useFakeWorlds } from "./subagents-fakes.ts";

const world = useFakeWorlds();

/** A world started on the entries an earlier process left in the parent's session. */
const resumed = (entries: FakeWorld["entries"]): FakeWorld => resumedWorld(world, entries, "subagents-waitrestore-");

/** What the adapter does at session start: restore, then spawn the waiting stages again. */
async function resume(w: FakeWorld): Promise<number> {
	const waiting: RunEntryData[] = [];
	restoreFromSession(w.services, w.ctx, waiting);
	return restoreWaiting(w.services, w.ctx, waiting, (params, id) =>
		spawnTool(w.services, params as SpawnParams, w.ctx, id),
	);
}

const spawn = (w: FakeWorld, params: SpawnParams) => spawnTool(w.services, params, w.ctx);

describe("restoreVerdict (pure)", () => {
	it("restores exactly when the spawn is recorded and every input is known", () => {
		fc.assert(
			fc.property(
				fc.uniqueArray(fc.integer({ min: 1, max: 20 }), { maxLength: 5 }),
				fc.uniqueArray(fc.integer({ min: 1, max: 20 }), { maxLength: 8 }),
				fc.boolean(),
				(after, known, recorded) => {
					const ids = after.map((n) => `sa-${n}`);
					const knownIds = new Set(known.map((n) => `sa-${n}`));
					const v = restoreVerdict({ after: ids, spawn: recorded ? { prompt: "p" } : undefined }, knownIds);
					const missing = ids.filter((id) => !knownIds.has(id));
					if (!recorded || ids.length === 0) expect(v).toEqual({ act: "give-up", problem: { why: "not-recorded" } });
					else if (missing.length > 0)
						expect(v).toEqual({ act: "give-up", problem: { why: "unknown-inputs", missing } });
					else expect(v).toEqual({ act: "restore", after: ids });
				},
			),
		);
	});

	it("gives up on a spawn record without a prompt (bad input: a clear reason, nothing thrown)", () => {
		for (const spawnRecord of [null, 7, "x", { prompt: 3 }, {}])
			expect(restoreVerdict({ after: ["sa-1"], spawn: spawnRecord }, new Set(["sa-1"]))).toEqual({
				act: "give-up",
				problem: { why: "not-recorded" },
			});
	});
});

describe("pi -c with a pipeline stage left waiting", () => {
	it("a crash while A ran: A is interrupted and B, spawned again, is skipped naming A", async () => {
		const a = world();
		recordAll(a);
		await spawn(a, { prompt: "task A", name: "A" });
		await spawn(a, { prompt: "task B", name: "B", after: ["A"] });
		await until(() => a.backend.started("sa-1"));
		expect(a.manager.get("sa-2")?.state).toBe("waiting");
		const waitingEntry = a.entries.find((e) => e.type === RUN_ENTRY && (e.data as RunEntryData).id === "sa-2");
		expect((waitingEntry?.data as RunEntryData | undefined)?.spawn).toMatchObject({
			prompt: "task B",
			after: ["sa-1"],
		});
		// The process dies here: nothing settles.
		const b = resumed(a.entries);
		expect(await resume(b)).toBe(0);
		await until(() => b.manager.get("sa-2")?.state === "skipped");
		expect(b.manager.get("sa-1")?.state).toBe("interrupted");
		expect(b.manager.ledger.latest("sa-2")?.text).toMatch(/Skipped, not started: sa-1 \(A\) interrupted/);
		expect(b.backend.created).toEqual([]);
		// Recorded once: a later start finds B settled and spawns nothing.
		const c = resumed(b.entries);
		expect(await resume(c)).toBe(0);
		expect(c.manager.get("sa-2")?.state).toBe("skipped");
		expect(c.backend.created).toEqual([]);
	});

	it("A completed, B not started: B is spawned again under its id and gets A's result", async () => {
		const a = world();
		recordAll(a);
		await spawn(a, { prompt: "task A", name: "A" });
		await spawn(a, { prompt: "task B", name: "B", after: ["sa-1"] });
		await until(() => a.backend.started("sa-1"));
		a.backend.finish("sa-1", "A-RESULT-TEXT");
		await until(() => a.manager.get("sa-1")?.state === "completed");
		// The process ends before B's run is recorded as started: keep only what was written by then.
		const cut = a.entries.filter(
			(e) =>
				!(
					e.type === RUN_ENTRY &&
					(e.data as RunEntryData).id === "sa-2" &&
					(e.data as RunEntryData).phase === "started"
				),
		);
		expect(cut.some((e) => e.type === SETTLED_ENTRY && (e.data as { id: string }).id === "sa-2")).toBe(false);
		const b = resumed(cut);
		expect(await resume(b)).toBe(0);
		await until(() => b.backend.started("sa-2"));
		expect(b.manager.get("sa-2")?.name).toBe("B");
		const first = b.backend.prompts.find((p) => p.id === "sa-2")?.text ?? "";
		expect(first).toContain("A-RESULT-TEXT");
		expect(first).toContain("task B");
		// A new spawn takes an id after the restored stage's.
		const next = await spawn(b, { prompt: "task C" });
		expect((next.details as { id: string }).id).toBe("sa-3");
	});

	it("a clean exit keeps an unstarted stage unsettled; a cancelled input skips it on pi -c", async () => {
		const a = world();
		recordAll(a);
		await spawn(a, { prompt: "task A", name: "A" });
		await spawn(a, { prompt: "task B", name: "B", after: ["A"] });
		await until(() => a.backend.started("sa-1"));
		await a.manager.shutdown(true);
		expect(a.manager.get("sa-1")?.state).toBe("cancelled");
		expect(a.manager.get("sa-2")?.state).toBe("waiting");
		expect(a.entries.some((e) => e.type === SETTLED_ENTRY && (e.data as { id: string }).id === "sa-2")).toBe(false);
		const b = resumed(a.entries);
		await resume(b);
		await until(() => b.manager.get("sa-2")?.state === "skipped");
		expect(b.manager.ledger.latest("sa-2")?.text).toMatch(/sa-1 \(A\) was cancelled: the parent session shut down/);
	});

	it("a stage whose spawn was not recorded or whose input is unknown settles once, saying why", async () => {
		const base = { run: 1, name: "B", model: "mock/mock-model", prompt: "task B", turns: 0, createdAt: 1 };
		const entries = [
			{ type: RUN_ENTRY, data: { ...base, id: "sa-2", phase: "queued", after: ["sa-1"] } },
			{
				type: RUN_ENTRY,
				data: { ...base, id: "sa-3", phase: "queued", after: ["sa-9"], spawn: { prompt: "task B", after: ["sa-9"] } },
			},
		];
		const b = resumed(entries);
		expect(await resume(b)).toBe(0);
		expect(b.manager.get("sa-2")?.state).toBe("interrupted");
		expect(b.manager.ledger.latest("sa-2")?.text).toMatch(/Not restored: .*spawn was not recorded.*spawn it again/);
		expect(b.manager.get("sa-3")?.state).toBe("interrupted");
		expect(b.manager.ledger.latest("sa-3")?.text).toMatch(/its input sa-9 is not in this session/);
		expect(b.entries.filter((e) => e.type === SETTLED_ENTRY)).toHaveLength(2);
		expect(b.backend.created).toEqual([]);
	});

	it("a stage whose spawn fails again (its cwd gone) settles as interrupted with the spawn's error", async () => {
		const base = { run: 1, name: "B", model: "mock/mock-model", prompt: "task B", turns: 0, createdAt: 1 };
		const entries = [
			{ type: SETTLED_ENTRY, data: { ...base, key: "sa-1#1", id: "sa-1", state: "completed", bytes: 2, text: "ok" } },
			{
				type: RUN_ENTRY,
				data: {
					...base,
					id: "sa-2",
					phase: "queued",
					after: ["sa-1"],
					spawn: { prompt: "task B", cwd: "/nonexistent-dir-for-test" },
				},
			},
		];
		const b = resumed(entries);
		expect(await resume(b)).toBe(1);
		expect(b.manager.get("sa-2")?.state).toBe("interrupted");
		expect(b.manager.ledger.latest("sa-2")?.text).toMatch(/spawning it again failed: /);
		expect(b.backend.created).toEqual([]);
	});
});

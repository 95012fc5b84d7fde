/**
 * Session records are input, never instructions: a tampered worktree record never reaches git, a result text
 * that is not a string is reported as damaged instead of throwing on every delivery, a waiting stage's recorded
 * parameters pass the spawn tool's schema again, and a child's session file that is a FIFO does not block.
 * Everything else in the session is restored as before.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { BRANCH_PREFIX } from "../../extensions/subagents/checkable/isolation.ts";
import { WORKTREES_FOLDER } from "../../extensions/subagents/checkable/spawn-checkable.ts";
import { readPartialOutput } from "../../extensions/subagents/children/partial-output.ts";
import {
	RUN_ENTRY,
	type RunEntryData,
	restoreFromSession,
	restoreWaiting,
	SETTLED_ENTRY,
} from "../../extensions/subagents/delivery/persistence.ts";
import { checkWorktreeRecord, recordedSpawnProblem } from "../../extensions/subagents/delivery/record-checks.ts";
import { type SpawnParams, spawnTool } from "../../extensions/subagents/tools/spawn.ts";
import { type FakeWorld, resumedWorld, tempRoot, useFakeWorlds } from "./subagents-fakes.ts";

const world = useFakeWorlds();
const resumed = (entries: FakeWorld["entries"]): FakeWorld => resumedWorld(world, entries, "subagents-hostile-");

const HEX = "a".repeat(40);

/** A worktree record as the package writes it, for a world's worktrees folder. */
function goodWorktree(w: FakeWorld, name = "sa-1-0badcafe") {
	const root = join(w.store.root, WORKTREES_FOLDER);
	return {
		path: join(root, name),
		branch: `${BRANCH_PREFIX}${name}`,
		base: HEX,
		repoTop: join(w.root, "repo"),
		cwd: join(root, name),
		parentUncommitted: 0,
	};
}

const settled = (id: string, extra: Record<string, unknown>) => ({
	type: SETTLED_ENTRY,
	data: {
		key: `${id}#1`,
		id,
		run: 1,
		state: "completed",
		name: id,
		model: "mock/mock-model",
		prompt: "task",
		turns: 1,
		createdAt: 1,
		endedAt: 2,
		bytes: 6,
		text: "RESULT",
		...extra,
	},
});

describe("checkWorktreeRecord", () => {
	it("accepts exactly the records the package writes", () => {
		const w = world();
		const good = goodWorktree(w);
		expect(checkWorktreeRecord(good, join(w.store.root, WORKTREES_FOLDER))).toEqual({ ok: true, worktree: good });
	});

	it("refuses any base that is not a full commit id, any foreign branch, any path outside the folder", () => {
		const w = world();
		const root = join(w.store.root, WORKTREES_FOLDER);
		const good = goodWorktree(w);
		fc.assert(
			fc.property(fc.string(), (s) => {
				fc.pre(!/^([0-9a-f]{40}|[0-9a-f]{64})$/.test(s));
				expect(checkWorktreeRecord({ ...good, base: s }, root).ok).toBe(false);
			}),
		);
		fc.assert(
			fc.property(fc.string(), (s) => {
				fc.pre(!/^[A-Za-z0-9_-]{1,64}$/.test(s));
				expect(checkWorktreeRecord({ ...good, branch: `${BRANCH_PREFIX}${s}` }, root).ok).toBe(false);
			}),
		);
		for (const bad of [
			{ base: "--output=/tmp/x" },
			{ branch: "main" },
			{ branch: "headroom/../main" },
			{ path: "/" },
			{ path: join(root, "..", "sa-1-0badcafe") },
			{ path: join(root, "sa-1-other") },
			{ cwd: "/etc" },
			{ repoTop: "relative/dir" },
			{ parentUncommitted: "3" },
			{ path: 7 },
		]) {
			expect(checkWorktreeRecord({ ...good, ...bad }, root), JSON.stringify(bad)).toMatchObject({ ok: false });
		}
		expect(checkWorktreeRecord("x", root).ok).toBe(false);
	});

	it("refuses a worktree folder that is a symlink", () => {
		const w = world();
		const root = join(w.store.root, WORKTREES_FOLDER);
		mkdirSync(root, { recursive: true });
		const elsewhere = tempRoot("subagents-hostile-elsewhere");
		const good = goodWorktree(w);
		symlinkSync(elsewhere, good.path);
		expect(checkWorktreeRecord(good, root)).toMatchObject({
			ok: false,
			problem: expect.stringMatching(/real directory/),
		});
	});
});

describe("restoring a tampered session", () => {
	it("drops a worktree record that fails, says so in the result, and keeps every other result", () => {
		const w = world();
		const good = goodWorktree(w, "sa-2-0badcafe");
		const b = resumed([
			settled("sa-1", { worktree: { ...goodWorktree(w), base: "--output=/tmp/owned" } }),
			settled("sa-2", { worktree: good }),
			settled("sa-3", {}),
		]);
		// The resumed world has its own store: make the good record point at its folder.
		const own = goodWorktree(b, "sa-2-0badcafe");
		const ctx = b.ctx as unknown as { sessionManager: { getBranch(): Array<{ data: { worktree?: unknown } }> } };
		const branch = ctx.sessionManager.getBranch();
		branch[1].data.worktree = own;
		expect(good.path).not.toBe(own.path);
		expect(restoreFromSession(b.services, b.ctx)).toBe(3);
		expect(b.manager.get("sa-1")?.worktree).toBeUndefined();
		expect(b.manager.get("sa-2")?.worktree).toEqual(own);
		expect(b.manager.ledger.latest("sa-1")?.text).toMatch(/worktree record in the session file was refused \(its base/);
		expect(b.manager.ledger.latest("sa-1")?.text).toMatch(/RESULT$/);
		expect(b.manager.ledger.latest("sa-2")?.text).toBe("RESULT");
		expect(b.manager.ledger.latest("sa-3")?.text).toBe("RESULT");
	});

	it("a result text that is not a string becomes a text saying the record is damaged", () => {
		fc.assert(
			fc.property(
				fc.oneof(fc.integer(), fc.constant(null), fc.array(fc.string()), fc.object(), fc.boolean()),
				(bad) => {
					const b = resumed([settled("sa-1", { text: bad }), settled("sa-2", {})]);
					expect(restoreFromSession(b.services, b.ctx)).toBe(2);
					const text = b.manager.ledger.latest("sa-1")?.text;
					expect(typeof text).toBe("string");
					expect(text).toMatch(/sa-1's recorded result is damaged in the session file \(its result text is/);
					expect(b.manager.ledger.latest("sa-2")?.text).toBe("RESULT");
				},
			),
			{ numRuns: 15 },
		);
	});

	it("a waiting stage whose recorded parameters fail the spawn schema is settled, not spawned", async () => {
		const schema = Type.Object({
			prompt: Type.String(),
			tools: Type.Optional(Type.Array(Type.String())),
			isolation: Type.Optional(Type.Union([Type.Literal("none"), Type.Literal("worktree")])),
		});
		const base = { run: 1, name: "B", model: "mock/mock-model", prompt: "task B", turns: 0, createdAt: 1 };
		const b = resumed([
			settled("sa-1", {}),
			{
				type: RUN_ENTRY,
				data: {
					...base,
					id: "sa-2",
					phase: "queued",
					after: ["sa-1"],
					spawn: { prompt: "task B", tools: "bash", after: ["sa-1"] },
				},
			},
		]);
		const waiting: RunEntryData[] = [];
		restoreFromSession(b.services, b.ctx, waiting);
		expect(waiting.map((d) => d.id)).toEqual(["sa-2"]);
		const failed = await restoreWaiting(b.services, b.ctx, waiting, (params, id) => {
			const problem = recordedSpawnProblem(schema, params);
			if (problem) throw new Error(`its recorded spawn parameters are damaged (${problem})`);
			return spawnTool(b.services, params as SpawnParams, b.ctx, id);
		});
		expect(failed).toBe(1);
		expect(b.backend.created).toEqual([]);
		expect(b.manager.get("sa-2")?.state).toBe("interrupted");
		expect(b.manager.ledger.latest("sa-2")?.text).toMatch(/recorded spawn parameters are damaged \(\/tools/);
		expect(recordedSpawnProblem(schema, { prompt: "ok", tools: ["read"] })).toBeUndefined();
		expect(recordedSpawnProblem(schema, "x")).toBe("not an object");
		expect(recordedSpawnProblem(schema, { prompt: "p", isolation: "elsewhere" })).toMatch(/isolation/);
	});
});

describe("a child's session file from a record", () => {
	it("a FIFO there is refused at once instead of blocking the main thread", () => {
		const dir = tempRoot("subagents-hostile-fifo");
		const fifo = join(dir, "child.jsonl");
		execFileSync("mkfifo", [fifo]);
		expect(existsSync(fifo)).toBe(true);
		expect(readPartialOutput(fifo)).toMatchObject({ ok: false, reason: expect.stringMatching(/not a regular file/) });
	});
});

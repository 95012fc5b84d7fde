/**
 * Trajectory files are written atomically: whole under a temp name, fsynced, then linked to their name. A write
 * that fails halfway (disk full) leaves no partial file under the final name, and no temp behind.
 */
import * as fs from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { buildTrajectories } from "../../extensions/handoff/trajectory.ts";
import {
	ORPHAN_MIN_AGE_MS,
	pruneOrphanTrajectories,
	writeTrajectories,
} from "../../extensions/handoff/trajectory-files.ts";
import { ctx, outcome } from "../fixtures/handoff-trajectory-data.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

/** When set, the next write puts half its text on disk and then fails as a full disk would. */
const failing = { next: false };
vi.mock("node:fs", async (importOriginal) => {
	const real = await importOriginal<typeof import("node:fs")>();
	return {
		...real,
		writeSync: (fd: number, data: string) => {
			if (!failing.next) return real.writeSync(fd, data);
			failing.next = false;
			real.writeSync(fd, data.slice(0, data.length >> 1));
			throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
		},
	};
});

describe("atomic trajectory files", () => {
	it("a write that fails halfway leaves nothing under the final name and no temp", () => {
		const root = makeTestDir("traj-atomic");
		const files = buildTrajectories(ctx, outcome("full"));
		failing.next = true;
		const res = writeTrajectories({ parent: () => ({ ok: true, dir: root }), name: "s.handoffs" }, files);
		expect(res[0]).toMatchObject({ ok: false, error: expect.stringContaining("ENOSPC") });
		expect(res.slice(1).every((r) => r.ok)).toBe(true);
		const names = fs.readdirSync(join(root, "s.handoffs")).sort();
		expect(names).toEqual(
			files
				.slice(1)
				.map((f) => f.fileName)
				.sort(),
		);
		for (const name of names) JSON.parse(fs.readFileSync(join(root, "s.handoffs", name), "utf8"));
		// The failed one can be written again later: its name was never taken by a partial file.
		const again = writeTrajectories({ parent: () => ({ ok: true, dir: root }), name: "s.handoffs" }, files.slice(0, 1));
		expect(again[0].ok).toBe(true);
	});
});

describe("trajectory folders beside deleted sessions", () => {
	it("are removed once old; a live session's, a young one and a folder with other files stay", () => {
		const root = makeTestDir("traj-orphans");
		const files = buildTrajectories(ctx, outcome("full"));
		const write = (name: string) => writeTrajectories({ parent: () => ({ ok: true, dir: root }), name }, files);
		for (const name of ["gone.handoffs", "live.handoffs", "young.handoffs", "mixed.handoffs"]) write(name);
		fs.writeFileSync(join(root, "live.jsonl"), "");
		fs.writeFileSync(join(root, "mixed.handoffs", "notes.txt"), "mine");
		const old = new Date(Date.now() - 2 * ORPHAN_MIN_AGE_MS);
		for (const name of ["gone.handoffs", "live.handoffs", "mixed.handoffs"]) {
			for (const f of fs.readdirSync(join(root, name))) fs.utimesSync(join(root, name, f), old, old);
			fs.utimesSync(join(root, name), old, old);
		}
		expect(pruneOrphanTrajectories(root)).toEqual([join(root, "gone.handoffs")]);
		expect(fs.readdirSync(root).sort()).toEqual(["live.handoffs", "live.jsonl", "mixed.handoffs", "young.handoffs"]);
	});
});

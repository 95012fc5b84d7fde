import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PutResult } from "../../extensions/shared/store/artifact-store.ts";
import {
	claimPruneSlot,
	PRUNE_INTERVAL_MS,
	PRUNE_MARKER_NAME,
	resetBackgroundPruneForTests,
	runBackgroundPrune,
	scheduleBackgroundPrune,
} from "../../extensions/shared/store/background-prune.ts";
import { DAY_MS, useTempStore } from "./store-fixture.ts";

const tmp = useTempStore("background-prune", () => {
	resetBackgroundPruneForTests();
});

function oldArtifact(days: number): PutResult {
	const put = tmp.store.putSync("tool-outputs", `old output ${days}\n`.repeat(10));
	if (!put.ok) throw new Error(put.error);
	const t = new Date(Date.now() - days * DAY_MS);
	utimesSync(put.path, t, t);
	return put;
}

describe("claimPruneSlot", () => {
	it("claims once per interval with a private marker file", () => {
		mkdirSync(tmp.store.root, { recursive: true, mode: 0o700 });
		const now = Date.now();
		const previous = process.umask(0o022);
		try {
			expect(claimPruneSlot(tmp.store.root, now)).toBe(true);
		} finally {
			process.umask(previous);
		}
		const marker = join(tmp.store.root, PRUNE_MARKER_NAME);
		expect(lstatSync(marker).isFile()).toBe(true);
		expect(lstatSync(marker).mode & 0o777).toBe(0o600);
		expect(Math.abs(lstatSync(marker).mtimeMs - now)).toBeLessThan(1000);
		expect(claimPruneSlot(tmp.store.root, now + 1000)).toBe(false);
		expect(claimPruneSlot(tmp.store.root, now + PRUNE_INTERVAL_MS - 1000)).toBe(false);
		expect(claimPruneSlot(tmp.store.root, now + PRUNE_INTERVAL_MS + 1000)).toBe(true);
	});

	it("refuses a planted symlink or directory at the marker and never writes through it", () => {
		mkdirSync(tmp.store.root, { recursive: true, mode: 0o700 });
		const outside = mkdtempSync(join(tmpdir(), "headroom-outside-"));
		try {
			const victim = join(outside, "victim");
			symlinkSync(victim, join(tmp.store.root, PRUNE_MARKER_NAME));
			expect(claimPruneSlot(tmp.store.root, Date.now())).toBe(false);
			expect(existsSync(victim)).toBe(false);
			rmSync(join(tmp.store.root, PRUNE_MARKER_NAME));
			mkdirSync(join(tmp.store.root, PRUNE_MARKER_NAME));
			expect(claimPruneSlot(tmp.store.root, Date.now() + 2 * PRUNE_INTERVAL_MS)).toBe(false);
		} finally {
			rmSync(outside, { recursive: true, force: true });
		}
	});
});

describe("runBackgroundPrune", () => {
	it("does nothing (and creates nothing) when the store does not exist yet", async () => {
		expect(await runBackgroundPrune(tmp.agentDir)).toMatchObject({ ran: false });
		expect(existsSync(tmp.store.root)).toBe(false);
	});

	it("prunes by the configured bounds once, then skips until the interval has passed", async () => {
		const ancient = oldArtifact(10);
		const recent = oldArtifact(3);
		const now = Date.now();
		expect(await runBackgroundPrune(tmp.agentDir, { maxAgeDays: 5 }, now)).toEqual({
			ran: true,
			removed: 1,
			freedBytes: ancient.bytes,
		});
		expect(existsSync(ancient.path)).toBe(false);
		expect(await runBackgroundPrune(tmp.agentDir, { maxAgeDays: 1 }, now + 60_000)).toMatchObject({ ran: false });
		expect(existsSync(recent.path)).toBe(true);
		expect(await runBackgroundPrune(tmp.agentDir, { maxAgeDays: 1 }, now + PRUNE_INTERVAL_MS + 60_000)).toMatchObject({
			ran: true,
			removed: 1,
		});
		expect(existsSync(recent.path)).toBe(false);
	});

	it("refuses a store root that is a symlink", async () => {
		const outside = mkdtempSync(join(tmpdir(), "headroom-outside-"));
		try {
			mkdirSync(join(tmp.agentDir, "cache"), { recursive: true });
			symlinkSync(outside, tmp.store.root);
			expect(await runBackgroundPrune(tmp.agentDir)).toMatchObject({ ran: false, reason: /symlink/ });
			expect(existsSync(join(outside, PRUNE_MARKER_NAME))).toBe(false);
		} finally {
			rmSync(outside, { recursive: true, force: true });
		}
	});
});

describe("scheduleBackgroundPrune", () => {
	it("schedules once per process, even from another copy of the module, and prunes off the hot path", async () => {
		const ancient = oldArtifact(40);
		expect(scheduleBackgroundPrune(tmp.agentDir, {}, 20)).toBe(true);
		expect(existsSync(ancient.path)).toBe(true); // nothing happens synchronously
		expect(scheduleBackgroundPrune(tmp.agentDir, {}, 20)).toBe(false);
		const copy = (await import(
			/* @vite-ignore */ `../../extensions/shared/store/background-prune.ts?copy=${Date.now()}`
		)) as typeof import("../../extensions/shared/store/background-prune.ts");
		expect(copy.scheduleBackgroundPrune).not.toBe(scheduleBackgroundPrune);
		expect(copy.scheduleBackgroundPrune(tmp.agentDir, {}, 20)).toBe(false);
		for (let i = 0; i < 100 && existsSync(ancient.path); i++) await new Promise((r) => setTimeout(r, 20));
		expect(existsSync(ancient.path)).toBe(false);
		expect(readFileSync(join(tmp.store.root, PRUNE_MARKER_NAME), "utf8")).toBe("");
	});
});

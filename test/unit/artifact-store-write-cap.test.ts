/**
 * The store's size cap holds at write time, not only at the 6-hourly background prune: a write that takes the
 * store over its cap removes the oldest entries first, never one this process wrote or looked up (pinned: its
 * sessions' contexts can name it) and never one younger than WRITE_CAP_MIN_AGE_MS (another live session's).
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
	resetBackgroundPruneForTests,
	scheduleBackgroundPrune,
} from "../../extensions/shared/store/background-prune.ts";
import {
	noteWrite,
	resetWriteCapForTests,
	setWriteCap,
	WRITE_CAP_MIN_AGE_MS,
	writeCapState,
} from "../../extensions/shared/store/write-cap.ts";
import { ageFile, HOUR_MS, mustPut, useTempStore } from "./store-fixture.ts";

const tmp = useTempStore("artifact-store-write-cap", resetWriteCapForTests);
const KIB = 1024;
const text = (tag: string) => `${tag}\n${"x".repeat(10 * KIB)}`;

async function settle(root: string): Promise<void> {
	await writeCapState(root).running;
}

describe("the size cap at write time", () => {
	it("removes the oldest unpinned entries until the store fits; keeps pinned and young ones", async () => {
		const { store } = tmp;
		// What earlier processes left: six artifacts, the oldest first; and one written a minute ago.
		const old = [];
		for (let i = 0; i < 6; i++) {
			const put = mustPut(await store.put("tool-outputs", text(`old-${i}`)));
			ageFile(put.path, (10 - i) * HOUR_MS);
			old.push(put.path);
		}
		const young = mustPut(await store.put("tool-outputs", text("young"))).path;
		const state = writeCapState(store.root);
		state.pinned.clear(); // none of them is this process's
		state.total = undefined;
		// This process looked one old artifact up (its context names it): pinned.
		expect(store.resolve(old[0].slice(-68, -4), "tool-outputs")).toMatchObject({ ok: true });
		setWriteCap(store.root, 50 * KIB);
		const fresh = mustPut(await store.put("tool-outputs", text("fresh")));
		await settle(store.root);
		const kept = old.map((p) => existsSync(p));
		// 9 entries of ~10 KiB each against a 50 KiB cap: the four oldest unpinned go, pinned old-0 stays.
		expect(kept).toEqual([true, false, false, false, false, true]);
		expect(existsSync(young)).toBe(true);
		expect(existsSync(fresh.path)).toBe(true);
		expect(writeCapState(store.root).last).toMatchObject({ removed: 4 });
		expect(writeCapState(store.root).total).toBeLessThanOrEqual(50 * KIB);
	});

	it("the cap comes from the configuration at session start; without one nothing is removed", async () => {
		resetBackgroundPruneForTests();
		const { store, agentDir } = tmp;
		const old = mustPut(await store.put("tool-outputs", text("old")));
		ageFile(old.path, 48 * HOUR_MS);
		writeCapState(store.root).pinned.clear();
		mustPut(await store.put("tool-outputs", text("a")));
		await settle(store.root);
		expect(existsSync(old.path)).toBe(true); // no cap known: nothing enforced
		scheduleBackgroundPrune(agentDir, { maxTotalBytes: 15 * KIB }, 60_000);
		mustPut(await store.put("tool-outputs", text("b")));
		await settle(store.root);
		expect(existsSync(old.path)).toBe(false);
		resetBackgroundPruneForTests();
	});

	it("a store that stays over its cap (all pinned or young) is not listed again on every write", () => {
		const state = { pinned: new Set<string>(), maxTotalBytes: 100, total: 500, floor: 500 };
		expect(noteWrite(state, "/a", 1, false)).toBe(false);
		expect(noteWrite(state, "/b", 20, false)).toBe(true); // grew past floor + 10 % of the cap
		expect(WRITE_CAP_MIN_AGE_MS).toBeGreaterThan(0);
	});
});

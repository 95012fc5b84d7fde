/**
 * A kept result does not keep its log alive: the scan's kept lines were slices of the log, and a slice holds the
 * whole string it was cut from, so a held scan result (a session's scan of a 64 MiB output) held the 64 MiB.
 * The cases run in a child process with --expose-gc (test/fixtures/held-memory.ts): each makes the result of a
 * 16 MiB log, drops the log, collects garbage and reports the heap. The log takes 16 MiB or more of heap while it
 * lives; once dropped, what the result still holds must be a small part of that (its kept lines: a few KB).
 * And the scan's own memory does not grow with the log's steps.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const SCRIPT = fileURLToPath(new URL("../fixtures/held-memory.ts", import.meta.url));
const MIB = 16;

type Heap = { what: string; before: number; alive: number; dropped: number; released: number; walked: number };

/** The heap of each case, in MiB (one child process for all). */
function heaps(): Heap[] {
	const child = spawnSync(process.execPath, ["--expose-gc", "--import", "jiti/register", SCRIPT, String(MIB)], {
		encoding: "utf8",
		timeout: 170_000,
		env: { ...process.env, TMPDIR: makeTestDir("held-memory-child") }, // the loader's cache goes with the test's folder
	});
	if (child.status !== 0) throw new Error(`held-memory failed: ${child.stderr}`);
	return child.stdout
		.trim()
		.split("\n")
		.map((line) => JSON.parse(line) as Heap);
}

describe("a held result and its log", () => {
	it("a scan result and a stub let the log go once it is dropped; a scan of many steps holds none of them", () => {
		const cases = heaps();
		expect(cases.map((c) => c.what)).toEqual(["scan", "stub", "stub-summary", "steps"]);
		for (const heap of cases.slice(0, 3)) {
			// The log was in the heap (the check measures what it means to measure) …
			expect(heap.alive - heap.before, heap.what).toBeGreaterThan(MIB * 0.9);
			// … the result alone keeps at most a tenth of it (the heap with the result held, less the heap once the
			// result is dropped too: what the first run of a large log leaves behind, compiled code and the like, is
			// about 1.5 MiB whatever the log's size and is in both) …
			expect(heap.dropped - heap.released, heap.what).toBeLessThan(MIB / 10);
			// … and nothing else keeps the log either.
			expect(heap.released - heap.before, heap.what).toBeLessThan(MIB / 4);
		}
		// A log of many steps (a CI verdict on every line): the scan keeps what its kept lines' steps say, not a
		// slot per step (per step and pass 5 array slots: 46 MiB held for the 16 MiB log's 490,000 steps).
		const steps = cases[3];
		expect(steps.walked - steps.before).toBeLessThan(MIB / 10);
	}, 180_000);
});

/**
 * What the package keeps after a call does not keep the text it was made from alive: a projection's head and tail,
 * a clipped prefix and a clipped list's head were slices of their input, and a slice holds the whole string it was
 * cut from, so a held projection of a 16 MiB log held the 16 MiB (a window's, the third of the file it numbered).
 * The extensions' outputs made through the projection (a stub of a file read or a search, a handoff transcript, a
 * trimmed context, a subagent result or check) are held here too. The cases run in a child process with
 * --expose-gc (test/fixtures/held-memory-outputs.ts): each makes the output of a 16 MiB text, drops the text,
 * collects garbage and reports the heap. The text takes 16 MiB or more of heap while it lives; once it is dropped,
 * what the output still holds must be a small part of that (the output: a few KB).
 */
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const SCRIPT = fileURLToPath(new URL("../fixtures/held-memory-outputs.ts", import.meta.url));
const MIB = 16;

type Heap = { what: string; before: number; alive: number; dropped: number };

/** The heap of each case, in MiB (one child process for all of them). */
function heaps(whats: string[]): Heap[] {
	const tmp = makeTestDir("held-memory-outputs-child"); // the loader's cache goes with the test's folder
	try {
		const child = spawnSync(
			process.execPath,
			["--expose-gc", "--import", "jiti/register", SCRIPT, String(MIB), whats.join(",")],
			{ encoding: "utf8", timeout: 170_000, env: { ...process.env, TMPDIR: tmp } },
		);
		if (child.status !== 0) throw new Error(`held-memory-outputs failed: ${child.stderr}`);
		return child.stdout
			.trim()
			.split("\n")
			.map((line) => JSON.parse(line) as Heap);
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

/** Each case's text was in the heap while it lived, and its output alone keeps under an eighth of it. */
function expectLetGo(whats: string[]): void {
	const cases = heaps(whats);
	expect(cases.map((c) => c.what)).toEqual(whats);
	for (const heap of cases) {
		const input = heap.alive - heap.before;
		// The text was in the heap (the check measures what it means to measure) …
		expect(input, heap.what).toBeGreaterThan(MIB * 0.9);
		// … and the output alone keeps a small part of it.
		expect(heap.dropped - heap.before, heap.what).toBeLessThan(input / 8);
	}
}

describe("a kept output and its input", () => {
	it("a projection (cut, clipped, a list, a window) and a log's projection let their text go", () => {
		expectLetGo([
			"projectLog",
			"project",
			"project-ascii",
			"project-clip",
			"project-clip-text",
			"project-list",
			"project-window",
		]);
	}, 180_000);

	it("a stub, a handoff transcript, a trimmed context and a subagent result or check let their text go", () => {
		expectLetGo(["stub-file", "stub-search", "handoff", "context-trim", "subagent-result", "subagent-check"]);
	}, 180_000);
});

/**
 * What the package keeps after a call does not keep the text it was made from alive: a projection's head and tail,
 * a clipped prefix and a clipped list's head were slices of their input, and a slice holds the whole string it was
 * cut from, so a held projection of a log held all of it (a window's, the third of the file it numbered).
 * The extensions' outputs made through the projection (a stub of a file read or a search, a handoff transcript, a
 * trimmed context, a subagent result or check) are held here too. The cases run in a child process with
 * --expose-gc (test/fixtures/held-memory-outputs.ts): each makes the output of an 8 MiB text, drops the text,
 * collects garbage and reports the heap. The text takes 8 MiB or more of heap while it lives; once it is dropped,
 * what the output still holds must be a small part of that (the output: a few KB). The copy itself, detached(), and
 * the projection's outputs are checked under Bun too (test/fixtures/held-memory-copies.ts): JavaScriptCore cuts a
 * concatenation without copying it, so the copy V8 lets go of (a concatenation cut again) held the text there.
 */
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const OUTPUTS = fileURLToPath(new URL("../fixtures/held-memory-outputs.ts", import.meta.url));
const COPIES = fileURLToPath(new URL("../fixtures/held-memory-copies.ts", import.meta.url));
const BUN = fileURLToPath(new URL("../../node_modules/.bin/bun", import.meta.url));
const NODE = [process.execPath, "--expose-gc", "--import", "jiti/register"];
const MIB = 8;

type Heap = { what: string; before: number; alive: number; dropped: number };

/** The heap of each case, in MiB (one child process for all of them): `command` runs `script`. */
async function heaps(command: string[], script: string, whats: string[]): Promise<Heap[]> {
	const tmp = makeTestDir("held-memory-outputs-child"); // the loader's cache goes with the test's folder
	try {
		const [program, ...args] = command;
		// Not spawnSync: the test's worker must answer its runner while the child works.
		const child = await promisify(execFile)(program, [...args, script, String(MIB), whats.join(",")], {
			encoding: "utf8",
			timeout: 280_000,
			maxBuffer: 1 << 20,
			env: { ...process.env, TMPDIR: tmp },
		});
		return child.stdout
			.trim()
			.split("\n")
			.map((line) => JSON.parse(line) as Heap);
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

/** Each case's text was in the heap while it lived, and its output alone keeps under an eighth of it. */
async function expectLetGo(whats: string[]): Promise<void> {
	const cases = (await heaps(NODE, OUTPUTS, whats)) as (Heap & { released: number })[];
	expect(cases.map((c) => c.what)).toEqual(whats);
	for (const heap of cases) {
		const input = heap.alive - heap.before;
		// The text was in the heap (the check measures what it means to measure) …
		expect(input, heap.what).toBeGreaterThan(MIB * 0.9);
		// … the output alone keeps a small part of it (the heap with the output held, less the heap once it is
		// dropped too: what a case's first run on a large text leaves behind, compiled code and the like, up to
		// about 1.6 MiB whatever the text's size, is in both) …
		expect(heap.dropped - heap.released, heap.what).toBeLessThan(input / 8);
		// … and nothing else keeps the text either.
		expect(heap.released - heap.before, heap.what).toBeLessThan(input / 4);
	}
}

/**
 * The copies on one engine: a bare slice holds its text (the control), each copy and projection output does not (in
 * the better of its two rounds: a stale reference Bun's conservative stack scan finds once is not a slice's hold).
 */
async function expectCopiesLetGo(command: string[], whats: string[]): Promise<void> {
	const rounds = await heaps(command, COPIES, whats);
	expect(rounds.map((c) => c.what)).toEqual(whats.flatMap((w) => [w, w]));
	for (const what of whats) {
		const mine = rounds.filter((c) => c.what === what);
		for (const heap of mine) expect(heap.alive - heap.before, what).toBeGreaterThan(MIB * 0.9);
		const held = Math.min(...mine.map((c) => c.dropped - c.before));
		if (what === "slice") expect(held, what).toBeGreaterThan(MIB * 0.9);
		else expect(held, what).toBeLessThan(Math.min(...mine.map((c) => c.alive - c.before)) / 8);
	}
}

/** The copy alone: a bare slice (the control), detached() once, called often, and of a concatenation of slices. */
const COPY_CASES = ["slice", "detached", "detached-hot", "detached-joined"];

describe("a kept output and its input", () => {
	it("a projection (cut, clipped, a list, a window) and a log's projection let their text go", async () => {
		await expectLetGo([
			"projectLog",
			"project",
			"project-ascii",
			"project-clip",
			"project-clip-text",
			"project-list",
			"project-window",
		]);
	}, 300_000);

	it("a stub, a handoff transcript, a trimmed context and a subagent result or check let their text go", async () => {
		await expectLetGo(["stub-file", "stub-search", "handoff", "context-trim", "subagent-result", "subagent-check"]);
	}, 300_000);

	it("a copy made with detached() lets its text go under Node", async () => {
		await expectCopiesLetGo(NODE, COPY_CASES);
	}, 300_000);

	it("under Bun too, and so do the projection's cut, clipped, list and window outputs", async () => {
		await expectCopiesLetGo([BUN], [...COPY_CASES, "project", "project-clip", "project-list", "project-window"]);
	}, 300_000);
});

/**
 * recall_artifact never holds a whole artifact: pages and searches read it in chunks, keep only what they
 * show, and say what they dropped (a line longer than the scan keeps, a page or a list past its characters);
 * search workers are bounded in number (more wait, and past the queue one is refused, saying so) and in heap.
 */
import { execFileSync } from "node:child_process";
import { closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pageArtifact, pageStored, searchStored } from "../../extensions/tool-artifacts/recall.ts";
import { LINE_MAX_CHARS, READ_CHUNK_BYTES, readLines } from "../../extensions/tool-artifacts/search-lines.js";
import { RECALL_MAX_QUEUED, RECALL_MAX_WORKERS, runSearch } from "../../extensions/tool-artifacts/search-worker.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const dir = makeTestDir("ta-recall-bounded");
let n = 0;
const file = (text: string) => {
	const path = join(dir, `f${++n}.txt`);
	writeFileSync(path, text);
	return path;
};

/** Lines as readLines hands them out, and the count it returns after stopping at `stopAt` (1-based; 0: never). */
function lines(path: string, stopAt = 0, max = LINE_MAX_CHARS) {
	const seen: Array<[string, number]> = [];
	const fd = openSync(path, "r");
	try {
		const rest = readLines(fd, max, (line, full) => {
			seen.push([line, full]);
			return seen.length !== stopAt;
		});
		return { seen, rest };
	} finally {
		closeSync(fd);
	}
}

const lineArb = fc
	.array(fc.constantFrom("a", "é", "😀", "xyz", "", "\r", "🙂🙂"), { maxLength: 6 })
	.map((p) => p.join(""));

describe("reading in chunks", () => {
	it("hands out exactly text.split('\\n'), and counts the rest after a stop (property)", () => {
		fc.assert(
			fc.property(fc.array(lineArb, { maxLength: 40 }), fc.nat(45), (parts, stop) => {
				const text = parts.join("\n");
				const all = text.split("\n");
				const { seen, rest } = lines(file(text), stop);
				const stopped = stop > 0 && stop <= all.length;
				expect(seen.map(([l]) => l)).toEqual(stopped ? all.slice(0, stop) : all);
				expect(rest).toBe(stopped ? all.length - stop : 0);
			}),
			{ numRuns: 60 },
		);
	});

	it("across chunk boundaries, multi-byte characters and lines longer than the scan keeps", () => {
		const long = "😀".repeat(READ_CHUNK_BYTES / 2); // 2 MiB of 4-byte characters on one line
		const text = ["first", long, "é".repeat(1000), "", "last"].join("\n");
		const { seen } = lines(file(text), 0, 1000);
		expect(seen.map(([l, full]) => [l.length, full])).toEqual([
			[5, 5],
			[1000, long.length],
			[1000, 1000],
			[0, 0],
			[4, 4],
		]);
		expect(seen[1][0]).toBe(long.slice(0, 1000));
	});
});

describe("pages", () => {
	it("equal the whole-text page wherever it fits (property)", () => {
		fc.assert(
			fc.property(
				fc.array(lineArb, { maxLength: 40 }),
				fc.integer({ min: 1, max: 45 }),
				fc.integer({ min: 1, max: 10 }),
				(parts, offset, limit) => {
					const text = parts.join("\n");
					expect(pageStored(file(text), "abcdef12", offset, limit)).toEqual(
						pageArtifact(text, "abcdef12", offset, limit),
					);
				},
			),
			{ numRuns: 60 },
		);
	});

	it("a page of a file larger than a chunk keeps only its own lines; a FIFO is refused", () => {
		const text = Array.from({ length: 300_000 }, (_, i) => `line ${i + 1} ${"x".repeat(i % 30)}`).join("\n");
		expect(Buffer.byteLength(text)).toBeGreaterThan(3 * READ_CHUNK_BYTES);
		const path = file(text);
		expect(pageStored(path, "abcdef12", 250_000, 2)).toEqual(pageArtifact(text, "abcdef12", 250_000, 2));
		const fifo = join(dir, "fifo.txt");
		execFileSync("mkfifo", [fifo]);
		expect(pageStored(fifo, "abcdef12")).toEqual({ ok: false, error: expect.stringContaining("(EINVAL)") });
	});
});

describe("searches", () => {
	it("a line longer than the scan keeps is searched in its first part, and the header says so", async () => {
		const path = file(["start", `${"y".repeat(LINE_MAX_CHARS)}NEEDLE`, "needle here"].join("\n"));
		const found = await searchStored(path, "abcdef12", "y|needle", /y|needle/u);
		if (!found.ok) throw new Error(found.error);
		expect(found.text.split("\n")[0]).toMatch(
			/1 line longer than 65536 characters searched and shown in their first 65536/,
		);
		expect(found.text).toContain("3:needle here");
		expect(found.text).not.toContain("NEEDLE");
	});

	it("run at most RECALL_MAX_WORKERS at once; RECALL_MAX_QUEUED wait; one more is refused, saying so", async () => {
		const path = file(`${"a".repeat(30)}!`);
		const job = { path, source: "^(a+)+$", flags: "u", context: 0, maxMatches: 5, separator: "--", start: 1 };
		const all = Array.from({ length: RECALL_MAX_WORKERS + RECALL_MAX_QUEUED + 2 }, () =>
			runSearch(job, { timeoutMs: 150 }),
		);
		const outcomes = await Promise.all(all);
		const codes = outcomes.map((o) => (o.ok ? "ok" : o.code));
		expect(codes.filter((c) => c === "timeout")).toHaveLength(RECALL_MAX_WORKERS + RECALL_MAX_QUEUED);
		expect(outcomes.filter((o) => !o.ok && o.code === "busy")).toEqual([
			{ ok: false, code: "busy", running: RECALL_MAX_WORKERS, queued: RECALL_MAX_QUEUED },
			{ ok: false, code: "busy", running: RECALL_MAX_WORKERS, queued: RECALL_MAX_QUEUED },
		]);
		// The pool is free again afterwards.
		expect(await runSearch({ ...job, source: "a" }, { timeoutMs: 5_000 })).toMatchObject({ ok: true, matches: 1 });
	}, 30_000);
});

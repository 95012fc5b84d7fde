/**
 * The footer's promise, checked with Pi's own tools (0.73.1): read(path, offset, limit) from the footer
 * returns exactly the first omitted lines, and head + every omitted page + tail rebuild the stored text.
 * A line too long for one read is paged with the footer's bash command, run through Pi's bash tool.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createBashTool, createReadTool, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
	type ProjectionLimits,
	projectParts,
	projectResult,
	READ_PAGE_MAX_BYTES,
	READ_PAGE_MAX_LINES,
} from "../../extensions/shared/projection/projection.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { bytesOf, limitsArb, reconstruct, stored, textArb } from "../unit/projection-arbitraries.ts";

const agentDir = makeTestDir("projection-read");
// Pi's bash tool writes a full-output log into the temp folder and never deletes it: keep it in ours.
const outerTmpDir = process.env.TMPDIR;
process.env.TMPDIR = join(agentDir, "tmp");
mkdirSync(process.env.TMPDIR);
afterAll(() => {
	if (outerTmpDir === undefined) delete process.env.TMPDIR;
	else process.env.TMPDIR = outerTmpDir;
	rmSync(agentDir, { recursive: true, force: true });
});
const store = new ArtifactStore({ agentDir });
const read = createReadTool(agentDir);
const bash = createBashTool(agentDir);
const CONTINUATION = /^\n\n\[\d+ more lines in file\. Use offset=\d+ to continue\.\]$/;

async function piRead(path: string, offset: number, limit: number): Promise<string> {
	const result = await read.execute("read-1", { path, offset, limit });
	const part = result.content[0];
	if (part.type !== "text") throw new Error("read returned no text");
	return part.text;
}

/** Exactly the lines read returns for a page that fits its caps, without its continuation notice. */
async function readPage(path: string, lines: string[], offset: number, limit: number): Promise<string> {
	const expected = lines.slice(offset - 1, offset - 1 + limit).join("\n");
	const text = await piRead(path, offset, limit);
	expect(text.startsWith(expected)).toBe(true);
	expect(text.slice(expected.length)).toMatch(offset - 1 + limit < lines.length ? CONTINUATION : /^$/);
	return expected;
}

/** Lines from `offset` that one read returns whole, stopping at `last` (the test's own greedy count). */
function greedyLimit(lines: string[], offset: number, last: number): number {
	let bytes = -1;
	let n = 0;
	while (offset + n <= last && n < READ_PAGE_MAX_LINES) {
		bytes += bytesOf(lines[offset - 1 + n]) + 1;
		if (bytes > READ_PAGE_MAX_BYTES) break;
		n++;
	}
	return n;
}

/** A line too long for read, fetched in byte pages with tail/head through Pi's bash tool. */
async function bashLine(path: string, file: Buffer, lineIndex: number): Promise<string> {
	let start = 0;
	for (let i = 0; i < lineIndex; i++) start = file.indexOf(10, start) + 1;
	const end = file.indexOf(10, start) === -1 ? file.length : file.indexOf(10, start);
	const pages: Buffer[] = [];
	for (let at = start; at < end; at += READ_PAGE_MAX_BYTES) {
		const size = Math.min(READ_PAGE_MAX_BYTES, end - at);
		pages.push(execFileSync("bash", ["-c", `tail -c +${at + 1} '${path}' | head -c ${size}`]));
	}
	return Buffer.concat(pages).toString("utf8");
}

async function checkFooterPromise(text: string, limits: ProjectionLimits) {
	const p = await projectResult(text, limits, { store, kind: "tool-outputs" });
	if (!p.truncated) return p;
	if (!p.artifact?.ok) throw new Error(`store failed: ${JSON.stringify(p.artifact)}`);
	const path = p.artifact.path;
	const file = readFileSync(path);
	const whole = stored(text);
	expect(file.equals(Buffer.from(whole))).toBe(true);

	// The footer's read call, parsed from what the model sees.
	const call = /read\(path=("(?:[^"\\]|\\.)*"), offset=(\d+), limit=(\d+)\)/.exec(p.text);
	expect(call).not.toBeNull();
	const [offset, limit] = [Number(call![2]), Number(call![3])];
	expect(JSON.parse(call![1])).toBe(path);
	expect([offset, limit]).toEqual([p.readOffset, p.readLimit]);

	const parts = projectParts(text, limits, p.artifact);
	expect(parts.projection).toEqual(p);
	const lines = whole.split("\n");
	const last = p.firstOmittedLine! + p.omittedLines - 1;
	const pages: string[] = [];
	let o = offset;
	if (bytesOf(lines[offset - 1]) > READ_PAGE_MAX_BYTES) {
		// read cannot show this line; the footer says so and gives a byte-exact bash command instead.
		expect(await piRead(path, offset, limit)).toMatch(/^\[Line \d+ is .* exceeds 50\.0KB limit/);
		const hint = / bash: (tail -c \+(\d+) .+? \| head -c (\d+)) \(next page: tail -c \+(\d+)\)/.exec(p.text);
		expect(hint).not.toBeNull();
		const from = Number(hint![2]) - 1;
		expect(from).toBe(bytesOf(parts.head));
		const shown = await bash.execute("bash-1", { command: hint![1] });
		const first = execFileSync("bash", ["-c", hint![1]]);
		expect(first.equals(file.subarray(from, from + READ_PAGE_MAX_BYTES))).toBe(true);
		// What the model would see through Pi's bash tool (exact whenever the page ends on a character).
		if (Buffer.from(first.toString("utf8")).equals(first)) {
			expect(shown.content[0]).toEqual({ type: "text", text: first.toString("utf8") });
		}
		expect(Number(hint![4])).toBe(from + 1 + READ_PAGE_MAX_BYTES);
		pages.push(await bashLine(path, file, offset - 1));
		o++;
	} else {
		pages.push(await readPage(path, lines, offset, limit)); // exactly the first omitted lines
		o += limit;
	}
	while (o <= last) {
		const n = greedyLimit(lines, o, last);
		if (n === 0) {
			pages.push(await bashLine(path, file, o - 1));
			o++;
		} else {
			pages.push(await readPage(path, lines, o, n));
			o += n;
		}
	}
	const tailStartsLine = text[parts.tailStart - 1] === "\n";
	expect(reconstruct(parts.head, pages.join("\n"), parts.tail, tailStartsLine)).toBe(whole);
	return p;
}

describe("the footer's read call, with Pi's own read tool", () => {
	it("uses read's own page caps (drift guard for both Pi lines)", () => {
		expect(READ_PAGE_MAX_BYTES).toBe(DEFAULT_MAX_BYTES);
		expect(READ_PAGE_MAX_LINES).toBe(DEFAULT_MAX_LINES);
		const newer = fileURLToPath(
			new URL("../../node_modules/@earendil-works/pi-coding-agent/dist/core/tools/truncate.js", import.meta.url),
		);
		const source = readFileSync(newer, "utf8");
		expect(source).toContain(`DEFAULT_MAX_LINES = ${READ_PAGE_MAX_LINES};`);
		expect(source).toContain(`DEFAULT_MAX_BYTES = ${READ_PAGE_MAX_BYTES / 1024} * 1024;`);
	});

	const log = Array.from({ length: 3000 }, (_, i) => `${i} INFO step ${i} done in ${i % 97}ms`).join("\n");
	const shapes: Array<[string, string, ProjectionLimits]> = [
		["a log, lines cut at boundaries", log, { maxBytes: 16_384, maxLines: 200 }],
		["a log with 40/60 share and a trailing newline", `${log}\n`, { maxBytes: 4096, maxLines: 60, headShare: 0.4 }],
		["CRLF, NUL and ANSI", `\x1b[1mA\0\r\n`.repeat(5000), { maxBytes: 2048, maxLines: 30 }],
		["CJK, emoji and combining marks", "中文😀e\u0301 \n".repeat(4000), { maxBytes: 3000, maxLines: 100 }],
		["lone surrogates", "a\ud800b\udc00\n".repeat(3000), { maxBytes: 2048, maxLines: 40 }],
		["a head cut inside a long line", `short\n${"L".repeat(30_000)}\nend`, { maxBytes: 8000, maxLines: 50 }],
		["one giant line, paged with bash", "0123456789abcdef".repeat(20_000), { maxBytes: 16_384, maxLines: 100 }],
		[
			"a giant line in the middle",
			`${log.slice(0, 5000)}\n${"中".repeat(40_000)}\n${log.slice(-5000)}`,
			{ maxBytes: 4096, maxLines: 80 },
		],
		["2 MB of log, many pages", log.repeat(25), { maxBytes: 16_384, maxLines: 2000 }],
	];
	for (const [name, text, limits] of shapes) {
		it(`returns exactly the omitted lines and rebuilds the text: ${name}`, async () => {
			const p = await checkFooterPromise(text, limits);
			expect(p.truncated).toBe(true);
		});
	}

	it("keeps its promise for random texts and limits", async () => {
		await fc.assert(
			fc.asyncProperty(textArb, limitsArb, async (text, limits) => {
				await checkFooterPromise(text, limits);
			}),
			{ numRuns: 60 },
		);
	});
});

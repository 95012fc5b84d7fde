/**
 * The full-output tail check over generated endings (issue: an output ending in blank lines lost its full
 * text). For each Pi line, the text a bash result shows is built with that line's own `truncateTail` and the
 * notice its bash appends; the file holds every byte. Whatever the ending (several "\n", "\r\n", no final
 * newline, a last line longer than Pi's byte limit), the file is recognised, through Pi's details and through
 * the notice alone (0.73's error results carry no details). And a notice a command printed itself never makes
 * the package take a file whose end is not what was shown.
 */
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { truncateTail as truncateTail073 } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
	type FullOutputLocation,
	locateFullOutput,
	matchesShown,
	readFullOutput,
} from "../../extensions/tool-artifacts/full-output.ts";
import { REPO_ROOT } from "../fixtures/sandbox.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

type TruncateTail = typeof truncateTail073;
const TRUNCATE_1X = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/core/tools/truncate.js");

let dir: string;
let truncateTail1x: TruncateTail;
beforeAll(async () => {
	dir = makeTestDir("full-output-prop");
	truncateTail1x = ((await import(pathToFileURL(TRUNCATE_1X).href)) as { truncateTail: TruncateTail }).truncateTail;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Pi's bash limits. */
const MAX_BYTES = 50 * 1024;

/** The total lines each line's bash states in its notice: 0.73 counts "\n" + 1, 1.x no empty last line. */
function totalLines(full: string, line: "0.73" | "1.x"): number {
	const newlines = full.split("\n").length - 1;
	if (line === "0.73") return newlines + 1;
	return newlines + (full.length > 0 && !full.endsWith("\n") ? 1 : 0);
}

/** The text Pi's bash returns for `full` (its formatOutput: the tail or "(no output)", then the notice). */
function piText(full: string, line: "0.73" | "1.x", path: string): { text: string; truncated: boolean } {
	const t = (line === "0.73" ? truncateTail073 : truncateTail1x)(full);
	if (!t.truncated) return { text: full, truncated: false };
	const total = totalLines(full, line);
	const start = total - t.outputLines + 1;
	const notice = t.lastLinePartial
		? `[Showing last ${t.outputBytes}B of line ${total} (line is ${t.outputBytes}B). Full output: ${path}]`
		: `[Showing lines ${start}-${total} of ${total}${t.truncatedBy === "bytes" ? " (50.0KB limit)" : ""}. Full output: ${path}]`;
	return { text: `${t.content || "(no output)"}\n\n${notice}`, truncated: true };
}

const word = fc
	.array(fc.constantFrom("a", "Z", "0", " ", ".", ":", "é", "€", "😀", "\t", "-", "error"), { maxLength: 12 })
	.map((parts) => parts.join(""));
/** A body long enough for Pi to cut it: over 2,000 lines, sometimes over 50 KB. */
const body = fc
	.tuple(fc.integer({ min: 2001, max: 2600 }), fc.array(word, { minLength: 1, maxLength: 30 }), fc.boolean())
	.map(([n, words, wide]) =>
		Array.from({ length: n }, (_, i) => `${words[i % words.length]} ${i}${wide ? "x".repeat(40) : ""}`).join("\n"),
	);
/** How an output ends. */
const ending = fc.oneof(
	fc.integer({ min: 0, max: 6 }).map((k) => "\n".repeat(k)),
	fc.integer({ min: 1, max: 6 }).map((k) => "\r\n".repeat(k)),
	fc.tuple(word, fc.integer({ min: 0, max: 4 })).map(([w, k]) => `\n${w}${"\n".repeat(k)}`),
	// A last line longer than Pi's byte limit, then 0 to 3 newlines.
	fc
		.tuple(fc.integer({ min: MAX_BYTES - 10, max: MAX_BYTES * 2 }), fc.integer({ min: 0, max: 3 }), fc.boolean())
		.map(([n, k, crlf]) => `\n${"é".repeat(Math.floor(n / 2))}${(crlf ? "\r\n" : "\n").repeat(k)}`),
);

function tempPath(): string {
	return join(dir, `pi-bash-${randomBytes(8).toString("hex")}.log`);
}

describe.each(["0.73", "1.x"] as const)("full-output file of Pi %s", (line) => {
	it("is recognised whatever the output's ending, through details and through the notice alone", async () => {
		await fc.assert(
			fc.asyncProperty(body, ending, async (head, end) => {
				const full = head + end;
				const path = tempPath();
				writeFileSync(path, full);
				try {
					const { text, truncated } = piText(full, line, path);
					expect(truncated).toBe(true);
					const viaDetails = locateFullOutput(text, { fullOutputPath: path, truncation: { truncated: true } });
					expect(await readFullOutput(viaDetails as FullOutputLocation)).toEqual({ ok: true, text: full });
					const errorText = `${text}\n\nCommand exited with code 1`;
					const viaNotice = locateFullOutput(errorText, undefined);
					expect(viaNotice?.source).toBe("notice");
					expect(await readFullOutput(viaNotice as FullOutputLocation)).toEqual({ ok: true, text: full });
				} finally {
					rmSync(path, { force: true });
				}
			}),
			{ numRuns: 60 },
		);
	});
});

describe("a notice printed by the command itself", () => {
	it("never makes the package take a file whose end is not what was shown", async () => {
		const secretLines = fc.array(word, { minLength: 1, maxLength: 50 });
		await fc.assert(
			fc.asyncProperty(
				secretLines,
				ending,
				word,
				fc.integer({ min: 1, max: 5000 }),
				async (lines, end, shown, total) => {
					const secret = lines.join("\n") + end;
					const path = tempPath();
					writeFileSync(path, secret);
					try {
						// The whole output is the command's own (short: Pi did not cut it), notice included.
						const printed = `${shown}\n\n[Showing lines 1-${total} of ${total}. Full output: ${path}]`;
						const location = locateFullOutput(printed, undefined);
						const read = await readFullOutput(location as FullOutputLocation);
						if (read.ok) {
							// Only a file that ends with exactly what the command printed (its own text), with the
							// stated line count, is taken: the command could have printed the rest itself.
							expect(secret.endsWith(shown) || secret.endsWith(`${shown}\n`)).toBe(true);
							expect(shown.length).toBeGreaterThan(0);
						} else expect(read.failure).toEqual({ code: "mismatch" });
					} finally {
						rmSync(path, { force: true });
					}
				},
			),
			{ numRuns: 200 },
		);
	});

	it("(no output) before a printed notice takes a file only with the stated count, over Pi's limits", () => {
		const location = (totalLines: number): FullOutputLocation => ({
			path: "/x/pi-bash-0123456789abcdef.log",
			source: "notice",
			shownTail: "(no output)",
			totalLines,
		});
		expect(matchesShown("a\nb", location(2), { newlines: 1, bytes: 3 })).toBe(false);
		expect(matchesShown("x", location(1), { newlines: 0, bytes: MAX_BYTES + 1 })).toBe(true);
		expect(matchesShown("x", location(2), { newlines: 0, bytes: MAX_BYTES + 1 })).toBe(false);
	});
});

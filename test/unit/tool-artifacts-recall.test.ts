import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, sep } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { RECALL_ERRORS } from "../../extensions/tool-artifacts/prompt.ts";
import {
	compilePattern,
	explainResolveFailure,
	listStoreEntries,
	pageArtifact,
	pageStored,
	RECALL_MAX_MATCHES,
	RECENT_IDS_SHOWN,
	resolveForRecall,
	searchStored,
	validateRecall,
} from "../../extensions/tool-artifacts/recall.ts";
import {
	parseWorkerMessage,
	RECALL_SEARCH_TIMEOUT_MS,
	runSearch,
	type SearchHit,
	searchLines,
} from "../../extensions/tool-artifacts/search-worker.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const dir = makeTestDir("ta-recall");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = new ArtifactStore({ agentDir: join(dir, "agent") });
mkdirSync(join(dir, "agent"), { recursive: true });

/** A plain reference: grep -n semantics over text.split("\n") from line `start` on, written the obvious way. */
function reference(text: string, regex: RegExp, context: number, maxMatches: number, start = 1): SearchHit {
	const lines = text.split("\n");
	const matches: number[] = [];
	for (let i = start - 1; i < lines.length && matches.length < maxMatches; i++)
		if (regex.test(lines[i])) matches.push(i);
	const rows: string[] = [];
	let last = -1;
	for (const m of matches) {
		const from = Math.max(start - 1, m - context, last + 1);
		const to = Math.min(lines.length - 1, m + context);
		if (last >= 0 && from > last + 1) rows.push("--");
		for (let i = from; i <= to; i++) rows.push(`${i + 1}${matches.includes(i) ? ":" : "-"}${lines[i]}`);
		last = Math.max(last, to);
	}
	const lastMatch = matches.length > 0 ? matches[matches.length - 1] + 1 : 0;
	const capped = matches.length === maxMatches && lastMatch < lines.length;
	return { rows, matches: matches.length, capped, total: lines.length, lastMatch };
}

const put = async (text: string) => {
	const r = await store.put("tool-outputs", text);
	if (!r.ok) throw new Error(r.error);
	return r;
};

describe("search routine", () => {
	it("equals the grep -n reference for any lines, pattern, context and cap (property)", () => {
		fc.assert(
			fc.property(
				fc.array(fc.constantFrom("foo", "bar", "baz qux", "", "xbay"), { maxLength: 80 }),
				fc.constantFrom("ba", "^$", "^foo$", "y$", "q"),
				fc.nat(4),
				fc.integer({ min: 1, max: 6 }),
				fc.integer({ min: 1, max: 90 }),
				(lines, pattern, context, maxMatches, start) => {
					const text = lines.join("\n");
					const got = searchLines(text, pattern, "u", context, maxMatches, "--", start);
					// Lines as Pi's read counts them: an empty text is one (empty) line, which ^$ matches.
					const total = text.split("\n").length;
					if (start > total) {
						// Past the end: nothing searched, and the total says how far the text goes.
						expect(got).toEqual({
							rows: [],
							matches: 0,
							capped: false,
							total,
							lastMatch: 0,
						});
					} else expect(got).toEqual(reference(text, new RegExp(pattern, "u"), context, maxMatches, start));
				},
			),
		);
	});

	it("continuing at offset=lastMatch+1 after each capped search lists every match exactly once (property)", () => {
		fc.assert(
			fc.property(
				fc.array(fc.constantFrom("foo", "bar", "baz qux", "", "xbay"), { minLength: 1, maxLength: 80 }),
				fc.constantFrom("ba", "^$", "^foo$", "y$", "q"),
				fc.integer({ min: 1, max: 6 }),
				(lines, pattern, maxMatches) => {
					const text = lines.join("\n");
					const seen: string[] = [];
					let start = 1;
					for (let round = 0; round <= lines.length; round++) {
						const hit = searchLines(text, pattern, "u", 0, maxMatches, "--", start);
						seen.push(...hit.rows.filter((row) => row !== "--"));
						if (!hit.capped) break;
						start = hit.lastMatch + 1;
					}
					const all = reference(text, new RegExp(pattern, "u"), 0, Number.POSITIVE_INFINITY);
					expect(seen).toEqual(all.rows.filter((row) => row !== "--"));
				},
			),
		);
	});
});

describe("search in a worker", () => {
	const text = Array.from({ length: 1000 }, (_, i) => String(i + 1)).join("\n");

	it("finds exactly the matching lines with their numbers and context", async () => {
		const { path } = await put(text);
		const compiled = compilePattern("^10?0$", false);
		if (!compiled.ok) throw new Error(compiled.error);
		const out = await searchStored(path, "abcdef12", "^10?0$", compiled.regex, 1);
		if (!out.ok) throw new Error(out.error);
		expect(out.text.split("\n")[0]).toContain("2 matching lines");
		expect(out.text.split("\n").slice(1)).toEqual(["9-9", "10:10", "11-11", "--", "99-99", "100:100", "101-101"]);
		const all = await searchStored(path, "abcdef12", "\\d", /\d/u, 0);
		if (!all.ok) throw new Error(all.error);
		expect(all.text.split("\n")[0]).toContain(`first ${RECALL_MAX_MATCHES} matching lines`);
		expect(all.text.split("\n")[0]).toContain("in 1000 lines");
		expect(all.text.split("\n").length).toBe(2 + RECALL_MAX_MATCHES);
		expect(all.text.split("\n").at(-1)).toBe(
			`[Stopped after ${RECALL_MAX_MATCHES} matches at line ${RECALL_MAX_MATCHES}; search again with offset=${RECALL_MAX_MATCHES + 1}, or narrow the pattern.]`,
		);
	});

	it("with offset, searches from that line on and continues exactly after the capped search's last match", async () => {
		// 1..5000: lines starting "1" are 1, 10-19, 100-199, 1000-1999: 1,111 of them, more than one search lists.
		const { path } = await put(Array.from({ length: 5000 }, (_, i) => String(i + 1)).join("\n"));
		const regex = /^1/u;
		const matched: string[] = [];
		let offset = 1;
		const headers: string[] = [];
		const offsets: number[] = [];
		for (let round = 0; round < 5; round++) {
			const out = await searchStored(path, "abcdef12", "^1", regex, 0, { offset });
			if (!out.ok) throw new Error(out.error);
			const rows = out.text.split("\n");
			headers.push(rows[0]);
			const next = /^\[Stopped after \d+ matches at line (\d+); search again with offset=(\d+), or narrow/.exec(
				rows.at(-1) ?? "",
			);
			matched.push(...rows.slice(1, next ? -1 : undefined).filter((row) => row !== "--"));
			if (!next) break;
			expect(Number(next[2])).toBe(Number(next[1]) + 1);
			offset = Number(next[2]);
			offsets.push(offset);
		}
		const expected = Array.from({ length: 5000 }, (_, i) => String(i + 1))
			.filter((n) => n.startsWith("1"))
			.map((n) => `${n}:${n}`);
		expect(matched).toEqual(expected);
		expect(headers.length).toBe(3);
		expect(headers[0]).toBe(
			`[Artifact abcdef12: first 500 matching lines for /^1/ in 5000 lines; "N:" marks a match, "N-" context]`,
		);
		// 1, 10-19, 100-199 and 1000-1388 are the first 500: the next search starts at 1389 and says so.
		expect(offsets).toEqual([1389, 1889]);
		expect(headers[1]).toContain("first 500 matching lines for /^1/ in lines 1389-5000 of 5000");
		expect(headers[2]).toContain("111 matching lines for /^1/ in lines 1889-5000 of 5000");
		// An offset past the end is an error that gives the valid range.
		expect(await searchStored(path, "abcdef12", "^1", regex, 0, { offset: 5001 })).toEqual({
			ok: false,
			error: "Offset 5001 is past the end of the artifact (5000 lines); use an offset from 1 to 5000.",
		});
	});

	it("stops a catastrophic pattern at the deadline with an error that says to simplify it", async () => {
		const { path } = await put(`start\n${"a".repeat(5000)}b\nend`);
		const compiled = compilePattern("^(a+)+$", false);
		if (!compiled.ok) throw new Error(compiled.error);
		const out = await searchStored(path, "abcdef12", "^(a+)+$", compiled.regex, 0, { timeoutMs: 500 });
		expect(out).toEqual({ ok: false, error: expect.stringContaining("stopped after 0.5 s") });
		if (!out.ok) expect(out.error).toMatch(/Simplify it/);
		// The default deadline is the documented one.
		expect(RECALL_SEARCH_TIMEOUT_MS).toBe(5000);
		// The same file still searches normally afterwards.
		const fine = await searchStored(path, "abcdef12", "^end$", /^end$/u, 0, { timeoutMs: 5000 });
		expect(fine).toEqual({ ok: true, text: expect.stringMatching(/\n3:end$/) });
	});

	it("an abort stops the search; a symlink or a missing file is not read", async () => {
		const { path } = await put(`${"a".repeat(5000)}b`);
		const controller = new AbortController();
		const job = { path, source: "^(a+)+$", flags: "u", context: 0, maxMatches: 10, separator: "--", start: 1 };
		const pending = runSearch(job, { signal: controller.signal, timeoutMs: 60_000 });
		setTimeout(() => controller.abort(), 50);
		expect(await pending).toEqual({ ok: false, code: "aborted" });
		const link = join(dir, "link.txt");
		symlinkSync(path, link);
		expect(await runSearch({ ...job, path: link, source: "a" })).toEqual({
			ok: false,
			code: "unreadable",
			errno: "ELOOP",
		});
		expect(await runSearch({ ...job, path: join(dir, "missing.txt"), source: "a" })).toMatchObject({
			code: "unreadable",
			errno: "ENOENT",
		});
	});

	it("accepts only well-formed worker messages", () => {
		const good = { ok: true, rows: ["1:a"], matches: 1, capped: false, total: 3, lastMatch: 1 };
		expect(parseWorkerMessage(good)).toEqual(good);
		expect(parseWorkerMessage({ ...good, lastMatch: undefined })).toEqual({ ok: false, code: "failed" });
		expect(parseWorkerMessage({ ...good, rows: [1] })).toEqual({
			ok: false,
			code: "failed",
		});
		expect(parseWorkerMessage(null)).toEqual({ ok: false, code: "failed" });
	});
});

describe("paging", () => {
	const text = Array.from({ length: 1000 }, (_, i) => String(i + 1)).join("\n");

	it("pages lines 1-based with a continuation hint", async () => {
		expect(pageArtifact(text, "abcdef12", 500, 3)).toEqual({
			ok: true,
			text: "[Artifact abcdef12: lines 500-502 of 1000]\n500\n501\n502\n[498 more lines. Use offset=503 to continue.]",
		});
		expect(pageArtifact(text, "abcdef12", 2000, 3).ok).toBe(false);
		const { path } = await put(text);
		expect(pageStored(path, "abcdef12", 999, 5)).toEqual({
			ok: true,
			text: "[Artifact abcdef12: lines 999-1000 of 1000]\n999\n1000",
		});
		const missing = pageStored(join(dir, "gone.txt"), "abcdef12");
		expect(missing).toEqual({ ok: false, error: expect.stringContaining("could not be read (ENOENT)") });
	});
});

describe("ids", () => {
	it("rejects bad ids, bad patterns and mixed modes with a clear error", () => {
		for (const id of ["../etc/passwd", "xyz", "abc", join(sep, "fixture", "abcdef12"), "abcdef12.txt"]) {
			const v = validateRecall({ id });
			expect(v.ok).toBe(false);
			if (!v.ok) expect(v.error).toMatch(/^Invalid artifact id .*12-hex id in a stub's first line/);
		}
		const bad = validateRecall({ id: "abcdef12", pattern: "(" });
		expect(bad.ok).toBe(false);
		if (!bad.ok) {
			expect(bad.error).toMatch(/^Invalid regular expression: \/\(\/u?: .+\. Escape special characters/);
			// Said once, though the engine's own message starts with the same words.
			expect(bad.error.split("Invalid regular expression").length).toBe(2);
		}
		expect(RECALL_ERRORS.badPattern("missing )")).toMatch(/^Invalid regular expression: missing \)\. Escape/);
		expect(validateRecall({ id: "abcdef12", pattern: "x", offset: 3 }).ok).toBe(true);
		expect(validateRecall({ id: "abcdef12", pattern: "x", limit: 3 })).toEqual({
			ok: false,
			error: RECALL_ERRORS.bothModes,
		});
		expect(RECALL_ERRORS.bothModes).toContain("give offset alone");
		expect(validateRecall({ id: "ABCDEF12", pattern: "\\-x" }).ok).toBe(true);
	});

	it("an unknown id is answered in our words, with the most recent ids", async () => {
		const own = new ArtifactStore({ agentDir: join(dir, "agent") });
		const stored = [await put("first\n"), await put("second\n"), await put("third\n")];
		const miss = resolveForRecall(own, "deadbeefdead");
		expect(miss.ok).toBe(false);
		if (miss.ok) return;
		expect(miss.error).toMatch(/^Unknown artifact id "deadbeefdead"; ids are the 12-hex ids in stub headers/);
		// Only the store's own message would say "no artifact matches"; the model gets ours.
		expect(miss.error).not.toContain("no artifact matches");
		const listed = /Most recent ids: ([0-9a-f, ]+)\./.exec(miss.error)?.[1].split(", ") ?? [];
		expect(listed.length).toBe(RECENT_IDS_SHOWN);
		for (const id of listed) expect(resolveForRecall(own, id).ok).toBe(true);
		for (const s of stored)
			expect(resolveForRecall(own, s.sha256.slice(0, 12))).toMatchObject({ ok: true, path: s.path });
	});

	it("explains ambiguous and unavailable ids (pure), and lists nothing from a missing or symlinked directory", () => {
		const name = (prefix: string) => `${prefix}${"0".repeat(64 - prefix.length)}.txt`;
		const entries = [
			{ name: name("abcdef1200"), mtimeMs: 1 },
			{ name: name("abcdef1211"), mtimeMs: 3 },
			{ name: name("99999999"), mtimeMs: 2 },
			{ name: "notes.md", mtimeMs: 9 },
		];
		expect(explainResolveFailure("abcdef12", entries)).toEqual({ code: "ambiguous", matches: 2 });
		expect(explainResolveFailure("99999999", entries)).toEqual({ code: "unavailable" });
		expect(explainResolveFailure("12345678", entries)).toEqual({
			code: "unknown",
			recent: ["abcdef121100", "999999990000", "abcdef120000"],
		});
		expect(explainResolveFailure("12345678", undefined)).toEqual({ code: "unavailable" });
		expect(listStoreEntries(join(dir, "nowhere"))).toBeUndefined();
		const real = join(dir, "real-dir");
		mkdirSync(real);
		writeFileSync(join(real, name("aa")), "x");
		symlinkSync(real, join(dir, "linked-dir"));
		expect(listStoreEntries(join(dir, "linked-dir"))).toBeUndefined();
		expect(listStoreEntries(real)?.map((e) => e.name)).toEqual([name("aa")]);
	});
});

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { truncateHead } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, it, vi } from "vitest";
import {
	type ArtifactRef,
	fitsSurface,
	MIN_BODY_BYTES,
	MIN_WINDOW_BYTES,
	MIN_WINDOW_LINES,
	READ_PAGE_MAX_BYTES,
} from "../../extensions/shared/projection/projection.ts";
import { ArtifactStore, type PutFailure, type PutResult } from "../../extensions/shared/store/artifact-store.ts";
import { bytesOf, displayLines, linesOf, reconstruct, stored } from "./projection-arbitraries.ts";
import { partsOf, projectStored, projectStoredSync, projectWith } from "./projection-calls.ts";

const SHA = "ab".repeat(32);
const ART: ArtifactRef = { ok: true, path: `/agent-dir/cache/headroom/tool-outputs/${SHA}.txt`, sha256: SHA };
const numbered = (count: number, width = 20) =>
	Array.from({ length: count }, (_, i) => `line ${i + 1} `.padEnd(width, "-")).join("\n");

/** Whole-projection bounds plus the documented reconstruction, for any example. */
function checkAll(text: string, limits: { maxBytes: number; maxLines: number; headShare?: number }, art = ART) {
	const parts = partsOf(text, limits, art);
	const p = parts.projection;
	expect(bytesOf(p.text)).toBeLessThanOrEqual(Math.max(limits.maxBytes, MIN_WINDOW_BYTES));
	expect(linesOf(p.text)).toBeLessThanOrEqual(Math.max(limits.maxLines, MIN_WINDOW_LINES));
	if (p.truncated) {
		const lines = stored(text).split("\n");
		const pages = lines.slice(p.firstOmittedLine! - 1, p.firstOmittedLine! - 1 + p.omittedLines).join("\n");
		expect(reconstruct(parts.head, pages, parts.tail, text[parts.tailStart - 1] === "\n")).toBe(stored(text));
	}
	return parts;
}

describe("projectWith: verbatim", () => {
	it("returns short text unchanged with its totals and no artifact", () => {
		for (const text of ["", "one line", "a\nb\n", "\r\n\r\n", "😀 中文"]) {
			const p = projectWith(text, { maxBytes: 4096, maxLines: 50 }, ART);
			expect(p).toEqual({
				text,
				truncated: false,
				clipped: false,
				totalBytes: bytesOf(text),
				totalLines: linesOf(text),
				omittedBytes: 0,
				omittedLines: 0,
				headEnd: text.length,
				tailStart: text.length,
				head: text,
				tail: "",
				marker: "",
				footer: "",
				maxBytes: 4096,
				maxLines: 50,
				headShare: 0.75,
				headBudgetBytes: 0,
				headBudgetLines: 0,
				tailBudgetBytes: 0,
				tailBudgetLines: 0,
				shownItems: 0,
				omittedItems: 0,
				entries: [],
			});
		}
	});

	it("treats both limits as inclusive and truncates one byte or one line past them", () => {
		const bytes = "x".repeat(2000);
		expect(projectWith(bytes, { maxBytes: 2000, maxLines: 50 }, ART).truncated).toBe(false);
		expect(projectWith(`${bytes}y`, { maxBytes: 2000, maxLines: 50 }, ART).truncated).toBe(true);
		const lines = "\n".repeat(49); // 50 lines as read counts
		expect(projectWith(lines, { maxBytes: 4096, maxLines: 50 }, ART).truncated).toBe(false);
		expect(projectWith(`${lines}\n`, { maxBytes: 4096, maxLines: 50 }, ART).truncated).toBe(true);
		expect(fitsSurface(bytes, { maxBytes: 2000, maxLines: 50 })).toBe(true);
		expect(fitsSurface(`${bytes}y`, { maxBytes: 2000, maxLines: 50 })).toBe(false);
		expect(fitsSurface(`${lines}\n`, { maxBytes: 4096, maxLines: 50 })).toBe(false);
	});

	it("raises limits below the minimum window before deciding, and sanitises nonsense", () => {
		const text = numbered(6); // fits the minimum window
		for (const limits of [
			{ maxBytes: 0, maxLines: 0 },
			{ maxBytes: -5, maxLines: -1 },
			{ maxBytes: Number.NaN, maxLines: Number.NaN },
		]) {
			expect(projectWith(text, limits, ART).truncated).toBe(false);
			const long = projectWith(numbered(400), limits, ART);
			expect(long.truncated).toBe(true);
			expect(bytesOf(long.text)).toBeLessThanOrEqual(MIN_WINDOW_BYTES);
			expect(linesOf(long.text)).toBeLessThanOrEqual(MIN_WINDOW_LINES);
		}
		expect(projectWith(numbered(400), { maxBytes: Number.POSITIVE_INFINITY, maxLines: 1e9 }, ART).truncated).toBe(
			false,
		);
	});

	it("rejects a non-string with a clear TypeError", () => {
		expect(() => projectWith(undefined as unknown as string, { maxBytes: 10, maxLines: 1 }, ART)).toThrow(
			/text must be a string/,
		);
	});
});

describe("projectWith: shape of a projection", () => {
	it("keeps head and tail lines around a marker and a footer with totals and the read call", () => {
		const text = numbered(500);
		const parts = checkAll(text, { maxBytes: 4096, maxLines: 60 });
		const p = parts.projection;
		expect(p.truncated).toBe(true);
		expect(p.text.startsWith("line 1 ")).toBe(true);
		expect(p.text).toContain("line 500 ");
		expect(parts.marker).toBe(
			`[… ${p.omittedLines} lines (${p.omittedBytes.toLocaleString("en-US")} bytes) omitted — see the footer …]`,
		);
		expect(parts.footer).toContain(`${bytesOf(text).toLocaleString("en-US")} bytes, 500 lines`);
		expect(parts.footer).toContain(
			`read(path="${ART.ok ? ART.path : ""}", offset=${p.firstOmittedLine}, limit=${p.readLimit})`,
		);
		expect(p.text.endsWith(parts.footer)).toBe(true);
		// Head and tail end and start on line boundaries here: no partial lines.
		expect(parts.head.endsWith("\n")).toBe(true);
		expect(text[parts.tailStart - 1]).toBe("\n");
		expect(displayLines(parts.head) + p.omittedLines + linesOf(parts.tail)).toBe(500);
		expect(p.readLimit).toBe(p.omittedLines); // a small omitted range is one page
	});

	it("splits the body by headShare (0.75 by default, 0.4 for command logs, 0 and 1 at the extremes)", () => {
		const text = numbered(2000);
		const limits = { maxBytes: 8000, maxLines: 2000 };
		const def = partsOf(text, limits, ART);
		const logs = partsOf(text, { ...limits, headShare: 0.4 }, ART);
		expect(bytesOf(def.head)).toBeGreaterThan(2.5 * bytesOf(def.tail));
		expect(bytesOf(logs.head)).toBeLessThan(bytesOf(logs.tail));
		const headOnly = checkAll(text, { ...limits, headShare: 1 });
		const tailOnly = checkAll(text, { ...limits, headShare: 0 });
		expect(headOnly.tail).toBe("");
		expect(tailOnly.head).toBe("");
		expect(tailOnly.projection.firstOmittedLine).toBe(1);
		expect(headOnly.projection.omittedLines + displayLines(headOnly.head)).toBe(2000);
	});

	it("says 1 line, not 1 lines", () => {
		const parts = partsOf(`a\n${"x".repeat(5000)}\nb`, { maxBytes: 1500, maxLines: 10 }, ART);
		expect(parts.marker).toMatch(/^\[… 1 line \(/);
	});
});

describe("projectWith: texts of every shape", () => {
	it("shows head and tail of one giant line where Pi's truncateHead shows nothing", () => {
		const text = "0123456789".repeat(100_000); // 1,000,000 bytes, no newline
		expect(truncateHead(text, { maxBytes: 16_384 }).content).toBe("");
		const parts = checkAll(text, { maxBytes: 16_384, maxLines: 200 });
		const p = parts.projection;
		expect(bytesOf(parts.head)).toBeGreaterThan(10_000);
		expect(bytesOf(parts.tail)).toBeGreaterThan(3_000);
		expect(p.firstOmittedLine).toBe(1);
		expect(p.omittedLines).toBe(1);
		expect(p.readLimit).toBe(1);
		// read cannot show a line this long: the footer adds exact byte paging.
		expect(parts.footer).toContain(
			`tail -c +${bytesOf(parts.head) + 1} '${ART.ok ? ART.path : ""}' | head -c ${READ_PAGE_MAX_BYTES}`,
		);
		expect(parts.footer).toContain("line 1 is longer than read returns");
	});

	it("keeps CRLF, NUL and ANSI escapes byte for byte", () => {
		const line = "\x1b[31mred\x1b[0m\0tab\there\r";
		const text = Array.from({ length: 300 }, (_, i) => `${i}${line}`).join("\n");
		const parts = checkAll(text, { maxBytes: 2048, maxLines: 40 });
		expect(parts.head.split("\n")[1]).toBe(`1${line}`);
		expect(parts.tail.endsWith(`299${line}`)).toBe(true);
	});

	it("never cuts inside a character, whatever byte the cut lands on", () => {
		for (const unit of ["😀", "中", "é", "e\u0301", "👨‍👩‍👧", "\ud800", "\r\n"]) {
			const text = "x".repeat(50) + unit.repeat(3000);
			for (let maxBytes = 1024; maxBytes < 1024 + 24; maxBytes++) {
				const parts = checkAll(text, { maxBytes, maxLines: 1000 }, { ok: false, error: "test" });
				expect(bytesOf(parts.projection.text)).toBeLessThanOrEqual(maxBytes);
				expect(stored(parts.projection.text)).toBe(parts.projection.text); // no lone surrogate, no broken pair
				expect(stored(text).startsWith(parts.head)).toBe(true);
				expect(stored(text).endsWith(parts.tail)).toBe(true);
			}
		}
	});

	it("stores and shows a lone surrogate as U+FFFD, counted as its 3 UTF-8 bytes", () => {
		const text = `${"\ud800x".repeat(1000)}\n${"y\udc00".repeat(1000)}`;
		const parts = checkAll(text, { maxBytes: 1024, maxLines: 20 });
		expect(parts.projection.totalBytes).toBe(Buffer.from(text).length);
		expect(parts.head).toContain("\ufffd");
		expect(parts.tail).toContain("\ufffd");
		expect(/[\ud800-\udfff]/.test(parts.projection.text)).toBe(false);
	});

	it("counts a trailing newline as one more line, as read does", () => {
		const base = numbered(300);
		const withNewline = projectWith(`${base}\n`, { maxBytes: 2048, maxLines: 40 }, ART);
		const without = projectWith(base, { maxBytes: 2048, maxLines: 40 }, ART);
		expect(withNewline.totalLines).toBe(without.totalLines + 1);
		checkAll(`${base}\n`, { maxBytes: 2048, maxLines: 40 });
	});

	it("cuts at a line boundary near the cut but inside a line when the nearest boundary is far", () => {
		// 30 short lines then a 20,000-byte line: the head's budget ends inside the long line,
		// the last boundary keeps far less than half, so the head cuts inside it.
		const text = `${numbered(30, 10)}\n${"L".repeat(20_000)}\n${numbered(30, 10)}`;
		const farParts = checkAll(text, { maxBytes: 8000, maxLines: 200 });
		expect(farParts.head.endsWith("L")).toBe(true);
		// With a line boundary just before the cut, the head ends on it.
		const near = checkAll(numbered(3000, 30), { maxBytes: 8000, maxLines: 3000 });
		expect(near.head.endsWith("\n")).toBe(true);
	});
});

describe("projectWith: read limit and footers", () => {
	it("sizes the read limit so one read returns the page whole (exactly 50 KiB fits, one byte more does not)", () => {
		// No head, so the page starts at line 1: (1023 + extra) + 49 × (1 + 1023) bytes for 50 lines.
		const text = (extra: number) => ["a".repeat(1023 + extra), ...Array(60).fill("b".repeat(1023))].join("\n");
		const exact = projectWith(text(1), { maxBytes: 1024, maxLines: 8, headShare: 0 }, ART);
		const over = projectWith(text(2), { maxBytes: 1024, maxLines: 8, headShare: 0 }, ART);
		expect([exact.readOffset, over.readOffset]).toEqual([1, 1]);
		const lines = stored(text(1)).split("\n");
		const page = lines.slice(exact.readOffset! - 1, exact.readOffset! - 1 + exact.readLimit!).join("\n");
		expect(bytesOf(page)).toBe(READ_PAGE_MAX_BYTES);
		expect(over.readLimit).toBe(exact.readLimit! - 1);
	});

	it("says plainly when the full text was not saved, prints no path, and keeps the reason on one line", () => {
		const reason = `EACCES: permission denied, open '/x/y'\nsecond line ${"z".repeat(5000)}`;
		const parts = checkAll(numbered(400), { maxBytes: 2048, maxLines: 40 }, { ok: false, error: reason });
		expect(parts.footer).toMatch(/^\[Full text: [\d,]+ bytes, 400 lines, NOT saved \(EACCES: permission denied/);
		expect(parts.footer).toContain("only the head and tail above are available");
		expect(parts.footer).not.toContain("read(");
		expect(parts.footer.length).toBeLessThan(400);
		expect(parts.projection.readOffset).toBeUndefined();
		const none = partsOf(numbered(400), { maxBytes: 2048, maxLines: 40 }, undefined);
		expect(none.footer).toContain("NOT saved (no artifact store was given)");
	});

	it("raises the window for a very long artifact path instead of overflowing or emptying the body", () => {
		const path = `/${"deep/".repeat(400)}${SHA}.txt`;
		const parts = partsOf(numbered(400), { maxBytes: 1024, maxLines: 20 }, { ok: true, path, sha256: SHA });
		expect(parts.limits.maxBytes).toBeGreaterThan(MIN_WINDOW_BYTES);
		expect(bytesOf(parts.projection.text)).toBeLessThanOrEqual(parts.limits.maxBytes);
		expect(bytesOf(parts.head) + bytesOf(parts.tail)).toBeGreaterThan(MIN_BODY_BYTES / 2);
		expect(parts.footer).toContain(JSON.stringify(path));
	});

	it("quotes odd paths: JSON in the read call, single quotes for bash", () => {
		const path = `/agent dir/it's "odd"\\/${SHA}.txt`;
		const parts = partsOf("q".repeat(100_000), { maxBytes: 4096, maxLines: 20 }, { ok: true, path, sha256: SHA });
		const call = /read\(path=("(?:[^"\\]|\\.)*"), offset=(\d+), limit=(\d+)\)/.exec(parts.footer);
		expect(JSON.parse(call![1])).toBe(path);
		expect(parts.footer).toContain(`'/agent dir/it'\\''s "odd"\\/${SHA}.txt'`);
	});
});

describe("projectWith: linear, no line array", () => {
	it("never splits the input text", () => {
		const text = numbered(100_000);
		const split = vi.spyOn(String.prototype, "split");
		try {
			projectWith(text, { maxBytes: 16_384, maxLines: 2000 }, ART);
			fitsSurface(text, { maxBytes: 16_384, maxLines: 2000 });
			expect(split.mock.contexts.some((ctx) => String(ctx).length >= text.length / 2)).toBe(false);
		} finally {
			split.mockRestore();
		}
	});
});

describe("projectStored", () => {
	const agentDir = mkdtempSync(join(tmpdir(), "headroom-projection-"));
	afterAll(() => rmSync(agentDir, { recursive: true, force: true }));
	const store = new ArtifactStore({ agentDir });

	it("writes nothing when the text fits", async () => {
		const p = await projectStored("short", { maxBytes: 4096, maxLines: 50 }, { store, kind: "tool-outputs" });
		expect(p.truncated).toBe(false);
		expect((await store.stats()).count).toBe(0);
	});

	it("stores the exact full text and points the footer at it (async and sync)", async () => {
		const text = `${numbered(1000)}\n\ud800 end`;
		for (const p of [
			await projectStored(text, { maxBytes: 4096, maxLines: 50 }, { store, kind: "subagent-results" }),
			projectStoredSync(text, { maxBytes: 4096, maxLines: 50 }, { store, kind: "subagent-results" }),
		]) {
			expect(p.artifact?.ok).toBe(true);
			const path = p.artifact?.ok ? p.artifact.path : "";
			expect(readFileSync(path).equals(Buffer.from(text))).toBe(true);
			expect(p.text).toContain(JSON.stringify(path));
		}
		expect(readdirSync(store.dirFor("subagent-results"))).toHaveLength(1);
	});

	it("never throws for store failures: a failed or throwing store gives head + tail and says NOT saved", async () => {
		const failing = {
			put: async (): Promise<PutResult | PutFailure> => ({ ok: false, error: "ENOSPC: no space left on device" }),
			putSync: (): PutResult | PutFailure => {
				throw new Error("disk on fire");
			},
		} as unknown as ArtifactStore;
		const a = await projectStored(
			numbered(500),
			{ maxBytes: 2048, maxLines: 40 },
			{ store: failing, kind: "tool-outputs" },
		);
		const b = projectStoredSync(
			numbered(500),
			{ maxBytes: 2048, maxLines: 40 },
			{ store: failing, kind: "tool-outputs" },
		);
		expect(a.text).toContain("NOT saved (ENOSPC: no space left on device)");
		expect(b.text).toContain("NOT saved (disk on fire)");
		for (const p of [a, b]) {
			expect(p.text.startsWith("line 1 ")).toBe(true);
			expect(p.text).toContain("line 500 ");
			expect(bytesOf(p.text)).toBeLessThanOrEqual(2048);
		}
	});
});

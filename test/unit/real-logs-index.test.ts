import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
	criticalVisible,
	jsonUnescaped,
	loadRealLogs,
	REAL_LOGS_DIR,
	sameLine,
	VISIBLE_PREFIX_CHARS,
	visibleNeedle,
} from "../fixtures/real-logs.ts";

const logs = loadRealLogs();
const SPDX = new Set(["MIT", "Apache-2.0", "BSD-3-Clause", "BSD-2-Clause", "ISC", "MPL-2.0"]);

describe("the real-log corpus index", () => {
	it("has at least 30 logs, at least 5 passing runs, and every placement the issue names", () => {
		expect(logs.length).toBeGreaterThanOrEqual(30);
		expect(logs.filter((log) => log.outcome === "pass").length).toBeGreaterThanOrEqual(5);
		const places = new Set(logs.map((log) => log.where));
		for (const where of ["start", "middle", "end", "300+ above end", "two runs"]) expect(places).toContain(where);
		expect(logs.filter((log) => log.bytes >= 1024 * 1024).length).toBeGreaterThanOrEqual(3);
	});

	it("names every file once, and every file has an entry", () => {
		const files = readdirSync(join(REAL_LOGS_DIR, "files")).sort();
		expect(logs.map((log) => log.file).sort()).toEqual(files);
		expect(new Set(logs.map((log) => log.id)).size).toBe(logs.length);
		for (const log of logs) {
			expect(log.id).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
			expect(log.file.startsWith(`${log.id}.`)).toBe(true);
			expect(log.file.endsWith(".gz")).toBe(log.gz);
		}
	});

	it("matches each file's bytes: sha256, size and lines as Pi's read counts them", () => {
		for (const log of logs) {
			expect(createHash("sha256").update(log.raw).digest("hex"), log.id).toBe(log.sha256);
			expect(log.raw.length, log.id).toBe(log.bytes);
			expect(log.text.split("\n").length, log.id).toBe(log.lines);
		}
	});

	it("keeps the provenance and a redistributable licence of every file", () => {
		for (const log of logs) {
			expect(log.source.repo, log.id).toMatch(/^[\w.-]+\/[\w.-]+$/);
			expect(log.source.path.length, log.id).toBeGreaterThan(0);
			expect(log.source.commit, log.id).toMatch(/^[0-9a-f]{40}$/);
			expect(SPDX, log.id).toContain(log.source.license);
			expect(["fail", "pass"]).toContain(log.outcome);
			expect(log.ecosystem.length, log.id).toBeGreaterThan(0);
		}
	});

	it("puts each critical and decoy text on the line it names; a critical text on no line that says otherwise", () => {
		for (const log of logs) {
			const lines = log.text.split("\n");
			expect(log.critical.length, log.id).toBeGreaterThan(0);
			for (const marked of [...log.critical, ...log.decoys]) {
				expect(marked.line, log.id).toBeGreaterThanOrEqual(1);
				expect(lines[marked.line - 1], `${log.id}:${marked.line}`).toContain(marked.text);
			}
			for (const marked of log.critical) {
				const holders = new Set(lines.filter((line) => line.includes(marked.text)).map(sameLine));
				expect(holders.size, `${log.id}:${marked.line}`).toBe(1);
			}
		}
	});
});

describe("sameLine", () => {
	it("sets aside the CI prefixes that differ between repeats of one line", () => {
		expect(sameLine("2024-07-08T16:59:08.1747875Z ##[error]Process completed with exit code 1.")).toBe(
			"##[error]Process completed with exit code 1.",
		);
		expect(sameLine("[task 2025-02-13T11:53:22.117Z] 11:53:22     INFO - TEST-UNEXPECTED-TIMEOUT | a")).toBe(
			"TEST-UNEXPECTED-TIMEOUT | a",
		);
		expect(sameLine("FAIL: b\r")).toBe("FAIL: b");
		expect(sameLine("FAIL: a")).not.toBe(sameLine("FAIL: b"));
	});
});

describe("criticalVisible", () => {
	const entry = {
		critical: [
			{ line: 3, text: "FAIL: test_x" },
			{ line: 9, text: `E   ${"x".repeat(200)}` },
		],
	};

	it("counts a line as shown when its text is in the view, and a very long one by its first part", () => {
		const clipped = `… FAIL: test_x …\nE   ${"x".repeat(VISIBLE_PREFIX_CHARS)}… [clipped]`;
		expect(criticalVisible(clipped, entry).visible).toEqual(entry.critical);
		expect(visibleNeedle(entry.critical[1]).length).toBe(VISIBLE_PREFIX_CHARS);
	});

	it("misses a line the view does not show, or shows only in part", () => {
		const view = `FAIL: test_\nE   ${"x".repeat(VISIBLE_PREFIX_CHARS - 10)}`;
		expect(criticalVisible(view, entry)).toEqual({ visible: [], missing: entry.critical });
	});

	it("counts a line of a JSON event shown as the string's value", () => {
		const json = { critical: [{ line: 1, text: "FAIL\\tpkg/a\\t0.01s" }] };
		expect(jsonUnescaped(json.critical[0].text)).toBe("FAIL\tpkg/a\t0.01s");
		expect(criticalVisible("12: FAIL\tpkg/a\t0.01s", json).visible).toEqual(json.critical);
		expect(criticalVisible('{"Output":"FAIL\\tpkg/a\\t0.01s\\n"}', json).visible).toEqual(json.critical);
		expect(criticalVisible("FAIL pkg/a 0.01s", json).missing).toEqual(json.critical);
	});

	it("finds every critical line of every log in the whole log", () => {
		for (const log of logs) expect(criticalVisible(log.text, log).missing, log.id).toEqual([]);
	});
});

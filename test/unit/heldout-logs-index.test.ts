import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
	HELDOUT_CI,
	HELDOUT_LOGS_DIR,
	HELDOUT_WHERE,
	heldoutGroups,
	loadHeldoutLogs,
	splitOf,
} from "../fixtures/heldout-logs.ts";
import { criticalVisible, readRealLogIndex, sameLine } from "../fixtures/real-logs.ts";

const groups = heldoutGroups();
const logs = loadHeldoutLogs();
const SPDX = new Set(["MIT", "Apache-2.0", "BSD-3-Clause", "BSD-2-Clause", "ISC", "MPL-2.0", "CC-BY-4.0", "CC0-1.0"]);
/** Files over this size are stored gzipped. */
const GZIP_OVER = 64 * 1024;

describe("the held-out log corpus index", () => {
	it("has group folders, each with logs, and passing runs among them", () => {
		expect(groups.length).toBeGreaterThan(0);
		for (const group of groups) expect(logs.filter((log) => log.group === group).length, group).toBeGreaterThan(0);
		expect(logs.some((log) => log.outcome === "pass")).toBe(true);
	});

	it("names every file of a group once, and every file has an entry", () => {
		for (const group of groups) {
			const entries = logs.filter((log) => log.group === group);
			const files = readdirSync(join(HELDOUT_LOGS_DIR, group, "files")).sort();
			expect(entries.map((log) => log.file).sort(), group).toEqual(files);
			expect(new Set(entries.map((log) => log.id)).size, group).toBe(entries.length);
		}
		for (const log of logs) {
			expect(log.id).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
			expect(log.file, log.id).toMatch(/\.txt(?:\.gz)?$/);
			expect(log.file.startsWith(`${log.id}.`), log.id).toBe(true);
			expect(log.file.endsWith(".gz"), log.id).toBe(log.gz);
			if (log.bytes > GZIP_OVER) expect(log.gz, `${log.id} is over 64 KiB`).toBe(true);
		}
	});

	it("holds each log once across all groups, and none of the corpus the rules were written on", () => {
		const bySha = new Map<string, string>();
		for (const log of logs) {
			const seen = bySha.get(log.sha256);
			expect(seen, `${log.group}/${log.id} is the same file as ${seen}`).toBeUndefined();
			bySha.set(log.sha256, `${log.group}/${log.id}`);
		}
		const sources = new Set(logs.map((log) => `${log.source.repo}:${log.source.path}`));
		expect(sources.size).toBe(logs.length);
		for (const real of readRealLogIndex()) expect(bySha.has(real.sha256), real.id).toBe(false);
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
		}
	});

	it("describes every log: ecosystem, tools, CI system, outcome, placement and label", () => {
		for (const log of logs) {
			expect(log.ecosystem, log.id).toMatch(/^[a-z0-9+#]+$/);
			expect(log.tools.length, log.id).toBeGreaterThan(0);
			for (const tool of log.tools) expect(tool, log.id).toMatch(/^[a-z0-9][a-z0-9._+-]*$/);
			expect(HELDOUT_CI, log.id).toContain(log.ci);
			expect(["fail", "pass"], log.id).toContain(log.outcome);
			expect(HELDOUT_WHERE, log.id).toContain(log.where);
			expect(log.label.length, log.id).toBeGreaterThan(0);
		}
	});

	it("splits by the first hex digit of the sha256, never by hand", () => {
		for (const log of logs) expect(log.split, log.id).toBe(splitOf(log.sha256));
		expect(splitOf("8f00")).toBe("test");
		expect(splitOf("f000")).toBe("test");
		expect(splitOf("7fff")).toBe("dev");
		expect(splitOf("0000")).toBe("dev");
	});

	it("marks critical lines in failing runs only, and none in passing runs", () => {
		for (const log of logs) {
			if (log.outcome === "fail") expect(log.critical.length, log.id).toBeGreaterThan(0);
			else expect(log.critical, log.id).toEqual([]);
		}
	});

	it("puts each critical and decoy text on the line it names; a critical text on no line that says otherwise", () => {
		for (const log of logs) {
			const lines = log.text.split("\n");
			for (const marked of [...log.critical, ...log.decoys]) {
				expect(Number.isInteger(marked.line), `${log.id}:${marked.line}`).toBe(true);
				expect(marked.line, log.id).toBeGreaterThanOrEqual(1);
				expect(marked.line, log.id).toBeLessThanOrEqual(lines.length);
				expect(marked.text.trim().length, `${log.id}:${marked.line}`).toBeGreaterThan(0);
				expect(lines[marked.line - 1], `${log.id}:${marked.line}`).toContain(marked.text);
			}
			expect(new Set(log.critical.map((marked) => marked.text)).size, log.id).toBe(log.critical.length);
			for (const marked of log.critical) {
				const holders = new Set(lines.filter((line) => line.includes(marked.text)).map(sameLine));
				expect(holders.size, `${log.id}:${marked.line}`).toBe(1);
			}
			expect(criticalVisible(log.text, log).missing, log.id).toEqual([]);
		}
	});

	it("never marks one line both critical and decoy", () => {
		for (const log of logs) {
			const critical = new Set(log.critical.map((marked) => marked.line));
			for (const decoy of log.decoys) expect(critical.has(decoy.line), `${log.id}:${decoy.line}`).toBe(false);
		}
	});
});

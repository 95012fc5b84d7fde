/**
 * A store that cannot write says so: an oversized tool result whose artifact cannot be stored gets a
 * stub that says NOT stored and why, with the type-aware excerpt (of Pi's full-output file when bash
 * saved one, naming it) — never a silent pass-through. The stores here fail for real: a planted
 * symlink in the cache path, and a plain file where the cache folder should be.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { buildStub, isPassThrough } from "../../extensions/tool-artifacts/artifacts.ts";
import { isStub } from "../../extensions/tool-artifacts/stub.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { fact, numbered } from "./tool-artifacts-facts.ts";

const dir = makeTestDir("ta-unstored");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const config = DEFAULT_CONFIG.toolArtifacts;

/** A store whose cache folder is a symlink planted elsewhere (the store refuses to follow it). */
const elsewhere = join(dir, "elsewhere");
mkdirSync(elsewhere);
mkdirSync(join(dir, "planted"));
symlinkSync(elsewhere, join(dir, "planted", "cache"));
const planted = new ArtifactStore({ agentDir: join(dir, "planted") });

/** A store with a plain file where its cache folder should be (as root, permissions would not stop a write). */
mkdirSync(join(dir, "blocked"));
writeFileSync(join(dir, "blocked", "cache"), "not a folder");
const blocked = new ArtifactStore({ agentDir: join(dir, "blocked") });

const READ_CALL = /read\(path=("(?:[^"\\]|\\.)*"), offset=(\d+), limit=(\d+)\)/g;

describe("an oversized result the store cannot keep", () => {
	it("gets a stub that says NOT stored and why, with head and tail of a command log, within the stub's limits", async () => {
		const text = `${numbered(3000)}\nerror: build failed`;
		const built = await buildStub(fact({ text }), text, { store: planted, config });
		if (!("notStored" in built)) throw new Error("the planted symlink was followed");
		expect(built.notStored).toMatch(/symlink/);
		const lines = built.text.split("\n");
		expect(lines[0]).toBe(
			`[Tool output NOT stored | bash | ${Buffer.byteLength(text).toLocaleString("en-US")} bytes, 3,001 lines]`,
		);
		expect(lines.at(-1)).toMatch(
			/^\[Full output NOT stored \(the artifact store failed: .*symlink.*\) — only the excerpt above is left; re-run the tool with narrower output/,
		);
		expect(lines).toContain("line 1");
		expect(lines).toContain("error: build failed");
		expect(built.text).toMatch(/\[… [\d,]+ lines \([\d,]+ bytes\) omitted/);
		expect(built.text).not.toContain(elsewhere);
		expect(built.text).not.toMatch(/read\(path=/); // nothing to page: no path that does not exist
		expect(Buffer.byteLength(built.text)).toBeLessThanOrEqual(config.stubMaxBytes);
		expect(lines.length).toBeLessThanOrEqual(config.stubMaxLines);
		expect(readdirSync(elsewhere)).toEqual([]);
		// Never shortened twice: the stub is recognised, and the details say projected and why not stored.
		expect(isStub(built.text)).toBe(true);
		expect(isPassThrough(built.text, undefined)).toBe(true);
		expect(built.details.headroom).toEqual({ projected: true, artifacts: [], notStored: built.notStored });
	});

	it("says the same when a file stands where the cache folder should be", async () => {
		const text = numbered(4000, "row");
		const built = await buildStub(fact({ text, toolName: "read", input: { path: "big.txt" } }), text, {
			store: blocked,
			config,
		});
		if (!("notStored" in built)) throw new Error("stored through a file");
		expect(built.text).toContain(`(the artifact store failed: ${built.notStored})`);
		expect(built.text.split("\n")[0]).toMatch(/^\[Tool output NOT stored \| read \| /);
		expect(built.text).toContain("row 1");
		expect(Buffer.byteLength(built.text)).toBeLessThanOrEqual(config.stubMaxBytes);
	});

	it("bash with Pi's full-output file: the excerpt is of the complete output and pages that file", async () => {
		const full = numbered(9000);
		const tempFile = join(dir, "pi-bash-0123456789abcdef.log");
		writeFileSync(tempFile, full);
		const shown = full.split("\n").slice(-2000).join("\n");
		const text = `${shown}\n\n[Showing lines 7001-9000 of 9000. Full output: ${tempFile}]`;
		const built = await buildStub(fact({ text, details: { fullOutputPath: tempFile } }), text, {
			store: planted,
			config,
		});
		if (!("notStored" in built)) throw new Error("the planted symlink was followed");
		const lines = built.text.split("\n");
		expect(lines[0]).toContain("| bash | ");
		expect(lines[0]).toContain("9,000 lines]");
		expect(lines).toContain("line 1"); // from the file: bash's own result started at line 7001
		expect(lines).toContain("line 9000");
		expect(lines.at(-1)).toBe(
			`[Full output NOT stored (the artifact store failed: ${built.notStored}) — Pi's full-output file still holds it: ${tempFile} — page it with read (offset/limit) while it exists]`,
		);
		const calls = [...built.text.matchAll(READ_CALL)];
		expect(calls.length).toBeGreaterThan(0);
		for (const call of calls) {
			expect(JSON.parse(call[1])).toBe(tempFile);
			const offset = Number(call[2]);
			// The first omitted line is not shown, the one before it is.
			expect(lines).not.toContain(`line ${offset}`);
			expect(lines).toContain(`line ${offset - 1}`);
		}
		expect(built.details.headroom).toMatchObject({ projected: true, artifacts: [tempFile] });
		expect(existsSync(tempFile)).toBe(true);
	});

	it("stays within the stub's limits for any output and tool (property)", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.constantFrom("bash", "read", "grep", "find", "web_fetch", "mcp_tool"),
				fc.array(fc.string({ unit: "grapheme", maxLength: 400 }), { minLength: 1, maxLength: 400 }),
				fc.string({ unit: "grapheme", maxLength: 30_000 }),
				async (tool, rows, tail) => {
					const text = `${rows.join("\n")}${tail}`;
					const built = await buildStub(fact({ text, toolName: tool, input: {} }), text, { store: planted, config });
					expect("notStored" in built).toBe(true);
					expect(Buffer.byteLength(built.text)).toBeLessThanOrEqual(config.stubMaxBytes);
					expect(built.text.split("\n").length).toBeLessThanOrEqual(config.stubMaxLines);
					expect(isStub(built.text)).toBe(true);
				},
			),
			{ numRuns: 60 },
		);
	});
});

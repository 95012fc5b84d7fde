/**
 * Concurrency and crash safety: simultaneous puts in one process and across processes end with one file
 * per content, and a writer killed mid-write leaves nothing under a final name, only a temp file that a
 * later prune removes once it is stale.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type PutResult, STALE_TEMP_MS } from "../../extensions/shared/store/artifact-store.ts";
import { useTempStore } from "./store-fixture.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const STORE_MODULE = fileURLToPath(new URL("../../extensions/shared/store/artifact-store.ts", import.meta.url));
const tmp = useTempStore("artifact-store-concurrency");

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

/** Run a module script with the TypeScript loader; resolves with stdout once it exits. */
function runChild(source: string, args: string[], onStdout?: (chunk: string, child: ChildProcess) => void) {
	const script = join(tmp.agentDir, `child-${Math.random().toString(16).slice(2)}.mjs`);
	// The loader may hand a .ts module to plain ESM as its default export.
	const loadStore = `async function loadStore() {
	const mod = await import(${JSON.stringify(STORE_MODULE)});
	return mod.ArtifactStore ? mod : mod.default;
}
`;
	writeFileSync(script, loadStore + source);
	const child = spawn(process.execPath, ["--import", "jiti/register", script, ...args], {
		cwd: REPO,
		stdio: ["ignore", "pipe", "pipe"],
		env: { ...process.env, TMPDIR: tmp.agentDir }, // the loader's cache goes with the test's folder
	});
	let out = "";
	let err = "";
	child.stdout.on("data", (d) => {
		out += d;
		onStdout?.(out, child);
	});
	child.stderr.on("data", (d) => {
		err += d;
	});
	return new Promise<{ out: string; err: string; signal: NodeJS.Signals | null }>((resolve) =>
		child.on("exit", (_code, signal) => resolve({ out, err, signal })),
	);
}

describe("concurrent puts", () => {
	it("32 simultaneous puts of the same content: one file, the same path for all", async () => {
		const text = "same content ".repeat(50_000);
		const results = (await Promise.all(
			Array.from({ length: 32 }, (_, i) =>
				i % 4 === 0 ? Promise.resolve(tmp.store.putSync("tool-outputs", text)) : tmp.store.put("tool-outputs", text),
			),
		)) as PutResult[];
		expect(new Set(results.map((r) => r.ok && r.path)).size).toBe(1);
		expect(results.filter((r) => r.ok && !r.reused)).toHaveLength(1);
		expect(readdirSync(tmp.store.dirFor("tool-outputs"))).toEqual([`${sha(text)}.txt`]);
		expect(readFileSync(results[0].path, "utf8")).toBe(text);
	});

	it("32 simultaneous puts of different contents: one file each", async () => {
		const texts = Array.from({ length: 32 }, (_, i) => `content ${i} `.repeat(10_000));
		const results = (await Promise.all(texts.map((t) => tmp.store.put("subagent-results", t)))) as PutResult[];
		expect(results.every((r) => r.ok && !r.reused)).toBe(true);
		expect(readdirSync(tmp.store.dirFor("subagent-results")).sort()).toEqual(texts.map((t) => `${sha(t)}.txt`).sort());
	});

	it("4 processes × 8 puts of the same content at once: one file, the same path everywhere", async () => {
		const text = "across processes\n".repeat(100_000);
		const textFile = join(tmp.agentDir, "text.txt");
		writeFileSync(textFile, text);
		const source = `
import { readFileSync } from "node:fs";
const { ArtifactStore } = await loadStore();
const [agentDir, textFile, startAt] = process.argv.slice(2);
const text = readFileSync(textFile, "utf8");
const store = new ArtifactStore({ agentDir });
while (Date.now() < Number(startAt)) {}
const results = await Promise.all(Array.from({ length: 8 }, () => store.put("tool-outputs", text)));
process.stdout.write(JSON.stringify(results));
`;
		const startAt = String(Date.now() + 3000);
		const runs = await Promise.all(
			Array.from({ length: 4 }, () => runChild(source, [tmp.agentDir, textFile, startAt])),
		);
		const results = runs.flatMap((r) => JSON.parse(r.out) as PutResult[]);
		expect(results).toHaveLength(32);
		expect(new Set(results.map((r) => r.ok && r.path))).toEqual(
			new Set([join(tmp.store.dirFor("tool-outputs"), `${sha(text)}.txt`)]),
		);
		expect(results.filter((r) => !r.reused)).toHaveLength(1);
		expect(readdirSync(tmp.store.dirFor("tool-outputs"))).toEqual([`${sha(text)}.txt`]);
	});
});

describe("a writer killed mid-write", () => {
	it("leaves no file under the final name; a later put succeeds; prune removes the stale temp file", async () => {
		const text = "killed\n".repeat(600_000); // several write chunks
		const textFile = join(tmp.agentDir, "text.txt");
		writeFileSync(textFile, text);
		// The child blocks inside its second write (part of the text on disk), then is killed.
		const source = `
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
const original = fs.writeSync;
let calls = 0;
fs.writeSync = function (...args) {
	if (++calls === 2) {
		original(1, "BLOCKED\\n");
		Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
	}
	return original.apply(this, args);
};
syncBuiltinESMExports();
const { ArtifactStore } = await loadStore();
const [agentDir, textFile] = process.argv.slice(2);
new ArtifactStore({ agentDir }).putSync("tool-outputs", fs.readFileSync(textFile, "utf8"));
process.stdout.write("FINISHED\\n");
`;
		const run = await runChild(source, [tmp.agentDir, textFile], (out, child) => {
			if (out.includes("BLOCKED")) child.kill("SIGKILL");
		});
		expect(run.signal).toBe("SIGKILL");
		expect(run.out).not.toContain("FINISHED");
		const dir = tmp.store.dirFor("tool-outputs");
		const left = readdirSync(dir);
		expect(left.filter((n) => n.endsWith(".txt"))).toEqual([]);
		expect(left).toHaveLength(1);
		const temp = join(dir, left[0]);
		expect(statSync(temp).size).toBeGreaterThan(0);
		expect(statSync(temp).size).toBeLessThan(Buffer.byteLength(text));

		const r = (await tmp.store.put("tool-outputs", text)) as PutResult;
		expect(r).toMatchObject({ ok: true, reused: false });
		expect(readFileSync(r.path, "utf8")).toBe(text);

		expect(await tmp.store.prune()).toEqual({ removed: 0, freedBytes: 0 }); // too fresh: could be a live writer
		const old = new Date(Date.now() - STALE_TEMP_MS - 60_000);
		utimesSync(temp, old, old);
		const pruned = await tmp.store.prune();
		expect(pruned.removed).toBe(1);
		expect(existsSync(temp)).toBe(false);
		expect(existsSync(r.path)).toBe(true);
	});
});

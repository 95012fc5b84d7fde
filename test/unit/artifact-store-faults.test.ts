/**
 * Every way a put can fail ends in a PutFailure (never a throw), leaves no file under a final name and
 * no temp file, and a projection then says the full text was NOT saved. Tests run as root here, where
 * chmod cannot cause EACCES, so real faults are the ones that also stop root (a file where a directory
 * should be, planted symlinks, a mismatching file under the name) and the rest are injected into node:fs.
 */
import {
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ArtifactStore, type PutFailure, type PutResult } from "../../extensions/shared/store/artifact-store.ts";
import { projectStored, projectStoredSync } from "./projection-calls.ts";

/** Injected faults: fs function name → errno code, each used once. */
const faults = vi.hoisted(() => ({ plan: new Map<string, string>() }));

vi.mock("node:fs", async (importOriginal) => {
	const actual = await importOriginal<typeof import("node:fs")>();
	const injected = (name: string) => {
		const code = faults.plan.get(name);
		if (!code) return undefined;
		faults.plan.delete(name);
		return Object.assign(new Error(`${code}: injected fault, ${name}`), { code });
	};
	const wrapSync =
		(name: keyof typeof actual) =>
		(...args: unknown[]) => {
			const error = injected(name);
			if (error) throw error;
			return (actual[name] as (...a: unknown[]) => unknown)(...args);
		};
	const wrapCallback =
		(name: keyof typeof actual) =>
		(...args: unknown[]) => {
			const error = injected(name);
			if (error) return process.nextTick(args[args.length - 1] as (e: Error) => void, error);
			return (actual[name] as (...a: unknown[]) => unknown)(...args);
		};
	const wrapPromise =
		(name: keyof typeof actual.promises) =>
		(...args: unknown[]) => {
			const error = injected(`promises.${name}`);
			if (error) return Promise.reject(error);
			return (actual.promises[name] as (...a: unknown[]) => unknown)(...args);
		};
	const overrides = {
		mkdirSync: wrapSync("mkdirSync"),
		openSync: wrapSync("openSync"),
		writeSync: wrapSync("writeSync"),
		fsyncSync: wrapSync("fsyncSync"),
		linkSync: wrapSync("linkSync"),
		readSync: wrapSync("readSync"),
		write: wrapCallback("write"),
		fsync: wrapCallback("fsync"),
		read: wrapCallback("read"),
		promises: { ...actual.promises, readdir: wrapPromise("readdir") },
	};
	return { ...actual, ...overrides, default: { ...actual, ...overrides } };
});

let agentDir: string;
let store: ArtifactStore;
const TEXT = Array.from({ length: 400 }, (_, i) => `row ${i} ${"·".repeat(30)}`).join("\n");
const LIMITS = { maxBytes: 2048, maxLines: 40 };

beforeEach(() => {
	agentDir = mkdtempSync(join(tmpdir(), "headroom-faults-"));
	store = new ArtifactStore({ agentDir });
	faults.plan.clear();
});
afterEach(() => rmSync(agentDir, { recursive: true, force: true }));

/** Every entry point fails with `pattern`, and the kind directory holds no artifact and no temp file. */
async function expectFailure(pattern: RegExp, kindDirMayExist = true) {
	const results: Array<PutResult | PutFailure> = [];
	for (const entry of ["put", "putSync", "startPut"] as const) {
		const plan = new Map(faults.plan);
		results.push(entry === "putSync" ? store.putSync("tool-outputs", TEXT) : await store[entry]("tool-outputs", TEXT));
		faults.plan = plan; // same faults for the next entry point
	}
	for (const r of results) expect(r).toEqual({ ok: false, error: expect.stringMatching(pattern) });
	const dir = store.dirFor("tool-outputs");
	if (kindDirMayExist && existsSync(dir) && !lstatSync(dir).isSymbolicLink()) {
		expect(readdirSync(dir).filter((n) => n.endsWith(".txt") || n.endsWith(".part"))).toEqual([]);
	}
}

describe("injected I/O faults", () => {
	const cases: Array<[string, string[], string]> = [
		// put runs metadata calls synchronously and data calls on the thread pool; putSync runs all synchronously;
		// startPut all but the fsync, which waits in the thread pool.
		["EACCES creating a directory", ["mkdirSync"], "EACCES"],
		["EROFS opening the temp file", ["openSync"], "EROFS"],
		["ENOSPC while writing", ["writeSync", "write"], "ENOSPC"],
		["EIO on fsync", ["fsyncSync", "fsync"], "EIO"],
		["EROFS on link", ["linkSync"], "EROFS"],
	];
	for (const [name, fns, code] of cases) {
		it(`${name} → PutFailure, nothing left behind`, async () => {
			for (const fn of fns) faults.plan.set(fn, code);
			await expectFailure(new RegExp(code));
		});
	}

	it("EIO while verifying an existing file → PutFailure; the existing file is left alone", async () => {
		const first = (await store.put("tool-outputs", TEXT)) as PutResult;
		for (const sync of [false, true]) {
			faults.plan.set(sync ? "readSync" : "read", "EIO");
			const r = sync ? store.putSync("tool-outputs", TEXT) : await store.put("tool-outputs", TEXT);
			expect(r).toEqual({ ok: false, error: expect.stringMatching(/EIO: injected fault/) });
		}
		expect(readdirSync(store.dirFor("tool-outputs"))).toEqual([`${first.sha256}.txt`]);
		expect(readFileSync(first.path, "utf8")).toBe(TEXT);
	});

	it("EIO listing a directory: stats reports it and prune skips it, neither throws", async () => {
		await store.put("tool-outputs", TEXT);
		faults.plan.set("promises.readdir", "EIO");
		const s = await store.stats();
		expect(s.count).toBe(0);
		expect(s.problems?.join("\n")).toMatch(/EIO: injected fault/);
		faults.plan.set("promises.readdir", "EIO");
		expect(await store.prune({ maxTotalBytes: 0, minAgeHours: 0 })).toEqual({ removed: 0, freedBytes: 0 });
		expect((await store.stats()).count).toBe(1);
	});

	it("a projection over a failing store keeps head and tail and says NOT saved, with no path", async () => {
		faults.plan.set("write", "ENOSPC");
		faults.plan.set("writeSync", "ENOSPC");
		const a = await projectStored(TEXT, LIMITS, { store, kind: "tool-outputs" });
		const b = projectStoredSync(TEXT, LIMITS, { store, kind: "tool-outputs" });
		for (const p of [a, b]) {
			expect(p.truncated).toBe(true);
			expect(p.artifact).toMatchObject({ ok: false });
			expect(p.text).toMatch(/NOT saved \(ENOSPC: injected fault/);
			expect(p.text).not.toContain(agentDir);
			expect(p.text.startsWith("row 0 ")).toBe(true);
			expect(p.text).toContain("row 399 ");
		}
	});
});

describe("real faults that stop root too", () => {
	it("a regular file where the cache directory should be", async () => {
		writeFileSync(join(agentDir, "cache"), "not a dir");
		await expectFailure(/cache is not a directory/, false);
	});

	it("a planted symlink anywhere along the cache path is never followed", async () => {
		const elsewhere = mkdtempSync(join(tmpdir(), "headroom-elsewhere-"));
		try {
			for (const link of [join(agentDir, "cache"), store.root, store.dirFor("tool-outputs")]) {
				rmSync(join(agentDir, "cache"), { recursive: true, force: true });
				mkdirSync(join(link, ".."), { recursive: true, mode: 0o700 });
				symlinkSync(elsewhere, link);
				await expectFailure(/is a symlink; refusing to follow it/, false);
				expect(readdirSync(elsewhere)).toEqual([]);
			}
		} finally {
			rmSync(elsewhere, { recursive: true, force: true });
		}
	});

	it("a symlink planted under the final name is not followed and not used", async () => {
		const first = (await store.put("tool-outputs", "probe")) as PutResult;
		const target = join(agentDir, "target.txt");
		writeFileSync(target, TEXT); // even with the right content, a link is refused
		const sha = (await import("node:crypto")).createHash("sha256").update(TEXT).digest("hex");
		symlinkSync(target, join(store.dirFor("tool-outputs"), `${sha}.txt`));
		await expectFailure(/is a symlink; not followed, not used/, false);
		expect(readFileSync(target, "utf8")).toBe(TEXT);
		expect(first.ok).toBe(true);
	});

	it("a file under the name whose content does not match is never overwritten nor pointed to", async () => {
		const r = (await store.put("tool-outputs", TEXT)) as PutResult;
		writeFileSync(r.path, "tampered");
		await expectFailure(/does not match its name; not overwritten, not used/, false);
		expect(readFileSync(r.path, "utf8")).toBe("tampered");
		// Same size, different bytes: caught by the hash, not only the size.
		writeFileSync(r.path, TEXT.replace("row 1 ", "row X "));
		await expectFailure(/does not match its name/, false);
	});

	it("a directory under the final name", async () => {
		const sha = (await import("node:crypto")).createHash("sha256").update(TEXT).digest("hex");
		mkdirSync(join(store.dirFor("tool-outputs"), `${sha}.txt`), { recursive: true });
		await expectFailure(/does not match its name/, false);
	});

	it("a store root outside the agent directory, or a relative agent directory, is refused", async () => {
		const outside = new ArtifactStore({ agentDir, root: tmpdir() });
		expect(await outside.put("tool-outputs", "x")).toMatchObject({
			ok: false,
			error: expect.stringMatching(/not inside/),
		});
		const relative = new ArtifactStore({ agentDir: "relative/dir" });
		expect(relative.putSync("tool-outputs", "x")).toMatchObject({
			ok: false,
			error: expect.stringMatching(/absolute/),
		});
		expect(relative.resolve("abcdef12")).toMatchObject({ ok: false });
	});
});

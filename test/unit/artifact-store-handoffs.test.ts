import {
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ageFile, DAY_MS, useTempStore } from "./store-fixture.ts";

const tmp = useTempStore("artifact-store-handoffs");

/** A trajectory folder as the handoff writer makes it, all files and the folder aged `days`. */
function trajectoryFolder(session: string, days: number, files: Record<string, string>): string {
	const made = tmp.store.ensureKindDir("handoffs", session);
	if (!made.ok) throw new Error(made.error);
	for (const [name, content] of Object.entries(files)) {
		writeFileSync(join(made.dir, name), content, { mode: 0o600 });
		ageFile(join(made.dir, name), days * DAY_MS);
	}
	ageFile(made.dir, days * DAY_MS);
	return made.dir;
}

describe("ensureKindDir", () => {
	it("makes the kind directory and a session folder 0700 under the store root", () => {
		const kind = tmp.store.ensureKindDir("handoffs");
		expect(kind).toEqual({ ok: true, dir: tmp.store.dirFor("handoffs") });
		const session = tmp.store.ensureKindDir("handoffs", "2f0c-session_1.a");
		expect(session).toEqual({ ok: true, dir: join(tmp.store.dirFor("handoffs"), "2f0c-session_1.a") });
		if (!session.ok) return;
		expect(statSync(session.dir).mode & 0o777).toBe(0o700);
		expect(statSync(tmp.store.root).mode & 0o777).toBe(0o700);
		expect(tmp.store.ensureKindDir("handoffs", "2f0c-session_1.a")).toEqual(session); // idempotent
	});

	it("refuses path-like folder names and unknown kinds without touching the disk", () => {
		for (const bad of ["..", ".", "a/b", "../x", "", "x".repeat(129), "a\0b"]) {
			expect(tmp.store.ensureKindDir("handoffs", bad)).toMatchObject({ ok: false });
		}
		expect(tmp.store.ensureKindDir("nope" as never)).toMatchObject({ ok: false });
		expect(existsSync(tmp.store.root)).toBe(false);
	});

	it("never follows a symlink along the path or at the session folder", () => {
		const outside = mkdtempSync(join(tmpdir(), "headroom-outside-"));
		try {
			mkdirSync(tmp.store.dirFor("handoffs"), { recursive: true, mode: 0o700 });
			symlinkSync(outside, join(tmp.store.dirFor("handoffs"), "planted"));
			expect(tmp.store.ensureKindDir("handoffs", "planted")).toMatchObject({ ok: false, error: /symlink/ });
			rmSync(tmp.store.root, { recursive: true });
			mkdirSync(join(tmp.agentDir, "cache"), { recursive: true });
			symlinkSync(outside, tmp.store.root);
			expect(tmp.store.ensureKindDir("handoffs")).toMatchObject({ ok: false, error: /symlink/ });
			expect(readdirSync(outside)).toEqual([]);
		} finally {
			rmSync(outside, { recursive: true, force: true });
		}
	});
});

describe("stats and prune of handoff trajectory folders", () => {
	it("counts the trajectory files of each session folder", async () => {
		const dir = trajectoryFolder("s-1", 0, { "trajectory.summarization-1-summary.json": "{}", "b.json": "[1,2]" });
		const s = await tmp.store.stats();
		expect(s.byKind.handoffs).toEqual({ count: 2, bytes: 7 });
		expect(s).toMatchObject({ count: 2, bytes: 7, newest: { path: dir } });
	});

	it("prunes old folders whole by age, and oldest first by size, never young ones", async () => {
		const ancient = trajectoryFolder("ancient", 60, { "a.json": "x".repeat(100) });
		const old = trajectoryFolder("old", 10, { "a.json": "y".repeat(100), "b.json": "z".repeat(50) });
		const fresh = trajectoryFolder("fresh", 0.1, { "a.json": "w".repeat(100) });
		expect(await tmp.store.prune({ maxAgeDays: 30 })).toEqual({ removed: 1, freedBytes: 100 });
		expect(existsSync(ancient)).toBe(false);
		expect(await tmp.store.prune({ maxTotalBytes: 100 })).toEqual({ removed: 2, freedBytes: 150 });
		expect(existsSync(old)).toBe(false);
		expect(await tmp.store.prune({ maxTotalBytes: 0 })).toEqual({ removed: 0, freedBytes: 0 });
		expect(existsSync(fresh)).toBe(true);
		expect(readdirSync(tmp.store.dirFor("handoffs"))).toEqual(["fresh"]);
	});

	it("leaves folders holding anything but regular .json files, and never follows a symlinked folder", async () => {
		const outside = mkdtempSync(join(tmpdir(), "headroom-outside-"));
		try {
			writeFileSync(join(outside, "keep.json"), "{}");
			ageFile(join(outside, "keep.json"), 90 * DAY_MS);
			const mixed = trajectoryFolder("mixed", 90, { "a.json": "{}", "notes.txt": "mine" });
			const nested = trajectoryFolder("nested", 90, { "a.json": "{}" });
			mkdirSync(join(nested, "sub"));
			ageFile(nested, 90 * DAY_MS);
			const linked = trajectoryFolder("linked", 90, { "a.json": "{}" });
			symlinkSync(join(outside, "keep.json"), join(linked, "b.json"));
			symlinkSync(outside, join(tmp.store.dirFor("handoffs"), "elsewhere"));

			expect(await tmp.store.prune({ maxAgeDays: 1, maxTotalBytes: 0, minAgeHours: 0 })).toEqual({
				removed: 0,
				freedBytes: 0,
			});
			for (const dir of [mixed, nested, linked]) expect(existsSync(dir)).toBe(true);
			expect(lstatSync(join(tmp.store.dirFor("handoffs"), "elsewhere")).isSymbolicLink()).toBe(true);
			expect(readdirSync(outside)).toEqual(["keep.json"]);
			expect((await tmp.store.stats()).byKind.handoffs).toEqual({ count: 0, bytes: 0 });
		} finally {
			rmSync(outside, { recursive: true, force: true });
		}
	});

	it("keeps a folder that gets a new file while a prune runs", async () => {
		const dir = trajectoryFolder("busy", 40, { "a.json": "{}" });
		const listedThenWritten = tmp.store.prune({ maxAgeDays: 30 });
		writeFileSync(join(dir, "b.json"), "{}"); // lands before the async prune reaches the folder
		await listedThenWritten;
		expect(existsSync(join(dir, "b.json"))).toBe(true);
	});
});

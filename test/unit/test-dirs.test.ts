import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { leftovers, outsideLeftovers } from "../fixtures/global-setup.ts";
import { REPO_ROOT } from "../fixtures/pi-runner.ts";
import {
	creatorPid,
	isAlive,
	KEEP_SANDBOX_ENV,
	makeOutsideBase,
	makeOutsideDir,
	makeTestDir,
	OUTSIDE_DIR_ENV,
	sweepStale,
	sweepStaleOutside,
	TEST_TMP_BASE,
} from "../fixtures/test-dirs.ts";

const base = makeTestDir("test-dirs");

/** The pid of a process that has already exited. */
function deadPid(): number {
	const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
	return Number(child.stdout.toString());
}

function folder(name: string): string {
	const path = join(base, name);
	mkdirSync(join(path, "inner"), { recursive: true });
	writeFileSync(join(path, "inner", "file.txt"), "x");
	return path;
}

describe("test folder cleanup", () => {
	it("reads the creator pid only from names the fixtures make", () => {
		expect(creatorPid("installed-123")).toBe(123);
		expect(creatorPid("pi-456-AbC9zz")).toBe(456);
		expect(creatorPid("handoff-adapter-Avk08F")).toBeUndefined();
		expect(creatorPid("installed-")).toBeUndefined();
		expect(creatorPid("pi-abc")).toBeUndefined();
		expect(creatorPid("handoff-adapter-789-Xy12ab")).toBe(789);
		expect(creatorPid("tmpdir-42-AbCdEf")).toBe(42);
	});

	it("sweeps folders of dead processes, keeps live ones, its own and foreign names", () => {
		const dead = deadPid();
		expect(isAlive(dead)).toBe(false);
		expect(isAlive(process.pid)).toBe(true);
		const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"]);
		try {
			const stale = [folder(`installed-${dead}`), folder(`pi-${dead}-Qw3rty`)];
			const kept = [folder(`installed-${process.pid}`), folder(`pi-${sleeper.pid}-Zx9abc`), folder("other-1")];
			// A link inside a stale folder is removed, never followed.
			const outside = folder("outside-target");
			symlinkSync(outside, join(stale[0], "link"), "dir");
			const removed = sweepStale(base);
			expect(removed.sort()).toEqual([`installed-${dead}`, `pi-${dead}-Qw3rty`].sort());
			for (const path of stale) expect(existsSync(path)).toBe(false);
			for (const path of kept) expect(existsSync(path)).toBe(true);
			expect(existsSync(join(outside, "inner", "file.txt"))).toBe(true);
		} finally {
			sleeper.kill("SIGKILL");
		}
	});

	it("keeps dead sandboxes when asked to keep sandboxes, but still sweeps staged copies", () => {
		const dead = deadPid();
		const sandbox = folder(`pi-${dead}-Keep01`);
		const staged = folder(`installed-${dead}`);
		process.env[KEEP_SANDBOX_ENV] = "1";
		try {
			sweepStale(base);
		} finally {
			delete process.env[KEEP_SANDBOX_ENV];
		}
		expect(existsSync(sandbox)).toBe(true);
		expect(existsSync(staged)).toBe(false);
	});

	it("returns nothing and does not throw for a missing base folder", () => {
		expect(sweepStale(join(base, "missing"))).toEqual([]);
	});

	for (const ending of ["exit", "SIGTERM"] as const) {
		it(`removes registered folders when the process ends by ${ending}, keeping the signal's meaning`, async () => {
			const target = folder(`registered-${ending}`);
			const script = join(base, `child-${ending}.ts`);
			writeFileSync(
				script,
				`import { removeAtExit } from ${JSON.stringify(join(REPO_ROOT, "test/fixtures/test-dirs.ts"))};
removeAtExit(${JSON.stringify(target)});
console.log("ready");
${ending === "exit" ? "" : "setTimeout(() => {}, 30000);"}`,
			);
			const child = spawn(process.execPath, ["--import", "jiti/register", script], {
				cwd: REPO_ROOT,
				env: { ...process.env, TMPDIR: base }, // the loader's cache stays in this test's folder
			});
			await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
			if (ending === "SIGTERM") child.kill("SIGTERM");
			const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
				child.once("close", (c, s) => resolve([c, s])),
			);
			expect(existsSync(target)).toBe(false);
			if (ending === "SIGTERM") expect(signal).toBe("SIGTERM");
			else expect(code).toBe(0);
		});
	}

	it("makeTestDir gives a fresh folder under .tmp/ named with its label and pid, gone when its process ends", async () => {
		expect(() => makeTestDir("Bad_label")).toThrow(/lower-case letters and hyphens/);
		expect(() => makeTestDir("../escape")).toThrow();
		const script = join(base, "child-make.ts");
		writeFileSync(
			script,
			`import { makeTestDir } from ${JSON.stringify(join(REPO_ROOT, "test/fixtures/test-dirs.ts"))};
console.log(makeTestDir("child-made"));`,
		);
		const child = spawnSync(process.execPath, ["--import", "jiti/register", script], {
			cwd: REPO_ROOT,
			env: { ...process.env, TMPDIR: base },
			encoding: "utf8",
		});
		const made = child.stdout.trim();
		expect(dirname(made)).toBe(TEST_TMP_BASE);
		expect(creatorPid(basename(made))).toBe(child.pid);
		expect(basename(made)).toMatch(/^child-made-\d+-[A-Za-z0-9]{6}$/);
		expect(existsSync(made)).toBe(false);
	});

	it("the check after the suite names what the run left, but not other live runs' folders or older ones", () => {
		const checked = makeTestDir("leftover-check");
		const dead = deadPid();
		const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"]);
		try {
			mkdirSync(join(checked, "tmpdir-1-RunTmp", "jiti"), { recursive: true });
			for (const name of ["older", `pi-${sleeper.pid}-Live01`, `traj-${dead}-Dead01`, "handoff-adapter-Avk08F"]) {
				mkdirSync(join(checked, name));
			}
			expect(leftovers(checked, new Set(["older"]), "tmpdir-1-RunTmp")).toEqual([
				"handoff-adapter-Avk08F",
				"tmpdir-1-RunTmp/jiti",
				`traj-${dead}-Dead01`,
			]);
			expect(leftovers(join(checked, "missing"), new Set(), "x")).toEqual([]);
		} finally {
			sleeper.kill("SIGKILL");
		}
	});

	it("outside the repository: a private 0700 folder per run, sweeping only dead ones of its own name", () => {
		const systemTmp = makeTestDir("outside-sweep"); // stands in for the system's temporary folder
		const made = makeOutsideBase(systemTmp);
		expect(dirname(made)).toBe(systemTmp);
		expect(basename(made)).toMatch(new RegExp(`^pi-headroom-${process.pid}-[A-Za-z0-9]+$`));
		expect(statSync(made).mode & 0o777).toBe(0o700);
		const dead = deadPid();
		const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"]);
		try {
			mkdirSync(join(systemTmp, `pi-headroom-${dead}-Old123`, "installed-1-Abc"), { recursive: true });
			for (const name of [
				`pi-headroom-${sleeper.pid}-Live01`,
				`pi-${dead}-Other1`,
				`npm-${dead}-Cache1`,
				"pi-headroom",
			])
				mkdirSync(join(systemTmp, name));
			expect(sweepStaleOutside(systemTmp)).toEqual([`pi-headroom-${dead}-Old123`]);
			for (const name of [
				basename(made),
				`pi-headroom-${sleeper.pid}-Live01`,
				`pi-${dead}-Other1`,
				`npm-${dead}-Cache1`,
			])
				expect(existsSync(join(systemTmp, name)), name).toBe(true);
		} finally {
			sleeper.kill("SIGKILL");
		}
		mkdirSync(join(made, "pi-1-Sandbx"));
		mkdirSync(join(made, "installed-1-Stage1"));
		expect(outsideLeftovers(made)).toEqual(["installed-1-Stage1", "pi-1-Sandbx"]);
		expect(outsideLeftovers(join(made, "missing"))).toEqual([]);
	});

	it("makeOutsideDir puts a labelled folder in the run's private folder, outside the repository", () => {
		const run = process.env[OUTSIDE_DIR_ENV];
		expect(run, "the global setup names the run's folder outside the repository").toBeTruthy();
		const made = makeOutsideDir("outside-check");
		expect(dirname(made)).toBe(run);
		expect(made.startsWith(`${REPO_ROOT}/`)).toBe(false);
		expect(basename(made)).toMatch(/^outside-check-\d+-[A-Za-z0-9]{6}$/);
		expect(() => makeOutsideDir("Bad_label")).toThrow(/lower-case letters and hyphens/);
	});
});

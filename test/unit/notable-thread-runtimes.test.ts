/**
 * The notable scan's second thread on both runtimes Pi runs on: the built thread (dist/notable-thread.js, what
 * the installed package starts) under Node and under Bun, and the TypeScript one under Bun (which loads it
 * itself), each driven by the real calling side (notable-parallel.ts) on a 1 MiB real-log text with lone
 * surrogates and a line longer than a part: its decisions are exactly one thread's, and the thread did the job.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { realLogSeed } from "../fixtures/real-logs.ts";
import { REPO_ROOT } from "../fixtures/sandbox.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const DRIVER = join(REPO_ROOT, "test/fixtures/notable-thread-driver.ts");
const BUN = join(REPO_ROOT, "node_modules/.bin/bun");
/** The scan's modules the calling side imports (all of extensions/shared/text it reaches). */
const MODULES = [
	"notable.ts",
	"notable-rules.ts",
	"notable-parallel.ts",
	"notable-ring.ts",
	"notable-thread.ts",
	"word-automaton.ts",
	"line-map.ts",
	"utf8.ts",
];

function drive(runtime: "node" | "bun", module: string, textFile: string) {
	const args = runtime === "node" ? [process.execPath, "--import", "jiti/register"] : [BUN];
	const run = spawnSync(args[0], [...args.slice(1), DRIVER, module, textFile], {
		cwd: REPO_ROOT,
		encoding: "utf8",
		timeout: 60_000,
		env: { ...process.env, JITI_FS_CACHE: "false" },
	});
	expect(run.status, run.stderr).toBe(0);
	return JSON.parse(run.stdout.trim().split("\n").at(-1) as string);
}

describe("the notable scan's second thread on Node and Bun", () => {
	const dir = makeTestDir("notable-thread-runtimes");
	const textFile = join(dir, "build.log");
	writeFileSync(
		textFile,
		`${"x".repeat(40_000)} error: one long line\n${realLogSeed(1024 * 1024).toString("utf8")}\nerror \ud800 lone\n`,
	);
	// A copy of the scan's modules with the built thread beside them: the calling side then starts the built one.
	const built = join(dir, "text");
	mkdirSync(built);
	for (const file of MODULES) copyFileSync(join(REPO_ROOT, "extensions/shared/text", file), join(built, file));
	copyFileSync(join(REPO_ROOT, "dist/notable-thread.js"), join(built, "notable-thread.js"));

	const cases = [
		{ name: "the built thread under Node", runtime: "node", module: join(built, "notable-parallel.ts") },
		{ name: "the built thread under Bun", runtime: "bun", module: join(built, "notable-parallel.ts") },
		{
			name: "the TypeScript thread under Bun",
			runtime: "bun",
			module: join(REPO_ROOT, "extensions/shared/text/notable-parallel.ts"),
		},
	] as const;
	it.each(cases)("$name decides exactly as one thread", ({ runtime, module }) => {
		const result = drive(runtime, module, textFile);
		expect(result).toMatchObject({ equal: true, starts: 1, jobs: 1 });
		expect(result.keyLines).toBeGreaterThan(1000);
		expect(result.lines).toBeGreaterThan(10_000);
	});
});

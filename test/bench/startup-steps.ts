/**
 * The package's own steps of a start, each timed by the CPU clock inside the real Pi 1.x loader under Bun
 * (docs/startup.md, "Where a warm start's time goes"). CPU profiles of Bun misattribute native work (a module's
 * parse shows up in whatever native call comes next), so this bench times the steps directly: it stages the
 * package as a user installs it, then writes timers into the staged copy of dist/ only (never the repository's):
 * - the first entry's import of the bundle (Bun reading and parsing it, and its top level);
 * - in `start`: locating Pi's modules, evaluating the bundle (defining its modules), each extension's
 *   modules initialised, each factory, and each of the extension's `session_start` handlers;
 * - each bundled module's own initialisation (its top level, nested modules excluded).
 * A fresh process per start does what the CLI does (Pi's resource loader with the package in the settings,
 * `createAgentSession`, `bindExtensions`, which emits session_start), STARTUP_ROUNDS times (default 8); medians.
 *
 * Usage: node --import jiti/register test/bench/startup-steps.ts (STARTUP_DIST=<dist folder> for another build;
 * STARTUP_FIRST_SPAWN=1 also times the first subagent_spawn after the start, whose code loads on first use)
 */
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXTENSIONS } from "../../scripts/build.ts";
import { makeSandbox, piLine } from "../fixtures/pi-runner.ts";
import { REPO_ROOT } from "../fixtures/sandbox.ts";
import { median, runStartupBench } from "../fixtures/startup-bench.ts";
import { makeOutsideDir } from "../fixtures/test-dirs.ts";

const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 8);
const SDK = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/index.js");

/** The child: a start as the CLI makes it; prints the steps the instrumented bundle recorded. */
const CHILD = `
const [sdkPath, cwd, agentDir] = process.argv.slice(2);
const sdk = await import(sdkPath);
const loader = new sdk.DefaultResourceLoader({ cwd, agentDir });
await loader.reload();
const { session } = await sdk.createAgentSession({ cwd, agentDir, resourceLoader: loader, sessionManager: sdk.SessionManager.inMemory() });
await session.bindExtensions({});
if (loader.getExtensions().errors.length > 0) throw new Error(JSON.stringify(loader.getExtensions().errors));
if (process.env.STARTUP_FIRST_SPAWN === "1") {
	// The first subagent_spawn after the start (its code may load now): CPU from the call to its answer.
	const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
	const spawn = session._toolRegistry.get("subagent_spawn");
	const t0 = cpu();
	const reply = await spawn.execute("call-1", { prompt: "say ok" }, undefined, () => undefined);
	(globalThis.__steps ??= {})["the first subagent_spawn (call to answer)"] = cpu() - t0;
	if (!JSON.stringify(reply.content).includes("sa-")) throw new Error("no child spawned: " + JSON.stringify(reply.content));
}
console.log(JSON.stringify({ steps: globalThis.__steps, modules: globalThis.__modules }));
process.exit(0);
`;

const CPU = "const __cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };";

/** `text` with `from` replaced once; throws when the build no longer has it (the bench must be updated). */
function patch(text: string, from: string, to: string): string {
	const at = text.indexOf(from);
	if (at < 0) throw new Error(`startup-steps: the bundle no longer contains ${JSON.stringify(from.slice(0, 60))}`);
	return text.slice(0, at) + to + text.slice(at + from.length);
}

/** Timers written into the staged bundle and the first entry. */
function instrument(dist: string): void {
	const file = join(dist, "extensions.js");
	let code = readFileSync(file, "utf8");
	// Each module's own initialisation (esbuild's lazy wrapper), nested initialisations excluded.
	code = patch(
		code,
		"  try {\n    return fn && (res = (0, fn[__getOwnPropNames(fn)[0]])(fn = 0)), res;\n  } catch (e) {\n    throw err = [e], e;\n  }\n};",
		`  if (!fn) return res;
  const name = __getOwnPropNames(fn)[0], t0 = __cpu();
  __nested.push(0);
  try {
    return fn && (res = (0, fn[__getOwnPropNames(fn)[0]])(fn = 0)), res;
  } catch (e) {
    throw err = [e], e;
  } finally {
    const total = __cpu() - t0, inner = __nested.pop();
    if (__nested.length) __nested[__nested.length - 1] += total;
    (globalThis.__modules ??= {})[name] = total - inner;
  }
};
var __nested = [];`,
	);
	code = patch(
		code,
		'import { createRequire as createNodeRequire } from "node:module";',
		`import { createRequire as createNodeRequire } from "node:module";
${CPU}
const __add = (step, ms) => { const s = (globalThis.__steps ??= {}); s[step] = (s[step] ?? 0) + ms; };
__add("the bundle's import (read, parse, top level)", __cpu() - globalThis.__importStart);`,
	);
	code = patch(
		code,
		"\tconst host = await piModules(ids, caller, fallback);",
		'\tlet t = __cpu();\n\tconst host = await piModules(ids, caller, fallback);\n\t__add("locating Pi\'s modules (all entries)", __cpu() - t);\n\tt = __cpu();',
	);
	code = patch(
		code,
		"\tshared.extensions ??= evaluate(shared.host);",
		'\tshared.extensions ??= evaluate(shared.host);\n\t__add("evaluating the bundle (defining its modules)", __cpu() - t);',
	);
	code = patch(
		code,
		"\treturn (await shared.extensions[name]()).default(pi);",
		`\tt = __cpu();
	const factory = (await shared.extensions[name]()).default;
	__add(\`initialising \${name}'s modules\`, __cpu() - t);
	const timed = new Proxy(pi, {
		get: (target, key) =>
			key === "on"
				? (event, handler) =>
						target.on(event, async (...args) => {
							const t0 = __cpu();
							try {
								return await handler(...args);
							} finally {
								__add(\`\${event}: \${name}\`, __cpu() - t0);
							}
						})
				: typeof target[key] === "function" ? target[key].bind(target) : target[key],
	});
	t = __cpu();
	const result = await factory(timed);
	__add(\`factory: \${name}\`, __cpu() - t);
	return result;`,
	);
	writeFileSync(file, code);
	const first = join(dist, `${EXTENSIONS[0]}.js`);
	writeFileSync(
		first,
		patch(
			readFileSync(first, "utf8"),
			'import { start } from "./extensions.js";',
			`${CPU}\nglobalThis.__importStart = __cpu();\nconst { start } = await import("./extensions.js");`,
		),
	);
}

runStartupBench(async (server, staged) => {
	const folder = makeOutsideDir("startup-steps");
	cpSync(join(staged, "..", ".."), folder, { recursive: true });
	const root = join(folder, "node_modules", "pi-context-headroom");
	// STARTUP_DIST=<a dist/ folder>: time another build (an earlier commit's) in the same installed layout.
	if (process.env.STARTUP_DIST) cpSync(process.env.STARTUP_DIST, join(root, "dist"), { recursive: true });
	instrument(join(root, "dist"));
	const sandbox = makeSandbox({ server, settings: { packages: [root] } });
	const child = join(makeOutsideDir("startup-steps-child"), "child.mjs");
	writeFileSync(child, CHILD);
	const runs: Array<{ steps: Record<string, number>; modules: Record<string, number> }> = [];
	for (let round = 0; round <= ROUNDS; round++) {
		const info = piLine("1.x");
		const result = spawnSync(info.command, ["--no-install", child, SDK, sandbox.cwd, sandbox.agentDir], {
			cwd: sandbox.cwd,
			env: { ...sandbox.env, STARTUP_FIRST_SPAWN: process.env.STARTUP_FIRST_SPAWN ?? "" },
			encoding: "utf8",
			timeout: 120_000,
		});
		const last = result.stdout.trim().split("\n").at(-1) ?? "";
		if (!last.startsWith("{")) throw new Error(`no steps from the child (${result.status}):\n${result.stderr}`);
		if (round > 0) runs.push(JSON.parse(last)); // the first start fills the caches
	}
	const stepNames = [...new Set(runs.flatMap((r) => Object.keys(r.steps)))];
	console.log(`\n## Pi 1.x: the package's steps of a warm start, CPU, medians of ${runs.length} starts`);
	console.log("| step | CPU |\n|---|---:|");
	let total = 0;
	for (const step of stepNames) {
		const ms = median(runs.map((r) => r.steps[step] ?? 0));
		total += ms;
		console.log(`| ${step} | ${ms.toFixed(1)} ms |`);
	}
	console.log(`| all of the above (sum of medians) | ${total.toFixed(1)} ms |`);
	const moduleNames = [...new Set(runs.flatMap((r) => Object.keys(r.modules ?? {})))];
	const modules = moduleNames
		.map((name) => [name, median(runs.map((r) => r.modules?.[name] ?? 0))] as const)
		.sort((a, b) => b[1] - a[1]);
	const moduleTotal = modules.reduce((sum, [, ms]) => sum + ms, 0);
	console.log(`\n${modules.length} bundled modules initialised, ${moduleTotal.toFixed(1)} ms in all; the largest:`);
	for (const [name, ms] of modules.slice(0, 10)) console.log(`  ${ms.toFixed(2)} ms  ${name}`);
	// By folder (extensions/<name>/<sub>/), so a part that start need not reach shows with its whole cost.
	const folders = new Map<string, { ms: number; count: number }>();
	for (const [name, ms] of modules) {
		const folder = name.split("/").slice(0, -1).slice(0, 3).join("/") || name;
		const entry = folders.get(folder) ?? { ms: 0, count: 0 };
		folders.set(folder, { ms: entry.ms + ms, count: entry.count + 1 });
	}
	console.log("\nby folder:");
	for (const [folder, { ms, count }] of [...folders].sort((a, b) => b[1].ms - a[1].ms))
		console.log(`  ${ms.toFixed(2)} ms  ${count} modules  ${folder}`);
	if (process.env.STARTUP_MODULES === "all")
		for (const [name, ms] of modules) console.log(`  ${ms.toFixed(2)} ms  ${name}`);
});

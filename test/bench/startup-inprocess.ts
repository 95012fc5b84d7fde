/**
 * The package's own part of a start, in process and with little noise (docs/startup.md, "The parts of the cost"):
 * a fresh Pi 1.x process under Bun (or 0.73.1 on Node) makes a session as the CLI does — Pi's resource loader
 * with the package installed in the sandbox's settings, `createAgentSession`, `bindExtensions` (which emits
 * `session_start`) — and reports the CPU time of each step, with and without the package. Only these steps are
 * timed, not Pi's own imports before them, so a busy machine disturbs the differences far less than it disturbs
 * the CLI's whole start (`npm run bench -- startup`, the figures that count).
 *
 * Variants: Pi alone, the package as built from the source now, five empty entries (the floor of any five
 * extensions: Pi's loader, jiti on 1.x), and any other builds of dist/ named in
 * STARTUP_COMPARE (comma-separated `label=folder` pairs, e.g. `before=/path/to/old/dist`), interleaved in a
 * rotating order, STARTUP_ROUNDS rounds (default 10), medians.
 *
 * Usage: node --import jiti/register test/bench/startup-inprocess.ts (STARTUP_LINES="1.x,0.73").
 */
import { spawnSync } from "node:child_process";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXTENSIONS } from "../../scripts/build.ts";
import { makeSandbox, type PiLine, piLine, type Sandbox } from "../fixtures/pi-runner.ts";
import { REPO_ROOT } from "../fixtures/sandbox.ts";
import { median, runStartupBench } from "../fixtures/startup-bench.ts";
import { makeOutsideDir } from "../fixtures/test-dirs.ts";

const LINES = (process.env.STARTUP_LINES ?? "1.x,0.73").split(",") as PiLine[];
const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 10);

const SDK: Record<PiLine, string> = {
	"0.73": join(REPO_ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/index.js"),
	"1.x": join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/index.js"),
};

/** The child: Pi's SDK imported first (untimed), then each step of a start timed by the process's CPU clock. */
const CHILD = `
const [sdkPath, cwd, agentDir] = process.argv.slice(2);
const sdk = await import(sdkPath);
const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
const times = {};
let t = cpu();
const step = (name) => { const now = cpu(); times[name] = now - t; t = now; };
const loader = new sdk.DefaultResourceLoader({ cwd, agentDir });
await loader.reload();
step("load");
const { session } = await sdk.createAgentSession({ cwd, agentDir, resourceLoader: loader, sessionManager: sdk.SessionManager.inMemory() });
step("create");
await session.bindExtensions({});
step("session_start");
const loaded = loader.getExtensions();
times.extensions = loaded.extensions.length;
times.errors = loaded.errors.length;
console.log(JSON.stringify(times));
process.exit(0);
`;

type Times = { load: number; create: number; session_start: number; extensions: number; errors: number };

function run(line: PiLine, sandbox: Sandbox, child: string): Times {
	const info = piLine(line);
	const command = line === "1.x" ? info.command : process.execPath;
	const args = [...(line === "1.x" ? ["--no-install"] : []), child, SDK[line], sandbox.cwd, sandbox.agentDir];
	const result = spawnSync(command, args, { cwd: sandbox.cwd, env: sandbox.env, encoding: "utf8", timeout: 120_000 });
	const last = result.stdout.trim().split("\n").at(-1) ?? "";
	try {
		return JSON.parse(last) as Times;
	} catch {
		throw new Error(`no timings from the child (${result.status}):\n${result.stdout}\n${result.stderr}`);
	}
}

runStartupBench(async (server, staged) => {
	const variants: Record<string, string[]> = { alone: [], package: [staged] };
	/** A copy of the staged package (its node_modules beside it), changed by `edit(dist folder)`. */
	const copy = (edit: (dist: string) => void) => {
		const folder = makeOutsideDir("inprocess-variant");
		cpSync(join(staged, "..", ".."), folder, { recursive: true });
		const root = join(folder, "node_modules", "pi-context-headroom");
		edit(join(root, "dist"));
		return root;
	};
	// The floor of any five extensions: five entries that register nothing and import nothing.
	variants["five empty entries"] = [
		copy((dist) => {
			for (const name of EXTENSIONS) writeFileSync(join(dist, `${name}.js`), "export default function (pi) {}\n");
		}),
	];
	for (const pair of (process.env.STARTUP_COMPARE ?? "").split(",").filter(Boolean)) {
		const [label, dist] = pair.split("=");
		variants[label] = [copy((target) => cpSync(dist, target, { recursive: true }))];
	}
	const childFolder = makeOutsideDir("inprocess-child");
	const child = join(childFolder, "child.mjs");
	writeFileSync(child, CHILD);
	const names = Object.keys(variants);
	for (const line of LINES) {
		const sandboxes = Object.fromEntries(
			names.map((name) => [name, makeSandbox({ server, settings: { packages: variants[name] } })]),
		);
		for (const name of names) run(line, sandboxes[name], child); // first start of each: caches filled
		const samples: Record<string, Times[]> = Object.fromEntries(names.map((n) => [n, []]));
		for (let round = 0; round < ROUNDS; round++)
			for (let i = 0; i < names.length; i++) {
				const name = names[(i + round) % names.length];
				samples[name].push(run(line, sandboxes[name], child));
			}
		console.log(`\n## Pi ${line}: CPU of each step of a start, in process (medians of ${ROUNDS} rotating rounds)`);
		console.log(
			"| variant | extensions | load (imports, factories) | createAgentSession | session_start | all three | over Pi alone |",
		);
		console.log("|---|---:|---:|---:|---:|---:|---:|");
		const all = (t: Times) => t.load + t.create + t.session_start;
		const alone = median(samples.alone.map(all));
		for (const name of names) {
			const s = samples[name];
			const total = median(s.map(all));
			if (s.some((t) => t.errors > 0)) throw new Error(`${name}: Pi reported extension errors`);
			console.log(
				`| ${name} | ${median(s.map((t) => t.extensions))} | ${median(s.map((t) => t.load)).toFixed(0)} ms | ${median(s.map((t) => t.create)).toFixed(0)} ms | ${median(s.map((t) => t.session_start)).toFixed(0)} ms | ${total.toFixed(0)} ms | ${name === "alone" ? "—" : `+${(total - alone).toFixed(0)} ms`} |`,
			);
		}
	}
});

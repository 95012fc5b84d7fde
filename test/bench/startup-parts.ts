/**
 * The parts of the package's start-up cost (docs/startup.md, "The parts of the cost"): the real CLI in rpc
 * mode, both Pi lines, Pi alone and with the package installed as a user installs it (the staged copy listed
 * in the sandbox's settings `packages`), a fresh sandbox per start (cold: empty TMPDIR and HOME, so jiti's and
 * Bun's caches are empty), then the same sandbox again (warm). For each start it records:
 * - Pi's own timings (`PI_TIMING=1`; on 1.x per extension "module import" and "factory");
 * - jiti's log (`JITI_DEBUG=1`): which files were imported natively and which were transpiled (Babel);
 * - a CPU profile of the cold start (`--cpu-prof` of Node or Bun, until the process exits after ready), its
 *   samples summed by where the code lives: this package's bundle, entries and dependencies (zod,
 *   xxhash-wasm), jiti, Babel, Pi and its dependencies, the runtime (parse/compile, GC, internals).
 * - a CPU profile of the warm start with the package: the package's own samples by phase (locating Pi's modules,
 *   evaluating the bundle's modules, the factories, event handlers) and per bundled module evaluated.
 * Prints one Markdown table per line: each part's CPU with the package, without it, and the difference.
 *
 * Usage: node --import jiti/register test/bench/startup-parts.ts (STARTUP_LINES="0.73,1.x"; STARTUP_ROUNDS, default 2:
 * the profile figures are medians of the rounds). About 2 minutes on a quiet 2-core machine.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { makeSandbox, type PiLine, piLine, type Sandbox } from "../fixtures/pi-runner.ts";
import { MOCK_MODEL, MOCK_PROVIDER } from "../fixtures/sandbox.ts";
import { median, runStartupBench } from "../fixtures/startup-bench.ts";

const LINES = (process.env.STARTUP_LINES ?? "0.73,1.x").split(",") as PiLine[];
const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 2);

/** Where a profile sample's code lives. */
const PARTS = [
	"package bundle",
	"package entries",
	"package dependencies",
	"jiti",
	"Babel",
	"Pi and its dependencies",
	"runtime",
] as const;
type Part = (typeof PARTS)[number];

function partOf(url: string, functionName: string): Part {
	if (url.startsWith("pi-context-headroom/node_modules/")) return "package dependencies";
	if (/dist\/extensions\.js$/.test(url)) return "package bundle";
	if (/pi-context-headroom\/dist\//.test(url) || /staged[^/]*\/dist\//.test(url)) return "package entries";
	if (/babel/i.test(url)) return "Babel";
	if (/\/jiti\//.test(url)) return "jiti";
	if (url.includes("node_modules") || url.includes("pi-coding-agent")) return "Pi and its dependencies";
	void functionName;
	return "runtime";
}

/** The package's runtime dependencies (package.json `dependencies`), installed beside it. */
const DEPENDENCIES = ["zod", "xxhash-wasm"];

/** CPU ms per part of a .cpuprofile (V8's format; Bun writes the same). */
function profileParts(file: string, stagedRoot: string): Record<Part, number> {
	const p = JSON.parse(readFileSync(file, "utf8")) as {
		nodes: Array<{ id: number; callFrame: { url: string; functionName: string } }>;
		samples: number[];
		timeDeltas: number[];
	};
	const byId = new Map(p.nodes.map((n) => [n.id, n]));
	const out = Object.fromEntries(PARTS.map((part) => [part, 0])) as Record<Part, number>;
	for (let i = 0; i < p.samples.length; i++) {
		const node = byId.get(p.samples[i]);
		if (!node || node.callFrame.functionName === "(idle)") continue;
		const path = node.callFrame.url.startsWith("file:") ? fileURLToPath(node.callFrame.url) : node.callFrame.url;
		// The package's files, and its runtime dependencies installed beside it (zod, xxhash-wasm).
		const dependency = DEPENDENCIES.find((name) => path.startsWith(join(dirname(stagedRoot), name, "/")));
		const url = path.startsWith(stagedRoot)
			? `pi-context-headroom/${path.slice(stagedRoot.length + 1)}`
			: dependency
				? `pi-context-headroom/node_modules/${dependency}/`
				: path;
		out[partOf(url, node.callFrame.functionName)] += (p.timeDeltas[i] ?? 0) / 1000;
	}
	return out;
}

/** Where the package's own CPU goes in a start (its samples only), and each bundle module's evaluation. */
interface PackageParts {
	/** CPU ms by phase: locating Pi, evaluating the bundle's modules, the factories' own work, event handlers. */
	phases: Record<string, number>;
	/** CPU ms per module of the bundle evaluated (its top level and what it calls), innermost module counted. */
	modules: Record<string, number>;
}

const PHASES = [
	"locating Pi's modules",
	"evaluating the bundle's modules",
	"factories (registering) and async continuations",
	"session_start and other handlers",
	"other",
] as const;

/**
 * The package's samples of a profile by phase. esbuild names each bundled module's initialiser after its source
 * file ("extensions/shared/host/trust.ts"), so a frame with such a name is that module's evaluation; Pi's
 * `ExtensionRunner.emit` (runner.js) above the package's frames is an event handler.
 */
function packageParts(file: string, stagedRoot: string): PackageParts {
	// The package and its installed dependencies (zod, xxhash-wasm) sit in one node_modules folder.
	const installed = dirname(stagedRoot);
	const p = JSON.parse(readFileSync(file, "utf8")) as {
		nodes: Array<{ id: number; children?: number[]; callFrame: { url: string; functionName: string } }>;
		samples: number[];
		timeDeltas: number[];
	};
	const byId = new Map(p.nodes.map((n) => [n.id, n]));
	const parent = new Map<number, number>();
	for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
	const phases = Object.fromEntries(PHASES.map((x) => [x, 0])) as Record<string, number>;
	const modules: Record<string, number> = {};
	for (let i = 0; i < p.samples.length; i++) {
		const ms = (p.timeDeltas[i] ?? 0) / 1000;
		let package_ = false;
		let module: string | undefined;
		let locating = false;
		let handler = false;
		for (let id: number | undefined = p.samples[i]; id !== undefined; id = parent.get(id)) {
			const frame = byId.get(id)?.callFrame;
			if (!frame) break;
			if (frame.functionName === "(idle)") break;
			const path = frame.url.startsWith("file:") ? fileURLToPath(frame.url) : frame.url;
			if (path.startsWith(stagedRoot) || DEPENDENCIES.some((name) => path.startsWith(join(installed, name, "/"))))
				package_ = true;
			if (!module && /^extensions\/.+\.[jt]s$/.test(frame.functionName)) module = frame.functionName;
			if (frame.functionName === "piModules" || frame.functionName === "locatePi") locating = true;
			if (/\/runner\.js$/.test(frame.url) && frame.functionName === "emit" && package_) handler = true;
		}
		if (!package_) continue;
		if (module) modules[module] = (modules[module] ?? 0) + ms;
		const phase = locating ? PHASES[0] : module ? PHASES[1] : handler ? PHASES[3] : PHASES[2];
		phases[phase] += ms;
	}
	return { phases, modules };
}

interface Start {
	/** Pi's PI_TIMING lines and jiti's JITI_DEBUG lines (stderr, and stdout lines that are not JSON). */
	log: string[];
	/** CPU ms per part, from the profile (cold starts only). */
	parts?: Record<Part, number>;
}

/** Start Pi in rpc mode, wait for get_state's answer, close stdin (Pi exits, the profile is written). */
async function start(line: PiLine, sandbox: Sandbox, profileDir: string | undefined): Promise<Start> {
	const info = piLine(line);
	const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
	const args = [
		...profile,
		...info.prefix,
		"--offline",
		"--provider",
		MOCK_PROVIDER,
		"--model",
		MOCK_MODEL,
		"--mode",
		"rpc",
		"--no-session",
	];
	const child = spawn(info.command, args, {
		cwd: sandbox.cwd,
		env: { ...sandbox.env, PI_TIMING: "1", JITI_DEBUG: "1" },
		stdio: ["pipe", "pipe", "pipe"],
	});
	let stdout = "";
	let stderr = "";
	child.stdout.setEncoding("utf8").on("data", (d: string) => {
		stdout += d;
	});
	child.stderr.setEncoding("utf8").on("data", (d: string) => {
		stderr += d;
	});
	child.stdin.write(`${JSON.stringify({ type: "get_state" })}\n`);
	const deadline = Date.now() + 120_000;
	while (!/"command":"get_state"/.test(stdout)) {
		if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no answer to get_state:\n${stderr}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
	child.stdin.end();
	await new Promise((resolve) => {
		const timer = setTimeout(() => child.kill("SIGTERM"), 15_000);
		child.on("exit", () => {
			clearTimeout(timer);
			resolve(undefined);
		});
	});
	const log = [...stderr.split("\n"), ...stdout.split("\n").filter((l) => !l.trimStart().startsWith("{"))].filter(
		(l) => l.trim() !== "",
	);
	return { log };
}

runStartupBench(async (server, staged) => {
	for (const line of LINES) {
		const parts: Record<"alone" | "package", Array<Record<Part, number>>> = { alone: [], package: [] };
		let timings: string[] = [];
		let jiti: string[] = [];
		let warmTimings: string[] = [];
		/** The package's own samples of each warm start's profile. */
		const warmParts: PackageParts[] = [];
		for (let round = 0; round < ROUNDS; round++) {
			for (const variant of round % 2 === 0 ? (["alone", "package"] as const) : (["package", "alone"] as const)) {
				const sandbox = makeSandbox({ server, settings: { packages: variant === "package" ? [staged] : [] } });
				const profileDir = join(sandbox.root, "profile");
				mkdirSync(profileDir);
				const cold = await start(line, sandbox, profileDir);
				const file = readdirSync(profileDir).find((f) => f.endsWith(".cpuprofile"));
				if (!file) throw new Error(`no CPU profile written in ${profileDir}`);
				parts[variant].push(profileParts(join(profileDir, file), staged));
				if (variant === "package") {
					timings = cold.log.filter((l) => /timing|import|factory|extension/i.test(l) && !/\[jiti\]/i.test(l));
					jiti = cold.log.filter((l) => /\[jiti\]|\[native\]|\[transpile\]/i.test(l));
					const warmDir = join(sandbox.root, "profile-warm");
					mkdirSync(warmDir);
					warmTimings = (await start(line, sandbox, warmDir)).log.filter(
						(l) => /timing|import|factory|extension/i.test(l) && !/\[jiti\]/i.test(l),
					);
					const warmFile = readdirSync(warmDir).find((f) => f.endsWith(".cpuprofile"));
					if (warmFile) warmParts.push(packageParts(join(warmDir, warmFile), staged));
				}
				rmSync(sandbox.root, { recursive: true, force: true });
			}
		}
		console.log(`\n## Pi ${line}: cold start to ready (and exit), CPU profile, medians of ${ROUNDS} rounds`);
		console.log("| part | with the package | share | Pi alone | share | difference |");
		console.log("|---|---:|---:|---:|---:|---:|");
		const sum = (x: Record<Part, number>) => PARTS.reduce((t, part) => t + x[part], 0);
		const allP = median(parts.package.map(sum));
		const allA = median(parts.alone.map(sum));
		const pct = (x: number, all: number) => `${((100 * x) / all).toFixed(1)} %`;
		let totalP = 0;
		let totalA = 0;
		for (const part of PARTS) {
			const p = median(parts.package.map((x) => x[part]));
			const a = median(parts.alone.map((x) => x[part]));
			totalP += p;
			totalA += a;
			const diff = `${p - a >= 0 ? "+" : ""}${Math.round(p - a)} ms`;
			console.log(
				`| ${part} | ${Math.round(p)} ms | ${pct(p, allP)} | ${Math.round(a)} ms | ${pct(a, allA)} | ${diff} |`,
			);
		}
		const diffAll = `${totalP - totalA >= 0 ? "+" : ""}${Math.round(totalP - totalA)} ms`;
		console.log(`| all | ${Math.round(totalP)} ms | 100 % | ${Math.round(totalA)} ms | 100 % | ${diffAll} |`);
		console.log(
			"(profile time is the sampler's wall-clock between samples: on a busy machine it includes time the process waited for a core; read the shares)",
		);
		console.log(`\nPI_TIMING, cold (last round):\n${timings.join("\n") || "(none printed)"}`);
		console.log(`\nPI_TIMING, warm:\n${warmTimings.join("\n") || "(none printed)"}`);
		console.log(
			`\n## Pi ${line}: the package's own samples of a warm start's profile, by phase (medians of ${warmParts.length})`,
		);
		console.log("| phase | CPU |\n|---|---:|");
		for (const phase of PHASES)
			console.log(`| ${phase} | ${median(warmParts.map((x) => x.phases[phase])).toFixed(1)} ms |`);
		const total = median(warmParts.map((x) => Object.values(x.phases).reduce((a, b) => a + b, 0)));
		console.log(`| all of the package | ${total.toFixed(1)} ms |`);
		const names = new Set(warmParts.flatMap((x) => Object.keys(x.modules)));
		const rows = [...names]
			.map((name) => [name, median(warmParts.map((x) => x.modules[name] ?? 0))] as const)
			.filter(([, ms]) => ms > 0)
			.sort((a, b) => b[1] - a[1]);
		console.log("\nThe bundle's modules evaluated at start (its top level and what it calls; medians):");
		for (const [name, ms] of rows.slice(0, 15)) console.log(`  ${ms.toFixed(1)} ms  ${name}`);
		console.log(`  (${rows.length} modules with samples; ${names.size} in all)`);
		const transpiled = jiti.filter((l) => /transpile/i.test(l));
		console.log(`\nJITI_DEBUG, cold: ${jiti.length} lines, ${transpiled.length} transpiles`);
		for (const l of jiti.filter((x) => /headroom|staged|dist\//.test(x)).slice(0, 12))
			console.log(`  ${l.slice(0, 200)}`);
	}
});

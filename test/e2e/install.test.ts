/**
 * The package installed the way a user installs it, on both Pi lines:
 * - from a checkout: a copy of this working tree's files (what `git clone` gives), `npm ci --omit=dev` in it as
 *   the README says, then `pi install <checkout>`;
 * - from git: `pi install http://127.0.0.1:…/owner/<name>.git`, served by a git server on 127.0.0.1; Pi clones
 *   it and runs its own production install in the clone (`npm install --omit=dev`, on 1.x with
 *   `--legacy-peer-deps`).
 * Either way node_modules holds exactly the declared runtime dependencies and theirs (no dev copy of Pi, no
 * typebox), and a json-mode run with nothing but what Pi discovers loads every extension with an empty stderr
 * and passes the subagents scenario (a long answer projected head + tail, the footer's read returns the rest).
 */
import { execFileSync, spawn } from "node:child_process";
import {
	copyFileSync,
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, normalize, relative, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Manifest, readManifest, runtimeClosure } from "../fixtures/package-layout.ts";
import {
	makeSandbox,
	PI_LINES,
	type PiLine,
	piLine,
	REPO_ROOT,
	runPiPrint,
	type Sandbox,
} from "../fixtures/pi-runner.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { makeOutsideDir } from "../fixtures/test-dirs.ts";
import { expectWaitThenRead, spawnWaitReadScript } from "./long-answer-scenario.ts";
import { numberedAnswer } from "./subagents-support.ts";

const PKG = readManifest(REPO_ROOT) as Manifest & { pi: { extensions: string[] } };
const LONG = numberedAnswer("", 420, 37_000);

/** npm's own settings from an enclosing `npm test` (npm_config_*, …) would override the copy's .npmrc. */
function cleanNpmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {};
	for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key)) env[key] = value;
	return { ...env, ...extra };
}

/** The user's npm cache, so installs work from the tarballs `npm install` already fetched. */
const NPM_CACHE = execFileSync("npm", ["config", "get", "cache"], { env: cleanNpmEnv(), encoding: "utf8" }).trim();
const NPM_ENV = { npm_config_cache: NPM_CACHE, npm_config_offline: "true", npm_config_update_notifier: "false" };

/** The working tree's files as a clone has them: tracked and new ones, nothing git ignores. */
function copyWorkingTree(target: string): void {
	const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
		cwd: REPO_ROOT,
		encoding: "utf8",
	})
		.split("\0")
		.filter(Boolean);
	for (const file of files) {
		const from = join(REPO_ROOT, file);
		if (!existsSync(from)) continue; // deleted in the working tree
		mkdirSync(dirname(join(target, file)), { recursive: true });
		copyFileSync(from, join(target, file));
	}
}

/** Every package folder under a node_modules tree (relative paths, nested ones included). */
function installedPackages(root: string): string[] {
	const found: string[] = [];
	const walk = (modules: string) => {
		if (!existsSync(modules)) return;
		for (const name of readdirSync(modules)) {
			if (name.startsWith(".")) continue;
			const dirs = name.startsWith("@") ? readdirSync(join(modules, name)).map((n) => join(name, n)) : [name];
			for (const dir of dirs) {
				found.push(relative(root, join(modules, dir)));
				walk(join(modules, dir, "node_modules"));
			}
		}
	};
	walk(join(root, "node_modules"));
	return found.sort();
}

/** The package folders the declared runtime dependencies pull in, transitively (installed optional ones too). */
function runtimeFolders(root: string): string[] {
	return runtimeClosure(root)
		.map((d) => relative(root, d.folder))
		.sort();
}

function sizeOf(path: string): number {
	const st = statSync(path);
	if (!st.isDirectory()) return st.size;
	return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}

/** What the README claims a production install brings. */
function readmeClaim(): number {
	const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
	const m = /`npm ci --omit=dev`[^*]*\*\*(\d+) packages?,/.exec(readme);
	if (!m) throw new Error("README: no `npm ci --omit=dev` … **N packages, …** figure found");
	return Number(m[1]);
}

/** Asserts a production install: exactly the runtime closure, none of Pi's packages, typebox or dev tools. */
function expectLean(root: string): void {
	const installed = installedPackages(root);
	expect(installed).toEqual(runtimeFolders(root));
	const runtime = new Set([...Object.keys(PKG.dependencies ?? {}), ...Object.keys(PKG.optionalDependencies ?? {})]);
	const hostOrDev = [...Object.keys(PKG.peerDependencies ?? {}), ...Object.keys(PKG.devDependencies ?? {})];
	for (const name of hostOrDev.filter((n) => !runtime.has(n))) {
		expect(
			installed.some((p) => p.endsWith(`node_modules${sep}${normalize(name)}`)),
			name,
		).toBe(false);
	}
}

/** `pi install <source>` with this line; resolves with its exit status and output. */
function piInstall(line: PiLine, sandbox: Sandbox, source: string): Promise<{ status: number | null; output: string }> {
	const info = piLine(line);
	const child = spawn(info.command, [...info.prefix, "install", source], {
		cwd: sandbox.cwd,
		env: { ...sandbox.env, ...NPM_ENV },
		stdio: ["ignore", "pipe", "pipe"],
	});
	let output = "";
	child.stdout.on("data", (d) => {
		output += d;
	});
	child.stderr.on("data", (d) => {
		output += d;
	});
	const timer = setTimeout(() => child.kill("SIGKILL"), 150_000);
	return new Promise((resolve) =>
		child.on("close", (status) => {
			clearTimeout(timer);
			resolve({ status, output });
		}),
	);
}

/** A static file server for a bare repository (git's "dumb" HTTP protocol) on 127.0.0.1. */
async function serveGit(root: string): Promise<{ server: Server; base: string }> {
	const server = createServer((req, res) => {
		const path = normalize(join(root, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)));
		if (!path.startsWith(root + sep) || !existsSync(path) || !statSync(path).isFile()) {
			res.writeHead(404).end();
			return;
		}
		res.writeHead(200, { "content-type": "application/octet-stream" }).end(readFileSync(path));
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let checkout = "";
let gitUrl = "";
let git: Server | undefined;

beforeAll(async () => {
	const root = makeOutsideDir("install"); // outside the repo, so its node_modules never lends Pi a dev SDK
	// From a checkout: the README's command in a fresh copy.
	checkout = join(root, "checkout", PKG.name);
	copyWorkingTree(checkout);
	execFileSync("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund"], {
		cwd: checkout,
		env: cleanNpmEnv(NPM_ENV),
		stdio: "pipe",
	});
	// From git: the same files committed and served as a bare repository.
	const source = join(root, "source");
	copyWorkingTree(source);
	const author = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.invalid" };
	const gitEnv = { ...process.env, ...author, GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.invalid" };
	for (const args of [
		["init", "-q", "-b", "main"],
		["add", "-A"],
		["commit", "-q", "-m", "snapshot"],
	]) {
		execFileSync("git", args, { cwd: source, env: gitEnv, stdio: "pipe" });
	}
	const bare = join(root, "served", "owner", `${PKG.name}.git`);
	execFileSync("git", ["clone", "-q", "--bare", source, bare], { stdio: "pipe" });
	execFileSync("git", ["update-server-info"], { cwd: bare, stdio: "pipe" });
	const served = await serveGit(join(root, "served"));
	git = served.server;
	gitUrl = `${served.base}/owner/${PKG.name}.git`;
}, 240_000);

afterAll(async () => {
	await new Promise<void>((resolve) => (git ? git.close(() => resolve()) : resolve()));
});

describe("a production install of the package", () => {
	it('declares Pi\'s packages and typebox as optional "*" peers, never as runtime dependencies', () => {
		const peers = Object.entries(PKG.peerDependencies ?? {});
		expect(peers.map(([name]) => name)).toEqual(
			expect.arrayContaining([
				"@mariozechner/pi-coding-agent",
				"@mariozechner/pi-ai",
				"@mariozechner/pi-tui",
				"typebox",
			]),
		);
		for (const [name, range] of peers) {
			expect(range, name).toBe("*");
			expect(PKG.peerDependenciesMeta?.[name]?.optional, name).toBe(true);
			expect(Object.keys(PKG.dependencies ?? {})).not.toContain(name);
		}
	});

	it("`npm ci --omit=dev` in a checkout installs only the runtime dependencies, as many as the README says", () => {
		expectLean(checkout);
		const count = installedPackages(checkout).length;
		const megabytes = (sizeOf(join(checkout, "node_modules")) / 1e6).toFixed(1);
		expect(count, `README figure: ${count} packages, ${megabytes} MB`).toBe(readmeClaim());
	});
});

describe.each(PI_LINES)("the installed package on $label", ({ line }) => {
	const startServer = useScriptedServers();

	for (const kind of ["checkout", "git"] as const) {
		it(`from ${kind === "git" ? "a git URL" : "a local checkout"}: lean install, every extension loads with an empty stderr, subagents work`, async () => {
			const server = await startServer(spawnWaitReadScript(() => LONG));
			const sandbox = makeSandbox({ server });
			const installed = await piInstall(line, sandbox, kind === "git" ? gitUrl : checkout);
			expect(installed.status, installed.output).toBe(0);
			const settings = JSON.parse(readFileSync(join(sandbox.agentDir, "settings.json"), "utf8")) as {
				packages?: unknown[];
			};
			expect(settings.packages).toHaveLength(1);
			const root = kind === "git" ? join(sandbox.agentDir, "git", "127.0.0.1", "owner", PKG.name) : checkout;
			expect(existsSync(join(root, "package.json")), root).toBe(true);
			expectLean(root);

			const run = await runPiPrint({
				line,
				sandbox,
				extensions: [],
				discover: true,
				prompt: "delegate",
				args: ["--no-session"],
			});
			expect(run.exitCode, run.stderr).toBe(0);
			expect(run.stderr).toBe("");
			const tools = server.requests[0].toolNames;
			for (const tool of ["subagent_spawn", "subagent_wait", "recall_artifact"]) expect(tools).toContain(tool);
			expectWaitThenRead(run.events, LONG);
		});
	}

	it("a copy with one broken extension is reported on stderr (so an empty stderr means every one loaded)", async () => {
		const server = await startServer(() => ({ text: "done" }));
		const sandbox = makeSandbox({ server });
		const broken = join(makeOutsideDir("install-broken"), PKG.name);
		copyWorkingTree(broken);
		rmSync(join(broken, "node_modules"), { recursive: true, force: true });
		execFileSync("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund"], {
			cwd: broken,
			env: cleanNpmEnv(NPM_ENV),
			stdio: "pipe",
		});
		const last = PKG.pi.extensions[PKG.pi.extensions.length - 1];
		writeFileSync(join(broken, last), 'import "./no-such-module.ts";\nexport default function () {}\n');
		expect((await piInstall(line, sandbox, broken)).status).toBe(0);
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [],
			discover: true,
			prompt: "hi",
			args: ["--no-session"],
		});
		expect(run.stderr).toMatch(/no-such-module/);
	});
});

describe("the README's pi commands for a checkout", () => {
	const startServer = useScriptedServers();

	/** `npm run --silent <script> -- <args>` in the repo, as the README shows it, in a sandbox's Pi dirs. */
	function npmRun(
		sandbox: Sandbox,
		script: string,
		args: string[],
	): Promise<{ code: number | null; out: string; err: string }> {
		const child = spawn("npm", ["run", "--silent", script, "--", ...args], {
			cwd: REPO_ROOT,
			env: sandbox.env,
			stdio: ["ignore", "pipe", "pipe"],
		});
		let out = "";
		let err = "";
		child.stdout.on("data", (d) => {
			out += d;
		});
		child.stderr.on("data", (d) => {
			err += d;
		});
		return new Promise((resolve) => child.on("close", (code) => resolve({ code, out, err })));
	}

	const cases = [
		{ script: "pi:073", what: "Pi 0.73.1 with this checkout", source: () => REPO_ROOT },
		{ script: "pi:1x", what: "Pi 1.x with a production copy", source: () => checkout },
	];
	for (const { script, what, source } of cases) {
		it(`npm run ${script} runs ${what}: every extension loads, empty stderr`, async () => {
			const server = await startServer(() => ({ text: "done" }));
			const sandbox = makeSandbox({ server });
			const run = await npmRun(sandbox, script, [
				"--offline",
				"--mode",
				"json",
				"-p",
				"--no-session",
				"--provider",
				"mock",
				"--model",
				"mock-model",
				"-e",
				source(),
				"hi",
			]);
			expect(run.code, run.err).toBe(0);
			expect(run.err).toBe("");
			expect(run.out).toContain('"type":"agent_end"');
			for (const tool of ["subagent_spawn", "recall_artifact"]) expect(server.requests[0].toolNames).toContain(tool);
		});
	}
});

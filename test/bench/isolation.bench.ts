/**
 * Worktree isolation benchmark (`npm run bench -- isolation`): on a generated repository of 5,000 files,
 * what an isolated child costs on top of a plain one — creating its worktree (probe + `git worktree add`),
 * and at settle either the check that finds no change and removes it, or capturing a three-file change as a
 * stored patch — against the latency of spawning the same child without isolation (in-process backend,
 * spawn → first model request). The variants alternate round by round; medians, ratios from one run.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { AuthStorage, ModelRegistry } from "@mariozechner/pi-coding-agent";
import { storeForAgentDir } from "../../extensions/shared/store/artifact-store.ts";
import { reportChanges } from "../../extensions/subagents/checkable/checkable.ts";
import { createWorktree, probeRepository, removeWorktree } from "../../extensions/subagents/checkable/isolation.ts";
import { createInProcessBackend } from "../../extensions/subagents/children/backend.ts";
import { git, gitTestEnv, makeGitRepo } from "../fixtures/git-repo.ts";
import { makeSandbox } from "../fixtures/pi-runner.ts";
import { startScriptedServer } from "../fixtures/scripted-server.ts";

const FILES = 5_000;
const ROUNDS = 9;
const TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(1)} ms`;

/** A source tree of FILES files in 100 folders, ~1.2 KB each (about 6 MB), in one commit. */
function generateRepo(dir: string, env: NodeJS.ProcessEnv): void {
	const files: Record<string, string> = {};
	for (let i = 0; i < FILES; i++) {
		const lines = Array.from({ length: 30 }, (_, l) => `export const v${l} = "${i}-${l}-${"x".repeat(20)}";`);
		files[`pkg${String(i % 100).padStart(3, "0")}/mod${String(i).padStart(5, "0")}.ts`] = `${lines.join("\n")}\n`;
	}
	makeGitRepo(dir, files, env);
}

async function main(): Promise<void> {
	let onRequest: (() => void) | undefined;
	const server = await startScriptedServer(() => {
		onRequest?.();
		return { text: "ok" };
	});
	const sandbox = makeSandbox({ server });
	const env = gitTestEnv(sandbox.root);
	Object.assign(process.env, env);
	const repoDir = join(sandbox.root, "repo");
	const tGen = performance.now();
	generateRepo(repoDir, env);
	const files = git(repoDir, ["ls-files"], env).trim().split("\n").length;
	console.log(`generated ${files} files in ${ms(performance.now() - tGen)}`);
	const store = storeForAgentDir(sandbox.agentDir);
	const root = join(store.root, "worktrees");
	const registry = ModelRegistry.create(
		AuthStorage.create(join(sandbox.agentDir, "auth.json")),
		join(sandbox.agentDir, "models.json"),
	);
	const model = registry.find("mock", "mock-model");
	const backend = createInProcessBackend({
		agentDir: sandbox.agentDir,
		modelRegistry: registry,
		sessionDir: join(sandbox.agentDir, "sessions", "bench"),
	});
	const spawnLatency = async (i: number, cwd: string): Promise<number> => {
		const seen = new Promise<number>((resolve) => (onRequest = () => resolve(performance.now())));
		const t0 = performance.now();
		const handle = await backend.create(
			{
				id: `sa-${i}`,
				cwd,
				tools: TOOLS,
				model,
				systemAppend: ["bench"],
				extensions: { mode: "none", include: [], exclude: [] },
			},
			() => undefined,
		);
		const run = handle.prompt("task");
		const t1 = await seen;
		await run;
		handle.dispose();
		return t1 - t0;
	};
	const spawnPlain: number[] = [];
	const create: number[] = [];
	const cleanClean: number[] = [];
	const captureChanged: number[] = [];
	const removeChanged: number[] = [];
	for (let round = 0; round <= ROUNDS; round++) {
		const timed = round > 0; // round 0 warms up
		const plain = await spawnLatency(round, repoDir);
		// Unchanged child: create, then the settle check that finds nothing and removes it.
		let t0 = performance.now();
		const probe = await probeRepository(repoDir);
		if (!probe.ok) throw new Error(probe.reason);
		const idle = await createWorktree({ repo: probe.repo, root, trustedRoot: sandbox.agentDir, name: `idle-${round}` });
		const tCreate = performance.now() - t0;
		t0 = performance.now();
		const idleReport = await reportChanges({ id: "sa-x", worktree: idle, store });
		const tClean = performance.now() - t0;
		if (idleReport.outcome.kept) throw new Error("an unchanged worktree was kept");
		// Changed child: three files edited, captured as a stored patch, later removed by cleanup.
		const busy = await createWorktree({
			repo: (await probeRepository(repoDir).then((p) => (p.ok ? p : Promise.reject(p.reason)))).repo,
			root,
			trustedRoot: sandbox.agentDir,
			name: `busy-${round}`,
		});
		writeFileSync(join(busy.path, "pkg000", "mod00000.ts"), `// edited ${round}\n`);
		writeFileSync(join(busy.path, "pkg001", "mod00001.ts"), `// edited ${round}\n`);
		writeFileSync(join(busy.path, `new-${round}.ts`), `export const n = ${round};\n`);
		t0 = performance.now();
		const busyReport = await reportChanges({ id: "sa-y", worktree: busy, store });
		const tCapture = performance.now() - t0;
		if (busyReport.outcome.files.length !== 3 || !busyReport.outcome.patchPath) throw new Error("capture missed files");
		t0 = performance.now();
		await removeWorktree(busy);
		const tRemove = performance.now() - t0;
		if (timed) {
			spawnPlain.push(plain);
			create.push(tCreate);
			cleanClean.push(tClean);
			captureChanged.push(tCapture);
			removeChanged.push(tRemove);
		}
	}
	const base = median(spawnPlain);
	const rows: Array<[string, number]> = [
		["spawn → first model request, no isolation (in-process child)", base],
		["worktree creation (probe + git worktree add, 5,000 files checked out)", median(create)],
		["settle, no changes: capture finds none + worktree and branch removed", median(cleanClean)],
		["settle, 3 files changed: capture + patch stored as an artifact", median(captureChanged)],
		["cleanup of a kept worktree (git worktree remove + branch -D)", median(removeChanged)],
		["creation + cleanup of an unchanged child, total", median(create) + median(cleanClean)],
	];
	console.log(`\nworktree isolation on a ${files}-file repository (median of ${ROUNDS} rounds):`);
	for (const [label, value] of rows)
		console.log(`  ${label.padEnd(78)} ${ms(value).padStart(10)}  ${(value / base).toFixed(2)}×`);
	await server.close();
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});

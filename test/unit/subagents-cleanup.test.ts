/**
 * subagent_cleanup against real git: a kept worktree whose work is not in the parent's tree stays unless
 * discard is set (the patch stays in the store either way); once the patch is applied in the parent's tree
 * the worktree and branch go; children that are not isolated or still run are named, unknown ids refused.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTool } from "../../extensions/subagents/cleanup.ts";
import { createWorktree, probeRepository, type Worktree } from "../../extensions/subagents/isolation.ts";
import { git, gitTestEnv, makeGitRepo } from "../fixtures/git-repo.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { fakeWorld, until } from "./subagents-fakes.ts";

const base = makeTestDir("subagents-cleanup");
const savedEnv = { ...process.env };
beforeAll(() => {
	Object.assign(process.env, gitTestEnv(base));
});
afterAll(() => {
	for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
	Object.assign(process.env, savedEnv);
});

let n = 0;
async function world() {
	const root = join(base, `case-${++n}`);
	mkdirSync(root);
	const repo = join(root, "repo");
	makeGitRepo(repo, { "a.txt": "one\n" }, gitTestEnv(base));
	const w = fakeWorld({ root });
	const probe = await probeRepository(repo);
	if (!probe.ok) throw new Error(probe.reason);
	const make = async (name: string): Promise<Worktree> =>
		createWorktree({ repo: probe.repo, root: join(w.env.agentDir, "worktrees"), trustedRoot: w.env.agentDir, name });
	const settledChild = async (worktree?: Worktree) => {
		const child = w.manager.spawn({
			prompt: "t",
			modelLabel: "mock/mock-model",
			model: {},
			tools: [],
			cwd: worktree?.cwd ?? root,
			context: "fresh",
			systemAppend: [],
			worktree,
		});
		await until(() => w.backend.started(child.id));
		w.backend.finish(child.id, "done");
		await until(() => child.state === "completed");
		return child;
	};
	const cleanup = (ids: string[], discard?: boolean) => cleanupTool(w.env, { ids, discard }, w.ctx);
	return { ...w, repo, make, settledChild, cleanup };
}

describe("subagent_cleanup", () => {
	it("keeps unmerged work unless discard is set; the patch stays in the store", async () => {
		const w = await world();
		const wt = await w.make("sa-1-aaaa");
		writeFileSync(join(wt.path, "a.txt"), "one\ntwo\n");
		const child = await w.settledChild(wt);
		const kept = await w.cleanup([child.id]);
		const text = kept.content[0].text;
		expect(text).toMatch(/: kept — its changes \(1 file\) are not in your working tree yet\. Apply (\S+) with git -C /);
		expect(existsSync(wt.path)).toBe(true);
		const patch = /Apply (\S+) with/.exec(text)![1];
		expect(readFileSync(patch, "utf8")).toContain("+two");
		const gone = await w.cleanup([child.id], true);
		expect(gone.content[0].text).toContain(
			"worktree and branch removed (discarded 1 changed file as asked); its patch stays at",
		);
		expect(existsSync(wt.path)).toBe(false);
		expect(existsSync(patch)).toBe(true);
		expect(git(w.repo, ["branch", "--list", wt.branch], gitTestEnv(base)).trim()).toBe("");
		expect((await w.cleanup([child.id])).content[0].text).toContain("its worktree was already removed");
	});

	it("removes a worktree whose patch is in the parent's tree, and one with no changes", async () => {
		const w = await world();
		const merged = await w.make("sa-1-bbbb");
		writeFileSync(join(merged.path, "new.txt"), "fresh\n");
		const idle = await w.make("sa-2-bbbb");
		const [a, b] = [await w.settledChild(merged), await w.settledChild(idle)];
		const kept = await w.cleanup([a.id]);
		const patch = /Apply (\S+) with/.exec(kept.content[0].text)![1];
		git(w.repo, ["apply", patch], gitTestEnv(base));
		const result = await w.cleanup([a.id, b.id]);
		expect(result.content[0].text.split("\n")).toEqual([
			`${a.id} "t": worktree and branch removed (its changes are in your working tree); its patch stays at ${patch}.`,
			`${b.id} "t": worktree and branch removed (it had no changes).`,
		]);
		expect(existsSync(merged.path) || existsSync(idle.path)).toBe(false);
	});

	it("names children that are not isolated or still running, and refuses unknown ids", async () => {
		const w = await world();
		const plain = await w.settledChild();
		const running = w.manager.spawn({
			prompt: "t",
			modelLabel: "m",
			model: {},
			tools: [],
			cwd: w.root,
			context: "fresh",
			systemAppend: [],
			worktree: await w.make("sa-9-cccc"),
		});
		const text = (await w.cleanup([plain.id, running.id])).content[0].text;
		expect(text).toContain(`${plain.id} "t": not isolated; nothing to remove.`);
		expect(text).toContain(`${running.id} "t": still running; cancel it or wait for it first.`);
		await expect(w.cleanup(["sa-77"])).rejects.toThrow("Unknown subagent id sa-77; known:");
		await until(() => w.backend.started(running.id));
		w.backend.finish(running.id, "x");
	});
});

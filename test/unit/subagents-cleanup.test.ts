/**
 * subagent_cleanup against real git: a kept worktree whose work is not in the parent's tree stays unless
 * discard is set (the patch stays in the store either way); once the patch is applied in the parent's tree
 * the worktree and branch go; children that are not isolated or still run are named, unknown ids refused.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createWorktree, type Worktree } from "../../extensions/subagents/checkable/isolation.ts";
import { cleanupTool } from "../../extensions/subagents/tools/cleanup.ts";
import { fakeWorld, spawnChild, until } from "./subagents-fakes.ts";
import { probeOk, useGitCases } from "./subagents-git.ts";

const cases = useGitCases("subagents-cleanup");

async function world() {
	const { root, repoDir: repo } = cases.repo({ "a.txt": "one\n" });
	const w = fakeWorld({ root });
	const facts = await probeOk(repo);
	const make = async (name: string): Promise<Worktree> =>
		createWorktree({ repo: facts, root: join(w.agentDir, "worktrees"), trustedRoot: w.agentDir, name });
	const settledChild = async (worktree?: Worktree) => {
		const child = spawnChild(w, { prompt: "t", cwd: worktree?.cwd ?? root, worktree });
		await until(() => w.backend.started(child.id));
		w.backend.finish(child.id, "done");
		await until(() => child.state === "completed");
		return child;
	};
	const cleanup = (ids: string[], discard?: boolean) => cleanupTool(w.services, { ids, discard }, w.ctx);
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
		expect(cases.git(w.repo, ["branch", "--list", wt.branch]).trim()).toBe("");
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
		cases.git(w.repo, ["apply", patch]);
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
		const running = spawnChild(w, { prompt: "t", modelLabel: "m", worktree: await w.make("sa-9-cccc") });
		const text = (await w.cleanup([plain.id, running.id])).content[0].text;
		expect(text).toContain(`${plain.id} "t": not isolated; nothing to remove.`);
		expect(text).toContain(`${running.id} "t": still running; cancel it or wait for it first.`);
		await expect(w.cleanup(["sa-77"])).rejects.toThrow("Unknown subagent id sa-77; known:");
		await until(() => w.backend.started(running.id));
		w.backend.finish(running.id, "x");
	});
});

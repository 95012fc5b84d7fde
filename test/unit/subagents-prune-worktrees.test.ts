/**
 * Kept worktrees are covered by pruning: one untouched for longer than the age limit is removed with its branch
 * (or as a plain folder when its repository is gone); a recent one, a symlink and a folder the package does not
 * name are left alone.
 */
import { existsSync, mkdirSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createWorktree } from "../../extensions/subagents/checkable/isolation.ts";
import { pruneWorktrees } from "../../extensions/subagents/checkable/prune-worktrees.ts";
import { probeOk, useGitCases } from "./subagents-git.ts";

const cases = useGitCases("subagents-prune-worktrees");
const DAY = 24 * 60 * 60 * 1000;

function age(paths: string[], ms: number): void {
	const t = new Date(Date.now() - ms);
	for (const p of paths) if (existsSync(p)) utimesSync(p, t, t);
}

describe("pruneWorktrees", () => {
	it("removes old kept worktrees with their branches and leaves everything else", async () => {
		const { root, repoDir } = cases.repo({ "a.txt": "one\n" });
		const agentDir = join(root, "agent");
		mkdirSync(agentDir);
		const worktrees = join(agentDir, "cache", "headroom", "worktrees");
		const make = async (name: string) =>
			createWorktree({ repo: await probeOk(repoDir), root: worktrees, trustedRoot: agentDir, name });
		const old = await make("sa-1-aaaa");
		const fresh = await make("sa-2-bbbb");
		const admin = join(repoDir, ".git", "worktrees", "sa-1-aaaa");
		age(
			[old.path, join(old.path, ".git"), join(admin, "index"), join(admin, "HEAD"), join(admin, "logs", "HEAD")],
			40 * DAY,
		);
		// A worktree whose repository was deleted, and things the package did not make.
		const { root: root2, repoDir: gone } = cases.repo({ "b.txt": "two\n" });
		const orphan = await createWorktree({
			repo: await probeOk(gone),
			root: worktrees,
			trustedRoot: agentDir,
			name: "sa-3-cccc",
		});
		rmSync(gone, { recursive: true, force: true });
		age([orphan.path, join(orphan.path, ".git")], 40 * DAY);
		const elsewhere = join(root2, "elsewhere");
		mkdirSync(elsewhere);
		symlinkSync(elsewhere, join(worktrees, "sa-4-dddd"));
		mkdirSync(join(worktrees, "not ours"));
		age([join(worktrees, "not ours")], 40 * DAY);

		const outcome = await pruneWorktrees(worktrees, 30 * DAY);
		expect(outcome.failed).toEqual([]);
		expect(outcome.removed.sort()).toEqual([old.path, orphan.path].sort());
		expect(existsSync(old.path)).toBe(false);
		expect(cases.git(repoDir, ["for-each-ref", "--format=%(refname:short)", "refs/heads/headroom/"]).trim()).toBe(
			"headroom/sa-2-bbbb",
		);
		expect(existsSync(fresh.path)).toBe(true);
		expect(existsSync(orphan.path)).toBe(false);
		expect(existsSync(elsewhere)).toBe(true);
		expect(existsSync(join(worktrees, "not ours"))).toBe(true);
	});
});

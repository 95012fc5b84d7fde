/**
 * No git run of the package executes a program a child could have put in the repository's shared config
 * (core.fsmonitor, a filter driver, hooks), and an argument from a record is never read as an option.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
	captureChanges,
	createWorktree,
	patchContainedIn,
	removeWorktree,
} from "../../extensions/subagents/checkable/isolation.ts";
import { probeOk, useGitCases } from "./subagents-git.ts";

const cases = useGitCases("subagents-git-hardening");
const git = cases.git;

function fresh() {
	const { root, repoDir } = cases.repo({ "a.txt": "one\n" });
	const agentDir = join(root, "agent");
	mkdirSync(agentDir);
	const marker = join(root, "ran");
	const program = join(root, "evil.sh");
	writeFileSync(program, `#!/bin/sh\necho ran >> '${marker}'\ncat\n`);
	chmodSync(program, 0o755);
	return { root, repoDir, agentDir, worktrees: join(agentDir, "cache", "headroom", "worktrees"), marker, program };
}

describe("the package's git runs in a repository a child can configure", () => {
	it("never run a core.fsmonitor, a filter driver or a hook set in the shared .git/config", async () => {
		const t = fresh();
		const wt = await createWorktree({
			repo: await probeOk(t.repoDir),
			root: t.worktrees,
			trustedRoot: t.agentDir,
			name: "sa-1-abcd",
		});
		// What a child with bash can do from its worktree: the config it writes is the parent's too.
		git(wt.path, ["config", "core.fsmonitor", t.program]);
		git(wt.path, ["config", "filter.evil.clean", t.program]);
		git(wt.path, ["config", "filter.evil.smudge", t.program]);
		git(wt.path, ["config", "filter.evil.required", "true"]);
		git(wt.path, ["config", "core.hooksPath", join(t.root, "hooks")]);
		mkdirSync(join(t.root, "hooks"));
		writeFileSync(join(t.root, "hooks", "post-checkout"), `#!/bin/sh\necho hook >> '${t.marker}'\n`);
		chmodSync(join(t.root, "hooks", "post-checkout"), 0o755);
		writeFileSync(join(wt.path, ".gitattributes"), "*.txt filter=evil\n");
		writeFileSync(join(wt.path, "b.txt"), "new\n");
		const changes = await captureChanges(wt);
		expect(changes.files.map((f) => f.path)).toEqual([".gitattributes", "b.txt"]);
		expect(changes.patch).toContain("+new");
		const second = await createWorktree({
			repo: await probeOk(t.repoDir),
			root: t.worktrees,
			trustedRoot: t.agentDir,
			name: "sa-2-abcd",
		});
		await probeOk(t.repoDir);
		await removeWorktree(second);
		await removeWorktree(wt);
		expect(existsSync(t.marker)).toBe(false);
		// The same config does run the program for a plain git call: the test would notice a regression.
		git(t.repoDir, ["status", "--porcelain"]);
		expect(existsSync(t.marker)).toBe(true);
	});

	it("a base or a path that looks like an option is never read as one", async () => {
		const t = fresh();
		const wt = await createWorktree({
			repo: await probeOk(t.repoDir),
			root: t.worktrees,
			trustedRoot: t.agentDir,
			name: "sa-1-abcd",
		});
		const victim = join(t.root, "victim");
		await expect(captureChanges({ ...wt, base: `--output=${victim}` })).rejects.toThrow(/cannot diff/);
		expect(existsSync(victim)).toBe(false);
		expect(await patchContainedIn(`--output=${victim}`, t.repoDir)).toBe(false);
		expect(existsSync(victim)).toBe(false);
		await removeWorktree(wt);
	});
});

/**
 * Real-git cases for the worktree unit tests (isolation, cleanup), one set-up for a whole test file: a folder
 * for the file's cases (removed when the file ends), git's test environment (`gitTestEnv`: no user config, a
 * fixed identity, no discovery above the folder) in `process.env` while the file's tests run and the previous
 * environment restored after, and a fresh one-commit repository a case.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { probeRepository, type RepoFacts } from "../../extensions/subagents/checkable/isolation.ts";
import { git, gitTestEnv, makeGitRepo } from "../fixtures/git-repo.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

export interface GitCase {
	/** The case's own folder (`<base>/case-<n>`). */
	root: string;
	/** The repository, `<root>/repo`, holding the given files in one commit on branch main. */
	repoDir: string;
}

/** Call once at the top of a test file; `label` names its folder (lower-case letters and hyphens). */
export function useGitCases(label: string) {
	const base = makeTestDir(label);
	const savedEnv = { ...process.env };
	beforeAll(() => {
		Object.assign(process.env, gitTestEnv(base));
	});
	afterAll(() => {
		for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
		Object.assign(process.env, savedEnv);
	});
	let n = 0;
	return {
		base,
		/** Run git in `dir` with the test environment and return its stdout (throws on failure). */
		git: (dir: string, args: string[]): string => git(dir, args, gitTestEnv(base)),
		/** A new case folder with a repository holding `files` (relative path → content). */
		repo(files: Record<string, string>): GitCase {
			const root = join(base, `case-${++n}`);
			mkdirSync(root);
			const repoDir = join(root, "repo");
			makeGitRepo(repoDir, files, gitTestEnv(base));
			return { root, repoDir };
		},
	};
}

/** The repository facts for `cwd`; throws the probe's reason when it is not a usable repository. */
export async function probeOk(cwd: string): Promise<RepoFacts> {
	const probe = await probeRepository(cwd);
	if (!probe.ok) throw new Error(probe.reason);
	return probe.repo;
}

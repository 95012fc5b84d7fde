/**
 * Kept worktrees do not grow without bound: a child's worktree with changes stays until subagent_cleanup, and a
 * session that never cleans up would leave it for good. Once per process, some time after start, every worktree
 * in the package's worktrees folder untouched for longer than `store.maxAgeDays` is removed with its branch (its
 * patch stays in the artifact store, which ages out on its own rules). Only folders the package names
 * (`<child id>-<tag>`, a real directory of this user, no symlink) are considered; a worktree whose repository is
 * gone is removed as a plain folder.
 */
import { lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { GitOptions } from "./git.ts";

/** Delay before the pass, so it never competes with a session's first turn (ms). */
export const WORKTREE_PRUNE_DELAY_MS = 20_000;
const SCHEDULED = Symbol.for("pi-context-headroom.worktree-prune.scheduled");

/** What a pass did. */
export interface WorktreePruneOutcome {
	/** Worktree folders removed. */
	removed: string[];
	/** Folders that could not be removed, with why. */
	failed: Array<{ path: string; error: string }>;
}

function mtimeOf(path: string): number {
	try {
		return lstatSync(path).mtimeMs;
	} catch {
		return 0;
	}
}

/** The newest change git or the child made that shows without a walk: the folder, its `.git` file, its index. */
function lastTouched(path: string, gitdir: string | undefined): number {
	const times = [mtimeOf(path), mtimeOf(join(path, ".git"))];
	if (gitdir)
		times.push(mtimeOf(join(gitdir, "index")), mtimeOf(join(gitdir, "HEAD")), mtimeOf(join(gitdir, "logs", "HEAD")));
	return Math.max(...times);
}

/** The worktree's admin folder from its `.git` file ("gitdir: …"), when that is a small regular file. */
function gitdirOf(path: string): string | undefined {
	const file = join(path, ".git");
	try {
		const st = lstatSync(file);
		if (!st.isFile() || st.size > 4096) return undefined;
		const m = /^gitdir: (.+)$/m.exec(readFileSync(file, "utf8"));
		return m ? m[1].trim() : undefined;
	} catch {
		return undefined;
	}
}

/** Remove the package's worktrees in `root` untouched for longer than `maxAgeMs`. Never throws. */
export async function pruneWorktrees(
	root: string,
	maxAgeMs: number,
	now = Date.now(),
	options: GitOptions = {},
): Promise<WorktreePruneOutcome> {
	const outcome: WorktreePruneOutcome = { removed: [], failed: [] };
	let names: string[];
	try {
		const st = lstatSync(root);
		if (!st.isDirectory() || st.isSymbolicLink()) return outcome;
		names = readdirSync(root);
	} catch {
		return outcome;
	}
	const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
	// Git and the worktree code load here, at the pass, not when session start schedules it (docs/startup.md).
	const [{ runGit }, { BRANCH_PREFIX, removeWorktree, SAFE_NAME }] = await Promise.all([
		import("./git.ts"),
		import("./isolation.ts"),
	]);
	for (const name of names) {
		if (!SAFE_NAME.test(name)) continue;
		const path = join(root, name);
		try {
			const st = lstatSync(path);
			if (st.isSymbolicLink() || !st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
			const gitdir = gitdirOf(path);
			if (now - lastTouched(path, gitdir) <= maxAgeMs) continue;
			// <repo>/.git/worktrees/<name> → the repository's top level is above its .git folder.
			const common = gitdir ? dirname(dirname(gitdir)) : undefined;
			const repoTop = common ? dirname(common) : undefined;
			const top = repoTop ? await runGit(["rev-parse", "--show-toplevel"], { ...options, cwd: repoTop }) : undefined;
			if (top && top.code === 0) {
				const branch = `${BRANCH_PREFIX}${name}`;
				await removeWorktree(
					{ path, branch, base: "", repoTop: top.stdout.trim(), cwd: path, parentUncommitted: 0 },
					options,
				);
			} else rmSync(path, { recursive: true, force: true }); // its repository is gone: a plain folder of ours
			outcome.removed.push(path);
		} catch (error) {
			outcome.failed.push({ path, error: error instanceof Error ? error.message : String(error) });
		}
	}
	return outcome;
}

/** Schedule one pass per process, on an unref'd timer. Returns true when this call scheduled it. */
export function scheduleWorktreePrune(root: string, maxAgeDays: number, delayMs = WORKTREE_PRUNE_DELAY_MS): boolean {
	const flags = globalThis as unknown as Record<symbol, boolean | undefined>;
	if (flags[SCHEDULED] || !(maxAgeDays > 0)) return false;
	flags[SCHEDULED] = true;
	const timer = setTimeout(() => {
		pruneWorktrees(root, maxAgeDays * 24 * 60 * 60 * 1000).catch(() => undefined);
	}, delayMs);
	timer.unref?.();
	return true;
}

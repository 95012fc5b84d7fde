/**
 * Worktree isolation: a child that may edit files runs in its own git worktree of the parent's repository,
 * created from HEAD on its own branch, outside the parent's working tree (under the agent cache, 0700).
 * When it settles, what it changed — tracked edits, deletions, new untracked files and any commits it made —
 * is summarised with +/− counts and captured as one `git diff --binary` patch against the commit it started
 * from. The parent's working tree and index are never touched: the capture stages into a temporary index.
 *
 * Uncommitted changes of the parent are NOT carried into the worktree (it starts from HEAD): the spawn
 * result says so and counts them. Every git call runs asynchronously, without hooks, pagers, prompts or
 * user diff settings that would change the patch's format.
 */
import {
	copyFileSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	rmdirSync,
	rmSync,
	statSync,
	utimesSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Worktree } from "../domain/result-extras.ts";
import { type GitOptions, gitComplaint, repositoryFilterOverrides, runGit } from "./git.ts";

export type { Worktree } from "../domain/result-extras.ts";
export type { GitOptions } from "./git.ts";

/** Decodes a patch only when it is valid UTF-8 (the store keeps text). */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Directory mode of the worktrees folder and of each worktree's root: owner only. */
export const WORKTREE_DIR_MODE = 0o700;
/** Branch prefix of children's branches: `headroom/<child id>-<session tag>`. */
export const BRANCH_PREFIX = "headroom/";

/** What the parent's repository looks like at spawn time. */
export interface RepoFacts {
	/** Absolute top level of the working tree the child's cwd is in. */
	toplevel: string;
	/** Full SHA of HEAD (the worktree's starting point). */
	head: string;
	/** The child's cwd relative to the top level ("" at the top). */
	relCwd: string;
	/** Uncommitted entries of the parent (`git status --porcelain`: staged, unstaged, untracked), not carried. */
	uncommitted: number;
}

export type Probe = { ok: true; repo: RepoFacts } | { ok: false; reason: string };

/**
 * Whether a child started in `cwd` can be isolated: git runs, `cwd` is inside a non-bare working tree,
 * and HEAD names a commit. The reason of a failure is worded for the model.
 */
export async function probeRepository(cwd: string, options: GitOptions = {}): Promise<Probe> {
	const version = await runGit(["--version"], { ...options, cwd });
	if (version.spawnError === "ENOENT") return { ok: false, reason: "git is not installed (not found on PATH)" };
	if (version.code !== 0) return { ok: false, reason: `git does not run: ${gitComplaint(version)}` };
	const top = await runGit(["rev-parse", "--show-toplevel"], { ...options, cwd });
	if (top.code !== 0) return { ok: false, reason: `${cwd} is not inside a git repository (${gitComplaint(top, 1)})` };
	const toplevel = resolve(top.stdout.trim());
	const head = await runGit(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { ...options, cwd });
	if (head.code !== 0 || !/^[0-9a-f]{40,64}$/.test(head.stdout.trim())) {
		return { ok: false, reason: `the repository at ${toplevel} has no commit yet (HEAD is unborn); commit first` };
	}
	const status = await runGit(["status", "--porcelain", "-z", "--untracked-files=all"], { ...options, cwd: toplevel });
	const uncommitted =
		status.code === 0 ? status.stdout.split("\0").filter((e) => /^[ MADRCUT?!]{2} /.test(e)).length : 0;
	return {
		ok: true,
		repo: { toplevel, head: head.stdout.trim(), relCwd: relative(toplevel, resolve(cwd)), uncommitted },
	};
}

/**
 * Make `dir` (and the folders from `trustedRoot` down to it) as private directories without following a
 * symlink: each component must be a real directory owned by this user; the ones made here are 0700.
 */
export function ensurePrivateDir(trustedRoot: string, dir: string): void {
	const rel = relative(trustedRoot, dir);
	if (rel.startsWith("..") || isAbsolute(rel)) throw new Error(`${dir} is not inside ${trustedRoot}`);
	mkdirSync(trustedRoot, { recursive: true, mode: WORKTREE_DIR_MODE });
	let current = trustedRoot;
	const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
	for (const part of rel === "" ? [] : rel.split(sep)) {
		current = join(current, part);
		let st: ReturnType<typeof lstatSync> | undefined;
		try {
			st = lstatSync(current);
		} catch {
			mkdirSync(current, { mode: WORKTREE_DIR_MODE });
			st = lstatSync(current);
		}
		if (st.isSymbolicLink()) throw new Error(`${current} is a symlink; refusing to follow it`);
		if (!st.isDirectory()) throw new Error(`${current} is not a directory`);
		if (uid !== undefined && st.uid !== uid) throw new Error(`${current} is owned by another user`);
	}
}

/** Names used for a worktree's folder and branch: letters, digits, "-" and "_" only (never model text). */
export const SAFE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface CreateOptions extends GitOptions {
	/** The repository as probed at spawn. */
	repo: RepoFacts;
	/** Folder holding every worktree (created 0700; symlinks refused from `trustedRoot` down). */
	root: string;
	/** The agent dir: the trust boundary for the no-symlink rule. */
	trustedRoot: string;
	/** Folder and branch name: `<child id>-<session tag>` (validated). */
	name: string;
}

/** Worktree changes per repository, one at a time: parallel `git worktree add` calls contend for git's locks. */
const repoQueues = new Map<string, Promise<unknown>>();

function oneAtATime<T>(repoTop: string, task: () => Promise<T>): Promise<T> {
	const previous = repoQueues.get(repoTop) ?? Promise.resolve();
	const next = previous.then(task, task);
	const settled = next.catch(() => undefined);
	repoQueues.set(repoTop, settled);
	void settled.then(() => {
		if (repoQueues.get(repoTop) === settled) repoQueues.delete(repoTop);
	});
	return next;
}

/** Create the worktree; throws an Error worded for the model when git refuses (nothing is left behind). */
export function createWorktree(options: CreateOptions): Promise<Worktree> {
	return oneAtATime(options.repo.toplevel, () => createWorktreeNow(options));
}

async function createWorktreeNow(options: CreateOptions): Promise<Worktree> {
	const { repo, root, name } = options;
	if (!SAFE_NAME.test(name)) throw new Error(`invalid worktree name ${JSON.stringify(name)}`);
	const path = join(root, name);
	const inside = relative(repo.toplevel, path);
	if (!inside.startsWith("..") && !isAbsolute(inside)) {
		throw new Error(`the worktree folder ${path} would lie inside the repository ${repo.toplevel}`);
	}
	ensurePrivateDir(options.trustedRoot, root);
	try {
		mkdirSync(path, { mode: WORKTREE_DIR_MODE });
	} catch (error) {
		throw new Error(`cannot create the worktree folder ${path}: ${(error as Error).message}`);
	}
	const branch = `${BRANCH_PREFIX}${name}`;
	// The checkout runs no smudge filter the repository's config (which children can write) defines.
	const filters = await repositoryFilterOverrides(repo.toplevel, options);
	if (!filters.ok) {
		removeEmptyDir(path);
		throw new Error(filters.reason);
	}
	const added = await runGit(["worktree", "add", "--quiet", "-b", branch, "--end-of-options", path, repo.head], {
		...options,
		cwd: repo.toplevel,
		config: filters.config,
	});
	if (added.code !== 0) {
		removeEmptyDir(path);
		throw new Error(`git worktree add failed: ${gitComplaint(added)}`);
	}
	const cwd = join(path, repo.relCwd);
	try {
		if (!statSync(cwd).isDirectory()) throw new Error("not a directory");
	} catch {
		// The parent's cwd exists only in its working tree (untracked or ignored folder): the child starts at the top.
		return { path, branch, base: repo.head, repoTop: repo.toplevel, cwd: path, parentUncommitted: repo.uncommitted };
	}
	return { path, branch, base: repo.head, repoTop: repo.toplevel, cwd, parentUncommitted: repo.uncommitted };
}

function removeEmptyDir(path: string): void {
	try {
		if (readdirSync(path).length === 0) rmdirSync(path);
	} catch {
		// already gone
	}
}

/** One changed file. */
export interface FileChange {
	/** Path relative to the repository's top level. */
	path: string;
	/** What happened to it. */
	status: "added" | "modified" | "deleted";
	/** Lines added (undefined for a binary file). */
	added?: number;
	/** Lines removed (undefined for a binary file). */
	removed?: number;
}

/** Everything a child changed in its worktree, relative to the commit it started from. */
export interface ChangeSet {
	/** Changed files, sorted by path. */
	files: FileChange[];
	/** `git diff --binary` of all of it (commits, staged, unstaged and untracked files); "" when nothing changed. */
	patch: string;
	/** False when the patch holds bytes that are not UTF-8 (a file in another encoding): it cannot be stored as text. */
	patchIsUtf8: boolean;
	/** Commits the child made on its branch. */
	commits: number;
}

/** Parse `git diff --numstat -z` (no renames): `added\tremoved\tpath\0` per file; "-" marks binary. */
export function parseNumstat(out: string): Map<string, { added?: number; removed?: number }> {
	const map = new Map<string, { added?: number; removed?: number }>();
	for (const record of out.split("\0")) {
		const m = /^(\d+|-)\t(\d+|-)\t([\s\S]+)$/.exec(record.replace(/^\n/, ""));
		if (!m) continue;
		map.set(m[3], { added: m[1] === "-" ? undefined : Number(m[1]), removed: m[2] === "-" ? undefined : Number(m[2]) });
	}
	return map;
}

/** Parse `git diff --name-status -z` (no renames): `S\0path\0` pairs. Type changes count as modified. */
export function parseNameStatus(out: string): Array<{ path: string; status: FileChange["status"] }> {
	const parts = out.split("\0");
	const result: Array<{ path: string; status: FileChange["status"] }> = [];
	for (let i = 0; i + 1 < parts.length; i += 2) {
		const code = parts[i].trim().charAt(0);
		const path = parts[i + 1];
		if (!code || !path) continue;
		result.push({ path, status: code === "A" ? "added" : code === "D" ? "deleted" : "modified" });
	}
	return result;
}

/**
 * What the child changed: its worktree is staged into a temporary copy of its own index (so the worktree's
 * index stays as the child left it) with `git add -A` — untracked files included, ignored ones not — and
 * diffed against the base commit. Throws an Error worded for the model when git fails.
 */
export async function captureChanges(worktree: Worktree, options: GitOptions = {}): Promise<ChangeSet> {
	const filters = await repositoryFilterOverrides(worktree.path, options);
	if (!filters.ok) throw new Error(`cannot collect the child's changes: ${filters.reason}`);
	const config = filters.config;
	const run = (args: string[], env?: Record<string, string>) =>
		runGit(args, { ...options, cwd: worktree.path, env, config });
	const indexPath = await run(["rev-parse", "--path-format=absolute", "--git-path", "index"]);
	if (indexPath.code !== 0) throw new Error(`cannot read the worktree ${worktree.path}: ${gitComplaint(indexPath)}`);
	const scratch = mkdtempSync(join(tmpdir(), "headroom-index-"));
	try {
		const index = join(scratch, "index");
		try {
			const original = indexPath.stdout.trim();
			copyFileSync(original, index);
			// Keep the index's own mtime: git's racy-clean check compares it with each file's, so a file edited in
			// the second of its checkout, to the same size, is still re-read (a fresh mtime would hide that edit).
			const st = statSync(original);
			utimesSync(index, st.atime, st.mtime);
		} catch {
			// No index yet (nothing checked out): git add builds one from scratch.
		}
		const env = { GIT_INDEX_FILE: index };
		const add = await run(["add", "-A", "--", "."], env);
		if (add.code !== 0) throw new Error(`cannot collect the child's changes: ${gitComplaint(add)}`);
		const diff = ["diff", "--cached", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv"];
		const [numstat, names, patch, commits] = await Promise.all([
			run([...diff, "--numstat", "-z", "--end-of-options", worktree.base], env),
			run([...diff, "--name-status", "-z", "--end-of-options", worktree.base], env),
			runGit([...diff, "--binary", "--full-index", "--end-of-options", worktree.base], {
				...options,
				cwd: worktree.path,
				env,
				config,
				bytes: true,
			}),
			run(["rev-list", "--count", "--end-of-options", `${worktree.base}..HEAD`]),
		]);
		for (const r of [numstat, names, patch]) {
			if (r.code !== 0) throw new Error(`cannot diff the child's changes: ${gitComplaint(r)}`);
		}
		const counts = parseNumstat(numstat.stdout);
		const files = parseNameStatus(names.stdout)
			.map((f) => ({ ...f, ...counts.get(f.path) }))
			.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
		const bytes = Buffer.from(patch.stdout, "latin1");
		let text = "";
		let patchIsUtf8 = true;
		try {
			text = STRICT_UTF8.decode(bytes);
		} catch {
			patchIsUtf8 = false;
		}
		return { files, patch: text, patchIsUtf8, commits: commits.code === 0 ? Number(commits.stdout.trim()) || 0 : 0 };
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

/** Remove the worktree and its branch. Throws an Error worded for the model when git refuses. */
export function removeWorktree(worktree: Worktree, options: GitOptions = {}): Promise<void> {
	return oneAtATime(worktree.repoTop, () => removeWorktreeNow(worktree, options));
}

async function removeWorktreeNow(worktree: Worktree, options: GitOptions): Promise<void> {
	const removed = await runGit(["worktree", "remove", "--force", "--end-of-options", worktree.path], {
		...options,
		cwd: worktree.repoTop,
	});
	if (removed.code !== 0 && existsDir(worktree.path)) {
		throw new Error(`git worktree remove failed: ${gitComplaint(removed)}`);
	}
	await runGit(["worktree", "prune"], { ...options, cwd: worktree.repoTop });
	const branch = await runGit(["branch", "-D", "--end-of-options", worktree.branch], {
		...options,
		cwd: worktree.repoTop,
	});
	if (branch.code !== 0 && !/not found/.test(branch.stderr)) {
		throw new Error(`the worktree is gone but its branch ${worktree.branch} stays: ${gitComplaint(branch)}`);
	}
}

function existsDir(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}

/** Whether the worktree's folder is still there (a user may have removed it by hand). */
export function worktreeExists(worktree: Worktree): boolean {
	return existsDir(worktree.path);
}

/**
 * Whether the child's work is already in the parent's working tree: its patch applies in reverse there.
 * (An empty patch is trivially contained.)
 */
export async function patchContainedIn(patchFile: string, repoTop: string, options: GitOptions = {}): Promise<boolean> {
	const check = await runGit(["apply", "--check", "--reverse", "--binary", "--end-of-options", patchFile], {
		...options,
		cwd: repoTop,
	});
	return check.code === 0;
}

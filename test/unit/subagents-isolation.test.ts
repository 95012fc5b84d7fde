/**
 * Worktree isolation against real git: probing (no git, no repository, no commit), creation outside the
 * parent's tree with 0700 folders, capture of every kind of change as one patch that applies in the
 * parent, removal, and the parent's working tree and index left exactly as they were.
 */
import {
	existsSync,
	mkdirSync,
	readFileSync,
	statSync,
	symlinkSync,
	unlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
	captureChanges,
	createWorktree,
	parseNameStatus,
	parseNumstat,
	patchContainedIn,
	probeRepository,
	removeWorktree,
} from "../../extensions/subagents/checkable/isolation.ts";
import { probeOk, useGitCases } from "./subagents-git.ts";

const cases = useGitCases("subagents-isolation");
const git = cases.git;

type Case = ReturnType<typeof fresh>;
function fresh(files: Record<string, string> = { "a.txt": "one\ntwo\nthree\n", "src/b.ts": "export const b = 1;\n" }) {
	const { root, repoDir } = cases.repo(files);
	const agentDir = join(root, "agent");
	mkdirSync(agentDir);
	return { root, repoDir, agentDir, worktrees: join(agentDir, "cache", "headroom", "worktrees") };
}

/** A child's worktree `name` of the case's repository at HEAD, in the case's worktrees folder. */
async function worktreeOf(t: Case, name: string) {
	return createWorktree({ repo: await probeOk(t.repoDir), root: t.worktrees, trustedRoot: t.agentDir, name });
}

const status = (dir: string) => git(dir, ["status", "--porcelain", "--untracked-files=all"]);
const indexBytes = (dir: string) => readFileSync(join(dir, ".git", "index"));

describe("probeRepository", () => {
	it("names the reason: git missing, not a repository, no commit yet", async () => {
		const t = fresh();
		const missing = await probeRepository(t.repoDir, { git: join(t.root, "no-such-git") });
		expect(missing).toEqual({ ok: false, reason: "git is not installed (not found on PATH)" });
		const plain = join(t.root, "plain");
		mkdirSync(plain);
		const outside = await probeRepository(plain);
		expect(outside.ok).toBe(false);
		expect(!outside.ok && outside.reason).toMatch(/is not inside a git repository/);
		const unborn = join(t.root, "unborn");
		mkdirSync(unborn);
		git(unborn, ["init", "--quiet"]);
		const empty = await probeRepository(unborn);
		expect(!empty.ok && empty.reason).toMatch(/has no commit yet \(HEAD is unborn\); commit first/);
	});

	it("reports HEAD, the cwd relative to the top level, and how many uncommitted entries are not carried", async () => {
		const t = fresh();
		writeFileSync(join(t.repoDir, "a.txt"), "changed\n");
		writeFileSync(join(t.repoDir, "new.txt"), "untracked\n");
		// A clean file with a new mtime: a plain `git status` would refresh its stat data and rewrite the index.
		utimesSync(join(t.repoDir, "src", "b.ts"), new Date(), new Date(Date.now() + 5_000));
		const index = indexBytes(t.repoDir);
		const repo = await probeOk(join(t.repoDir, "src"));
		expect(indexBytes(t.repoDir).equals(index)).toBe(true);
		expect(repo.toplevel).toBe(t.repoDir);
		expect(repo.relCwd).toBe("src");
		expect(repo.head).toBe(git(t.repoDir, ["rev-parse", "HEAD"]).trim());
		expect(repo.uncommitted).toBe(2);
	});
});

describe("a child's worktree", () => {
	it("is created from HEAD outside the parent's tree, 0700, on its own branch, mirroring the cwd", async () => {
		const t = fresh();
		writeFileSync(join(t.repoDir, "a.txt"), "parent's uncommitted edit\n");
		const before = { status: status(t.repoDir), index: indexBytes(t.repoDir) };
		const repo = await probeOk(join(t.repoDir, "src"));
		const wt = await createWorktree({ repo, root: t.worktrees, trustedRoot: t.agentDir, name: "sa-1-abc" });
		expect(wt.path).toBe(join(t.worktrees, "sa-1-abc"));
		expect(wt.cwd).toBe(join(wt.path, "src"));
		expect(wt.branch).toBe("headroom/sa-1-abc");
		expect(statSync(wt.path).mode & 0o777).toBe(0o700);
		expect(statSync(t.worktrees).mode & 0o777).toBe(0o700);
		// From HEAD: the parent's uncommitted edit is not carried.
		expect(readFileSync(join(wt.path, "a.txt"), "utf8")).toBe("one\ntwo\nthree\n");
		expect(wt.parentUncommitted).toBe(1);
		expect(git(t.repoDir, ["branch", "--list", wt.branch])).toContain(wt.branch);
		expect(status(t.repoDir)).toBe(before.status);
		expect(indexBytes(t.repoDir).equals(before.index)).toBe(true);
	});

	it("captures edits, deletions, untracked and binary files and commits as one patch that applies in the parent", async () => {
		const t = fresh({ "a.txt": "one\ntwo\nthree\n", "gone.txt": "bye\n", "src/b.ts": "export const b = 1;\n" });
		const before = { status: status(t.repoDir), index: indexBytes(t.repoDir) };
		const wt = await worktreeOf(t, "sa-2-abc");
		writeFileSync(join(wt.path, "a.txt"), "one\nTWO\nthree\nfour\n");
		unlinkSync(join(wt.path, "gone.txt"));
		writeFileSync(join(wt.path, "fresh dir-ü.txt"), "new\nfile\n");
		writeFileSync(join(wt.path, "blob.bin"), Buffer.from([0, 1, 2, 255, 0, 7]));
		writeFileSync(join(wt.path, ".gitignore"), "ignored.log\n");
		writeFileSync(join(wt.path, "ignored.log"), "not part of the work\n");
		mkdirSync(join(wt.path, "src", "deep"), { recursive: true });
		writeFileSync(join(wt.path, "src", "deep", "c.ts"), "export const c = 2;\n");
		git(wt.path, ["add", "src/deep/c.ts"]);
		git(wt.path, ["commit", "--quiet", "--no-gpg-sign", "-m", "child commit"]);
		const childStatus = status(wt.path);
		const changes = await captureChanges(wt);
		expect(changes.commits).toBe(1);
		expect(changes.files).toEqual([
			{ path: ".gitignore", status: "added", added: 1, removed: 0 },
			{ path: "a.txt", status: "modified", added: 2, removed: 1 },
			{ path: "blob.bin", status: "added", added: undefined, removed: undefined },
			{ path: "fresh dir-ü.txt", status: "added", added: 2, removed: 0 },
			{ path: "gone.txt", status: "deleted", added: 0, removed: 1 },
			{ path: "src/deep/c.ts", status: "added", added: 1, removed: 0 },
		]);
		expect(changes.patch).not.toContain("not part of the work");
		expect(changes.patchIsUtf8).toBe(true);
		// The capture staged into a scratch index: the child's own status is what it left.
		expect(status(wt.path)).toBe(childStatus);
		// The parent's tree and index are exactly as before.
		expect(status(t.repoDir)).toBe(before.status);
		expect(indexBytes(t.repoDir).equals(before.index)).toBe(true);
		const patchFile = join(t.root, "child.patch");
		writeFileSync(patchFile, changes.patch);
		git(t.repoDir, ["apply", "--check", patchFile]);
		expect(await patchContainedIn(patchFile, t.repoDir)).toBe(false);
		git(t.repoDir, ["apply", patchFile]);
		expect(readFileSync(join(t.repoDir, "blob.bin")).equals(Buffer.from([0, 1, 2, 255, 0, 7]))).toBe(true);
		expect(await patchContainedIn(patchFile, t.repoDir)).toBe(true);
	});

	it("reports no change for an untouched worktree, and removal takes the folder and the branch", async () => {
		const t = fresh();
		const wt = await worktreeOf(t, "sa-3-abc");
		expect(await captureChanges(wt)).toEqual({ files: [], patch: "", patchIsUtf8: true, commits: 0 });
		await removeWorktree(wt);
		expect(existsSync(wt.path)).toBe(false);
		expect(git(t.repoDir, ["branch", "--list", wt.branch]).trim()).toBe("");
		expect(git(t.repoDir, ["worktree", "list", "--porcelain"])).not.toContain(wt.path);
	});

	it("an edit right after checkout that keeps the file's size is still seen (git's racy-clean check)", async () => {
		const t = fresh({ "a.txt": "alpha\n" });
		const wt = await worktreeOf(t, "sa-9-abc");
		// Same size, and the same mtime (to the second) git recorded at checkout: only the racy-clean check sees it,
		// which needs the index's own mtime; a second later, a fresh copy of the index would hide the edit.
		const recorded = /mtime: (\d+):/.exec(git(wt.path, ["ls-files", "--debug", "a.txt"]))![1];
		writeFileSync(join(wt.path, "a.txt"), "fixed\n");
		utimesSync(join(wt.path, "a.txt"), Number(recorded), Number(recorded));
		await new Promise((r) => setTimeout(r, 1100));
		const changes = await captureChanges(wt);
		expect(changes.files).toEqual([{ path: "a.txt", status: "modified", added: 1, removed: 1 }]);
	});

	it("a change in another encoding is reported as a patch that is not UTF-8, never mangled", async () => {
		const t = fresh();
		const wt = await worktreeOf(t, "sa-8-abc");
		writeFileSync(join(wt.path, "latin1.txt"), Buffer.from("caf\xe9\n", "latin1"));
		const changes = await captureChanges(wt);
		expect(changes.files).toEqual([{ path: "latin1.txt", status: "added", added: 1, removed: 0 }]);
		expect(changes.patchIsUtf8).toBe(false);
		expect(changes.patch).toBe("");
	});

	it("parallel worktrees never see each other's edits", async () => {
		const t = fresh();
		const repo = await probeOk(t.repoDir);
		const [one, two] = await Promise.all(
			["sa-4-abc", "sa-5-abc"].map((name) =>
				createWorktree({ repo, root: t.worktrees, trustedRoot: t.agentDir, name }),
			),
		);
		writeFileSync(join(one.path, "one.txt"), "1\n");
		writeFileSync(join(two.path, "a.txt"), "rewritten\n");
		const [c1, c2] = await Promise.all([captureChanges(one), captureChanges(two)]);
		expect(c1.files.map((f) => f.path)).toEqual(["one.txt"]);
		expect(c2.files.map((f) => f.path)).toEqual(["a.txt"]);
		expect(existsSync(join(two.path, "one.txt"))).toBe(false);
		expect(status(t.repoDir)).toBe("");
	});

	it("a failing git worktree add (branch taken) throws git's reason and leaves no folder", async () => {
		const t = fresh();
		git(t.repoDir, ["branch", "headroom/sa-6-abc"]);
		const repo = await probeOk(t.repoDir);
		await expect(
			createWorktree({ repo, root: t.worktrees, trustedRoot: t.agentDir, name: "sa-6-abc" }),
		).rejects.toThrow(/git worktree add failed: .*already exists/);
		expect(existsSync(join(t.worktrees, "sa-6-abc"))).toBe(false);
	});

	it("refuses a symlink on the way to the worktrees folder, and a name that is not plain", async () => {
		const t = fresh();
		const elsewhere = join(t.root, "elsewhere");
		mkdirSync(elsewhere);
		mkdirSync(join(t.agentDir, "cache"));
		symlinkSync(elsewhere, join(t.agentDir, "cache", "headroom"));
		const repo = await probeOk(t.repoDir);
		await expect(createWorktree({ repo, root: t.worktrees, trustedRoot: t.agentDir, name: "sa-7" })).rejects.toThrow(
			/is a symlink; refusing to follow it/,
		);
		await expect(
			createWorktree({ repo, root: join(t.root, "w"), trustedRoot: t.root, name: "../escape" }),
		).rejects.toThrow(/invalid worktree name/);
	});
});

describe("git output parsers", () => {
	it("numstat marks binary files, name-status maps A/M/D/T", () => {
		expect(parseNumstat("3\t1\ta.txt\0-\t-\tb.bin\0")).toEqual(
			new Map([
				["a.txt", { added: 3, removed: 1 }],
				["b.bin", { added: undefined, removed: undefined }],
			]),
		);
		expect(parseNameStatus("A\0x\0M\0y\0D\0z\0T\0w\0")).toEqual([
			{ path: "x", status: "added" },
			{ path: "y", status: "modified" },
			{ path: "z", status: "deleted" },
			{ path: "w", status: "modified" },
		]);
	});
});

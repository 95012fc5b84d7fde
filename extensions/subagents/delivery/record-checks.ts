/**
 * Records read back from a session file are input, never instructions: a session file can be edited, or come
 * from someone else. A worktree record reaches `git diff`, `git worktree remove --force` and `git branch -D`,
 * so it is checked as strictly as the package's own worktrees are made: `base` a full commit id, `branch`
 * the package's own prefix and a safe name, `path` exactly that name under the package's worktrees folder
 * (a real directory of this user, no symlink, when it exists), `cwd` inside it. A result's text must be a
 * string. A record that fails is "damaged": the part that failed is dropped and the result says so.
 */
import { lstatSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { Compile } from "typebox/compile";
import { BRANCH_PREFIX, SAFE_NAME } from "../checkable/isolation.ts";
import type { Worktree } from "../domain/result-extras.ts";

/** A full commit id: SHA-1 (40 hex digits) or SHA-256 (64). */
const COMMIT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export type WorktreeCheck = { ok: true; worktree: Worktree } | { ok: false; problem: string };

function inside(root: string, path: string): boolean {
	const rel = relative(root, path);
	return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

function realOrSelf(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return path;
	}
}

/** Check a worktree record against the package's worktrees folder `root`; the problem is worded for the reader. */
export function checkWorktreeRecord(w: unknown, root: string): WorktreeCheck {
	if (!w || typeof w !== "object") return { ok: false, problem: "it is not an object" };
	const o = w as Record<string, unknown>;
	for (const key of ["path", "branch", "base", "repoTop", "cwd"]) {
		if (typeof o[key] !== "string") return { ok: false, problem: `its ${key} is not a string` };
	}
	if (typeof o.parentUncommitted !== "number" || !Number.isFinite(o.parentUncommitted))
		return { ok: false, problem: "its parentUncommitted is not a number" };
	const { path, branch, base, repoTop, cwd } = o as unknown as Worktree;
	if (!COMMIT_ID.test(base)) return { ok: false, problem: `its base ${JSON.stringify(base)} is not a commit id` };
	const name = branch.startsWith(BRANCH_PREFIX) ? branch.slice(BRANCH_PREFIX.length) : "";
	if (!SAFE_NAME.test(name))
		return {
			ok: false,
			problem: `its branch ${JSON.stringify(branch)} is not one of this package's (${BRANCH_PREFIX}…)`,
		};
	if (!isAbsolute(repoTop))
		return { ok: false, problem: `its repoTop ${JSON.stringify(repoTop)} is not an absolute path` };
	const expected = join(root, name);
	if (path !== expected && resolve(path) !== expected)
		return {
			ok: false,
			problem: `its path ${JSON.stringify(path)} is not ${expected} (this package's worktrees folder)`,
		};
	if (!inside(expected, resolve(cwd)))
		return { ok: false, problem: `its cwd ${JSON.stringify(cwd)} is not inside ${expected}` };
	let st: ReturnType<typeof lstatSync> | undefined;
	try {
		st = lstatSync(expected, { throwIfNoEntry: false });
	} catch (error) {
		return { ok: false, problem: `its path cannot be checked (${(error as Error).message})` };
	}
	if (st) {
		const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
		if (st.isSymbolicLink() || !st.isDirectory()) return { ok: false, problem: `${expected} is not a real directory` };
		if (uid !== undefined && st.uid !== uid) return { ok: false, problem: `${expected} is owned by another user` };
		// The folder itself must not lie elsewhere through a symlinked parent.
		if (realpathSync(expected) !== join(realOrSelf(root), name))
			return { ok: false, problem: `${expected} resolves outside the worktrees folder` };
	}
	return {
		ok: true,
		worktree: {
			path: expected,
			branch,
			base,
			repoTop: resolve(repoTop),
			cwd: resolve(cwd),
			parentUncommitted: o.parentUncommitted as number,
		},
	};
}

/** A result's text from a record: a string, absent (stored elsewhere), or damaged (anything else). */
export type TextCheck = { ok: true; text: string | undefined } | { ok: false; problem: string };

export function checkRecordText(text: unknown): TextCheck {
	if (text === undefined) return { ok: true, text: undefined };
	if (typeof text === "string") return { ok: true, text };
	return {
		ok: false,
		problem: `its result text is ${text === null ? "null" : Array.isArray(text) ? "an array" : typeof text === "object" ? "an object" : `a ${typeof text}`}, not a string`,
	};
}

const spawnValidators = new WeakMap<object, ReturnType<typeof Compile>>();

/**
 * Why recorded spawn parameters fail the spawn tool's own parameter schema (what Pi checks a fresh call
 * against), or undefined when they pass; the spawn tool's own checks and caps then run as for a fresh call.
 */
export function recordedSpawnProblem(schema: object, params: unknown): string | undefined {
	if (!params || typeof params !== "object" || Array.isArray(params)) return "not an object";
	let validator = spawnValidators.get(schema);
	if (!validator) {
		validator = Compile(schema as Parameters<typeof Compile>[0]);
		spawnValidators.set(schema, validator);
	}
	if (validator.Check(params)) return undefined;
	for (const e of validator.Errors(params) as Iterable<{ instancePath?: string; message?: string }>) {
		return `${e.instancePath || "(root)"}: ${e.message ?? "invalid"}`;
	}
	return "invalid";
}

/**
 * The one way the subagents extension runs git: asynchronously, bounded in output and time, without hooks,
 * pagers, prompts or user settings that would change its output (the worktree isolation depends on a
 * patch format nobody's config can alter). A failure is a result, never a throw; callers word it.
 */
import { execFile } from "node:child_process";

/** Largest output one git call may produce (a patch), in bytes; larger fails that capture with a clear error. */
export const GIT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024;
/** How long one git call may take, in milliseconds (a worktree of a huge repository takes a while). */
export const GIT_TIMEOUT_MS = 120_000;
/** A git invocation's outcome (never thrown: callers word the failure). */
export interface GitResult {
	/** Exit code; null when git could not be started at all. */
	code: number | null;
	stdout: string;
	stderr: string;
	/** Set when git could not be started (e.g. ENOENT: not installed). */
	spawnError?: string;
}

/** Runs git; the command is a parameter so tests can point at a missing binary. */
export interface GitOptions {
	/** The git executable (default "git", found on PATH). */
	git?: string;
}

/** Settings that keep git quiet and its patch format fixed whatever the user's config says. */
const FIXED_CONFIG = [
	"-c",
	"core.hooksPath=/dev/null",
	"-c",
	"diff.noprefix=false",
	"-c",
	"diff.mnemonicPrefix=false",
	"-c",
	"diff.relative=false",
	"-c",
	"core.quotePath=false",
	"-c",
	"color.ui=false",
];

/** The environment git runs with: no inherited repository overrides, no prompts, no pager. */
function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	// GIT_OPTIONAL_LOCKS=0: `git status` in the parent's repository must not refresh (rewrite) its index.
	const env: NodeJS.ProcessEnv = {
		...process.env,
		GIT_TERMINAL_PROMPT: "0",
		GIT_PAGER: "cat",
		GIT_OPTIONAL_LOCKS: "0",
		LC_ALL: "C",
	};
	for (const key of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX"]) delete env[key];
	return { ...env, ...extra };
}

/** Run git; with `bytes`, stdout is kept byte for byte as a latin1 string (one char per byte). */
export function runGit(
	args: string[],
	options: GitOptions & { cwd: string; env?: Record<string, string>; bytes?: boolean },
): Promise<GitResult> {
	return new Promise((resolvePromise) => {
		execFile(
			options.git ?? "git",
			[...FIXED_CONFIG, ...args],
			{
				cwd: options.cwd,
				env: gitEnv(options.env),
				maxBuffer: GIT_MAX_OUTPUT_BYTES,
				timeout: GIT_TIMEOUT_MS,
				encoding: options.bytes ? "latin1" : "utf8",
				windowsHide: true,
			},
			(error, stdout, stderr) => {
				const e = error as (NodeJS.ErrnoException & { code?: number | string; killed?: boolean }) | null;
				if (e && typeof e.code === "string") {
					resolvePromise({ code: null, stdout: "", stderr: String(stderr ?? ""), spawnError: e.code });
					return;
				}
				const code = e ? (typeof e.code === "number" ? e.code : 1) : 0;
				const killed = e?.killed ? `\n(git was stopped after ${GIT_TIMEOUT_MS / 1000} s)` : "";
				resolvePromise({ code, stdout: String(stdout ?? ""), stderr: String(stderr ?? "") + killed });
			},
		);
	});
}

/** First lines of git's complaint, for an error the model reads. */
export function gitComplaint(result: GitResult, maxLines = 3): string {
	if (result.spawnError) return `git could not be started (${result.spawnError})`;
	const lines = result.stderr
		.split("\n")
		.map((l) => l.trim())
		.filter(Boolean);
	return lines.slice(0, maxLines).join(" ") || `git exited with code ${result.code}`;
}

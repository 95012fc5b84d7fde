/**
 * The one way the subagents extension runs git: asynchronously, bounded in output and time, without hooks,
 * pagers, prompts or user settings that would change its output (the worktree isolation depends on a
 * patch format nobody's config can alter). A failure is a result, never a throw; callers word it.
 *
 * A child in a worktree shares the repository's `.git/config` and can write it. So no git run of the package
 * executes a program named there: hooks and `core.fsmonitor` are switched off on every call (the command
 * line wins over every config file), external diff and textconv drivers are off where a diff is made, and
 * the filter drivers the repository's own config defines are emptied where files are checked out or staged
 * (repositoryFilterOverrides). Callers put `--end-of-options` before any argument that comes from a record.
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
	"core.fsmonitor=false",
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
	options: GitOptions & { cwd: string; env?: Record<string, string>; bytes?: boolean; config?: string[] },
): Promise<GitResult> {
	return new Promise((resolvePromise) => {
		execFile(
			options.git ?? "git",
			[...FIXED_CONFIG, ...(options.config ?? []), ...args],
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

/** A filter driver's settings that make git run a program (`filter.<driver>.<key>`). */
const FILTER_KEY = /^filter\.(.+)\.(clean|smudge|process|required)$/i;

/** What repositoryFilterOverrides found: `-c` arguments that empty the drivers, or why it refuses. */
export type FilterOverrides = { ok: true; config: string[] } | { ok: false; reason: string };

/**
 * `-c` arguments that switch off every filter driver defined in the repository's own config (local or
 * worktree scope: the files a child working in a worktree can write), so a `git add` or a checkout the
 * package runs never executes a program a child put there. Drivers from the user's global or system config
 * (git-lfs, say) stay as they are. A driver name git's `-c` cannot carry (it holds "=") is refused.
 */
export async function repositoryFilterOverrides(cwd: string, options: GitOptions = {}): Promise<FilterOverrides> {
	const listed = await runGit(["config", "--list", "--show-scope", "-z"], { ...options, cwd });
	if (listed.code !== 0) return { ok: false, reason: `cannot read the repository's config: ${gitComplaint(listed)}` };
	const drivers = new Set<string>();
	const fields = listed.stdout.split("\0");
	for (let i = 0; i + 1 < fields.length; i += 2) {
		const scope = fields[i];
		const key = fields[i + 1].split("\n", 1)[0];
		const m = FILTER_KEY.exec(key);
		if (m && (scope === "local" || scope === "worktree")) drivers.add(m[1]);
	}
	const config: string[] = [];
	for (const driver of drivers) {
		if (driver.includes("="))
			return {
				ok: false,
				reason: `the repository's config names a filter driver ${JSON.stringify(driver)} that cannot be switched off`,
			};
		const k = `filter.${driver}`;
		config.push("-c", `${k}.clean=`, "-c", `${k}.smudge=`, "-c", `${k}.process=`, "-c", `${k}.required=false`);
	}
	return { ok: true, config };
}

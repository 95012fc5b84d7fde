/**
 * Where a session's trajectory files go and how they are written.
 *
 * Location: a folder `<session file name>.handoffs/` beside the session file. Pi keeps every session of
 * a working directory in one folder, so the file names (`trajectory.summarization-<n>-*.json`)
 * written flat beside the session files would collide between sessions; the per-session folder keeps the
 * names exact and unique. A session with no file writes under the package cache instead:
 * `<agentDir>/cache/headroom/handoffs/<session id>/`, whose kind folder the artifact store creates
 * through its checked, no-symlink steps.
 *
 * Safety: the per-session folder is the artifact store's private directory (ensurePrivateDir: created
 * 0700, never through a symlink, never someone else's);
 * files are 0600, written whole under a temp name (exclusive create, O_NOFOLLOW), fsynced and then hard-linked
 * to their name, which never replaces an existing file; the folder is re-checked before the link so a swap
 * mid-write is caught. A failure is returned, never thrown.
 */
import { randomBytes } from "node:crypto";
import {
	closeSync,
	constants,
	fchmodSync,
	fsyncSync,
	linkSync,
	lstatSync,
	openSync,
	readdirSync,
	rmdirSync,
	type Stats,
	unlinkSync,
	writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { ensurePrivateDir } from "../shared/store/artifact-store.ts";
import type { DirCheck } from "../shared/store/list.ts";
import { errorText } from "../shared/text/format.ts";
import type { HandoffStep } from "./handoff.ts";
import type { TrajectoryFile } from "./trajectory.ts";

/** File mode: owner read/write only (the folder is the store's private directory: 0700). */
export const TRAJECTORY_FILE_MODE = 0o600;
/** Suffix of the per-session folder beside the session file. */
export const BESIDE_SESSION_SUFFIX = ".handoffs";

/** A parent folder that was checked (or why it could not be). */
export type ParentDir = { ok: true; dir: string } | { ok: false; error: string };

/** Where one session's trajectories go: a checked parent folder and the per-session folder name in it. */
export interface TrajectoryTarget {
	/** Returns the parent folder, creating it if needed (beside: the session file's folder; cache: the kind folder). */
	parent: () => ParentDir;
	/** The per-session folder's name inside the parent (never a path). */
	name: string;
}

/** Session ids are Pi's; anything else is reduced to a safe folder name. */
export function safeName(id: string): string {
	return /^[A-Za-z0-9._-]{1,128}$/.test(id) && id !== "." && id !== ".."
		? id
		: id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 128) || "session";
}

/**
 * The target of a session: beside its file when it has one, else under `cacheKindDir` (the store's
 * checked creation of `<agentDir>/cache/headroom/handoffs`).
 */
export function trajectoryTarget(
	sessionFile: string | undefined,
	sessionId: string,
	cacheKindDir: () => ParentDir,
): TrajectoryTarget {
	if (sessionFile) return { parent: () => ({ ok: true, dir: dirname(sessionFile) }), name: besideName(sessionFile) };
	return { parent: cacheKindDir, name: safeName(sessionId) };
}

function besideName(sessionFile: string): string {
	return safeName(`${basename(sessionFile, ".jsonl")}${BESIDE_SESSION_SUFFIX}`);
}

/** The per-session folder's path (pure; for reading the highest index and for the details). */
export function trajectoryDir(sessionFile: string | undefined, cacheHandoffsDir: string, sessionId: string): string {
	if (sessionFile) return join(dirname(sessionFile), besideName(sessionFile));
	return join(cacheHandoffsDir, safeName(sessionId));
}

/** Highest summarization index already present in `names`. */
export function highestIndex(names: string[]): number {
	let max = 0;
	for (const name of names) {
		const m = /^trajectory\.summarization-(\d+)-(summary|questions|answers)\.json$/.exec(name);
		if (m) max = Math.max(max, Number(m[1]));
	}
	return max;
}

function lstatOrNull(path: string): Stats | null {
	try {
		return lstatSync(path);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
		throw error;
	}
}

/** Highest index found in `dir` (0 when it does not exist or is not a plain folder: never listed through a symlink). */
export function highestIndexIn(dir: string): number {
	try {
		const st = lstatOrNull(dir);
		return st?.isDirectory() ? highestIndex(readdirSync(dir)) : 0;
	} catch {
		return 0;
	}
}

/** A written file or why it was not written. */
export type WriteResult = { ok: true; path: string; label: string; step: HandoffStep } | { ok: false; error: string };

/** A trajectory folder beside a session file that is gone is removed once its newest file is this old (ms). */
export const ORPHAN_MIN_AGE_MS = 60 * 60 * 1000;
const PRUNED_DIRS = Symbol.for("pi-context-headroom.trajectory-orphans-pruned");

/**
 * Trajectory folders beside session files are covered by pruning: in `dir` (a folder of session files), every
 * `<name>.handoffs` folder whose `<name>.jsonl` no longer exists (the session was deleted), that is a real folder
 * of this user holding only regular `.json` files, none younger than ORPHAN_MIN_AGE_MS, is removed. Returns
 * the folders removed; never throws.
 */
export function pruneOrphanTrajectories(dir: string, now = Date.now()): string[] {
	const removed: string[] = [];
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		return removed;
	}
	const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
	for (const name of names) {
		if (
			!name.endsWith(BESIDE_SESSION_SUFFIX) ||
			names.includes(`${name.slice(0, -BESIDE_SESSION_SUFFIX.length)}.jsonl`)
		)
			continue;
		const folder = join(dir, name);
		try {
			const st = lstatSync(folder);
			if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
			const files = readdirSync(folder);
			const stats = files.map((f) => lstatSync(join(folder, f)));
			if (files.some((f, i) => !f.endsWith(".json") || !stats[i].isFile())) continue;
			if (stats.some((s) => now - s.mtimeMs < ORPHAN_MIN_AGE_MS) || now - st.mtimeMs < ORPHAN_MIN_AGE_MS) continue;
			for (const f of files) unlinkSync(join(folder, f));
			rmdirSync(folder);
			removed.push(folder);
		} catch {
			// changed while looking, or not ours to remove: left alone
		}
	}
	return removed;
}

/** Once per process and folder of session files: the orphaned trajectory folders in it go. */
function pruneOrphansOnce(dir: string): void {
	const g = globalThis as unknown as Record<symbol, Set<string> | undefined>;
	g[PRUNED_DIRS] ??= new Set();
	if (g[PRUNED_DIRS].has(dir)) return;
	g[PRUNED_DIRS].add(dir);
	pruneOrphanTrajectories(dir);
}

/** Write each file (0600, exclusive create, no symlink following); failures are returned, not thrown. */
export function writeTrajectories(target: TrajectoryTarget, files: TrajectoryFile[]): WriteResult[] {
	let checked: DirCheck;
	try {
		const parent = target.parent();
		if (parent.ok && target.name.endsWith(BESIDE_SESSION_SUFFIX)) pruneOrphansOnce(parent.dir);
		checked = parent.ok ? ensurePrivateDir(parent.dir, target.name) : parent;
	} catch (error) {
		checked = { ok: false, error: errorText(error) };
	}
	if (!checked.ok) {
		const msg = checked.error;
		return files.map(() => ({ ok: false as const, error: msg }));
	}
	const { dir, dev, ino } = checked;
	return files.map((file): WriteResult => {
		const path = join(dir, file.fileName);
		// Written whole under a temp name (".json", so the folder stays one the store's prune recognizes), fsynced,
		// then linked to its name, which never replaces a file: a crash leaves the old state or the whole file.
		const temp = join(dir, `.tmp-${process.pid}-${randomBytes(8).toString("hex")}.json`);
		try {
			const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
			const fd = openSync(temp, flags, TRAJECTORY_FILE_MODE);
			try {
				fchmodSync(fd, TRAJECTORY_FILE_MODE); // open's mode is reduced by the umask
				writeSync(fd, `${JSON.stringify(file.trajectory, null, 2)}\n`);
				fsyncSync(fd);
			} finally {
				closeSync(fd);
			}
			const now = lstatOrNull(dir);
			if (!now || now.isSymbolicLink() || now.dev !== dev || now.ino !== ino) {
				throw new Error(`${dir} changed while writing; not storing`);
			}
			linkSync(temp, path); // EEXIST when the name is taken: never overwritten
			return { ok: true, path, label: file.label, step: file.step };
		} catch (error) {
			return { ok: false, error: `${path}: ${errorText(error)}` };
		} finally {
			try {
				unlinkSync(temp);
			} catch {
				// never created, or already gone
			}
		}
	});
}

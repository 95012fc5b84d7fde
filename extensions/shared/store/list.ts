/**
 * Listing, stats and pruning of the artifact store (artifact-store.ts owns the directory checks and
 * puts). Besides `<sha256>.txt` artifacts, the `handoffs` kind holds per-session trajectory folders
 * (`handoffs/<session-id>/*.json`, written by the handoff extension): they are counted and pruned as
 * one unit each, by the same age and size rules. Nothing is followed through a symlink; a folder
 * holding anything but regular *.json files is not ours to judge and is left alone.
 */
import { join } from "node:path";
import type { ArtifactKind } from "./artifact-store.ts";
import { type Step, type StepStats, fsStep as step } from "./fs-steps.ts";

/** A temp file untouched this long (ms) belongs to a killed writer and may be removed by prune. */
export const STALE_TEMP_MS = 60 * 60 * 1000;
export const DEFAULT_PRUNE_MAX_AGE_DAYS = 30;
/** Default cap of the whole store, in bytes (1 GiB). */
export const DEFAULT_PRUNE_MAX_TOTAL_BYTES = 1024 * 1024 * 1024;
/** Files younger than this (hours) are never pruned: a footer may have just pointed at them. */
export const DEFAULT_PRUNE_MIN_AGE_HOURS = 24;
/** The artifact kind whose per-session trajectory folders are listed too. */
export const TRAJECTORY_KIND: ArtifactKind = "handoffs";
export const ARTIFACT_NAME = /^[0-9a-f]{64}\.txt$/;
export const TEMP_NAME = /^\.tmp-[0-9]+-[0-9a-f]+\.part$/;
/** A per-session folder name (the handoff writer's safe session id). */
export const SESSION_FOLDER_NAME = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/;
/** Files a trajectory folder may hold. */
const TRAJECTORY_FILE_NAME = /\.json$/;
const HOUR_MS = 60 * 60 * 1000;

/** The checked kind directory (dev/ino as checked), or why it cannot be used. */
export type DirCheck = { ok: true; dir: string; dev: number; ino: number } | { ok: false; error: string };
/** Checks one kind directory without creating it. */
export type KindCheck = (kind: ArtifactKind) => Step<DirCheck>;

/** One prunable unit: an artifact file, or a per-session trajectory folder. */
export interface StoreEntry {
	/** Absolute path of the file or folder. */
	path: string;
	/** Kind directory it lives in. */
	kind: ArtifactKind;
	/** Bytes of the file, or of all files in the folder. */
	bytes: number;
	/** Last change in ms: a folder's newest file or the folder itself, whichever is younger. */
	mtimeMs: number;
	/** Files it holds: 1 for an artifact, the trajectory files for a folder. */
	files: number;
	/** Set for a folder: its identity when listed, so a swapped-in folder or symlink is never touched. */
	folder?: { dev: number; ino: number };
}

/** What a listing found. */
export interface StoreListing {
	/** Artifacts and trajectory folders. */
	entries: StoreEntry[];
	/** Temp files of writers (live or killed). */
	temps: Array<{ path: string; bytes: number; mtimeMs: number }>;
	/** Directories skipped because they are unsafe or unreadable. */
	problems: string[];
}

function errorText(error: unknown): string {
	const e = error as { message?: unknown } | undefined;
	return e && typeof e.message === "string" ? e.message : String(error);
}

/**
 * A trajectory folder as one entry, or undefined when it holds anything but regular *.json files
 * (symlinks and subfolders included): then it is not ours to count or remove.
 */
function* trajectoryFolder(path: string, st: StepStats): Step<StoreEntry | undefined> {
	const names = yield* step.quietly(step.readdir(path));
	if (!names) return undefined;
	let bytes = 0;
	let mtimeMs = st.mtimeMs;
	for (const name of names) {
		if (!TRAJECTORY_FILE_NAME.test(name)) return undefined;
		const file = yield* step.quietly(step.lstat(join(path, name)));
		if (!file?.isFile()) return undefined;
		bytes += file.size;
		mtimeMs = Math.max(mtimeMs, file.mtimeMs);
	}
	return { path, kind: TRAJECTORY_KIND, bytes, mtimeMs, files: names.length, folder: { dev: st.dev, ino: st.ino } };
}

/** Every artifact, trajectory folder and temp file under the checked kind directories. */
export function* listStore(kinds: readonly ArtifactKind[], check: KindCheck, dirFor: (k: ArtifactKind) => string) {
	const listing: StoreListing = { entries: [], temps: [], problems: [] };
	for (const kind of kinds) {
		const dir = yield* step.quietly(check(kind));
		if (!dir) {
			listing.problems.push(`cannot check ${dirFor(kind)}`);
			continue;
		}
		if (!dir.ok) {
			if (!dir.error.endsWith("does not exist")) listing.problems.push(dir.error);
			continue;
		}
		try {
			for (const name of yield* step.readdir(dir.dir)) {
				const isArtifact = ARTIFACT_NAME.test(name);
				const isTemp = !isArtifact && TEMP_NAME.test(name);
				const isFolder = kind === TRAJECTORY_KIND && !isArtifact && !isTemp && SESSION_FOLDER_NAME.test(name);
				if (!isArtifact && !isTemp && !isFolder) continue;
				const path = join(dir.dir, name);
				const st = yield* step.lstat(path);
				if (!st || st.isSymbolicLink()) continue; // never follow or count a planted symlink
				if (isFolder) {
					const folder = st.isDirectory() ? yield* trajectoryFolder(path, st) : undefined;
					if (folder) listing.entries.push(folder);
				} else if (!st.isFile()) continue;
				else if (isArtifact) listing.entries.push({ path, kind, bytes: st.size, mtimeMs: st.mtimeMs, files: 1 });
				else listing.temps.push({ path, bytes: st.size, mtimeMs: st.mtimeMs });
			}
		} catch (error) {
			listing.problems.push(`cannot list ${dir.dir}: ${errorText(error)}`);
		}
	}
	return listing;
}

/** The store's size as /headroom shows it. */
export interface StoreStats {
	/** Artifact files, trajectory files included. */
	count: number;
	/** Their bytes. */
	bytes: number;
	/** The youngest entry (a trajectory folder stands for its files). */
	newest?: { path: string; mtimeMs: number };
	/** Count and bytes per kind. */
	byKind: Record<string, { count: number; bytes: number }>;
	/** Directories skipped because they are unsafe (a symlink, not a directory, foreign owner). */
	problems?: string[];
}

export function statsOf(kinds: readonly ArtifactKind[], listing: StoreListing): StoreStats {
	const byKind: Record<string, { count: number; bytes: number }> = {};
	for (const kind of kinds) byKind[kind] = { count: 0, bytes: 0 };
	let count = 0;
	let bytes = 0;
	let newest: { path: string; mtimeMs: number } | undefined;
	for (const e of listing.entries) {
		count += e.files;
		bytes += e.bytes;
		byKind[e.kind].count += e.files;
		byKind[e.kind].bytes += e.bytes;
		if (!newest || e.mtimeMs > newest.mtimeMs) newest = { path: e.path, mtimeMs: e.mtimeMs };
	}
	const problems = listing.problems;
	return { count, bytes, newest, byKind, ...(problems.length > 0 ? { problems } : {}) };
}

/** Prune bounds; missing or invalid values take the defaults above. */
export interface PruneOptions {
	/** Entries older than this are removed. */
	maxAgeDays?: number;
	/** Oldest entries are removed until the store is at most this size. */
	maxTotalBytes?: number;
	/** Entries younger than this are never removed. */
	minAgeHours?: number;
}

/** Remove a trajectory folder only if it is still the same folder holding only old *.json files. */
function* removeFolder(e: StoreEntry): Step<boolean> {
	const st = yield* step.quietly(step.lstat(e.path));
	if (!st?.isDirectory() || st.dev !== e.folder?.dev || st.ino !== e.folder.ino) return false;
	const again = yield* trajectoryFolder(e.path, st);
	if (!again || again.mtimeMs > e.mtimeMs) return false; // written to since it was listed: keep it
	for (const name of (yield* step.quietly(step.readdir(e.path))) ?? []) {
		yield* step.quietly(step.unlink(join(e.path, name)));
	}
	return (yield* step.quietly(step.rmdir(e.path))) === true;
}

/** Remove a file only if it is still the same old regular file: a put may have just reused (touched) it. */
function* removeFile(f: { path: string; mtimeMs: number }): Step<boolean> {
	const st = yield* step.quietly(step.lstat(f.path));
	if (!st?.isFile() || st.mtimeMs !== f.mtimeMs) return false;
	return (yield* step.quietly(step.unlink(f.path))) === true;
}

/** Stale temps, then entries past the age limit, then the oldest until under the size cap; never the young. */
export function* pruneListing(
	listing: StoreListing,
	opts: PruneOptions,
	now: number,
): Step<{ removed: number; freedBytes: number }> {
	const num = (v: unknown, fallback: number) => (typeof v === "number" && v >= 0 && !Number.isNaN(v) ? v : fallback);
	const minAgeMs = num(opts.minAgeHours, DEFAULT_PRUNE_MIN_AGE_HOURS) * HOUR_MS;
	const maxAgeMs = Math.max(minAgeMs, num(opts.maxAgeDays, DEFAULT_PRUNE_MAX_AGE_DAYS) * 24 * HOUR_MS);
	const maxTotal = num(opts.maxTotalBytes, DEFAULT_PRUNE_MAX_TOTAL_BYTES);
	let removed = 0;
	let freedBytes = 0;
	const remove = function* (e: StoreEntry): Step<boolean> {
		if (!(e.folder ? yield* removeFolder(e) : yield* removeFile(e))) return false;
		removed += e.files;
		freedBytes += e.bytes;
		return true;
	};
	for (const t of listing.temps) {
		if (now - t.mtimeMs > STALE_TEMP_MS && (yield* removeFile(t))) {
			removed++;
			freedBytes += t.bytes;
		}
	}
	const kept: StoreEntry[] = [];
	for (const e of [...listing.entries].sort((a, b) => a.mtimeMs - b.mtimeMs)) {
		if (now - e.mtimeMs > maxAgeMs && (yield* remove(e))) continue;
		kept.push(e);
	}
	let total = kept.reduce((sum, e) => sum + e.bytes, 0);
	for (const e of kept) {
		if (total <= maxTotal || now - e.mtimeMs < minAgeMs) break; // oldest first; the rest are younger
		if (yield* remove(e)) total -= e.bytes;
	}
	return { removed, freedBytes };
}

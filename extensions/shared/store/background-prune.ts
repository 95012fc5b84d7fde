/**
 * Bounded growth of the artifact store without depending on any one extension: every extension of the
 * package that writes artifacts calls scheduleBackgroundPrune at session start. The prune then runs
 * at most once per process (whichever extension asks first; module copies share one flag on
 * globalThis, since Pi may load each extension with its own module instance) and at most once per
 * PRUNE_INTERVAL_MS across processes (a marker file in the store root, claimed before pruning), off the
 * hot path (a delayed, unref'd timer that never keeps the process alive). Two processes that claim a stale
 * slot at the same moment both prune; that is harmless, pruning is safe to run concurrently.
 */
import { closeSync, constants, fchmodSync, fstatSync, futimesSync, lstatSync, openSync } from "node:fs";
import { join } from "node:path";
import { ArtifactStore } from "./artifact-store.ts";
import type { PruneOptions } from "./list.ts";
import { setWriteCap } from "./write-cap.ts";

/** Delay before the background prune, so it never competes with a session's first turn (ms). */
export const BACKGROUND_PRUNE_DELAY_MS = 10_000;
/** Least time between two background prunes of one store, across processes (ms): 6 hours. */
export const PRUNE_INTERVAL_MS = 6 * 60 * 60 * 1000;
/** Marker file in the store root whose mtime says when the last background prune started. */
export const PRUNE_MARKER_NAME = ".last-prune";
/** Marker file mode: owner read/write only. */
const MARKER_MODE = 0o600;
/** One flag per process, shared by every module copy of this file. */
const SCHEDULED = Symbol.for("pi-context-headroom.background-prune.scheduled");

/** What a background prune did (for tests and logs). */
export type BackgroundPruneOutcome =
	| { ran: true; removed: number; freedBytes: number }
	| { ran: false; reason: string };

/**
 * Claim the prune slot: true when no prune started within `intervalMs`. The marker is opened without
 * following a symlink, must be our regular file, and gets mode 0600 and the current time.
 */
export function claimPruneSlot(root: string, now: number, intervalMs = PRUNE_INTERVAL_MS): boolean {
	const marker = join(root, PRUNE_MARKER_NAME);
	const existing = lstatOrNull(marker);
	if (existing && (!existing.isFile() || now - existing.mtimeMs < intervalMs)) return false;
	let fd: number | undefined;
	try {
		fd = openSync(marker, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, MARKER_MODE);
		const st = fstatSync(fd);
		const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
		if (!st.isFile() || (uid !== undefined && st.uid !== uid)) return false;
		if ((st.mode & 0o777) !== MARKER_MODE) fchmodSync(fd, MARKER_MODE); // open's mode is reduced by the umask
		futimesSync(fd, new Date(now), new Date(now));
		return true;
	} catch {
		return false;
	} finally {
		if (fd !== undefined) closeQuietly(fd);
	}
}

function lstatOrNull(path: string) {
	try {
		return lstatSync(path);
	} catch {
		return null;
	}
}

function closeQuietly(fd: number): void {
	try {
		closeSync(fd);
	} catch {
		// Nothing to do: the marker was written or not; either way the prune decision stands.
	}
}

/** One background prune now: only when the store root exists, passes the store's checks and the slot is free. */
export async function runBackgroundPrune(
	agentDir: string,
	storeConfig: PruneOptions = {},
	now = Date.now(),
): Promise<BackgroundPruneOutcome> {
	try {
		const store = new ArtifactStore({ agentDir });
		const root = store.checkRoot();
		if (!root.ok) return { ran: false, reason: root.error };
		if (!claimPruneSlot(root.dir, now)) return { ran: false, reason: "pruned recently (or marker unusable)" };
		const { maxAgeDays, maxTotalBytes, minAgeHours } = storeConfig;
		const result = await store.prune({ maxAgeDays, maxTotalBytes, minAgeHours });
		return { ran: true, ...result };
	} catch (error) {
		return { ran: false, reason: error instanceof Error ? error.message : String(error) };
	}
}

/**
 * Schedule runBackgroundPrune once per process, BACKGROUND_PRUNE_DELAY_MS from now, on an unref'd timer.
 * Returns true when this call scheduled it (false: already scheduled in this process). Never throws.
 */
export function scheduleBackgroundPrune(
	agentDir: string,
	storeConfig?: PruneOptions,
	delayMs = BACKGROUND_PRUNE_DELAY_MS,
): boolean {
	// The cap holds at write time too, from this configuration on (write-cap.ts).
	try {
		setWriteCap(new ArtifactStore({ agentDir }).root, storeConfig?.maxTotalBytes);
	} catch {
		// A store that cannot be made has nothing to cap.
	}
	const flags = globalThis as unknown as Record<symbol, boolean | undefined>;
	if (flags[SCHEDULED]) return false;
	flags[SCHEDULED] = true;
	try {
		const timer = setTimeout(() => {
			// A failed background prune only means the store stays as large as it is; /headroom prune reports errors.
			runBackgroundPrune(agentDir, storeConfig).catch(() => undefined);
		}, delayMs);
		timer.unref?.();
	} catch {
		// Timers do not fail in practice; a missed prune is harmless.
	}
	return true;
}

/** Tests only: forget that this process scheduled a prune. */
export function resetBackgroundPruneForTests(): void {
	(globalThis as unknown as Record<symbol, boolean | undefined>)[SCHEDULED] = undefined;
}

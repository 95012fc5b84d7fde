/**
 * The store's size cap at write time. The background prune (background-prune.ts) runs at most every 6 hours and
 * never touches what is younger than `store.minAgeHours`, so a burst of large outputs could fill the disk in
 * between. Here each store root keeps, process-wide, its cap, an estimate of its size and the artifacts this
 * process wrote or looked up ("pinned": what this process's sessions can name in their context). When a write
 * takes the estimate over the cap, one pass runs off the hot path (ArtifactStore.enforceCap): the oldest
 * unpinned entries older than WRITE_CAP_MIN_AGE_MS go first, until the store fits. Module copies share the state
 * through globalThis, as Pi may load each extension with its own module instance.
 */

/** Entries younger than this are never removed at write time (another live session's fresh outputs), in ms. */
export const WRITE_CAP_MIN_AGE_MS = 15 * 60 * 1000;
/** After a pass that could not get under the cap, the next one waits until the store grew by this share of it. */
export const WRITE_CAP_SLACK_SHARE = 0.1;

/** One store root's write-time state. */
export interface WriteCapState {
	/** The cap in bytes (store.maxTotalBytes); absent until a configuration set it: then nothing is enforced. */
	maxTotalBytes?: number;
	/** The store's size as last listed plus what was written since; absent until the first pass. */
	total?: number;
	/** Size after the last pass; the next pass waits for growth past it when that pass could not fit the cap. */
	floor?: number;
	/** Paths this process wrote, reused or resolved: never removed by this process's passes. */
	pinned: Set<string>;
	/** The pass running now, if any. */
	running?: Promise<unknown>;
	/** What the last pass did (for /headroom and tests). */
	last?: { removed: number; freedBytes: number; total: number };
}

const STATES = Symbol.for("pi-context-headroom.store-write-cap");

/** The state of the store at `root` (made on first use). */
export function writeCapState(root: string): WriteCapState {
	const g = globalThis as unknown as Record<symbol, Map<string, WriteCapState> | undefined>;
	g[STATES] ??= new Map();
	const states = g[STATES];
	let state = states.get(root);
	if (!state) {
		state = { pinned: new Set() };
		states.set(root, state);
	}
	return state;
}

/** Set the cap of the store at `root` (from the user's configuration at every session start). */
export function setWriteCap(root: string, maxTotalBytes: number | undefined): void {
	const state = writeCapState(root);
	state.maxTotalBytes =
		typeof maxTotalBytes === "number" && Number.isFinite(maxTotalBytes) && maxTotalBytes > 0
			? maxTotalBytes
			: undefined;
}

/** Whether a write of `bytes` new bytes calls for a pass now (pure over the state; updates the estimate). */
export function noteWrite(state: WriteCapState, path: string, bytes: number, reused: boolean): boolean {
	state.pinned.add(path);
	if (state.maxTotalBytes === undefined) return false;
	if (state.total === undefined) return !state.running; // size unknown: the first pass lists it
	if (!reused) state.total += bytes;
	if (state.running || state.total <= state.maxTotalBytes) return false;
	const floor = state.floor ?? 0;
	return state.total > floor + state.maxTotalBytes * WRITE_CAP_SLACK_SHARE || floor <= state.maxTotalBytes;
}

/** Tests only: forget every store's write-time state. */
export function resetWriteCapForTests(): void {
	(globalThis as unknown as Record<symbol, unknown>)[STATES] = undefined;
}

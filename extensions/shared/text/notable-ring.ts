/**
 * The ring the notable scan's two threads share (notable-parallel.ts writes parts into it, notable-thread.ts
 * takes them out): RING_SLOTS slots of SLOT_UNITS UTF-16 units, and each job's control words.
 */

/** Slots of the ring. */
export const RING_SLOTS = 32;
/** UTF-16 units of a slot: a part is at most this long (a longer one is decided by the calling thread). */
export const SLOT_UNITS = 32 * 1024;
/** Bytes of the ring. */
export const RING_BYTES = RING_SLOTS * SLOT_UNITS * 2;

/**
 * A job's control words (an Int32Array on a SharedArrayBuffer): parts written into the ring so far, parts
 * taken out of it (their slots free again), whether no more will be written, and per slot the part's index and
 * length from `meta` on.
 */
export const CONTROL = { written: 0, taken: 1, closed: 2, meta: 4 } as const;
/** Words of a job's control. */
export const CONTROL_WORDS = CONTROL.meta + 2 * RING_SLOTS;

/**
 * The package's one fast non-cryptographic fingerprint: xxHash64 (the `xxhash-wasm` package),
 * cut to 53 bits so it is a plain number (a cheap Map key). Used where a text only has to be
 * recognised again — transcript size-cache keys, prompt-prefix comparisons — never for artifact
 * names, which are SHA-256 (`node:crypto`) because they must be collision-proof.
 *
 * The hasher is WebAssembly and starts asynchronously. `fingerprintReady()` starts it (once per
 * module instance: Pi may load each extension with its own) and says whether it is there; until
 * then, and if it can never start, the synchronous calls return undefined and callers do the work
 * the fingerprint would have let them skip. A missing fingerprint costs time, never correctness.
 */
import xxhash, { type XXHashAPI } from "xxhash-wasm";

/** A 53-bit fingerprint: an integer safe as a number (and a Map key). */
export type Fingerprint = number;

/** Keeps the low 53 bits of a 64-bit digest. */
const MASK_53 = (1n << 53n) - 1n;
/** Starts the text of a part that is not a text (a number, a boolean, undefined). */
const PART_TAG = "\u0000";

let api: XXHashAPI | undefined;
let loading: Promise<boolean> | undefined;
let loadError: string | undefined;

/** Start the hasher (once) and wait for it: true when it runs, false when it cannot (see fingerprintError). */
export function fingerprintReady(): Promise<boolean> {
	loading ??= xxhash().then(
		(loaded) => {
			api = loaded;
			return true;
		},
		(error: unknown) => {
			loadError = error instanceof Error ? error.message : String(error);
			return false;
		},
	);
	return loading;
}

/** True once the hasher runs (synchronous calls then return a fingerprint). */
export function fingerprintAvailable(): boolean {
	return api !== undefined;
}

/** Why the hasher could not start, once it failed; undefined while it runs or is still starting. */
export function fingerprintError(): string | undefined {
	return loadError;
}

const to53 = (digest: bigint): Fingerprint => Number(digest & MASK_53);

/** The fingerprint of one text; undefined until the hasher runs. */
export function fingerprintText(text: string): Fingerprint | undefined {
	return api ? to53(api.h64(text)) : undefined;
}

/**
 * A fingerprint built from several parts in turn (texts, numbers, booleans, undefined). Each part is
 * framed by its length, so part boundaries and order count: ("ab", "c") and ("a", "bc") differ. The
 * parts are hashed in one call at `digest`, not one call each: the transcript sizer keys thousands of
 * messages of several parts on a session's first call. Reusable: `begin` starts over. Does nothing
 * until the hasher runs.
 */
export class FingerprintBuilder {
	private parts: string[] | undefined;

	/** Start a new fingerprint; false when the hasher is not running (the builder then does nothing). */
	begin(): boolean {
		this.parts = api ? [] : undefined;
		return this.parts !== undefined;
	}

	/** Add one part. */
	add(part: unknown): this {
		if (api === undefined || this.parts === undefined) return this;
		// Parts that are not texts get a tag no real text starts with, so 5 and "5" differ.
		const text = typeof part === "string" ? part : `${PART_TAG}${typeof part}:${String(part)}`;
		this.parts.push(`${text.length}${PART_TAG}`, text);
		return this;
	}

	/** The fingerprint of the parts added since `begin`; undefined when the hasher is not running. */
	digest(): Fingerprint | undefined {
		const parts = this.parts;
		this.parts = undefined;
		return parts === undefined || api === undefined ? undefined : to53(api.h64(parts.join("")));
	}
}

/**
 * Private, content-addressed artifacts: <agentDir>/cache/headroom/<kind>/<sha256>.txt holds exactly the
 * UTF-8 bytes of a text (a lone surrogate is stored as U+FFFD, what UTF-8 encoding makes of it) and is named
 * by their SHA-256.
 *
 * Safety: directories 0700 and files 0600 (set explicitly, whatever the umask); no symlink is followed
 * along the cache path inside agentDir (agentDir itself is the trust boundary) nor at the file; a file is
 * written under a temp name in the same directory, fsynced, then hard-linked to its final name, which
 * never replaces an existing file. An existing file under the name is reused only after its content is
 * verified. Every failure comes back as a PutFailure, never as a thrown error.
 *
 * The put logic is one generator of file-system steps run by a sync or an async driver (fs-steps.ts),
 * so putSync, put and startPut cannot drift apart.
 */
import { createHash, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { ArtifactSink, AsyncArtifactSink } from "../projection/projection.ts";
import { runAsync, runSync, runUntilFsync, type Step, fsStep as step } from "./fs-steps.ts";
import { ARTIFACT_KINDS, type ArtifactKind, FOLDER_NAME, isKind } from "./kinds.ts";
import {
	ARTIFACT_NAME,
	type DirCheck,
	listStore,
	type PruneOptions,
	pruneListing,
	type StoreStats,
	statsOf,
} from "./list.ts";
import { noteWrite, WRITE_CAP_MIN_AGE_MS, type WriteCapState, writeCapState } from "./write-cap.ts";

export { ARTIFACT_KINDS, type ArtifactKind } from "./kinds.ts";

export interface PutResult {
	ok: true;
	/** Absolute path of the artifact. */
	path: string;
	/** SHA-256 hex of the stored bytes (the file name without ".txt"). */
	sha256: string;
	/** UTF-8 bytes stored. */
	bytes: number;
	/** True when an existing, verified file with this content was reused. */
	reused: boolean;
}
export interface PutFailure {
	ok: false;
	/** One line: what failed, for the footer and logs. */
	error: string;
}

/** Directory mode: owner only. */
export const DIR_MODE = 0o700;
/** Artifact file mode: owner read/write only. */
export const FILE_MODE = 0o600;
/** Bytes encoded, hashed and written per step: bounds extra memory whatever the text size. */
export const WRITE_CHUNK_BYTES = 1024 * 1024;
export {
	DEFAULT_PRUNE_MAX_AGE_DAYS,
	DEFAULT_PRUNE_MAX_TOTAL_BYTES,
	DEFAULT_PRUNE_MIN_AGE_HOURS,
	STALE_TEMP_MS,
	type StoreStats,
} from "./list.ts";

import { errorText } from "../text/format.ts";

/** Stateless; replaces lone surrogates with U+FFFD exactly as Buffer.from does. */
const ENCODER = new TextEncoder();
const ID_PATTERN = /^[0-9a-f]{8,64}$/;

function myUid(): number | undefined {
	return typeof process.getuid === "function" ? process.getuid() : undefined;
}

export class ArtifactStore {
	/** Absolute root of the store (default <agentDir>/cache/headroom). */
	readonly root: string;
	private readonly agentDir: string;
	/** Path components from agentDir down to root; "" when misconfigured. */
	private readonly chain: string[];
	private readonly configError?: string;

	/** root = <agentDir>/cache/headroom ; agentDir is the trust boundary for the no-symlink rule */
	constructor(opts: { agentDir: string; root?: string }) {
		this.agentDir = resolve(String(opts?.agentDir ?? ""));
		this.root = resolve(opts?.root ?? join(this.agentDir, "cache", "headroom"));
		const rel = relative(this.agentDir, this.root);
		if (!opts?.agentDir || !isAbsolute(String(opts.agentDir))) this.configError = "agentDir must be an absolute path";
		else if (rel === "" || rel.startsWith("..") || isAbsolute(rel))
			this.configError = `store root ${this.root} is not inside the agent directory ${this.agentDir}`;
		this.chain = this.configError ? [] : rel.split(sep);
	}

	dirFor(kind: ArtifactKind): string {
		return join(this.root, kind);
	}

	put(kind: ArtifactKind, text: string): Promise<PutResult | PutFailure> {
		return runAsync(this.putSteps(kind, text))
			.catch((error) => ({ ok: false as const, error: errorText(error) }))
			.then((result) => this.afterPut(result));
	}

	/**
	 * A put whose encoding, hashing and writing happen in this call, on this thread; only the fsync waits in the
	 * thread pool, then the same naming as put. The caller's next work on this thread (the tool-output stub's
	 * scan) runs while the disk makes the bytes durable; the result says whether they were stored. Same checks,
	 * modes, content-addressed name and failures as put. `written`, when given, is called before this call returns
	 * with the UTF-8 bytes written once they all are (the text's size as stored: the caller need not measure it
	 * again); it is not called when the put failed before that. `eachChunk`, when given, is called after each
	 * chunk (WRITE_CHUNK_BYTES) is written: the caller's moment to hand work to another thread (the tool-output
	 * stub feeds its scan's second thread).
	 */
	startPut(
		kind: ArtifactKind,
		text: string,
		written?: (bytes: number) => void,
		eachChunk?: () => void,
	): Promise<PutResult | PutFailure> {
		return runUntilFsync(this.putSteps(kind, text, written, eachChunk))
			.catch((error) => ({ ok: false as const, error: errorText(error) }))
			.then((result) => this.afterPut(result));
	}

	putSync(kind: ArtifactKind, text: string): PutResult | PutFailure {
		try {
			return this.afterPut(runSync(this.putSteps(kind, text)));
		} catch (error) {
			return { ok: false, error: errorText(error) };
		}
	}

	/** A stored artifact is pinned for this process; a write past the size cap starts one pass (write-cap.ts). */
	private afterPut(result: PutResult | PutFailure): PutResult | PutFailure {
		if (!result.ok) return result;
		const state = writeCapState(this.root);
		if (noteWrite(state, result.path, result.bytes, result.reused)) {
			state.running = this.enforceCap(state)
				.catch(() => undefined)
				.finally(() => {
					state.running = undefined;
				});
		}
		return result;
	}

	/**
	 * One write-time pass: list the store, then remove the oldest entries that this process did not pin and that
	 * are older than WRITE_CAP_MIN_AGE_MS until it fits its cap. Stale temps are left to the background prune.
	 */
	async enforceCap(state: WriteCapState = writeCapState(this.root)): Promise<{ removed: number; freedBytes: number }> {
		const cap = state.maxTotalBytes;
		const listing = await runAsync(listStore(ARTIFACT_KINDS, this.checkKind, (k) => this.dirFor(k)));
		const total = listing.entries.reduce((sum, e) => sum + e.bytes, 0);
		if (cap === undefined || total <= cap) {
			state.total = total;
			state.floor = undefined;
			return { removed: 0, freedBytes: 0 };
		}
		const pinned = listing.entries.filter((e) => state.pinned.has(e.path));
		const pinnedBytes = pinned.reduce((sum, e) => sum + e.bytes, 0);
		const rest = { entries: listing.entries.filter((e) => !state.pinned.has(e.path)), temps: [], problems: [] };
		const limits = {
			maxAgeDays: Number.POSITIVE_INFINITY,
			minAgeHours: WRITE_CAP_MIN_AGE_MS / 3_600_000,
			maxTotalBytes: Math.max(0, cap - pinnedBytes),
		};
		const result = await runAsync(pruneListing(rest, limits, Date.now()));
		state.total = total - result.freedBytes;
		state.floor = state.total;
		state.last = { ...result, total: state.total };
		return result;
	}

	/** The projection's synchronous sink for texts of `kind` (for hooks that must not await). */
	sink(kind: ArtifactKind): ArtifactSink {
		return { put: (text) => this.putSync(kind, text) };
	}

	/** The projection's asynchronous sink for texts of `kind`. */
	asyncSink(kind: ArtifactKind): AsyncArtifactSink {
		return { putAsync: (text) => this.put(kind, text) };
	}

	/** id = sha256 hex (64) or a unique prefix of >= 8 hex chars; validated (no paths). */
	resolve(
		id: string,
		kind?: ArtifactKind,
	): { ok: true; path: string; sha256: string; kind: ArtifactKind } | { ok: false; error: string } {
		const wanted = typeof id === "string" ? id.trim().toLowerCase() : "";
		if (!ID_PATTERN.test(wanted)) {
			return { ok: false, error: `invalid artifact id ${JSON.stringify(String(id))}: give 8 to 64 hex characters` };
		}
		if (kind !== undefined && !isKind(kind)) {
			return { ok: false, error: `unknown artifact kind ${JSON.stringify(kind)}; known: ${ARTIFACT_KINDS.join(", ")}` };
		}
		const matches: Array<{ path: string; sha256: string; kind: ArtifactKind }> = [];
		for (const k of kind ? [kind] : ARTIFACT_KINDS) {
			const check = runSync(this.dirSteps(k, false));
			if (!check.ok) continue;
			for (const name of runSync(step.readdir(check.dir))) {
				if (!ARTIFACT_NAME.test(name) || !name.startsWith(wanted)) continue;
				const path = join(check.dir, name);
				if (runSync(step.lstat(path))?.isFile()) matches.push({ path, sha256: name.slice(0, 64), kind: k });
			}
		}
		const distinct = new Set(matches.map((m) => m.sha256));
		if (distinct.size === 0) return { ok: false, error: `no artifact matches id ${wanted}` };
		if (distinct.size > 1) {
			return {
				ok: false,
				error: `artifact id ${wanted} is ambiguous (${distinct.size} matches); give more characters`,
			};
		}
		writeCapState(this.root).pinned.add(matches[0].path); // looked up: this process's context names it
		return { ok: true, ...matches[0] };
	}

	stats(): Promise<StoreStats> {
		return runAsync(listStore(ARTIFACT_KINDS, this.checkKind, (k) => this.dirFor(k))).then((listing) =>
			statsOf(ARTIFACT_KINDS, listing),
		);
	}

	/** Removes old artifacts and handoff trajectory folders (see store-list.ts); never the young ones. */
	prune(opts?: PruneOptions): Promise<{ removed: number; freedBytes: number }> {
		const now = Date.now();
		const listed = listStore(ARTIFACT_KINDS, this.checkKind, (k) => this.dirFor(k));
		return runAsync(
			(function* () {
				return yield* pruneListing(yield* listed, opts ?? {}, now);
			})(),
		);
	}

	/**
	 * The kind directory, or one per-session folder inside it, made with the checks put uses: no symlink is
	 * followed from agentDir down, and the store's own directories are ours and 0700. `subfolder` is one
	 * plain name (letters, digits, ".", "_", "-", at most 128; not "." or ".."), never a path.
	 */
	ensureKindDir(kind: ArtifactKind, subfolder?: string): { ok: true; dir: string } | { ok: false; error: string } {
		if (!isKind(kind)) return { ok: false, error: `unknown artifact kind ${JSON.stringify(kind)}` };
		if (subfolder !== undefined && !(typeof subfolder === "string" && FOLDER_NAME.test(subfolder))) {
			return { ok: false, error: `invalid folder name ${JSON.stringify(String(subfolder))}` };
		}
		try {
			const check = runSync(this.pathSteps(subfolder === undefined ? [kind] : [kind, subfolder], true));
			return check.ok ? { ok: true, dir: check.dir } : check;
		} catch (error) {
			return { ok: false, error: errorText(error) };
		}
	}

	/** The store root when it exists and passes the same checks (nothing is created). */
	checkRoot(): { ok: true; dir: string } | { ok: false; error: string } {
		try {
			const check = runSync(this.pathSteps([], false));
			return check.ok ? { ok: true, dir: check.dir } : check;
		} catch (error) {
			return { ok: false, error: errorText(error) };
		}
	}

	/** Checks a kind directory without creating it (for listing). */
	private readonly checkKind = (kind: ArtifactKind): Step<DirCheck> => this.pathSteps([kind], false);

	private dirSteps(kind: ArtifactKind, create: boolean): Step<DirCheck> {
		return this.pathSteps([kind], create);
	}

	/**
	 * Check (and with `create`, make) every directory from agentDir down to root/...below without
	 * following a symlink. Directories from the store root down are ours: made or fixed to 0700.
	 */
	private *pathSteps(below: string[], create: boolean): Step<DirCheck> {
		if (this.configError) return { ok: false, error: this.configError };
		const agent = yield* step.stat(this.agentDir); // the trust boundary may itself be a symlink
		if (!agent) {
			if (!create) return { ok: false, error: `agent directory ${this.agentDir} does not exist` };
			yield* step.mkdir(this.agentDir, DIR_MODE, true);
		} else if (!agent.isDirectory()) return { ok: false, error: `${this.agentDir} is not a directory` };
		const components = [...this.chain, ...below];
		const ownFrom = this.chain.length - 1; // index of the root component
		let dir = this.agentDir;
		let last: DirCheck | undefined;
		for (let i = 0; i < components.length; i++) {
			dir = join(dir, components[i]);
			const checked = yield* dirSteps(dir, create, i >= ownFrom);
			if (!checked.ok) return checked;
			last = checked;
		}
		return last ?? { ok: false, error: `${dir} has no directory to check` };
	}

	private *putSteps(
		kind: ArtifactKind,
		text: string,
		writtenAll?: (bytes: number) => void,
		eachChunk?: () => void,
	): Step<PutResult | PutFailure> {
		if (!isKind(kind)) return { ok: false, error: `unknown artifact kind ${JSON.stringify(kind)}` };
		if (typeof text !== "string") return { ok: false, error: `artifact text must be a string, got ${typeof text}` };
		const check = yield* this.dirSteps(kind, true);
		if (!check.ok) return check;
		const tempPath = join(check.dir, `.tmp-${process.pid}-${randomBytes(8).toString("hex")}.part`);
		const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
		let fd: number | undefined = yield* step.open(tempPath, flags, FILE_MODE);
		try {
			yield* step.fchmod(fd, FILE_MODE); // open's mode is reduced by the umask
			const hash = createHash("sha256");
			// One encode per chunk into a reused buffer feeds both the hash and the file. encodeInto stops on a
			// character boundary when the buffer is full. A slice has as many units as the buffer has bytes, so
			// a pair's high half cut off at the slice end can never fit as U+FFFD (3 bytes) after the rest (at
			// least 1 byte per unit): encoding stops before it and the next slice starts with the whole pair.
			const scratch = Buffer.allocUnsafe(Math.min(WRITE_CHUNK_BYTES, text.length * 3 + 4));
			let bytes = 0;
			for (let pos = 0; pos < text.length; ) {
				const { read, written } = ENCODER.encodeInto(text.slice(pos, pos + scratch.length), scratch);
				const view = scratch.subarray(0, written);
				hash.update(view);
				yield* step.write(fd, view);
				bytes += written;
				pos += read;
				eachChunk?.();
			}
			writtenAll?.(bytes);
			yield* step.fsync(fd);
			yield* step.close(fd);
			fd = undefined;
			return yield* this.linkSteps(check, tempPath, hash.digest("hex"), bytes);
		} finally {
			if (fd !== undefined) yield* step.quietly(step.close(fd));
			yield* step.quietly(step.unlink(tempPath));
		}
	}

	/**
	 * Store bytes that arrive in chunks (Pi's full-output file read in steps), never holding them whole: each
	 * chunk is hashed and written to the exclusive temp file, then fsync and the same link-or-verify as put.
	 * `accept`, asked after the last chunk, may refuse the content (the temp file is then removed).
	 */
	async putChunks(
		kind: ArtifactKind,
		chunks: AsyncIterable<Uint8Array>,
		accept?: () => string | undefined,
	): Promise<PutResult | PutFailure> {
		if (!isKind(kind)) return { ok: false, error: `unknown artifact kind ${JSON.stringify(kind)}` };
		let tempPath: string | undefined;
		let fd: number | undefined;
		try {
			const check = await runAsync(this.dirSteps(kind, true));
			if (!check.ok) return check;
			tempPath = join(check.dir, `.tmp-${process.pid}-${randomBytes(8).toString("hex")}.part`);
			const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
			fd = await runAsync(step.open(tempPath, flags, FILE_MODE));
			await runAsync(step.fchmod(fd, FILE_MODE)); // open's mode is reduced by the umask
			const hash = createHash("sha256");
			let bytes = 0;
			for await (const chunk of chunks) {
				hash.update(chunk);
				await runAsync(step.write(fd, chunk));
				bytes += chunk.length;
			}
			const refused = accept?.();
			if (refused !== undefined) return { ok: false, error: refused };
			await runAsync(step.fsync(fd));
			const open = fd;
			fd = undefined;
			await runAsync(step.close(open));
			return await runAsync(this.linkSteps(check, tempPath, hash.digest("hex"), bytes));
		} catch (error) {
			return { ok: false, error: errorText(error) };
		} finally {
			if (fd !== undefined) await runAsync(step.quietly(step.close(fd)));
			if (tempPath !== undefined) await runAsync(step.quietly(step.unlink(tempPath)));
		}
	}

	/** Give the fsynced temp file its content-addressed name: link without replacing, or verify what is there. */
	private *linkSteps(
		check: DirCheck & { ok: true },
		tempPath: string,
		sha256: string,
		bytes: number,
	): Step<PutResult | PutFailure> {
		{
			const finalPath = join(check.dir, `${sha256}.txt`);
			// The directory must still be the one checked: a swapped-in symlink would redirect the link.
			const again = yield* step.lstat(check.dir);
			if (!again || again.isSymbolicLink() || again.dev !== check.dev || again.ino !== check.ino) {
				return { ok: false, error: `${check.dir} changed while writing; not storing` };
			}
			// A second round only when the existing file vanished (pruned) between link and verify.
			for (let attempt = 0; attempt < 2; attempt++) {
				// No directory fsync (it would double a small put's cost): the content is durable before it gets
				// a name, so a power cut can at worst lose a fresh name, never expose partial content.
				if (yield* step.linkNoReplace(tempPath, finalPath)) {
					return { ok: true, path: finalPath, sha256, bytes, reused: false };
				}
				const verdict = yield* verifyExisting(finalPath, sha256, bytes);
				if (verdict === undefined) return { ok: true, path: finalPath, sha256, bytes, reused: true };
				if (verdict !== VANISHED) return { ok: false, error: verdict };
			}
			return { ok: false, error: `${finalPath} keeps vanishing; not storing` };
		}
	}
}

/** verifyExisting's answer when the file disappeared before it could be opened. */
const VANISHED = "vanished";

/** mkdir that tolerates a concurrent put creating the same directory; true when this call created it. */
/**
 * One directory checked as the store checks its own, and with `create` made: never a symlink, never
 * someone else's; with `own`, made or fixed to 0700 (without `create`, a wrong mode is refused).
 */
function* dirSteps(dir: string, create: boolean, own: boolean): Step<DirCheck> {
	let st = yield* step.lstat(dir);
	if (!st) {
		if (!create) return { ok: false, error: `${dir} does not exist` };
		if (yield* mkdirOnce(dir)) yield* step.chmod(dir, DIR_MODE); // mkdir's mode is reduced by the umask
		st = yield* step.lstat(dir);
		if (!st) return { ok: false, error: `${dir} vanished after mkdir` };
	}
	if (st.isSymbolicLink()) return { ok: false, error: `${dir} is a symlink; refusing to follow it` };
	if (!st.isDirectory()) return { ok: false, error: `${dir} is not a directory` };
	const uid = myUid();
	if (uid !== undefined && st.uid !== uid) return { ok: false, error: `${dir} is owned by another user` };
	if (own && (st.mode & 0o777) !== DIR_MODE) {
		if (!create) return { ok: false, error: `${dir} has mode ${(st.mode & 0o777).toString(8)}, not 700` };
		yield* step.chmod(dir, DIR_MODE);
		st = yield* step.lstat(dir); // a swap between the check and chmod shows here
		if (!st || st.isSymbolicLink() || !st.isDirectory()) return { ok: false, error: `${dir} changed while being made` };
	}
	return { ok: true, dir, dev: st.dev, ino: st.ino };
}

/**
 * The store's private-directory routine for a folder outside the store (handoff trajectories beside a
 * session file): `parent/name` made or checked with the same steps as the store's own directories (0700,
 * ours, no symlink followed). The parent itself is the caller's trust boundary. Never throws.
 */
export function ensurePrivateDir(parent: string, name: string): DirCheck {
	if (!FOLDER_NAME.test(name)) return { ok: false, error: `invalid folder name ${JSON.stringify(String(name))}` };
	try {
		return runSync(dirSteps(join(parent, name), true, true));
	} catch (error) {
		return { ok: false, error: errorText(error) };
	}
}

function* mkdirOnce(dir: string): Step<boolean> {
	try {
		yield* step.mkdir(dir, DIR_MODE, false);
		return true;
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
		throw error;
	}
}

/**
 * Reuse an existing file only when it is a regular file (not followed if a symlink) with exactly the
 * expected size and SHA-256. Returns an error text, or undefined when it verified. Touches its mtime so
 * age-based pruning keeps a file a footer now points at.
 */
function* verifyExisting(path: string, sha256: string, bytes: number): Step<string | undefined> {
	let fd: number;
	try {
		fd = yield* step.open(path, constants.O_RDONLY | constants.O_NOFOLLOW, 0);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT") return VANISHED;
		if (code === "ELOOP") return `existing ${path} is a symlink; not followed, not used`;
		return `existing ${path} cannot be checked (${errorText(error)}); not used`;
	}
	try {
		const st = yield* step.fstat(fd);
		const uid = myUid();
		if (!st.isFile() || (uid !== undefined && st.uid !== uid) || st.size !== bytes) {
			return `existing ${path} does not match its name; not overwritten, not used`;
		}
		const hash = createHash("sha256");
		const buffer = Buffer.allocUnsafe(Math.min(WRITE_CHUNK_BYTES, Math.max(1, bytes)));
		for (let position = 0; position < bytes; ) {
			const n = yield* step.read(fd, buffer, position);
			if (n === 0) break;
			hash.update(buffer.subarray(0, n));
			position += n;
		}
		if (hash.digest("hex") !== sha256) return `existing ${path} does not match its name; not overwritten, not used`;
		if ((st.mode & 0o777) !== FILE_MODE) yield* step.fchmod(fd, FILE_MODE);
		yield* step.quietly(step.futimesNow(fd));
		return undefined;
	} finally {
		yield* step.quietly(step.close(fd));
	}
}

export function storeForAgentDir(agentDir: string): ArtifactStore {
	return new ArtifactStore({ agentDir });
}

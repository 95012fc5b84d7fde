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
 * The put logic is one generator of file-system steps run by a sync or an async driver (store-fs.ts),
 * so putSync and put cannot drift apart.
 */
import { createHash, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { runAsync, runSync, type Step, type StepStats, fsStep as step } from "./store-fs.ts";

export type ArtifactKind = "subagent-results" | "tool-outputs" | "transcripts" | "handoffs";
export const ARTIFACT_KINDS: readonly ArtifactKind[] = ["subagent-results", "tool-outputs", "transcripts", "handoffs"];

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
/** A temp file untouched this long (ms) belongs to a killed writer and may be removed by prune. */
export const STALE_TEMP_MS = 60 * 60 * 1000;
export const DEFAULT_PRUNE_MAX_AGE_DAYS = 30;
/** Default cap of the whole store, in bytes (1 GiB). */
export const DEFAULT_PRUNE_MAX_TOTAL_BYTES = 1024 * 1024 * 1024;
/** Files younger than this (hours) are never pruned: a footer may have just pointed at them. */
export const DEFAULT_PRUNE_MIN_AGE_HOURS = 24;
const HOUR_MS = 60 * 60 * 1000;
/** Stateless; replaces lone surrogates with U+FFFD exactly as Buffer.from does. */
const ENCODER = new TextEncoder();
const ARTIFACT_NAME = /^[0-9a-f]{64}\.txt$/;
const TEMP_NAME = /^\.tmp-[0-9]+-[0-9a-f]+\.part$/;
const ID_PATTERN = /^[0-9a-f]{8,64}$/;

function errorText(error: unknown): string {
	const e = error as NodeJS.ErrnoException;
	if (e && typeof e === "object" && typeof e.message === "string") return e.message;
	return String(error);
}

function isKind(kind: unknown): kind is ArtifactKind {
	return typeof kind === "string" && (ARTIFACT_KINDS as readonly string[]).includes(kind);
}

function myUid(): number | undefined {
	return typeof process.getuid === "function" ? process.getuid() : undefined;
}

type DirCheck = { ok: true; dir: string; dev: number; ino: number } | { ok: false; error: string };

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
		return runAsync(this.putSteps(kind, text)).catch((error) => ({ ok: false as const, error: errorText(error) }));
	}

	putSync(kind: ArtifactKind, text: string): PutResult | PutFailure {
		try {
			return runSync(this.putSteps(kind, text));
		} catch (error) {
			return { ok: false, error: errorText(error) };
		}
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
		return { ok: true, ...matches[0] };
	}

	stats(): Promise<{
		count: number;
		bytes: number;
		newest?: { path: string; mtimeMs: number };
		byKind: Record<string, { count: number; bytes: number }>;
		/** Directories skipped because they are unsafe (a symlink, not a directory, foreign owner). */
		problems?: string[];
	}> {
		return runAsync(this.statsSteps());
	}

	prune(opts?: {
		maxAgeDays?: number;
		maxTotalBytes?: number;
		minAgeHours?: number;
	}): Promise<{ removed: number; freedBytes: number }> {
		return runAsync(this.pruneSteps(opts ?? {}, Date.now()));
	}

	/**
	 * Check (and with `create`, make) every directory from agentDir down to the kind directory without
	 * following a symlink. Directories from the store root down are ours: made or fixed to 0700.
	 */
	private *dirSteps(kind: ArtifactKind, create: boolean): Step<DirCheck> {
		if (this.configError) return { ok: false, error: this.configError };
		const agent = yield* step.stat(this.agentDir); // the trust boundary may itself be a symlink
		if (!agent) {
			if (!create) return { ok: false, error: `agent directory ${this.agentDir} does not exist` };
			yield* step.mkdir(this.agentDir, DIR_MODE, true);
		} else if (!agent.isDirectory()) return { ok: false, error: `${this.agentDir} is not a directory` };
		const components = [...this.chain, kind];
		const ownFrom = this.chain.length - 1; // index of the root component
		let dir = this.agentDir;
		let last: StepStats | null = null;
		for (let i = 0; i < components.length; i++) {
			dir = join(dir, components[i]);
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
			if (i >= ownFrom && (st.mode & 0o777) !== DIR_MODE) {
				if (!create) return { ok: false, error: `${dir} has mode ${(st.mode & 0o777).toString(8)}, not 700` };
				yield* step.chmod(dir, DIR_MODE);
			}
			last = st;
		}
		return { ok: true, dir, dev: last!.dev, ino: last!.ino };
	}

	private *putSteps(kind: ArtifactKind, text: string): Step<PutResult | PutFailure> {
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
			}
			yield* step.fsync(fd);
			yield* step.close(fd);
			fd = undefined;
			const sha256 = hash.digest("hex");
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
		} finally {
			if (fd !== undefined) yield* step.quietly(step.close(fd));
			yield* step.quietly(step.unlink(tempPath));
		}
	}

	private *listSteps(): Step<{
		files: Array<{ path: string; kind: ArtifactKind; bytes: number; mtimeMs: number }>;
		temps: Array<{ path: string; bytes: number; mtimeMs: number }>;
		problems: string[];
	}> {
		const files: Array<{ path: string; kind: ArtifactKind; bytes: number; mtimeMs: number }> = [];
		const temps: Array<{ path: string; bytes: number; mtimeMs: number }> = [];
		const problems: string[] = [];
		for (const kind of ARTIFACT_KINDS) {
			const check = yield* step.quietly(this.dirSteps(kind, false));
			if (!check) {
				problems.push(`cannot check ${this.dirFor(kind)}`);
				continue;
			}
			if (!check.ok) {
				if (!check.error.endsWith("does not exist")) problems.push(check.error);
				continue;
			}
			try {
				for (const name of yield* step.readdir(check.dir)) {
					const isArtifact = ARTIFACT_NAME.test(name);
					if (!isArtifact && !TEMP_NAME.test(name)) continue;
					const path = join(check.dir, name);
					const st = yield* step.lstat(path);
					if (!st?.isFile()) continue; // never follow or count a planted symlink
					if (isArtifact) files.push({ path, kind, bytes: st.size, mtimeMs: st.mtimeMs });
					else temps.push({ path, bytes: st.size, mtimeMs: st.mtimeMs });
				}
			} catch (error) {
				problems.push(`cannot list ${check.dir}: ${errorText(error)}`);
			}
		}
		return { files, temps, problems };
	}

	private *statsSteps() {
		const { files, problems } = yield* this.listSteps();
		const byKind: Record<string, { count: number; bytes: number }> = {};
		for (const kind of ARTIFACT_KINDS) byKind[kind] = { count: 0, bytes: 0 };
		let bytes = 0;
		let newest: { path: string; mtimeMs: number } | undefined;
		for (const f of files) {
			bytes += f.bytes;
			byKind[f.kind].count++;
			byKind[f.kind].bytes += f.bytes;
			if (!newest || f.mtimeMs > newest.mtimeMs) newest = { path: f.path, mtimeMs: f.mtimeMs };
		}
		return { count: files.length, bytes, newest, byKind, ...(problems.length > 0 ? { problems } : {}) };
	}

	private *pruneSteps(
		opts: { maxAgeDays?: number; maxTotalBytes?: number; minAgeHours?: number },
		now: number,
	): Step<{ removed: number; freedBytes: number }> {
		const num = (v: unknown, fallback: number) => (typeof v === "number" && v >= 0 && !Number.isNaN(v) ? v : fallback);
		const minAgeMs = num(opts.minAgeHours, DEFAULT_PRUNE_MIN_AGE_HOURS) * HOUR_MS;
		const maxAgeMs = Math.max(minAgeMs, num(opts.maxAgeDays, DEFAULT_PRUNE_MAX_AGE_DAYS) * 24 * HOUR_MS);
		const maxTotal = num(opts.maxTotalBytes, DEFAULT_PRUNE_MAX_TOTAL_BYTES);
		const { files, temps } = yield* this.listSteps();
		let removed = 0;
		let freedBytes = 0;
		// Remove only if still the same old regular file: a put may have just reused (touched) it.
		const remove = function* (f: { path: string; bytes: number; mtimeMs: number }): Step<boolean> {
			const st = yield* step.quietly(step.lstat(f.path));
			if (!st?.isFile() || st.mtimeMs !== f.mtimeMs) return false;
			if (!(yield* step.quietly(step.unlink(f.path)))) return false;
			removed++;
			freedBytes += f.bytes;
			return true;
		};
		for (const t of temps) if (now - t.mtimeMs > Math.max(STALE_TEMP_MS, 0)) yield* remove(t);
		const kept: typeof files = [];
		for (const f of files.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
			if (now - f.mtimeMs > maxAgeMs && (yield* remove(f))) continue;
			kept.push(f);
		}
		let total = kept.reduce((sum, f) => sum + f.bytes, 0);
		for (const f of kept) {
			if (total <= maxTotal || now - f.mtimeMs < minAgeMs) break; // oldest first; the rest are younger
			if (yield* remove(f)) total -= f.bytes;
		}
		return { removed, freedBytes };
	}
}

/** verifyExisting's answer when the file disappeared before it could be opened. */
const VANISHED = "vanished";

/** mkdir that tolerates a concurrent put creating the same directory; true when this call created it. */
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

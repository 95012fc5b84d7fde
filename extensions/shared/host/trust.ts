/**
 * Project trust for the package's own project files (`.pi/headroom.json`, `.pi/agents/`, `.claude/agents/`).
 *
 * A cloned repository is not a trusted one: these files take effect only where the user decided explicitly.
 * Explicit decisions are, per folder (the nearest entry up from the cwd wins within each record):
 * - the package's own record, `<agentDir>/headroom-trust.json` (0600), written by `/headroom trust` and
 *   `/subagents trust` on both Pi lines;
 * - on Pi 1.x, Pi's trust store (`<agentDir>/trust.json`: Pi's prompt, its `/trust` command), Pi's
 *   `--approve` flag for the run, and Pi's own answer for a project it gates (it asked the user then).
 * Pi 1.x's `isProjectTrusted()` alone is not one: it answers "trusted" for a project holding none of the
 * resources Pi gates, without asking. A "do not trust" anywhere (Pi's answer, `--no-approve`, an entry of either
 * record) wins over any "trust". The decision is pure (decideTrust); the rest gathers its facts.
 */
import {
	closeSync,
	constants,
	fstatSync,
	fsyncSync,
	lstatSync,
	mkdirSync,
	openSync,
	readSync,
	realpathSync,
	renameSync,
	rmSync,
	writeSync,
} from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import {
	type PiTrustEntry,
	piApproveFlag,
	piGatesProject,
	piHasTrustStore,
	projectTrusted as piSessionTrusted,
	piTrustStoreEntry,
} from "./pi-host.ts";

/** The package's own record of trust decisions, in Pi's agent dir. */
export const TRUST_FILE_NAME = "headroom-trust.json";

/** Largest trust record read (a record of folders, not a data file). */
export const MAX_TRUST_FILE_BYTES = 1024 * 1024;

/** The commands that trust the cwd, as every notice names them. */
export const TRUST_COMMAND = "/headroom trust";

/** One explicit decision: the folder it names and what it says. */
export type TrustEntry = PiTrustEntry;

/** Everything the decision depends on, gathered from Pi and the records. */
export interface TrustFacts {
	/** Pi's answer for this session's cwd (1.x `ctx.isProjectTrusted()`); undefined on 0.73 or for another folder. */
	piSession?: boolean;
	/** Whether Pi 1.x gates this folder (then its answer means the user was asked). */
	piGated?: boolean;
	/** The nearest entry of Pi 1.x's trust store; undefined or null when none. */
	piStore?: TrustEntry | null;
	/** The nearest entry of the package's own record; undefined or null when none. */
	own?: TrustEntry | null;
	/** Pi 1.x's `--approve` (true) / `--no-approve` (false) for this run. */
	approveFlag?: boolean;
}

/** Why a folder is trusted or not, in the words every notice uses. */
export type TrustReason =
	| "own-record"
	| "pi-store"
	| "approve-flag"
	| "pi-asked"
	| "pi-denied"
	| "denied-flag"
	| "denied-record"
	| "denied-pi-store"
	| "undecided";

/** The decision for one folder. */
export interface TrustDecision {
	/** Whether the folder's project files of this package take effect. */
	trusted: boolean;
	/** What decided it. */
	reason: TrustReason;
	/** The folder the deciding entry names, when an entry decided. */
	path?: string;
}

/** The decision from its facts: a "do not trust" anywhere wins; then any explicit "trust"; else untrusted. */
export function decideTrust(facts: TrustFacts): TrustDecision {
	if (facts.piSession === false) return { trusted: false, reason: "pi-denied" };
	if (facts.approveFlag === false) return { trusted: false, reason: "denied-flag" };
	if (facts.own?.decision === false) return { trusted: false, reason: "denied-record", path: facts.own.path };
	if (facts.piStore?.decision === false) return { trusted: false, reason: "denied-pi-store", path: facts.piStore.path };
	if (facts.own?.decision === true) return { trusted: true, reason: "own-record", path: facts.own.path };
	if (facts.piStore?.decision === true) return { trusted: true, reason: "pi-store", path: facts.piStore.path };
	if (facts.approveFlag === true) return { trusted: true, reason: "approve-flag" };
	if (facts.piSession === true && facts.piGated === true) return { trusted: true, reason: "pi-asked" };
	return { trusted: false, reason: "undecided" };
}

/** Why an untrusted folder is untrusted, and what to do: the tail of every "ignored" notice. */
export function untrustedHint(decision: TrustDecision, command = TRUST_COMMAND): string {
	const how = `trust it with ${command}`;
	switch (decision.reason) {
		case "pi-denied":
			return `Pi does not trust this project (${how}, or Pi's /trust)`;
		case "denied-flag":
			return "this run was started with --no-approve";
		case "denied-record":
			return `${decision.path ?? "a parent folder"} is marked untrusted in ${TRUST_FILE_NAME} (${how})`;
		case "denied-pi-store":
			return `${decision.path ?? "a parent folder"} is marked untrusted in Pi's trust store (change it with Pi's /trust)`;
		default:
			return `this project is not trusted yet (${how})`;
	}
}

/** Where a trusted decision came from, as /headroom shows it. */
export function trustedBy(decision: TrustDecision): string {
	switch (decision.reason) {
		case "own-record":
			return `trusted (${TRUST_FILE_NAME}: ${decision.path})`;
		case "pi-store":
			return `trusted (Pi's trust store: ${decision.path})`;
		case "approve-flag":
			return "trusted (--approve, this run)";
		case "pi-asked":
			return "trusted (Pi's project trust)";
		default:
			return "trusted";
	}
}

/** A folder as records name it: absolute, symlinks resolved when it exists. */
export function canonicalFolder(path: string): string {
	const absolute = resolve(path);
	try {
		return realpathSync(absolute);
	} catch {
		return absolute;
	}
}

/** The entry of `entries` nearest up from `cwd` (the folder itself first), or null. Pure. */
export function nearestEntry(entries: Readonly<Record<string, unknown>>, cwd: string): TrustEntry | null {
	let dir = resolve(cwd);
	for (;;) {
		const value = Object.hasOwn(entries, dir) ? entries[dir] : undefined;
		if (value === true || value === false) return { path: dir, decision: value };
		const parent = dirname(dir);
		if (parent === dir) return null;
		dir = parent;
	}
}

/** The current user's id, or undefined where the platform has none. */
function currentUid(): number | undefined {
	return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/**
 * The package's own record: its entries, or an empty record (with `problem` set) when it is missing, unsafe or
 * unreadable. Never follows a symlink; only a regular file owned by the user counts.
 */
export function readTrustRecord(agentDir: string): { entries: Record<string, boolean>; problem?: string } {
	const file = join(agentDir, TRUST_FILE_NAME);
	let fd: number | undefined;
	try {
		fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
		const st = fstatSync(fd);
		if (!st.isFile()) return { entries: {}, problem: `${file}: not a regular file; ignored` };
		const uid = currentUid();
		if (uid !== undefined && st.uid !== uid) return { entries: {}, problem: `${file}: not owned by you; ignored` };
		if (st.size > MAX_TRUST_FILE_BYTES) return { entries: {}, problem: `${file}: too large; ignored` };
		const buffer = Buffer.alloc(st.size);
		let read = 0;
		while (read < st.size) {
			const n = readSync(fd, buffer, read, st.size - read, read);
			if (n === 0) break;
			read += n;
		}
		const parsed: unknown = JSON.parse(buffer.subarray(0, read).toString("utf8"));
		if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
			return { entries: {}, problem: `${file}: expected a JSON object; ignored` };
		const entries: Record<string, boolean> = {};
		for (const [key, value] of Object.entries(parsed)) {
			if (typeof value === "boolean" && key.startsWith(sep)) entries[resolve(key)] = value;
		}
		return { entries };
	} catch (error) {
		const code = (error as NodeJS.ErrnoException)?.code;
		if (code === "ENOENT") return { entries: {} };
		if (code === "ELOOP") return { entries: {}, problem: `${file}: a symbolic link; ignored` };
		return { entries: {}, problem: `${file}: cannot be read (${code ?? String(error)}); ignored` };
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/**
 * Record a decision for `folder` in the package's own record (`decision` null removes it): written to a new
 * 0600 temp file, synced, then renamed over the record. Throws with the reason when it cannot be written.
 */
export function writeTrustDecision(agentDir: string, folder: string, decision: boolean | null): string {
	const file = join(agentDir, TRUST_FILE_NAME);
	mkdirSync(agentDir, { recursive: true, mode: 0o700 });
	let existing: ReturnType<typeof lstatSync> | undefined;
	try {
		existing = lstatSync(file);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
	}
	// A record that is a symlink, not a file, or another user's is never written through or replaced.
	const uid = currentUid();
	if (existing && (!existing.isFile() || (uid !== undefined && existing.uid !== uid)))
		throw new Error(`${file} is not a regular file of yours; not changed`);
	const current = readTrustRecord(agentDir);
	if (current.problem) throw new Error(current.problem);
	const key = canonicalFolder(folder);
	const entries: Record<string, boolean> = { ...current.entries };
	if (decision === null) delete entries[key];
	else entries[key] = decision;
	const sorted = Object.fromEntries(
		Object.keys(entries)
			.sort()
			.map((k) => [k, entries[k]]),
	);
	const temp = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`;
	const fd = openSync(
		temp,
		constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
		0o600,
	);
	try {
		writeSync(fd, `${JSON.stringify(sorted, null, 2)}\n`);
		fsyncSync(fd);
	} catch (error) {
		closeSync(fd);
		rmSync(temp, { force: true });
		throw error;
	}
	closeSync(fd);
	try {
		renameSync(temp, file);
	} catch (error) {
		rmSync(temp, { force: true });
		throw error;
	}
	return key;
}

/**
 * The trust decision for `cwd`. `ctx` is the session's context when `cwd` is that session's own folder (then
 * Pi's answer for it counts); a child's other folder is decided from the records alone.
 */
export function folderTrust(agentDir: string, cwd: string, ctx?: unknown): TrustDecision {
	const folder = canonicalFolder(cwd);
	const hasStore = piHasTrustStore();
	const sessionAnswer =
		ctx !== undefined && typeof (ctx as { isProjectTrusted?: unknown }).isProjectTrusted === "function"
			? piSessionTrusted(ctx)
			: undefined;
	return decideTrust({
		piSession: sessionAnswer,
		piGated: hasStore && sessionAnswer === true ? piGatesProject(folder) : undefined,
		piStore: hasStore ? piTrustStoreEntry(agentDir, folder) : undefined,
		own: nearestEntry(readTrustRecord(agentDir).entries, folder),
		approveFlag: piApproveFlag(),
	});
}

/** Whether `path` is a folder, not following a final symlink. */
function isRealDirectory(path: string): boolean {
	try {
		return lstatSync(path).isDirectory();
	} catch {
		return false;
	}
}

function exists(path: string): boolean {
	try {
		lstatSync(path);
		return true;
	} catch {
		return false;
	}
}

/**
 * The highest folder project files are looked up to: the git root (the nearest folder up from `cwd` holding
 * `.git`), or, deeper than it, the folder the trust decision names; with neither, `cwd` itself. Never above the
 * trusted folder, never above the repository. Pure but for the `.git` probes.
 */
export function projectRoot(cwd: string, trustedPath?: string): string {
	const start = resolve(cwd);
	let gitRoot: string | undefined;
	for (let dir = start; ; ) {
		if (exists(join(dir, ".git"))) {
			gitRoot = dir;
			break;
		}
		const parent = dirname(dir);
		if (parent === dir) break;
		dir = parent;
	}
	const within = (folder: string) => start === folder || start.startsWith(folder.endsWith(sep) ? folder : folder + sep);
	const trusted = trustedPath && within(trustedPath) ? trustedPath : undefined;
	if (gitRoot && trusted) return trusted.length > gitRoot.length ? trusted : gitRoot;
	return gitRoot ?? trusted ?? start;
}

/**
 * The nearest `<ancestor>/<relative>` folder from `cwd` up to `root` (inclusive), never the home folder's own:
 * each step is checked with lstat, so a symlinked folder is not entered. Undefined when there is none.
 */
export function findProjectFolder(cwd: string, relative: string, root: string, home: string): string | undefined {
	let dir = resolve(cwd);
	const top = resolve(root);
	for (;;) {
		if (dir !== home) {
			const candidate = join(dir, relative);
			if (isRealDirectory(candidate)) return candidate;
		}
		if (dir === top) return undefined;
		const parent = dirname(dir);
		if (parent === dir) return undefined;
		dir = parent;
	}
}

/** Whether a project path is safe to read: no symlink on the way from `root`, each part owned by the user. */
export function safeProjectPath(path: string, root: string): string | undefined {
	const uid = currentUid();
	const top = resolve(root);
	const target = resolve(path);
	if (!(target === top || target.startsWith(top.endsWith(sep) ? top : top + sep))) return `${path}: outside ${top}`;
	const parts = target.slice(top.length).split(sep).filter(Boolean);
	let at = top;
	for (const part of parts) {
		at = join(at, part);
		let st: ReturnType<typeof lstatSync>;
		try {
			st = lstatSync(at);
		} catch (error) {
			return `${at}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
		}
		if (st.isSymbolicLink()) return `${at}: a symbolic link; not followed`;
		if (uid !== undefined && st.uid !== uid) return `${at}: not owned by you`;
	}
	return undefined;
}

/** The package's project files in a folder's project (up to its root), as the trust notices name them. */
export function projectFilesPresent(cwd: string, root: string): string[] {
	const home = canonicalFolder(process.env.HOME ?? "/");
	const found: string[] = [];
	const config = join(resolve(cwd), ".pi", "headroom.json");
	if (exists(config)) found.push(config);
	for (const relative of [join(".pi", "agents"), join(".claude", "agents")]) {
		const dir = findProjectFolder(cwd, relative, root, home);
		if (dir) found.push(dir);
	}
	return found;
}

/**
 * `/headroom trust` and `/subagents trust` (`untrust` records "do not trust", `forget` removes the entry): the
 * decision is recorded for the project's root (the git root, else the cwd) in the package's own record. Returns
 * what to tell the person; throws with the reason when the record cannot be written.
 */
export function trustCommand(agentDir: string, cwd: string, verb: "trust" | "untrust" | "forget"): string {
	const folder = projectRoot(canonicalFolder(cwd));
	const decision = verb === "trust" ? true : verb === "untrust" ? false : null;
	const key = writeTrustDecision(agentDir, folder, decision);
	const file = join(agentDir, TRUST_FILE_NAME);
	const files = ".pi/headroom.json, .pi/agents/ and .claude/agents/";
	const after = "from the next session (/reload, /new, or a new pi)";
	const said =
		decision === true
			? `trusted ${key}: its ${files} apply ${after}, within the limits of your own settings`
			: decision === false
				? `marked ${key} untrusted: its ${files} are ignored ${after}`
				: `forgot the decision for ${key}`;
	const pi = piHasTrustStore() ? "; Pi's own project resources follow Pi's /trust" : "";
	return `${said} (recorded in ${file}${pi})`;
}

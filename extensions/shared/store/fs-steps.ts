/**
 * File-system steps for the artifact store, written once as generators and run by a synchronous or an
 * asynchronous driver. A step yields one operation; the driver performs it and sends back the result or
 * throws the error into the generator, so try/finally in the store logic works in both modes.
 */
import * as fs from "node:fs";

export type StepStats = fs.Stats;

type Op =
	| { op: "stat" | "lstat" | "readdir" | "unlink" | "rmdir"; path: string }
	| { op: "mkdir"; path: string; mode: number; recursive: boolean }
	| { op: "chmod"; path: string; mode: number }
	| { op: "open"; path: string; flags: number; mode: number }
	| { op: "fchmod"; fd: number; mode: number }
	| { op: "fstat" | "fsync" | "close" | "futimesNow"; fd: number }
	| { op: "write"; fd: number; data: Uint8Array }
	| { op: "read"; fd: number; buffer: Uint8Array; position: number }
	| { op: "link"; from: string; to: string };

/** A store computation that yields file-system operations and returns T. */
export type Step<T> = Generator<Op, T, unknown>;

function code(error: unknown): string | undefined {
	return (error as NodeJS.ErrnoException | undefined)?.code;
}

function execSync(o: Op): unknown {
	switch (o.op) {
		case "stat":
		case "lstat":
			try {
				return o.op === "stat" ? fs.statSync(o.path) : fs.lstatSync(o.path);
			} catch (error) {
				if (code(error) === "ENOENT") return null;
				throw error;
			}
		case "readdir":
			return fs.readdirSync(o.path);
		case "unlink":
			fs.unlinkSync(o.path);
			return true;
		case "rmdir":
			fs.rmdirSync(o.path);
			return true;
		case "mkdir":
			return fs.mkdirSync(o.path, { mode: o.mode, recursive: o.recursive });
		case "chmod":
			return fs.chmodSync(o.path, o.mode);
		case "open":
			return fs.openSync(o.path, o.flags, o.mode);
		case "fchmod":
			return fs.fchmodSync(o.fd, o.mode);
		case "fstat":
			return fs.fstatSync(o.fd);
		case "fsync":
			return fs.fsyncSync(o.fd);
		case "close":
			return fs.closeSync(o.fd);
		case "futimesNow": {
			const now = new Date();
			return fs.futimesSync(o.fd, now, now);
		}
		case "write": {
			for (let off = 0; off < o.data.length; ) off += fs.writeSync(o.fd, o.data, off, o.data.length - off);
			return undefined;
		}
		case "read":
			return fs.readSync(o.fd, o.buffer, 0, o.buffer.length, o.position);
		case "link":
			try {
				fs.linkSync(o.from, o.to);
				return true;
			} catch (error) {
				if (code(error) === "EEXIST") return false;
				throw error;
			}
	}
}

function callback<T>(start: (done: (error: NodeJS.ErrnoException | null, value?: T) => void) => void): Promise<T> {
	return new Promise<T>((resolve, reject) => start((error, value) => (error ? reject(error) : resolve(value as T))));
}

/**
 * Data operations (write, read, fsync, readdir) go to the libuv thread pool; metadata calls (lstat, open,
 * link, …) run synchronously: they take microseconds, less than a thread-pool round trip costs.
 */
async function execAsync(o: Op): Promise<unknown> {
	switch (o.op) {
		case "readdir":
			return fs.promises.readdir(o.path);
		case "fsync":
			return callback<void>((d) => fs.fsync(o.fd, d));
		case "write": {
			for (let off = 0; off < o.data.length; ) {
				off += await callback<number>((d) => fs.write(o.fd, o.data, off, o.data.length - off, null, d));
			}
			return undefined;
		}
		case "read":
			return callback<number>((d) => fs.read(o.fd, o.buffer, 0, o.buffer.length, o.position, d));
		default:
			return execSync(o);
	}
}

/** Run a step synchronously. */
export function runSync<T>(gen: Step<T>): T {
	let next = gen.next();
	while (!next.done) {
		let value: unknown;
		try {
			value = execSync(next.value);
		} catch (error) {
			next = gen.throw(error);
			continue;
		}
		next = gen.next(value);
	}
	return next.value;
}

/**
 * Run a step on this thread up to its first fsync, which waits in the libuv thread pool: the call returns (a
 * promise) once the bytes are written, so the caller's next work on this thread runs while the disk catches up.
 * What follows the fsync (close, link, verify) runs when the caller awaits, as runAsync runs it.
 */
export function runUntilFsync<T>(gen: Step<T>): Promise<T> {
	return drive(gen, true);
}

/** Run a step with the bulk of its I/O off the event loop (see execAsync). */
export function runAsync<T>(gen: Step<T>): Promise<T> {
	return drive(gen, false);
}

/** The async driver: with `syncUntilFsync`, the operations before the first fsync run on this thread. */
async function drive<T>(gen: Step<T>, syncUntilFsync: boolean): Promise<T> {
	let next = gen.next();
	let sync = syncUntilFsync;
	while (!next.done) {
		let value: unknown;
		try {
			const o = next.value;
			if (o.op === "fsync") sync = false;
			value = sync ? execSync(o) : await execAsync(o);
		} catch (error) {
			next = gen.throw(error);
			continue;
		}
		next = gen.next(value);
	}
	return next.value;
}

function* one<T>(o: Op): Step<T> {
	return (yield o) as T;
}

/** The operations, typed. */
export const fsStep = {
	/** Follows symlinks: only for the trust boundary (agentDir). null when missing. */
	stat: (path: string) => one<fs.Stats | null>({ op: "stat", path }),
	/** Never follows a symlink. null when missing. */
	lstat: (path: string) => one<fs.Stats | null>({ op: "lstat", path }),
	readdir: (path: string) => one<string[]>({ op: "readdir", path }),
	unlink: (path: string) => one<boolean>({ op: "unlink", path }),
	/** Remove an empty directory (never follows a symlink: rmdir of a link fails). */
	rmdir: (path: string) => one<boolean>({ op: "rmdir", path }),
	mkdir: (path: string, mode: number, recursive: boolean) => one<void>({ op: "mkdir", path, mode, recursive }),
	chmod: (path: string, mode: number) => one<void>({ op: "chmod", path, mode }),
	open: (path: string, flags: number, mode: number) => one<number>({ op: "open", path, flags, mode }),
	fchmod: (fd: number, mode: number) => one<void>({ op: "fchmod", fd, mode }),
	fstat: (fd: number) => one<fs.Stats>({ op: "fstat", fd }),
	fsync: (fd: number) => one<void>({ op: "fsync", fd }),
	close: (fd: number) => one<void>({ op: "close", fd }),
	futimesNow: (fd: number) => one<void>({ op: "futimesNow", fd }),
	/** Write all of `data` at the current position. */
	write: (fd: number, data: Uint8Array) => one<void>({ op: "write", fd, data }),
	/** Read into `buffer` from `position`; returns bytes read (0 at end). */
	read: (fd: number, buffer: Uint8Array, position: number) => one<number>({ op: "read", fd, buffer, position }),
	/** Hard-link; false when `to` exists (a link never replaces anything). */
	linkNoReplace: (from: string, to: string) => one<boolean>({ op: "link", from, to }),
	/** Run a step, turning a thrown error into undefined (cleanup that must not mask the real outcome). */
	*quietly<T>(inner: Step<T>): Step<T | undefined> {
		try {
			return yield* inner;
		} catch {
			return undefined;
		}
	},
};

/**
 * The notable scan's decisions on a large text made on two threads (issue 32, cost): the rules' decision on a
 * key line is pure (notable.ts, decidePart), so a second thread (notable-thread.ts) decides the text's first
 * parts while this one stores the output and then decides the last parts; the walk that reads the log as steps
 * (about a tenth of the scan) then reads the joined decisions here. The scan is the same either way, byte for
 * byte.
 *
 * - One thread per process (every extension instance and every /reload share it), started on the first text
 *   worth it (PARALLEL_MIN_UNITS) and ready for the next one; stopped after THREAD_IDLE_MS without a job. It
 *   never keeps the process alive: it is referenced only while a job runs.
 * - The parts go through a small ring both threads share (notable-ring.ts: 1 MiB, made once): this thread
 *   copies a part in (about a memcpy) whenever a slot is free — before it stores the output, after each chunk
 *   it writes (`feed`), and between the parts it decides itself. No copy of the text is queued anywhere.
 * - Each part is decided once, by whichever thread claims it first (the second thread from the front, this one
 *   from the back), so neither waits long on the other.
 * - Nothing is lost when the thread is missing, busy with another job, dies, or answers late: this thread
 *   decides every part it has no answer for.
 */
import { existsSync } from "node:fs";
import * as os from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import {
	type DecidedLines,
	DecisionCache,
	decidePart,
	decisionsOf,
	joinDecided,
	type NotableOptions,
} from "./notable.ts";
import { CONTROL, CONTROL_WORDS, RING_BYTES, RING_SLOTS, SLOT_UNITS } from "./notable-ring.ts";

/** Texts shorter than this are decided on the calling thread alone: the second one would save too little. */
export const PARALLEL_MIN_UNITS = 256 * 1024;
/** The second thread stops after this long without a job (and starts again for the next large text). */
export const THREAD_IDLE_MS = 60_000;
/** Heap of the second thread, in MiB: it holds one part (at most SLOT_UNITS) and a batch of decisions at a time. */
export const THREAD_HEAP_MB = 64;
/**
 * Its young generation, in MiB: a part's strings live there briefly; V8's default (tens of MiB, grown by the
 * warm-up's garbage) would stay resident for nothing.
 */
export const THREAD_YOUNG_MB = 8;
/**
 * Parts per text, about (more: finer sharing, more claims), and their bounds in UTF-16 units: a small part is
 * copied quickly, lands in the thread's young generation, and is shared finely.
 */
const PARTS = 32;
const PART_MIN_UNITS = 8 * 1024;
const PART_MAX_UNITS = SLOT_UNITS;
/**
 * How long this thread waits for the second one's last answers once its own parts are done, beyond what deciding
 * them here would take (a thread starved of a core): then it decides them itself.
 */
const LATE_MS = 250;
/** Decision time per UTF-16 unit this thread assumes for the wait above (a few times the measured ~4 ns). */
const UNIT_NS = 20;

/** The thread's module: the built one beside the bundle, else (from the source) the TypeScript one. */
function threadModule(): { url: URL; execArgv?: string[]; env?: NodeJS.ProcessEnv } {
	const built = new URL("./notable-thread.js", import.meta.url);
	if (existsSync(fileURLToPath(built))) return { url: built };
	const source = new URL("./notable-thread.ts", import.meta.url);
	// Under Bun a worker loads TypeScript itself; Node needs jiti's loader (a development dependency), which then
	// keeps no cache of its own (it would write one into the temporary folder).
	if ("Bun" in globalThis) return { url: source };
	return { url: source, execArgv: ["--import", "jiti/register"], env: { ...process.env, JITI_FS_CACHE: "false" } };
}

/** A message from the second thread. */
type Outgoing =
	| { type: "ready" }
	| { type: "parts"; id: number; parts: { index: number; newlines: number; at: Int32Array }[] }
	| { type: "done"; id: number };

/** The second thread, process-wide. */
interface Thread {
	worker: Worker;
	/** The ring it reads parts from, and a Buffer over it to copy them in. */
	ring: Buffer;
	ready: boolean;
	/** Stopped on purpose (stopNotableThread): not a failed start. */
	stopped: boolean;
	/** The job it is given (at most one at a time, until it says "done"); its answers go there. */
	job: Job | undefined;
	idle: ReturnType<typeof setTimeout> | undefined;
	/** Jobs given so far (a job's id). */
	jobs: number;
}

interface Job {
	id: number;
	/** The answers received, by part. */
	answers: Map<number, { newlines: number; at: Int32Array }>;
	/** Whether the thread said "done" (no more answers will come), or is gone (died or stopped). */
	done: boolean;
	/** Called on each message for the job and when the thread is gone. */
	wake: (() => void) | undefined;
}

const SLOT = Symbol.for("pi-context-headroom.notable-thread");
/**
 * The thread, how many were started, how many died before they were ready (then none is started again), the jobs
 * given, and the cores this process may use (one core: no second thread, it would only take turns with this one).
 */
type Slot = { thread?: Thread; started: number; failed: number; jobs: number; cores: number };
/** Threads that died before they were ready, after which this process decides on one thread only. */
const FAILED_STARTS_MAX = 3;
function slot(): Slot {
	const g = globalThis as unknown as Record<symbol, Slot | undefined>;
	g[SLOT] ??= {
		started: 0,
		failed: 0,
		jobs: 0,
		cores: typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length,
	};
	return g[SLOT];
}

/** How many times the second thread was started in this process, and how many jobs it was given (tests). */
export function notableThreadStats(): { starts: number; jobs: number } {
	return { starts: slot().started, jobs: slot().jobs };
}

/** Stop the second thread (tests; the idle timer). A job it had is finished by the calling thread. */
export function stopNotableThread(): Promise<void> {
	const s = slot();
	const thread = s.thread;
	if (!thread) return Promise.resolve();
	s.thread = undefined;
	thread.stopped = true;
	clearTimeout(thread.idle);
	lose(thread);
	return thread.worker.terminate().then(
		() => undefined,
		() => undefined,
	);
}

/** The thread is gone: its job, if any, is told so. */
function lose(thread: Thread): void {
	const job = thread.job;
	thread.job = undefined;
	if (job) {
		job.done = true;
		job.wake?.();
	}
}

/** Start the second thread (it says "ready" once its code is compiled); false when it cannot be. */
function startThread(s: Slot): boolean {
	if (s.failed >= FAILED_STARTS_MAX || s.cores < 2) return false;
	let worker: Worker;
	const ring = new SharedArrayBuffer(RING_BYTES);
	try {
		const { url, execArgv, env } = threadModule();
		worker = new Worker(url, {
			...(execArgv ? { execArgv } : {}),
			...(env ? { env } : {}),
			workerData: { ring },
			resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB, maxYoungGenerationSizeMb: THREAD_YOUNG_MB },
		});
	} catch {
		s.failed++;
		return false;
	}
	s.started++;
	worker.unref();
	const thread: Thread = {
		worker,
		ring: Buffer.from(ring),
		ready: false,
		stopped: false,
		job: undefined,
		idle: undefined,
		jobs: 0,
	};
	s.thread = thread;
	const gone = () => {
		if (s.thread === thread) s.thread = undefined;
		if (!thread.ready && !thread.stopped) s.failed++;
		clearTimeout(thread.idle);
		lose(thread);
	};
	worker.on("error", gone);
	worker.on("exit", gone);
	worker.on("messageerror", gone);
	worker.on("message", (m: Outgoing) => {
		if (m?.type === "ready") {
			thread.ready = true;
			idleFrom(thread);
			return;
		}
		const job = thread.job;
		if (!job || m?.id !== job.id) return;
		if (m.type === "done") {
			job.done = true;
			thread.job = undefined;
			if (slot().thread === thread) idleFrom(thread);
		} else if (m.type === "parts" && Array.isArray(m.parts)) {
			for (const p of m.parts) {
				if (!p || !Number.isInteger(p.index) || !Number.isInteger(p.newlines) || !(p.at instanceof Int32Array))
					continue;
				job.answers.set(p.index, { newlines: p.newlines, at: p.at });
			}
		}
		job.wake?.();
	});
	return true;
}

/** The second thread when it is ready and free; else undefined (and it is started when there is none). */
function freeThread(): Thread | undefined {
	const s = slot();
	if (!s.thread) {
		startThread(s);
		return undefined;
	}
	return s.thread.ready && !s.thread.job ? s.thread : undefined;
}

/** The thread has no job from now: it stops after THREAD_IDLE_MS unless given one. */
function idleFrom(thread: Thread): void {
	clearTimeout(thread.idle);
	thread.worker.unref();
	thread.idle = setTimeout(() => {
		if (slot().thread === thread && !thread.job) stopNotableThread().catch(() => undefined);
	}, THREAD_IDLE_MS);
	thread.idle.unref?.();
}

/** Decisions being made on two threads (decideAhead). */
export interface DecisionsAhead {
	/** Copy more parts into the ring while slots are free (call it between pieces of other work). */
	feed(): void;
	/** This thread decides its parts (and any the other did not take or answer), then joins them all. */
	finish(): Promise<DecidedLines>;
	/** Not needed after all: the second thread stops at its next part. */
	cancel(): void;
}

/** Part ends of `text`: each at a line's end (or the text's), about PARTS of them, none longer than needed. */
function partsOf(text: string): number[] {
	const size = Math.min(PART_MAX_UNITS, Math.max(PART_MIN_UNITS, Math.ceil(text.length / PARTS)));
	const ends: number[] = [];
	for (let start = 0; start < text.length; ) {
		let end = Math.min(text.length, start + size);
		if (end < text.length) {
			// The last line start within the part (a line longer than the part makes a part of its own).
			const eol = text.lastIndexOf("\n", end - 1);
			if (eol >= start) end = eol + 1;
			else {
				const next = text.indexOf("\n", end);
				end = next === -1 ? text.length : next + 1;
			}
		}
		ends.push(end);
		start = end;
	}
	return ends;
}

/**
 * Start deciding the key lines of `text` on the second thread, for a scan with `options` (its rules and steps):
 * call before storing the output, `feed` while storing it, then `finish`. Undefined when the text is small or
 * the thread is not ready (it is started then, for the next text): the scan then decides as it walks.
 */
export function decideAhead(
	text: string,
	options: Pick<NotableOptions, "evaluation"> = {},
): DecisionsAhead | undefined {
	if (typeof text !== "string" || text.length < PARALLEL_MIN_UNITS) return undefined;
	const thread = freeThread();
	if (!thread) return undefined;
	const { enabled, steps } = decisionsOf(options);
	const ends = partsOf(text);
	const count = ends.length;
	const startOf = (i: number) => (i === 0 ? 0 : ends[i - 1]);
	const claims = new Int32Array(new SharedArrayBuffer(4 * count));
	const control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_WORDS));
	const job: Job = { id: ++thread.jobs, answers: new Map(), done: false, wake: undefined };
	slot().jobs++;
	/** Parts copied into the ring so far; the next part to copy; the first part this thread keeps (from the back). */
	let written = 0;
	let next = 0;
	let back = count;
	/** Parts decided so far on this thread. */
	const parts: ({ newlines: number; at: Int32Array } | undefined)[] = new Array(count);
	/**
	 * Parts the feed passed over (one line longer than a slot): the second thread never sees them, so this thread
	 * decides them first of all its own, while the second thread still decides its parts (at the end, they were
	 * a serial tail: 28 parts, 5.5 MiB of the 64 MiB benchmark's text).
	 */
	const passedOver: number[] = [];
	let closed = false;
	const close = () => {
		if (closed) return;
		closed = true;
		Atomics.store(control, CONTROL.closed, 1);
		Atomics.notify(control, CONTROL.written);
	};
	const feed = () => {
		if (closed || job.done) return;
		let free = RING_SLOTS - (written - Atomics.load(control, CONTROL.taken));
		let copied = false;
		try {
			while (free > 0 && next < back) {
				const i = next++;
				const start = startOf(i);
				const length = ends[i] - start;
				if (length > SLOT_UNITS) {
					passedOver.push(i); // one long line: decided here
					continue;
				}
				const s = written % RING_SLOTS;
				thread.ring.write(text.slice(start, ends[i]), s * SLOT_UNITS * 2, length * 2, "utf16le");
				control[CONTROL.meta + 2 * s] = i;
				control[CONTROL.meta + 2 * s + 1] = length;
				Atomics.store(control, CONTROL.written, ++written);
				free--;
				copied = true;
			}
		} catch {
			close(); // what was not copied is decided here
		}
		if (copied) Atomics.notify(control, CONTROL.written);
	};
	try {
		thread.worker.ref();
		clearTimeout(thread.idle);
		thread.job = job;
		thread.worker.postMessage({ type: "job", id: job.id, control, claims, enabled, steps, units: text.length });
		feed();
	} catch {
		job.done = true; // a message it could not take: this thread decides all
		close();
	}
	let decisions: DecisionCache | undefined;
	const decideHere = (i: number) => {
		decisions ??= new DecisionCache(enabled, steps, text.length);
		const at: number[] = [];
		const newlines = decidePart(text.slice(startOf(i), ends[i]), decisions, at);
		// Typed at once (4 bytes a number, not 8): a log of key lines only holds a triple per line of it.
		return { newlines, at: Int32Array.from(at) };
	};
	const release = () => {
		// Whatever the second thread has not claimed is no longer to be done: it stops at its next part.
		for (let i = 0; i < count; i++) Atomics.compareExchange(claims, i, 0, 2);
		close();
	};
	return {
		feed,
		cancel: release,
		async finish(): Promise<DecidedLines> {
			/** Decides a part the feed passed over, if one is left; false when none is. */
			const passedOne = (): boolean => {
				const i = passedOver.pop();
				if (i === undefined) return false;
				if (parts[i] === undefined && Atomics.compareExchange(claims, i, 0, 2) === 0) parts[i] = decideHere(i);
				return true;
			};
			// The parts the feed passed over first, then from the back: the parts not sent, then those the second
			// thread has not claimed yet; the ring kept fed in between with the parts before them.
			while (back > 0) {
				feed();
				if (passedOne()) continue;
				const i = back - 1;
				if (parts[i] !== undefined) {
					back = i; // passed over, decided already
					continue;
				}
				if (!job.done && Atomics.compareExchange(claims, i, 0, 2) !== 0) break;
				back = i;
				parts[i] = decideHere(i);
			}
			while (passedOne());
			close();
			// Parts before `back` are the second thread's: its answers, waited for while it is alive and not late.
			const deadline = performance.now() + LATE_MS + (startOf(back) * UNIT_NS) / 1e6;
			while (!job.done) {
				const left = deadline - performance.now();
				if (left <= 0) break;
				await new Promise<void>((resolve) => {
					const timer = setTimeout(resolve, left);
					job.wake = () => {
						clearTimeout(timer);
						resolve();
					};
				});
				job.wake = undefined;
			}
			const late = !job.done;
			release();
			if (late) stopNotableThread().catch(() => undefined); // starved or stuck: a fresh one next time
			for (let k = 0; k < count; k++) parts[k] ??= job.answers.get(k) ?? decideHere(k);
			return joinDecided(
				parts.map((p, k) => ({ units: ends[k] - startOf(k), newlines: p?.newlines ?? 0, at: p?.at ?? [] })),
				enabled,
				steps,
			);
		},
	};
}

/**
 * The recall search runs in a worker thread with a deadline: the pattern is the model's, and one
 * with nested quantifiers can backtrack for hours over a large artifact; on the main thread that
 * would freeze Pi. A worker can be terminated mid-match.
 *
 * The worker is search-thread.js and its scan search-lines.js: plain JavaScript modules that tsc
 * checks through JSDoc types. Pi loads extensions through jiti on Node and natively under Bun, and
 * a worker started from a .ts file loads under only one of them; a .js module loads under both.
 */
import { Worker } from "node:worker_threads";
import type { SearchHit, SearchJob } from "./search-lines.js";

export type { SearchHit, SearchJob } from "./search-lines.js";
export { searchLines } from "./search-lines.js";

/** How long one search may run before it is stopped, in milliseconds. */
export const RECALL_SEARCH_TIMEOUT_MS = 5_000;
/** Search workers running at once in this process; more wait their turn. */
export const RECALL_MAX_WORKERS = 2;
/** Searches waiting for a worker at most; one more is refused, saying so. */
export const RECALL_MAX_QUEUED = 8;
/** Heap of one search worker, in MiB: it reads in 1 MiB chunks and lists at most ROWS_MAX_CHARS of rows. */
export const RECALL_WORKER_HEAP_MB = 96;

/** The worker thread's module, beside this one in the installed package. */
export const SEARCH_THREAD_URL = new URL("./search-thread.js", import.meta.url);

/** A search's outcome; failures are codes, worded for the model in prompt.ts. */
export type SearchOutcome =
	| ({ ok: true } & SearchHit)
	| { ok: false; code: "timeout"; timeoutMs: number }
	| { ok: false; code: "aborted" | "failed" }
	/** Too many searches at once: this one was not run. */
	| { ok: false; code: "busy"; running: number; queued: number }
	/** The file could not be read; `errno` is the system's code when there is one. */
	| { ok: false; code: "unreadable"; errno?: string };

/**
 * Pure: accept a worker's message only in the shape the worker sends. A "timeout" from the worker is a pattern
 * the engine gave up on (JavaScriptCore stops itself; V8 runs on until the deadline): reported like the deadline.
 */
export function parseWorkerMessage(message: unknown, timeoutMs = RECALL_SEARCH_TIMEOUT_MS): SearchOutcome {
	const m = message as Record<string, unknown> | null;
	if (m && m.ok === false && m.code === "timeout") return { ok: false, code: "timeout", timeoutMs };
	if (m && m.ok === false && m.code === "unreadable") {
		return { ok: false, code: "unreadable", errno: typeof m.errno === "string" ? m.errno : undefined };
	}
	const valid =
		m?.ok === true &&
		Array.isArray(m.rows) &&
		m.rows.every((row) => typeof row === "string") &&
		typeof m.matches === "number" &&
		typeof m.capped === "boolean" &&
		typeof m.total === "number" &&
		typeof m.lastMatch === "number" &&
		(m.longLines === undefined || typeof m.longLines === "number");
	if (!valid) return { ok: false, code: "failed" };
	return {
		ok: true,
		rows: m.rows as string[],
		matches: m.matches as number,
		capped: m.capped as boolean,
		total: m.total as number,
		lastMatch: m.lastMatch as number,
		...(typeof m.longLines === "number" && m.longLines > 0 ? { longLines: m.longLines } : {}),
	};
}

/** Searches running and waiting, process-wide (each extension instance shares the one machine). */
const POOL = Symbol.for("pi-context-headroom.recall-search-pool");
type Pool = { running: number; queue: Array<() => void> };
function pool(): Pool {
	const g = globalThis as unknown as Record<symbol, Pool | undefined>;
	g[POOL] ??= { running: 0, queue: [] };
	return g[POOL];
}

/**
 * Run one search in a worker when one of RECALL_MAX_WORKERS is free (at most RECALL_MAX_QUEUED wait; one
 * more is refused as busy); the deadline counts from the worker's start.
 */
export async function runSearch(
	job: SearchJob,
	options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<SearchOutcome> {
	const p = pool();
	if (p.running >= RECALL_MAX_WORKERS) {
		if (p.queue.length >= RECALL_MAX_QUEUED)
			return { ok: false, code: "busy", running: p.running, queued: p.queue.length };
		await new Promise<void>((resolve) => p.queue.push(resolve));
	} else p.running++;
	try {
		return await runSearchNow(job, options);
	} finally {
		const next = p.queue.shift();
		if (next)
			next(); // the slot passes on
		else p.running--;
	}
}

/** Run one search in a worker; settles by `timeoutMs` at the latest (the worker is then terminated). */
function runSearchNow(
	job: SearchJob,
	options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<SearchOutcome> {
	const timeoutMs = options.timeoutMs ?? RECALL_SEARCH_TIMEOUT_MS;
	if (options.signal?.aborted) return Promise.resolve({ ok: false, code: "aborted" });
	return new Promise((resolve) => {
		let worker: Worker;
		try {
			worker = new Worker(SEARCH_THREAD_URL, {
				workerData: job,
				resourceLimits: { maxOldGenerationSizeMb: RECALL_WORKER_HEAP_MB },
			});
		} catch {
			resolve({ ok: false, code: "failed" });
			return;
		}
		let settled = false;
		const finish = (outcome: SearchOutcome) => {
			if (settled) return;
			settled = true;
			clearTimeout(timer);
			options.signal?.removeEventListener("abort", onAbort);
			// A timed-out or aborted search may still be backtracking: stop it. After a result it is a no-op.
			worker.terminate().catch(() => undefined);
			resolve(outcome);
		};
		const timer = setTimeout(() => finish({ ok: false, code: "timeout", timeoutMs }), timeoutMs);
		const onAbort = () => finish({ ok: false, code: "aborted" });
		options.signal?.addEventListener("abort", onAbort, { once: true });
		worker.on("message", (message: unknown) => finish(parseWorkerMessage(message, timeoutMs)));
		worker.on("error", () => finish({ ok: false, code: "failed" }));
		worker.on("exit", () => finish({ ok: false, code: "failed" }));
	});
}

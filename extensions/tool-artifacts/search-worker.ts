/**
 * The recall search runs in a worker thread with a deadline: the pattern is the model's, and one
 * with nested quantifiers can backtrack for hours over a large artifact; on the main thread that
 * would freeze Pi. A worker can be terminated mid-match.
 *
 * The worker's code is plain JavaScript text started with `eval: true`: Pi loads extensions through
 * jiti on Node and natively under Bun, and a worker started from a .ts file is not loadable in both;
 * a script string is. The routine is small and tested on its own (tests evaluate SEARCH_ROUTINE_JS).
 */
import { Worker } from "node:worker_threads";

/** How long one search may run before it is stopped, in milliseconds. */
export const RECALL_SEARCH_TIMEOUT_MS = 5_000;

/**
 * `searchLines(text, source, flags, context, maxMatches, separator, start)`: the lines of `text` from
 * line `start` on (split on "\n", 1-based as Pi's read counts) matching the regular expression, grep -n
 * style: "N:line" for a match, "N-line" for context (never before `start`), `separator` between groups
 * that are not adjacent. Stops testing after `maxMatches` matches (the last match still gets its context
 * lines). Returns `{ rows, matches, capped, total, lastMatch }`: `total` is the number of lines of the
 * text, `lastMatch` the line of the last match (0: none), `capped` true when the cap stopped the search
 * with lines left after the last match.
 */
export const SEARCH_ROUTINE_JS = String.raw`
function searchLines(text, source, flags, context, maxMatches, separator, start) {
	const regex = new RegExp(source, flags);
	const rows = [];
	let before = [];
	let matches = 0;
	let lastMatch = 0;
	let lastPrinted = 0;
	let afterLeft = 0;
	let lineNo = 0;
	let pos = 0;
	for (const first = Math.max(1, start || 1); lineNo < first - 1; lineNo++) {
		const newline = text.indexOf("\n", pos);
		if (newline === -1) return { rows, matches, capped: false, total: lineNo + 1, lastMatch };
		pos = newline + 1;
	}
	for (;;) {
		const newline = text.indexOf("\n", pos);
		const end = newline === -1 ? text.length : newline;
		lineNo++;
		const line = text.slice(pos, end);
		regex.lastIndex = 0;
		if (matches < maxMatches && regex.test(line)) {
			const first = before.length > 0 ? before[0][0] : lineNo;
			if (lastPrinted > 0 && first > lastPrinted + 1) rows.push(separator);
			for (const entry of before) rows.push(entry[0] + "-" + entry[1]);
			before = [];
			rows.push(lineNo + ":" + line);
			lastPrinted = lineNo;
			lastMatch = lineNo;
			matches++;
			afterLeft = context;
		} else if (afterLeft > 0) {
			rows.push(lineNo + "-" + line);
			lastPrinted = lineNo;
			afterLeft--;
		} else if (matches >= maxMatches) {
			let rest = 0;
			for (let at = text.indexOf("\n", pos); at !== -1; at = text.indexOf("\n", at + 1)) rest++;
			return { rows, matches, capped: true, total: lineNo + rest, lastMatch };
		} else if (context > 0) {
			before.push([lineNo, line]);
			if (before.length > context) before.shift();
		}
		if (newline === -1) break;
		pos = newline + 1;
	}
	return { rows, matches, capped: matches >= maxMatches && lastMatch < lineNo, total: lineNo, lastMatch };
}
`;

/** The worker: read the artifact without following a symlink, search it, post the result once. */
export const SEARCH_WORKER_JS = `${SEARCH_ROUTINE_JS}
function main() {
	const { parentPort, workerData } = require("node:worker_threads");
	const fs = require("node:fs");
	let text;
	try {
		const fd = fs.openSync(workerData.path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
		try {
			text = fs.readFileSync(fd, "utf8");
		} finally {
			fs.closeSync(fd);
		}
	} catch (error) {
		const errno = error && typeof error.code === "string" ? error.code : undefined;
		parentPort.postMessage({ ok: false, code: "unreadable", errno });
		return;
	}
	const d = workerData;
	parentPort.postMessage({ ok: true, ...searchLines(text, d.source, d.flags, d.context, d.maxMatches, d.separator, d.start) });
}
main();
`;

/** One search: which stored file, and the pattern as a compiled RegExp's source and flags. */
export interface SearchJob {
	/** Absolute path of the artifact, as the store resolved it (never from model text). */
	path: string;
	/** RegExp source and flags (already compiled once on the main thread, so known valid). */
	source: string;
	flags: string;
	/** Context lines around each match. */
	context: number;
	/** Matches listed at most. */
	maxMatches: number;
	/** Row between non-adjacent groups. */
	separator: string;
	/** 1-based line the search starts at. */
	start: number;
}

/** What the search found. */
export interface SearchHit {
	/** Output rows: "N:line", "N-line" or the separator. */
	rows: string[];
	/** Matching lines listed. */
	matches: number;
	/** True when the search stopped at maxMatches with lines left after the last match. */
	capped: boolean;
	/** Lines of the artifact. */
	total: number;
	/** Line of the last match (0 when none). */
	lastMatch: number;
}

/** A search's outcome; failures are codes, worded for the model in prompt.ts. */
export type SearchOutcome =
	| ({ ok: true } & SearchHit)
	| { ok: false; code: "timeout"; timeoutMs: number }
	| { ok: false; code: "aborted" | "failed" }
	/** The file could not be read; `errno` is the system's code when there is one. */
	| { ok: false; code: "unreadable"; errno?: string };

/** Pure: accept a worker's message only in the shape the worker sends. */
export function parseWorkerMessage(message: unknown): SearchOutcome {
	const m = message as Record<string, unknown> | null;
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
		typeof m.lastMatch === "number";
	if (!valid) return { ok: false, code: "failed" };
	return {
		ok: true,
		rows: m.rows as string[],
		matches: m.matches as number,
		capped: m.capped as boolean,
		total: m.total as number,
		lastMatch: m.lastMatch as number,
	};
}

/** Run one search in a worker; settles by `timeoutMs` at the latest (the worker is then terminated). */
export function runSearch(
	job: SearchJob,
	options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<SearchOutcome> {
	const timeoutMs = options.timeoutMs ?? RECALL_SEARCH_TIMEOUT_MS;
	if (options.signal?.aborted) return Promise.resolve({ ok: false, code: "aborted" });
	return new Promise((resolve) => {
		let worker: Worker;
		try {
			worker = new Worker(SEARCH_WORKER_JS, { eval: true, workerData: job });
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
		worker.on("message", (message: unknown) => finish(parseWorkerMessage(message)));
		worker.on("error", () => finish({ ok: false, code: "failed" }));
		worker.on("exit", () => finish({ ok: false, code: "failed" }));
	});
}

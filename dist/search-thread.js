// @ts-check
/**
 * The recall search's worker thread (started by search-worker.ts): read the artifact without
 * following a symlink, in chunks, searching it line by line; post the result once. Plain JavaScript for the reason given in
 * search-lines.js; type-checked by tsc through JSDoc.
 */
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { LINE_MAX_CHARS, lineSearch, PatternGaveUp, readLines } from "./search-lines.js";

/** @typedef {import("./search-lines.js").SearchJob} SearchJob */

/**
 * @param {SearchJob} job
 * @returns {Record<string, unknown>} the message to post
 */
function run(job) {
	const scan = lineSearch(job.source, job.flags, job.context, job.maxMatches, job.separator, job.start);
	let rest = 0;
	try {
		// Read in chunks, line by line: the file is never held whole (search-lines.js).
		const fd = openSync(job.path, constants.O_RDONLY | constants.O_NOFOLLOW | (constants.O_NONBLOCK ?? 0));
		try {
			if (!fstatSync(fd).isFile()) return { ok: false, code: "unreadable", errno: "EINVAL" };
			rest = readLines(fd, LINE_MAX_CHARS, (line, fullLength) => scan.push(line, fullLength));
		} finally {
			closeSync(fd);
		}
	} catch (error) {
		// The pattern backtracks without end; the engine gave up on a line (see MATCH_GAVE_UP_MS).
		if (error instanceof PatternGaveUp) return { ok: false, code: "timeout" };
		const code = /** @type {{ code?: unknown } | undefined} */ (error)?.code;
		return { ok: false, code: "unreadable", errno: typeof code === "string" ? code : undefined };
	}
	return { ok: true, ...scan.finish(rest) };
}

parentPort?.postMessage(run(/** @type {SearchJob} */ (workerData)));

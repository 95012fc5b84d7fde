// @ts-check
/**
 * The recall search's worker thread (started by search-worker.ts): read the artifact without
 * following a symlink, search it, post the result once. Plain JavaScript for the reason given in
 * search-lines.js; type-checked by tsc through JSDoc.
 */
import { closeSync, constants, openSync, readFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { searchLines } from "./search-lines.js";

/** @typedef {import("./search-lines.js").SearchJob} SearchJob */

/**
 * @param {SearchJob} job
 * @returns {Record<string, unknown>} the message to post
 */
function run(job) {
	let text;
	try {
		const fd = openSync(job.path, constants.O_RDONLY | constants.O_NOFOLLOW);
		try {
			text = readFileSync(fd, "utf8");
		} finally {
			closeSync(fd);
		}
	} catch (error) {
		const code = /** @type {{ code?: unknown } | undefined} */ (error)?.code;
		return { ok: false, code: "unreadable", errno: typeof code === "string" ? code : undefined };
	}
	const hit = searchLines(text, job.source, job.flags, job.context, job.maxMatches, job.separator, job.start);
	return { ok: true, ...hit };
}

parentPort?.postMessage(run(/** @type {SearchJob} */ (workerData)));

// @ts-check
/**
 * The output_schema pattern probe's worker thread (started by pattern-probe.ts): every `pattern` of a child's
 * output_schema is tried against every string of its answer, here and not on Pi's main thread, because a
 * pattern with nested quantifiers can backtrack for hours. Before each pattern it posts the pattern's index,
 * so a probe stopped at its deadline can name the pattern that hung. Plain JavaScript: a worker started from
 * a .ts file loads under only one of Pi's loaders, a .js module under both.
 */
import { parentPort, workerData } from "node:worker_threads";

/** A failed match that took this long, in milliseconds, is taken as the engine giving up on the pattern. */
const GAVE_UP_MS = 150;

/** @param {{ patterns: string[]; strings: string[] }} job */
function run(job) {
	for (let i = 0; i < job.patterns.length; i++) {
		parentPort?.postMessage({ at: i });
		let re;
		try {
			re = new RegExp(job.patterns[i], "u"); // as TypeBox builds it
		} catch {
			continue; // TypeBox refused it at spawn already
		}
		for (const s of job.strings) {
			const started = performance.now();
			// JavaScriptCore (Bun) abandons a backtracking match after a step limit and reports "no match";
			// V8 runs on. A failed match this slow is the pattern backtracking without end, on either engine.
			if (!re.test(s) && performance.now() - started >= GAVE_UP_MS) {
				parentPort?.postMessage({ gaveUp: i });
				return;
			}
		}
	}
	parentPort?.postMessage({ done: true });
}

run(/** @type {{ patterns: string[]; strings: string[] }} */ (workerData));

// @ts-check
/**
 * The output_schema pattern probe's worker thread (started by pattern-probe.ts): every `pattern` of a child's
 * output_schema is tried against every string of its answer, here and not on Pi's main thread, because a
 * pattern with nested quantifiers can backtrack for hours. Before each pattern it posts the pattern's index,
 * so a probe stopped at its deadline can name the pattern that hung. Plain JavaScript: a worker started from
 * a .ts file loads under only one of Pi's loaders, a .js module under both.
 */
import { parentPort, workerData } from "node:worker_threads";

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
		for (const s of job.strings) re.test(s);
	}
	parentPort?.postMessage({ done: true });
}

run(/** @type {{ patterns: string[]; strings: string[] }} */ (workerData));

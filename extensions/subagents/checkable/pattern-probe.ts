/**
 * A time bound for output_schema `pattern`s. TypeBox's validator runs each pattern on Pi's main thread, and a
 * pattern is the model's text: one with nested quantifiers (`^(a+)+$`) over a long string backtracks for hours,
 * which would freeze Pi. So before an answer is validated, every pattern of the schema is tried against every
 * string of the answer in a worker thread with a deadline (and a memory limit); only when all of them finish
 * in time does the validator run. A pattern that does not is named in the answer's verdict.
 */
import { Worker } from "node:worker_threads";

/** How long all of an answer's pattern matches may take together, in milliseconds. */
export const PATTERN_PROBE_TIMEOUT_MS = 2_000;
/** Heap of the probe's worker, in MiB (an answer is searched in its last MiB: JSON_SEARCH_MAX_CHARS). */
export const PATTERN_PROBE_HEAP_MB = 64;
/** The worker's module, beside this one (copied into dist/ beside the bundle by the build). */
export const PATTERN_THREAD_URL = new URL("./pattern-thread.js", import.meta.url);

/** What the probe found: all patterns finished in time, or the one that did not (or the worker failed). */
export type PatternProbe =
	| { ok: true }
	| { ok: false; pattern: string; timeoutMs: number }
	| { ok: false; failed: true };

const DATA_KEYS = new Set(["enum", "const", "default", "examples"]);

/** Every keyword entry `[key, value]` of a JSON Schema, at any depth; data keywords (enum, const, …) skipped. */
export function* schemaEntries(schema: unknown): Generator<[string, unknown]> {
	const stack: unknown[] = [schema];
	while (stack.length > 0) {
		const node = stack.pop();
		if (!node || typeof node !== "object") continue;
		if (Array.isArray(node)) {
			stack.push(...node);
			continue;
		}
		for (const [key, value] of Object.entries(node)) {
			if (DATA_KEYS.has(key)) continue;
			yield [key, value];
			stack.push(value);
		}
	}
}

/** Every `pattern` string and `patternProperties` key of a JSON Schema (data keywords skipped). */
export function schemaPatterns(schema: unknown): string[] {
	const found = new Set<string>();
	for (const [key, value] of schemaEntries(schema)) {
		if (key === "pattern" && typeof value === "string") found.add(value);
		else if (key === "patternProperties" && value && typeof value === "object")
			for (const p of Object.keys(value)) found.add(p);
	}
	return [...found];
}

/** Every string a validator could match a pattern against: string values and object keys. */
export function valueStrings(value: unknown): string[] {
	const found = new Set<string>();
	const stack: unknown[] = [value];
	while (stack.length > 0) {
		const node = stack.pop();
		if (typeof node === "string") found.add(node);
		else if (Array.isArray(node)) stack.push(...node);
		else if (node && typeof node === "object") {
			for (const [key, v] of Object.entries(node)) {
				found.add(key);
				stack.push(v);
			}
		}
	}
	return [...found];
}

/** Try every pattern on every string off the main thread; settles by `timeoutMs` (the worker is then stopped). */
export function probePatterns(
	patterns: readonly string[],
	strings: readonly string[],
	timeoutMs = PATTERN_PROBE_TIMEOUT_MS,
): Promise<PatternProbe> {
	if (patterns.length === 0 || strings.length === 0) return Promise.resolve({ ok: true });
	return new Promise((resolve) => {
		let worker: Worker;
		try {
			worker = new Worker(PATTERN_THREAD_URL, {
				workerData: { patterns, strings },
				resourceLimits: { maxOldGenerationSizeMb: PATTERN_PROBE_HEAP_MB },
			});
		} catch {
			resolve({ ok: false, failed: true });
			return;
		}
		let at = 0;
		let settled = false;
		const finish = (outcome: PatternProbe) => {
			if (settled) return;
			settled = true;
			clearTimeout(timer);
			worker.terminate().catch(() => undefined);
			resolve(outcome);
		};
		const timer = setTimeout(() => finish({ ok: false, pattern: patterns[at] ?? "", timeoutMs }), timeoutMs);
		worker.on("message", (m: { at?: unknown; done?: unknown; gaveUp?: unknown }) => {
			if (typeof m?.at === "number") at = m.at;
			// The engine gave up on a pattern (JavaScriptCore does, after a step limit): it did not finish.
			else if (typeof m?.gaveUp === "number") finish({ ok: false, pattern: patterns[m.gaveUp] ?? "", timeoutMs });
			else if (m?.done === true) finish({ ok: true });
		});
		worker.on("error", () => finish({ ok: false, failed: true }));
		worker.on("exit", () => finish({ ok: false, failed: true }));
	});
}

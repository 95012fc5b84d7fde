/**
 * The notable scan's second thread (started by notable-parallel.ts): it decides the key lines of the parts of a
 * text (decidePart) that the calling thread copies into a small shared ring, and posts their decisions back.
 *
 * - A job is one text. The ring (workerData) has RING_SLOTS slots of SLOT_UNITS UTF-16 units; the job's
 *   control words count the parts written into it and taken out of it, and say when no more will come. This
 *   thread waits for a part (Atomics.wait: a worker may block), copies it out as a string, frees its slot,
 *   then claims it (its slot in the job's claims goes from 0 to 1) and decides it. The calling thread decides
 *   parts from the other end and takes what this thread has not claimed: a claim that fails ends the job here
 *   (the parts after it are the other's).
 * - Answers go back in batches (a message costs the calling thread about as much as a small part): ANSWER_BATCH
 *   parts at a time, then the rest and "done" when the job ends.
 * - Built into dist/notable-thread.js (scripts/build.ts); from the source it runs through jiti on Node,
 *   natively under Bun.
 *
 * The text is a tool's output: data, never instructions. This thread only runs the rules' expressions on it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { DecisionCache, decidePart, NOTABLE_RULES } from "./notable.ts";
import { CONTROL, RING_SLOTS, SLOT_UNITS } from "./notable-ring.ts";

/** Parts decided before their answers are posted, at most. */
const ANSWER_BATCH = 64;
/** A job that gets no part for this long is over (the calling thread stopped feeding it). */
const STALLED_MS = 5_000;

/** A message from the calling thread: a new job. */
interface JobMessage {
	type: "job";
	id: number;
	control: Int32Array;
	claims: Int32Array;
	enabled: Uint8Array;
	steps: boolean;
	units: number;
}

const ring: SharedArrayBuffer | undefined = (workerData as { ring?: SharedArrayBuffer } | undefined)?.ring;

/** Decide the parts of one job as they come through the ring; post the answers, then "done". */
function runJob(m: JobMessage, units: Buffer): void {
	const control = m.control;
	const decisions = new DecisionCache(m.enabled, m.steps, m.units);
	let batch: { index: number; newlines: number; at: Int32Array }[] = [];
	const flush = () => {
		if (batch.length === 0) return;
		const parts = batch;
		batch = [];
		parentPort?.postMessage(
			{ type: "parts", id: m.id, parts },
			parts.map((p) => p.at.buffer as ArrayBuffer),
		);
	};
	let taken = 0;
	let waitedSince = 0;
	for (;;) {
		const written = Atomics.load(control, CONTROL.written);
		if (taken === written) {
			if (Atomics.load(control, CONTROL.closed) === 1) break;
			const now = performance.now();
			if (waitedSince === 0) waitedSince = now;
			else if (now - waitedSince > STALLED_MS) break;
			Atomics.wait(control, CONTROL.written, written, 50);
			continue;
		}
		waitedSince = 0;
		const slot = taken % RING_SLOTS;
		const index = Atomics.load(control, CONTROL.meta + 2 * slot);
		const length = Atomics.load(control, CONTROL.meta + 2 * slot + 1);
		const text = units.toString("utf16le", slot * SLOT_UNITS * 2, (slot * SLOT_UNITS + length) * 2);
		taken++;
		Atomics.store(control, CONTROL.taken, taken); // the slot is free again
		Atomics.notify(control, CONTROL.taken);
		// The calling thread took it (it decides from the other end): so are the parts after it.
		if (Atomics.compareExchange(m.claims, index, 0, 1) !== 0) break;
		const at: number[] = [];
		const newlines = decidePart(text, decisions, at);
		batch.push({ index, newlines, at: Int32Array.from(at) });
		if (batch.length >= ANSWER_BATCH) flush();
	}
	flush();
	parentPort?.postMessage({ type: "done", id: m.id });
}

function onMessage(m: JobMessage): void {
	if (m?.type !== "job" || !ring) return;
	try {
		runJob(m, Buffer.from(ring));
	} catch {
		// A part this thread could not decide is decided by the calling thread (it has no answer for it).
		parentPort?.postMessage({ type: "done", id: m.id });
	}
}

/**
 * The hot paths compiled before the first job (a job then runs at full speed from its first part): a made-up
 * log of distinct lines (a repeated line is decided once) with the shapes the rules look at, decided a few times.
 */
function warmUp(): void {
	const shapes = [
		"npm ERR! code ELIFECYCLE %",
		"FAILED tests/test_%.py::test_case - AssertionError: assert % == 1",
		"% passed, 1 failed, 2 skipped in 0.%s",
		"error[E0%]: mismatched types at src/main.rs:%:5",
		"src/app.ts(%,7): error TS2322: Type 'string' is not assignable",
		"Tests run: %, Failures: 1, Errors: 0, Skipped: 0",
		"##[error]Process completed with exit code %.",
		"make: *** [Makefile:%: all] Error 2",
		"    at Object.<anonymous> (/app/test/%.test.js:10:5)",
		"warning: unused variable `x%`",
		"ok % - parses the header",
		"not ok % - keeps the footer",
		"Traceback (most recent call last): %",
		"[INFO] Building module-% 1.0-SNAPSHOT",
		"compiling crate % v0.1.0 with 3 warnings",
		"The command exited with % and the job failed",
		'{"level":"error","msg":"request % failed","code":500}',
	];
	const lines: string[] = [];
	for (let i = 0; lines.length < 1500; i++) for (const s of shapes) lines.push(s.replaceAll("%", String(i * 7 + 3)));
	const text = `${lines.join("\n")}\n`;
	const all = new Uint8Array(NOTABLE_RULES.length).fill(1);
	for (let k = 0; k < 3; k++) decidePart(text, new DecisionCache(all, true, text.length), []);
}

parentPort?.on("message", onMessage);
warmUp();
parentPort?.postMessage({ type: "ready" });

/**
 * Projection benchmarks, measured side by side in one run. Each contender pair runs interleaved (A then B,
 * then B then A, round after round) and the figure is the median of the per-round ratios, so drift and
 * load from other processes hit both sides alike.
 * 1. projection of 1 MiB and 64 MiB to 16 KiB with its artifact vs. the floor of a durable write: SHA-256
 *    + write + fsync of the same bytes (goal ≤ 1.5×). The store fsyncs every artifact before it gets its
 *    name (by contract: no reader may ever see a partial file after a crash), so a floor without fsync
 *    measures a promise the store does not make; that row is printed for information only, without a goal;
 * 2. projection without artifact vs. Pi's truncateHead on the same input (goal ≤ 1.0×);
 * 3. peak extra memory while projecting 64 MiB with its artifact (goal ≤ 1× the input).
 *
 *   node --expose-gc --import jiti/register test/bench/projection.bench.ts   (or: npm run bench -- projection)
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
	closeSync,
	fsync,
	fsyncSync,
	mkdtempSync,
	openSync,
	rmSync,
	unlinkSync,
	write,
	writeFileSync,
	writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { truncateHead } from "@mariozechner/pi-coding-agent";
import {
	type ProjectionLimits,
	projectResult,
	projectResultSync,
	projectText,
} from "../../extensions/shared/projection/projection.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";

const MiB = 1024 * 1024;
const LIMITS: ProjectionLimits = { maxBytes: 16 * 1024, maxLines: 2000 };
const dir = mkdtempSync(join(tmpdir(), "headroom-bench-"));
const store = new ArtifactStore({ agentDir: dir });
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

/** A flat string of about `bytes` UTF-8 bytes made of log-like lines. */
function logText(bytes: number, line: (i: number) => string): string {
	const lines: string[] = [];
	let size = 0;
	for (let i = 0; size < bytes; i++) {
		const l = line(i);
		lines.push(l);
		size += Buffer.byteLength(l) + 1;
	}
	return lines.join("\n");
}
const ascii = (i: number) =>
	`2024-05-01T12:00:${String(i % 60).padStart(2, "0")}Z INFO worker-${i % 7} item ${i} done in ${i % 997}ms`;
const cjk = (i: number) => `第${i}行 日志：任务完成，耗时 ${i % 997} 毫秒 😀`;

function median(xs: number[]): number {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)];
}

/** Per-call medians of A and B and the median of the per-round ratios A/B. */
interface PairTiming {
	/** Median ms per call of A. */
	a: number;
	/** Median ms per call of B. */
	b: number;
	/** Median over rounds of (A's time / B's time) in that round. */
	ratio: number;
}

/** Time of one call in ms. */
async function once(run: () => unknown): Promise<number> {
	const t0 = performance.now();
	await run();
	return performance.now() - t0;
}

/**
 * A and B interleaved call by call (the order flipped on every call), `reps` calls of each per round; the
 * round's ratio is A's total over B's. Fine-grained interleaving makes load from other processes, which
 * comes and goes in scheduler slices of milliseconds, fall on both sides alike.
 */
async function pair(rounds: number, reps: number, a: () => unknown, b: () => unknown): Promise<PairTiming> {
	for (let i = 0; i < Math.max(3, reps); i++) {
		await a(); // warm-up, so both sides run optimised code
		await b();
	}
	const as: number[] = [];
	const bs: number[] = [];
	const ratios: number[] = [];
	for (let r = 0; r < rounds; r++) {
		gc();
		let ta = 0;
		let tb = 0;
		for (let i = 0; i < reps; i++) {
			if ((r + i) % 2 === 0) {
				ta += await once(a);
				tb += await once(b);
			} else {
				tb += await once(b);
				ta += await once(a);
			}
		}
		as.push(ta / reps);
		bs.push(tb / reps);
		ratios.push(ta / tb);
	}
	return { a: median(as), b: median(bs), ratio: median(ratios) };
}

/** The floor of a durable write, done as the store does it: hash, then write and fsync the same bytes. */
function floorWrite(text: string, fsync: boolean) {
	const bytes = Buffer.from(text, "utf8");
	createHash("sha256").update(bytes).digest("hex");
	const path = join(dir, "floor.txt");
	if (fsync) {
		const fd = openSync(path, "w", 0o600);
		writeSync(fd, bytes);
		fsyncSync(fd);
		closeSync(fd);
	} else writeFileSync(path, bytes);
	unlinkSync(path);
}

/** The same floor with the data calls off the event loop, as the async store does (write and fsync in the pool). */
async function floorWriteAsync(text: string) {
	const bytes = Buffer.from(text, "utf8");
	createHash("sha256").update(bytes).digest("hex");
	const path = join(dir, "floor.txt");
	const fd = openSync(path, "w", 0o600);
	await new Promise<void>((resolve, reject) => write(fd, bytes, (error) => (error ? reject(error) : resolve())));
	await new Promise<void>((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
	closeSync(fd);
	unlinkSync(path);
}

/** Projection with its artifact; the artifact is removed after each run so every run writes anew. */
function projectStoring(text: string, sync: boolean) {
	const sink = { store, kind: "tool-outputs" as const };
	const done = (p: Awaited<ReturnType<typeof projectResult>>) => {
		if (!p.artifact?.ok) throw new Error(`artifact not stored: ${JSON.stringify(p.artifact)}`);
		unlinkSync(p.artifact.path);
	};
	return sync ? done(projectResultSync(text, LIMITS, sink)) : projectResult(text, LIMITS, sink).then(done);
}

const rows: string[][] = [];
/** One table row; `goal` undefined marks a row shown for information only. */
function row(name: string, t: PairTiming, goal: number | undefined) {
	const ms = (x: number) => x.toFixed(x < 1 ? 3 : 1);
	rows.push([
		name,
		ms(t.a),
		ms(t.b),
		`${t.ratio.toFixed(2)}×`,
		goal === undefined ? "(info)" : `≤ ${goal.toFixed(1)}×`,
		goal === undefined ? "" : t.ratio <= goal ? "ok" : "MISSED",
	]);
}

/** Largest resident-set growth during `run`, sampled every millisecond by a worker thread. */
async function peakRssGrowth(run: () => void): Promise<number> {
	const flag = new Int32Array(new SharedArrayBuffer(4));
	const worker = new Worker(
		`const { workerData, parentPort } = require("node:worker_threads");
		const flag = new Int32Array(workerData);
		let peak = 0;
		parentPort.postMessage("ready");
		while (Atomics.load(flag, 0) === 0) { peak = Math.max(peak, process.memoryUsage.rss()); Atomics.wait(flag, 0, 0, 1); }
		peak = Math.max(peak, process.memoryUsage.rss());
		parentPort.postMessage(peak);`,
		{ eval: true, workerData: flag.buffer },
	);
	const messages: unknown[] = [];
	const next = () => new Promise((resolve) => worker.once("message", (m) => resolve(messages.push(m))));
	await next(); // ready
	gc();
	const before = process.memoryUsage.rss();
	await new Promise((r) => setTimeout(r, 20));
	const peakMessage = next();
	run();
	Atomics.store(flag, 0, 1);
	Atomics.notify(flag, 0);
	await peakMessage;
	await worker.terminate();
	return (messages[1] as number) - before;
}

/** Heap + ArrayBuffer bytes allocated during `run` and the GCs that ran (0 GCs: an upper bound on the peak). */
async function allocatedDuring(run: () => void): Promise<{ bytes: number; gcs: number }> {
	gc();
	const used = () => {
		const m = process.memoryUsage();
		return m.heapUsed + m.arrayBuffers;
	};
	let gcs = 0;
	const obs = new PerformanceObserver((list) => {
		gcs += list.getEntries().length;
	});
	obs.observe({ entryTypes: ["gc"] });
	await new Promise((r) => setTimeout(r, 20));
	gcs = 0;
	const before = used();
	run();
	const bytes = used() - before;
	await new Promise((r) => setTimeout(r, 20)); // gc entries are delivered asynchronously
	obs.disconnect();
	return { bytes, gcs };
}

async function main() {
	// Decoded from bytes, as tool output is: a flat string (repeat() would build a rope instead).
	const decoded = (s: string) => Buffer.from(s, "utf8").toString("utf8");
	const inputs: Array<[string, string, number]> = [
		["1 MiB log", decoded(logText(MiB, ascii)), 41],
		["1 MiB CJK+emoji", decoded(logText(MiB, cjk)), 41],
		["1 MiB one line", decoded("0123456789abcdef".repeat(MiB / 16)), 41],
		["64 MiB log", decoded(logText(64 * MiB, ascii)), 7],
	];
	for (const [name, text, rounds] of inputs) {
		const pureRounds = rounds > 10 ? 101 : 11;
		const reps = rounds > 10 ? 50 : 1; // pure calls on 1 MiB take well under a millisecond
		const syncStore = () => projectStoring(text, true);
		const asyncStore = () => projectStoring(text, false);
		const durableFloor = () => floorWrite(text, true);
		const durableFloorAsync = () => floorWriteAsync(text);
		row(
			`${name}: projection + artifact (sync) vs SHA-256 + write + fsync`,
			await pair(rounds, 1, syncStore, durableFloor),
			1.5,
		);
		row(
			`${name}: projection + artifact (async) vs SHA-256 + async write + fsync`,
			await pair(rounds, 1, asyncStore, durableFloorAsync),
			1.5,
		);
		row(
			`${name}: projection + artifact (sync) vs SHA-256 + write, no fsync`,
			await pair(rounds, 1, syncStore, () => floorWrite(text, false)),
			undefined,
		);
		const pure = await pair(
			pureRounds,
			reps,
			() => projectText(text, LIMITS, undefined),
			() => truncateHead(text, LIMITS),
		);
		row(`${name}: projection, no artifact vs Pi truncateHead`, pure, 1.0);
	}
	const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...rows.map((r) => r[i].length), 8));
	const header = ["case", "ours ms", "base ms", "ratio", "goal", ""];
	for (const r of [header, ...rows])
		console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
	console.log(
		"\nratio = median over interleaved rounds of (ours / base). The store fsyncs each artifact before naming it,\n" +
			"so its floor is SHA-256 + write + fsync of the same bytes; the no-fsync row is for information (no goal).",
	);

	console.log("\nPeak extra memory while projecting 64 MiB (each measured in a fresh process):");
	for (const which of ["projection + artifact", "Pi truncateHead", "SHA-256 + write floor"]) {
		const child = spawnSync(process.execPath, [
			...process.execArgv,
			fileURLToPath(import.meta.url),
			`--memory=${which}`,
		]);
		if (child.status !== 0) throw new Error(child.stderr.toString());
		console.log(`  ${which}: ${child.stdout.toString().trim()}`);
	}
	rmSync(dir, { recursive: true, force: true });
}

/** One memory figure in this (fresh) process: peak RSS growth and heap+buffers allocated. */
async function memory(which: string) {
	// Built through one Buffer (returned to the OS when freed), so the baseline RSS holds no garbage.
	const block = Buffer.from(`${logText(MiB - 200, ascii)}\n`, "latin1");
	const bytes = Buffer.allocUnsafe(block.length * 64);
	for (let i = 0; i < 64; i++) block.copy(bytes, i * block.length);
	const big = bytes.toString("latin1");
	const input = Buffer.byteLength(big);
	const run = {
		"projection + artifact": () => projectStoring(big, true),
		"Pi truncateHead": () => truncateHead(big, LIMITS),
		"SHA-256 + write floor": () => floorWrite(big, false),
	}[which];
	if (!run) throw new Error(`unknown memory case ${which}`);
	const rss = await peakRssGrowth(run);
	const alloc = await allocatedDuring(run);
	const mib = (b: number) => `${(b / MiB).toFixed(1)} MiB`;
	const goal = which === "projection + artifact" ? ` (goal ≤ 1× = ${mib(input)})` : "";
	console.log(
		`peak RSS growth ${mib(rss)} = ${(rss / input).toFixed(2)}× input${goal}; ` +
			`heap+buffers allocated ${mib(alloc.bytes)} (${alloc.gcs} GC ran during the call)`,
	);
	rmSync(dir, { recursive: true, force: true });
}

const memoryCase = process.argv.find((a) => a.startsWith("--memory="));
await (memoryCase ? memory(memoryCase.slice("--memory=".length)) : main());

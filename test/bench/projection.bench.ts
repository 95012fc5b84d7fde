/**
 * Projection benchmarks, measured side by side in one run (medians of interleaved runs):
 * 1. projection of 1 MiB and 64 MiB to 16 KiB with its artifact vs. the floor: SHA-256 + writing the same
 *    bytes (goal ≤ 1.5×); also shown against the floor plus the fsync the store must do;
 * 2. projection without artifact vs. Pi's truncateHead on the same input (goal ≤ 1.0×);
 * 3. peak extra memory while projecting 64 MiB with its artifact (goal ≤ 1× the input).
 *
 *   node --expose-gc --import jiti/register test/bench/projection.bench.ts   (or: npm run bench -- projection)
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { truncateHead } from "@mariozechner/pi-coding-agent";
import { ArtifactStore } from "../../extensions/shared/artifact-store.ts";
import {
	type ProjectionLimits,
	projectResult,
	projectResultSync,
	projectText,
} from "../../extensions/shared/projection.ts";

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

/**
 * Run each contender once per round, interleaved, so drift affects all alike; medians in ms per call.
 * Calls faster than a few ms are repeated `reps` times within a round so timer noise does not dominate.
 */
async function sideBySide(
	rounds: number,
	contenders: Record<string, { run: () => unknown; reps?: number }>,
): Promise<Record<string, number>> {
	const times: Record<string, number[]> = {};
	for (const [name, c] of Object.entries(contenders)) {
		times[name] = [];
		for (let i = 0; i < (c.reps ?? 1); i++) await c.run(); // warm-up
	}
	for (let r = 0; r < rounds; r++) {
		for (const [name, c] of Object.entries(contenders)) {
			const reps = c.reps ?? 1;
			gc();
			const t0 = performance.now();
			for (let i = 0; i < reps; i++) await c.run();
			times[name].push((performance.now() - t0) / reps);
		}
	}
	return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
}

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
function row(name: string, ours: number, base: number, goal: number) {
	const ratio = ours / base;
	const ms = (x: number) => x.toFixed(x < 1 ? 3 : 1);
	rows.push([
		name,
		ms(ours),
		ms(base),
		`${ratio.toFixed(2)}×`,
		`≤ ${goal.toFixed(1)}×`,
		ratio <= goal ? "ok" : "MISSED",
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
	const inputs: Array<[string, string, number]> = [
		["1 MiB log", logText(MiB, ascii), 30],
		["1 MiB CJK+emoji", logText(MiB, cjk), 30],
		["1 MiB one line", "0123456789abcdef".repeat(MiB / 16), 30],
		["64 MiB log", logText(64 * MiB, ascii), 5],
	];
	for (const [name, text, rounds] of inputs) {
		const reps = rounds > 10 ? 50 : 1; // pure calls on 1 MiB take well under a millisecond
		const t = await sideBySide(rounds, {
			stored: { run: () => projectStoring(text, true) },
			storedAsync: { run: () => projectStoring(text, false) },
			floor: { run: () => floorWrite(text, false) },
			floorFsync: { run: () => floorWrite(text, true) },
			projectOnly: { run: () => projectText(text, LIMITS, undefined), reps },
			truncateHead: { run: () => truncateHead(text, LIMITS), reps },
		});
		row(`${name}: projection + artifact (sync) vs SHA-256 + write`, t.stored, t.floor, 1.5);
		row(`${name}: projection + artifact (sync) vs SHA-256 + write + fsync`, t.stored, t.floorFsync, 1.5);
		row(`${name}: projection + artifact (async) vs SHA-256 + write + fsync`, t.storedAsync, t.floorFsync, 1.5);
		row(`${name}: projection, no artifact vs Pi truncateHead`, t.projectOnly, t.truncateHead, 1.0);
	}
	const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...rows.map((r) => r[i].length), 8));
	const header = ["case", "ours ms", "base ms", "ratio", "goal", ""];
	for (const r of [header, ...rows])
		console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));

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

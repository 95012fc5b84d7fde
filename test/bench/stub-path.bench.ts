/**
 * The tool-output stub path, end to end, measured in one run:
 *
 * 1. Cost (issue 32 item 4): `buildStub` on a 1 MiB and a 64 MiB log (the summary model off) — SHA-256, the
 *    notable scan, the projection, the write and fsync into a fresh artifact store — against the floor of
 *    SHA-256 + write + fsync of the same bytes into a file of the same folder, with the floor's parts (encode +
 *    SHA-256, write, fsync). Interleaved rounds (the runs in a rotating order); the figure is the median of the
 *    per-round ratios. Goal: ≤ 1.5×. Beside it, each against the same floor: the same path right after a full
 *    collection and a 50 ms pause (what a session's next large output often meets: the rounds keep the path's
 *    code warm otherwise), the same path with a summary model
 *    that answers at once (one pass over the text, `scanNotableAt`: the model's input, shared with the agreement
 *    check, and the excerpt beside the summary), the store's put and then the scan in sequence (what the path did
 *    before the fsync overlapped the scan), the part of `startPut` that runs on the calling thread (encode, hash,
 *    write: what the scan waits for), the scan alone, the scan alone right after a full collection (and 50 ms for
 *    its helpers: what a session's next large output often meets; V8 let go of the scan's optimized code at
 *    every one until issue 32's SHAPES kept it), the projection of the excerpt with its scan made (the
 *    output's sizes taken, the notable section fitted, head and tail laid out: what the path adds around
 *    the scan), and one pass at the summary path's two caps (100 and 40 lines: what its scan costs now) against
 *    two scans at them (what it cost before `scanNotableAt`). The excerpt's projection measures the output as the
 *    path does: its bytes from the store's write, its lines from the scan (`counted`), so no line pass.
 *    Before the timed rounds, WARM_UP_ROUNDS rounds that are not counted: the scan's second thread
 *    (notable-parallel.ts) started and every run's code compiled, as in a session after its first large
 *    outputs. Every run's store folder is made (and
 *    every removal done) durable before the next run, so that a run's fsync commits its own file only, as the
 *    floor's does.
 * 2. Memory (issue 28): peak RSS of a fresh process that stores and projects a 256 MiB tool output named by
 *    Pi's full-output file (`cat` of a huge log through bash), as a multiple of the output's size. Goal: ≤ 1.5×.
 *
 *   node --expose-gc --import jiti/register test/bench/stub-path.bench.ts   (or: npm run bench -- stub-path)
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { logScanLines, projectLog } from "../../extensions/shared/projection/log.ts";
import { measureText } from "../../extensions/shared/projection/projection.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { scanNotable, scanNotableAt } from "../../extensions/shared/text/notable.ts";
import {
	buildStub,
	stubSurface,
	TOOL_OUTPUT_KIND,
	type ToolResultFacts,
} from "../../extensions/tool-artifacts/artifacts.ts";
import { EXCERPT_LABEL } from "../../extensions/tool-artifacts/prompt.ts";
import { artifactId, stubOverhead } from "../../extensions/tool-artifacts/stub.ts";
import { realLogSeed } from "../fixtures/real-logs.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const MiB = 1024 * 1024;
/** Rounds of every run before the timed ones (see cost). */
const WARM_UP_ROUNDS = 3;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const CONFIG = {
	...DEFAULT_CONFIG.toolArtifacts,
	summary: { ...DEFAULT_CONFIG.toolArtifacts.summary, enabled: false },
};

/** The bash result that `cat`s `text` (no full-output file: the text is the output). */
function catFact(text: string): ToolResultFacts {
	return {
		toolName: "bash",
		toolCallId: "call_cat",
		input: { command: "cat build.log" },
		content: [{ type: "text", text }],
		details: undefined,
		isError: false,
	};
}

function median(xs: number[]): number {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)];
}

/**
 * The folder's changes made durable (an fsync of the folder): a run's fsync then commits its own file, not the
 * folders made or removed around it (the floor writes into a folder made once; the path into a store made for it).
 */
function durable(dir: string): void {
	const fd = openSync(dir, "r");
	try {
		fsyncSync(fd);
	} finally {
		closeSync(fd);
	}
}

/** Milliseconds the floor spent in each part, and in all (open to close; removing the file is not timed). */
interface FloorParts {
	total: number;
	/** Encoding to UTF-8 and SHA-256 of the bytes. */
	hash: number;
	/** Writing the bytes (into the page cache). */
	write: number;
	/** The fsync. */
	fsync: number;
}

/** SHA-256 + write + fsync of the text's UTF-8 into a new file of `dir`, in 1 MiB steps (as the store writes). */
function floor(text: string, dir: string): FloorParts {
	const path = join(dir, `floor-${randomBytes(6).toString("hex")}.part`);
	const start = performance.now();
	const fd = openSync(path, "wx", 0o600);
	const parts: FloorParts = { total: 0, hash: 0, write: 0, fsync: 0 };
	try {
		const hash = createHash("sha256");
		const encoder = new TextEncoder();
		const scratch = Buffer.allocUnsafe(MiB);
		for (let pos = 0; pos < text.length; ) {
			const t0 = performance.now();
			const { read, written } = encoder.encodeInto(text.slice(pos, pos + scratch.length), scratch);
			const view = scratch.subarray(0, written);
			hash.update(view);
			const t1 = performance.now();
			for (let off = 0; off < view.length; ) off += writeSync(fd, view, off, view.length - off);
			parts.hash += t1 - t0;
			parts.write += performance.now() - t1;
			pos += read;
		}
		hash.digest("hex");
		const t2 = performance.now();
		fsyncSync(fd);
		parts.fsync = performance.now() - t2;
	} finally {
		closeSync(fd);
		parts.total = performance.now() - start;
		rmSync(path, { force: true });
	}
	return parts;
}

/** The runs of one round, each timed alone; `floor` is the yardstick of the others. */
const RUNS = [
	"floor",
	"path",
	"pathAfterGc",
	"summary",
	"seq",
	"startPut",
	"scan",
	"afterGc",
	"projection",
	"scan2",
	"twoScans",
] as const;
type Run = (typeof RUNS)[number];

async function cost(): Promise<void> {
	const root = makeTestDir("stub-path-bench");
	try {
		console.log(
			"cost of the whole stub path (hash, scan, projection, write, fsync) vs the floor, SHA-256 + write + fsync of the same bytes",
		);
		console.log(
			"(median of per-round ratios; every run of a round in a rotating order; load average at the start of each size in the first column)",
		);
		console.log(
			"| log | floor | floor: hash / write / fsync | stub path | **path / floor** | goal | the path right after a full collection / floor | path with a summary model / floor | put, then scan / floor | startPut's part on this thread / floor | the scan alone / floor | the scan right after a full collection / floor | the excerpt's projection / floor | one pass at two caps / floor | two scans at them / floor |",
		);
		console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
		for (const [label, size, rounds] of [
			["1 MiB", MiB, 15],
			["64 MiB", 64 * MiB, 5],
		] as const) {
			const text = realLogSeed(size).toString("utf8");
			const fact = catFact(text);
			let n = 0;
			/** A fresh store each time (content-addressed: a second put of the same text would only verify it). */
			const freshStore = () => {
				const store = new ArtifactStore({ agentDir: join(root, `agent-${n++}`) });
				const made = store.ensureKindDir("tool-outputs"); // its folders exist, as in a running session
				if (!made.ok) throw new Error(made.error);
				durable(store.dirFor(TOOL_OUTPUT_KIND));
				return store;
			};
			const stubPath = async (store: ArtifactStore) => {
				const built = await buildStub(fact, text, { store, config: CONFIG });
				if ("notStored" in built) throw new Error(built.notStored);
			};
			/** The same path with a summary model that answers at once (its input and the agreement check scan too). */
			const withSummary = async (store: ArtifactStore) => {
				const built = await buildStub(fact, text, {
					store,
					config: DEFAULT_CONFIG.toolArtifacts,
					summarize: async () => ({ ok: true, text: "The build ran.", model: "bench/instant" }),
				});
				if ("notStored" in built) throw new Error(built.notStored);
			};
			/** What the path did before it overlapped them: put (write + fsync), then the scan. */
			const sequential = async (store: ArtifactStore) => {
				const put = await store.put("tool-outputs", text);
				if (!put.ok) throw new Error(put.error);
				scanNotable(text);
			};
			/**
			 * The excerpt's projection as the path makes it once the store has named the output (a path of the real
			 * name's length): the output's sizes (the bytes are the store's, the line count the scan's: no pass over
			 * the lines), then projectLog at the command stub's limits with the scan made at them, as buildStub
			 * passes it.
			 */
			const surface = stubSurface("command", CONFIG);
			const probe = freshStore();
			const bytes = Buffer.byteLength(text, "utf8");
			const sha256 = "0".repeat(64);
			const path = join(probe.dirFor(TOOL_OUTPUT_KIND), `${sha256}.txt`);
			const lines = measureText(text, bytes).lines; // what the scan counts as it walks the text
			const header = { id: artifactId(sha256), tool: "bash", bytes, lines, lastLineEmpty: text.endsWith("\n"), path };
			const overhead = stubOverhead({ ...header, notes: [], label: EXCERPT_LABEL });
			const overflow = SURFACES["toolArtifacts.stubOverflow"];
			const room = {
				maxBytes: surface.maxBytes - overhead.bytes,
				maxLines: surface.maxLines - overhead.lines,
				grow: { maxBytes: overflow.maxBytes, maxLines: overflow.maxLines },
			};
			const excerptScan = scanNotable(text, { maxLines: logScanLines(text, surface, room) });
			const excerpt = () =>
				projectLog(text, surface, {
					...room,
					stored: { ok: true, path, sha256 },
					scan: excerptScan,
					measured: measureText(text, bytes, lines),
				});
			const floorDir = join(root, "floor");
			mkdirSync(floorDir, { recursive: true });
			// Each path once, the second thread started (the first large output after it starts is decided at the old
			// speed); every store removed.
			const once = async (run: (store: ArtifactStore) => Promise<void>) => {
				await run(freshStore());
				rmSync(join(root, `agent-${n - 1}`), { recursive: true, force: true });
				durable(root);
			};
			await once(stubPath);
			await new Promise((resolve) => setTimeout(resolve, 500)); // the thread starting
			await once(withSummary);
			await once(sequential);
			floor(text, floorDir);
			const ms = Object.fromEntries(RUNS.map((r) => [r, [] as number[]])) as Record<Run, number[]>;
			const ratios = Object.fromEntries(RUNS.map((r) => [r, [] as number[]])) as Record<Run, number[]>;
			const floorParts: FloorParts[] = [];
			const load = loadavg()[0];
			// The first WARM_UP_ROUNDS rounds are not counted: every run's code compiled for all of them (the scan's
			// walk serves both the path's decisions made ahead and the plain scans: its first rounds are slower).
			for (let r = -WARM_UP_ROUNDS; r < rounds; r++) {
				gc();
				// V8 sweeps after a full collection on helper threads: the round starts once they are done, not
				// while they hold the second core.
				await new Promise((resolve) => setTimeout(resolve, 50));
				const round = {} as Record<Run, number>;
				for (let k = 0; k < RUNS.length; k++) {
					const what = RUNS[(k + r + RUNS.length * WARM_UP_ROUNDS) % RUNS.length];
					const store = ["floor", "scan", "afterGc", "projection", "scan2", "twoScans"].includes(what)
						? undefined
						: freshStore();
					let pending: Promise<unknown> | undefined;
					if (what === "afterGc" || what === "pathAfterGc") {
						// A session's next large output often comes after a full collection (its helpers done).
						gc();
						await new Promise((resolve) => setTimeout(resolve, 50));
					}
					const t0 = performance.now();
					if (what === "floor") floorParts.push(floor(text, floorDir));
					else if (what === "scan" || what === "afterGc") scanNotable(text);
					else if (what === "projection") excerpt();
					else if (what === "scan2") scanNotableAt(text, [100, 40]);
					else if (what === "twoScans") {
						scanNotable(text, { maxLines: 100 });
						scanNotable(text, { maxLines: 40 });
					} else if (what === "path" || what === "pathAfterGc") await stubPath(store as ArtifactStore);
					else if (what === "summary") await withSummary(store as ArtifactStore);
					else if (what === "seq") await sequential(store as ArtifactStore);
					else pending = (store as ArtifactStore).startPut("tool-outputs", text); // timed up to its return
					round[what] = what === "floor" ? (floorParts.at(-1) as FloorParts).total : performance.now() - t0;
					await pending;
					if (store) rmSync(join(root, `agent-${n - 1}`), { recursive: true, force: true });
					durable(root); // what a run removed is on disk before the next run's fsync
				}
				if (r < 0) continue;
				for (const what of RUNS) {
					ms[what].push(round[what]);
					ratios[what].push(round[what] / round.floor);
				}
			}
			const f = (xs: number[]) => `${median(xs).toFixed(1)} ms`;
			const x = (what: Run) => `${median(ratios[what]).toFixed(2)}×`;
			const part = (key: keyof FloorParts) => median(floorParts.map((p) => p[key])).toFixed(1);
			console.log(
				`| ${label} (load ${load.toFixed(1)}) | ${f(ms.floor)} | ${part("hash")} / ${part("write")} / ${part("fsync")} ms | ${f(ms.path)} | **${x("path")}** | ≤ 1.5× | ${x("pathAfterGc")} | ${x("summary")} | ${x("seq")} | ${x("startPut")} | ${x("scan")} | ${x("afterGc")} | ${x("projection")} | ${x("scan2")} | ${x("twoScans")} |`,
			);
		}
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

/** In a child: write a `bytes` log as Pi's full-output file, then store and project it as a bash stub. */
async function memoryChild(bytes: number): Promise<void> {
	const root = makeTestDir("stub-path-mem");
	try {
		const path = join(root, `pi-bash-${randomBytes(8).toString("hex")}.log`);
		const seed = realLogSeed(4 * MiB, true);
		const fd = openSync(path, "wx", 0o600);
		for (let at = 0; at < bytes; ) {
			const n = Math.min(seed.length, bytes - at);
			for (let off = 0; off < n; ) off += writeSync(fd, seed, off, n - off);
			at += n;
		}
		closeSync(fd);
		// What Pi's bash shows: the last lines within 50 KB, then its notice.
		const tailStart = seed.indexOf(10, seed.length - 40 * 1024) + 1;
		const shown = seed.subarray(tailStart).toString("utf8");
		const total = bytes / seed.length; // whole seeds: the file ends as the seed does
		const lines = total * (seed.toString("latin1").split("\n").length - 1) + 1;
		const text = `${shown}\n\n[Showing lines ${lines - 100}-${lines} of ${lines} (50.0KB limit). Full output: ${path}]`;
		const fact: ToolResultFacts = {
			...catFact(text),
			details: { fullOutputPath: path, truncation: { truncated: true, totalBytes: bytes, totalLines: lines } },
		};
		gc();
		const before = process.memoryUsage().rss;
		const store = new ArtifactStore({ agentDir: join(root, "agent") });
		const t0 = performance.now();
		const built = await buildStub(fact, text, { store, config: CONFIG });
		const ms = performance.now() - t0;
		if ("notStored" in built) throw new Error(built.notStored);
		if (!built.text.includes("Full output stored:") || built.text.includes("no longer exists")) {
			throw new Error(`the stub does not name the complete output:\n${built.text.slice(0, 600)}`);
		}
		const peak = process.resourceUsage().maxRSS * 1024;
		console.log(
			JSON.stringify({ bytes, baseline: before, peak, ms, stubBytes: Buffer.byteLength(built.text, "utf8") }),
		);
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

function memory(): void {
	const bytes = 256 * MiB;
	const child = spawnSync(
		process.execPath,
		["--expose-gc", "--import", "jiti/register", fileURLToPath(import.meta.url), "--memory-child", String(bytes)],
		{ encoding: "utf8", maxBuffer: 16 * MiB },
	);
	if (child.status !== 0) {
		console.log(`memory child failed (status ${child.status}, signal ${child.signal}):\n${child.stderr.slice(-2000)}`);
		process.exitCode = 1;
		return;
	}
	const line = child.stdout.trim().split("\n").at(-1) as string;
	const m = JSON.parse(line) as { bytes: number; baseline: number; peak: number; ms: number; stubBytes: number };
	const mib = (n: number) => `${(n / MiB).toFixed(0)} MiB`;
	console.log("\npeak memory storing and projecting a 256 MiB tool output (Pi's full-output file), fresh process");
	console.log("| output | RSS before | peak RSS | peak / output | (peak − before) / output | time | goal |");
	console.log("|---|---:|---:|---:|---:|---:|---:|");
	console.log(
		`| ${mib(m.bytes)} | ${mib(m.baseline)} | ${mib(m.peak)} | ${(m.peak / m.bytes).toFixed(2)}× | ${((m.peak - m.baseline) / m.bytes).toFixed(2)}× | ${(m.ms / 1000).toFixed(1)} s | peak ≤ 1.5× |`,
	);
}

const flag = process.argv.indexOf("--memory-child");
if (flag !== -1) {
	await memoryChild(Number(process.argv[flag + 1]));
} else {
	await cost();
	memory();
}

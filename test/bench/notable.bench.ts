/**
 * What the notable-line scan costs, measured side by side in one run against the SHA-256 the artifact store
 * already computes for the same text (goal: the scan ≤ 1× that hash), on a 1 MiB and a 64 MiB log built by
 * repeating the real logs of test/fixtures/real-logs/ (their failures included, so failures are sprinkled
 * through the text as they are in real output). Pairs run interleaved (A then B, then B then A) and the
 * figure is the median of the per-round ratios, so load from other processes hits both sides alike.
 *
 * Then 1 MiB of hostile lines (1 KiB each, built to make a pattern backtrack): a scan must stay linear in them.
 *
 * Then the parts a faster key search could be built from, each alone over 8 MiB of the same log, as a
 * one-byte (Latin-1) and a two-byte string (one non-Latin-1 character makes V8 store the whole text in
 * two-byte units): the word automaton's pass (a per-unit JS loop), one global case-insensitive regular
 * expression of every key (V8's irregexp), and counting newlines with an indexOf loop.
 *
 * Then the key search as the scan walks it (`--key-search` runs this part alone): the lines that hold a key,
 * their first key, line start and number, and their keys in the matched window, over 16 MiB of the same log
 * (two-byte as decoded, and one-byte), by `next` from each line start (the scan's walk before) against
 * `lines` (four interleaved searches over a block's parts); CPU time (process.cpuUsage), interleaved rounds,
 * the median of the per-round ratios. `next` shares the renumbered tables, so the ratio is conservative.
 *
 * `--key-search-before <commit>` runs only the key search as the scan walks it now (`lines` with each found
 * line's keys) against that commit's automaton, both loaded in this process, interleaved, CPU time, on 16 MiB
 * of the stub-path benchmark's text.
 *
 * Also the scan's extra memory on the 64 MiB log, in a fresh process: heap + buffers allocated during the
 * call (no copy of the text: the goal is a small fraction of the input) and the peak RSS growth.
 *
 *   node --expose-gc --import jiti/register test/bench/notable.bench.ts   (or: npm run bench -- notable)
 *   node --expose-gc --import jiti/register test/bench/notable.bench.ts --key-search-before 7e4840e
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MATCH_UNITS, NOTABLE_KEYS, scanNotable } from "../../extensions/shared/text/notable.ts";
import { buildWordAutomaton } from "../../extensions/shared/text/word-automaton.ts";
import { loadRealLogs, realLogSeed } from "../fixtures/real-logs.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const MiB = 1024 * 1024;
const TEXT_DIR = "extensions/shared/text";
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

/**
 * About `bytes` of log: the corpus's texts (the large ones sliced to 256 KiB pieces at line ends, so every
 * ecosystem appears within the first MiB) repeated in turn, decoded from one buffer so the result is a
 * flat string as tool output is.
 */
function corpusLog(bytes: number): string {
	const pieces: Buffer[] = [];
	for (const log of loadRealLogs()) {
		const raw = log.raw;
		for (let start = 0; start < raw.length; ) {
			let end = Math.min(raw.length, start + 256 * 1024);
			const nl = raw.indexOf(10, end);
			end = end === raw.length || nl === -1 ? raw.length : nl + 1;
			pieces.push(raw.subarray(start, end));
			start = end;
			if (pieces.length % 3 === 0) break; // at most a few pieces per log, so the mix stays varied
		}
	}
	const out = Buffer.allocUnsafe(bytes);
	let at = 0;
	for (let i = 0; at < bytes; i++) {
		const piece = pieces[i % pieces.length];
		at += piece.copy(out, at, 0, Math.min(piece.length, bytes - at));
	}
	return out.toString("utf8");
}

function median(xs: number[]): number {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)];
}

/** Median ms per call of A and B, and the median of the per-round ratios A/B. */
function pair(rounds: number, reps: number, a: () => unknown, b: () => unknown) {
	for (let i = 0; i < 3; i++) {
		a();
		b();
	}
	const as: number[] = [];
	const bs: number[] = [];
	const ratios: number[] = [];
	for (let r = 0; r < rounds; r++) {
		gc();
		let ta = 0;
		let tb = 0;
		for (let i = 0; i < reps; i++) {
			const first = (r + i) % 2 === 0 ? a : b;
			const second = first === a ? b : a;
			const t0 = performance.now();
			first();
			const t1 = performance.now();
			second();
			const t2 = performance.now();
			if (first === a) {
				ta += t1 - t0;
				tb += t2 - t1;
			} else {
				tb += t1 - t0;
				ta += t2 - t1;
			}
		}
		as.push(ta / reps);
		bs.push(tb / reps);
		ratios.push(ta / tb);
	}
	return { a: median(as), b: median(bs), ratio: median(ratios) };
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function main() {
	const rows: string[][] = [["case", "scan ms", "SHA-256 ms", "ratio", "goal", ""]];
	for (const [name, bytes, rounds, reps] of [
		["1 MiB of real logs", MiB, 41, 10],
		["64 MiB of real logs", 64 * MiB, 7, 1],
	] as const) {
		const text = corpusLog(bytes);
		const found = scanNotable(text);
		const t = pair(
			rounds,
			reps,
			() => scanNotable(text),
			() => sha256(text),
		);
		rows.push([
			`${name} (${found.failures} failure, ${found.summaries} summary lines)`,
			t.a.toFixed(1),
			t.b.toFixed(1),
			`${t.ratio.toFixed(2)}×`,
			"≤ 1.0×",
			t.ratio <= 1 ? "ok" : "MISSED",
		]);
	}
	// Hostile lines: 1 KiB lines no real log holds, built to make a pattern backtrack (each holds a key, so the
	// rules are tried on every one). Unclosed XML elements before a report field's key were quadratic in the
	// line's length in generic.report-field (2-3 ms a line, 2 s per MiB) until its pattern was made linear;
	// white space after a key still costs more than a real line in some patterns (a rule's content).
	for (const [name, line] of [
		["1 MiB of 1 KiB unclosed-XML lines", `${"<a-".repeat(338)}status="x"`],
		["1 MiB of 1 KiB lines of white space after a key", `exit code${" ".repeat(1014)}x`],
	] as const) {
		const hostile = `${line}\n`.repeat(Math.floor(MiB / (line.length + 1)));
		const t = pair(
			11,
			1,
			() => scanNotable(hostile),
			() => sha256(hostile),
		);
		rows.push([`${name} (hostile)`, t.a.toFixed(1), t.b.toFixed(1), `${t.ratio.toFixed(2)}×`, "", ""]);
	}
	const text = corpusLog(8 * MiB);
	const twoByte = text;
	const oneByte = text.replace(/[^\u0000-\u00ff]/g, "?");
	const automaton = buildWordAutomaton(NOTABLE_KEYS);
	const literal = (k: string) => k.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
	const alternation = new RegExp(NOTABLE_KEYS.map(literal).join("|"), "gi");
	const parts: [string, (t: string) => number][] = [
		[
			"word automaton pass",
			(t) => {
				let hits = 0;
				for (let at = automaton.next(t, 0); at !== -1; at = automaton.next(t, at + 1)) hits++;
				return hits;
			},
		],
		[
			"irregexp /key|key|…/gi",
			(t) => {
				alternation.lastIndex = 0;
				let hits = 0;
				while (alternation.exec(t) !== null) hits++;
				return hits;
			},
		],
		[
			"newlines by indexOf",
			(t) => {
				let lines = 0;
				for (let at = t.indexOf("\n"); at !== -1; at = t.indexOf("\n", at + 1)) lines++;
				return lines;
			},
		],
	];
	for (const [label, t] of [
		["one-byte", oneByte],
		["two-byte", twoByte],
	] as const) {
		for (const [name, f] of parts) {
			const r = pair(
				7,
				1,
				() => f(t),
				() => sha256(t),
			);
			rows.push([`8 MiB ${label}: ${name} alone`, r.a.toFixed(1), r.b.toFixed(1), `${r.ratio.toFixed(2)}×`, "", ""]);
		}
	}
	const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
	for (const r of rows)
		console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
	console.log(
		"\nratio = median over interleaved rounds of (scan / SHA-256 of the same text, UTF-8 encoding included).",
	);

	const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--memory"]);
	if (child.status !== 0) throw new Error(child.stderr.toString());
	console.log(`\nExtra memory of one scan of 64 MiB (fresh process): ${child.stdout.toString().trim()}`);
}

/** Heap + buffers allocated during one scan of 64 MiB and the peak RSS growth, in this fresh process. */
function memory() {
	const text = corpusLog(64 * MiB);
	gc();
	const used = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
	const rssBefore = process.memoryUsage.rss();
	const before = used();
	const scan = scanNotable(text);
	const allocated = used() - before;
	const rssGrowth = process.memoryUsage.rss() - rssBefore;
	const mib = (b: number) => `${(b / MiB).toFixed(2)} MiB`;
	console.log(
		`heap+buffers allocated ${mib(allocated)} (${((100 * allocated) / (64 * MiB)).toFixed(1)}% of the input; ` +
			`goal: no copy of the text, well under 100%), RSS growth ${mib(rssGrowth)}; ${scan.lines.length} lines kept`,
	);
}

/** The scan's key search over `text` by `next` from each line start (before) or by `lines` (now); a checksum. */
function keyWalk(automaton: ReturnType<typeof buildWordAutomaton>, text: string, interleaved: boolean): number {
	const n = text.length;
	// An earlier commit's automaton (--key-search-before) has no `words` (its walk asked `wordsAfter`), and
	// its `lines` no window.
	const collects = "words" in automaton.lines("");
	const walk = interleaved ? (collects ? automaton.lines(text, MATCH_UNITS) : automaton.lines(text)) : undefined;
	let pos = 0;
	let line = 1;
	let sum = 0;
	while (pos <= n) {
		let lineStart = pos;
		let first: number;
		if (walk) {
			first = walk.next(pos);
			if (first === -1) break;
			line = walk.line;
			lineStart = walk.lineStart;
		} else {
			first = automaton.next(text, pos);
			if (first === -1) break;
			const passed = automaton.passed();
			line += passed.newlines;
			if (passed.lastNewline !== -1) lineStart = passed.lastNewline + 1;
		}
		let lineEnd = text.indexOf("\n", first);
		if (lineEnd === -1) lineEnd = n;
		const windowEnd = Math.min(lineEnd, lineStart + MATCH_UNITS);
		const keys = walk && collects ? walk.words : first < windowEnd ? automaton.wordsAfter(text, first, windowEnd) : [];
		sum = (sum * 31 + first + line * 7 + lineStart + keys.length) % 1_000_000_007;
		if (lineEnd >= n) break;
		pos = lineEnd + 1;
		line++;
	}
	return sum;
}

/** CPU ms of one call of `f`. */
function cpu(f: () => unknown): number {
	const t0 = process.cpuUsage();
	f();
	const t = process.cpuUsage(t0);
	return (t.user + t.system) / 1000;
}

/** The key search before and now, interleaved, on 16 MiB (two-byte and one-byte). */
function keySearch() {
	const automaton = buildWordAutomaton(NOTABLE_KEYS);
	const text = corpusLog(16 * MiB);
	const rows: string[][] = [["16 MiB text", "before ms", "now ms", "before ns/unit", "now ns/unit", "before/now"]];
	for (const [label, t] of [
		["two-byte", text],
		["one-byte", text.replace(/[^\u0000-\u00ff]/g, "?")],
	] as const) {
		if (keyWalk(automaton, t, false) !== keyWalk(automaton, t, true)) throw new Error("the two walks differ");
		const before: number[] = [];
		const now: number[] = [];
		const ratios: number[] = [];
		for (let r = 0; r < 15; r++) {
			gc();
			const [a, b] =
				r % 2 === 0
					? [cpu(() => keyWalk(automaton, t, false)), cpu(() => keyWalk(automaton, t, true))]
					: [cpu(() => keyWalk(automaton, t, true)), cpu(() => keyWalk(automaton, t, false))].reverse();
			before.push(a);
			now.push(b);
			ratios.push(a / b);
		}
		const ns = (ms: number) => ((ms * 1e6) / t.length).toFixed(2);
		rows.push([
			label,
			median(before).toFixed(1),
			median(now).toFixed(1),
			ns(median(before)),
			ns(median(now)),
			`${median(ratios).toFixed(2)}×`,
		]);
	}
	const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
	for (const r of rows)
		console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
	console.log(
		"\nbefore/now = median over interleaved rounds of the CPU time ratio (before: next from each line start; now: lines).",
	);
}

/**
 * The scan's key search (`lines`, as the scan walks it) of this tree against an earlier commit's automaton
 * (its text modules copied to a fresh folder and loaded in this process: two copies of the same code run
 * within about 1% of each other here), interleaved, CPU time, on 16 MiB of the stub-path benchmark's text.
 */
async function keySearchBefore(commit: string) {
	if (!/^[\w.^~/-]+$/.test(commit)) throw new Error("usage: notable.bench.ts --key-search-before <commit>");
	const dir = makeTestDir("key-search-before");
	const root = execFileSync("git", ["rev-parse", "--show-toplevel"], { encoding: "utf8" }).trim();
	const git = (...args: string[]) =>
		execFileSync("git", ["-C", root, ...args], { encoding: "utf8", maxBuffer: 64 * MiB });
	for (const name of git("ls-tree", "--name-only", `${commit}:${TEXT_DIR}`).split("\n")) {
		if (name.endsWith(".ts")) writeFileSync(join(dir, name), git("show", `${commit}:${TEXT_DIR}/${name}`));
	}
	const old = (await import(pathToFileURL(join(dir, "word-automaton.ts")).href)) as {
		buildWordAutomaton: typeof buildWordAutomaton;
	};
	const oldKeys = (await import(pathToFileURL(join(dir, "notable.ts")).href)) as { NOTABLE_KEYS: string[] };
	const before = old.buildWordAutomaton(oldKeys.NOTABLE_KEYS);
	const now = buildWordAutomaton(NOTABLE_KEYS);
	const text = realLogSeed(16 * MiB).toString("utf8");
	if (keyWalk(before, text, true) !== keyWalk(now, text, true)) throw new Error("the two walks differ");
	const times = { before: [] as number[], now: [] as number[], ratios: [] as number[] };
	for (let r = 0; r < 21; r++) {
		gc();
		const [a, b] =
			r % 2 === 0
				? [cpu(() => keyWalk(before, text, true)), cpu(() => keyWalk(now, text, true))]
				: [cpu(() => keyWalk(now, text, true)), cpu(() => keyWalk(before, text, true))].reverse();
		times.before.push(a);
		times.now.push(b);
		times.ratios.push(a / b);
	}
	const ns = (ms: number) => ((ms * 1e6) / text.length).toFixed(2);
	console.log(
		`key search on 16 MiB of the stub-path text (${text.length} units), 21 interleaved rounds, CPU time:\n` +
			`  at ${commit}: ${median(times.before).toFixed(1)} ms (${ns(median(times.before))} ns a unit)\n` +
			`  now: ${median(times.now).toFixed(1)} ms (${ns(median(times.now))} ns a unit)\n` +
			`  before/now (median of the per-round ratios): ${median(times.ratios).toFixed(2)}×`,
	);
}

const beforeAt = process.argv.indexOf("--key-search-before");
if (process.argv.includes("--memory")) memory();
else if (process.argv.includes("--key-search")) keySearch();
else if (beforeAt !== -1) await keySearchBefore(process.argv[beforeAt + 1] ?? "");
else {
	main();
	console.log("");
	keySearch();
}

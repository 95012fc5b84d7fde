/**
 * The notable scan of this tree beside the scan of an earlier commit (issue 32 item 4). Both trees' text modules
 * (extensions/shared/text/*.ts) are copied to fresh folders, and each copy gains a skeleton of its own scan — the
 * key search and the rules' decision on every line the search finds, on lines cleaned beforehand — so the part
 * of a scan outside the search and the rules (cleaning lines, folding hits, carrying context, pools, ranking) is
 * `scan − skeleton` of the same tree. Each tree runs in processes of its own (two copies in one process run at
 * different speeds, whichever is loaded first), the trees' processes taking turns; in each, the scan and its
 * skeleton run back to back, rounds alternating which goes first, CPU time. Printed: per tree the median and the
 * first quartile of all its rounds, and the part's median per round. The text is the stub-path benchmark's:
 * pieces of every real-log corpus log (up to 64 KiB each, at line ends), repeated to the size. Both scans must
 * return the same result (checked first).
 *
 *   node --import jiti/register test/bench/notable-before.ts <commit> [MiB=16] [rounds=10] [caps=100] [processes=6]
 *   (caps: a comma list, e.g. 100,40 for the summary path's one pass at two caps; processes per tree)
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { realLogSeed } from "../fixtures/real-logs.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const MiB = 1024 * 1024;
const TEXT_DIR = "extensions/shared/text";

const SKELETON = `
const SKELETON_CLEAN: string[] = [];
/** Bench only: the key search and the rules' decision on every line it finds (cleaned beforehand by prepare). */
export function skeletonScan(text: string, prepare: boolean): number {
	const KEYS = scanTables().automaton;
	const n = text.length;
	let pos = 0;
	let at = 0;
	let hits = 0;
	if (prepare) SKELETON_CLEAN.length = 0;
	while (pos <= n) {
		let lineStart = pos;
		const first = KEYS.next(text, pos);
		if (first === -1) break;
		const passed = KEYS.passed();
		if (passed.lastNewline !== -1) lineStart = passed.lastNewline + 1;
		let lineEnd = text.indexOf("\\n", first);
		if (lineEnd === -1) lineEnd = n;
		const windowEnd = Math.min(lineEnd, lineStart + MATCH_UNITS);
		const found = first < windowEnd ? KEYS.wordsAfter(text, first, windowEnd) : [];
		if (prepare) SKELETON_CLEAN.push(window(text, lineStart, lineEnd));
		else {
			const clean = SKELETON_CLEAN[at++];
			if (found.length > 0 && decideLine(clean, found, ALL_RULES, true)) hits++;
		}
		if (lineEnd >= n) break;
		pos = lineEnd + 1;
	}
	return hits;
}
`;

type Scan = {
	scanNotableAt(text: string, caps: readonly number[]): unknown;
	skeletonScan(text: string, prepare: boolean): number;
};

/** The stub-path benchmark's text: pieces of every corpus log, at line ends, repeated to `bytes`. */
function corpusText(bytes: number): string {
	return realLogSeed(bytes).toString("utf8");
}

const args = process.argv.slice(2);
if (args[0] === "--child") {
	// One tree's rounds: node … notable-before.ts --child <folder> <MiB> <rounds> <caps>
	const [, dir, mib, roundsArg, capsArg] = args;
	const scan = (await import(pathToFileURL(join(dir, "notable.ts")).href)) as Scan;
	const caps = capsArg.split(",").map(Number);
	const text = corpusText(Number(mib) * MiB);
	scan.skeletonScan(text, true);
	const runs = [() => scan.scanNotableAt(text, caps), () => scan.skeletonScan(text, false)];
	for (const run of runs) run();
	const ms: number[][] = [[], []];
	for (let r = 0; r < Number(roundsArg); r++) {
		for (const k of r % 2 === 0 ? [0, 1] : [1, 0]) {
			const start = process.cpuUsage();
			runs[k]();
			const used = process.cpuUsage(start);
			ms[k].push((used.user + used.system) / 1000);
		}
	}
	console.log(JSON.stringify({ scan: ms[0], skeleton: ms[1] }));
	process.exit(0);
}

const [commit, mibArg = "16", roundsArg = "10", capsArg = "100", processesArg = "6"] = args;
if (!commit || !/^[\w.^~/-]+$/.test(commit)) {
	throw new Error("usage: notable-before.ts <commit> [MiB] [rounds] [caps] [processes]");
}

/** Copy a tree's text modules (`show(path)` reads one) into `dir`, the skeleton appended to notable.ts. */
function copyTree(dir: string, names: string[], show: (path: string) => string): void {
	for (const name of names) {
		const source = show(`${TEXT_DIR}/${name}`);
		writeFileSync(join(dir, name), name === "notable.ts" ? source + SKELETON : source);
	}
}

const root = execFileSync("git", ["rev-parse", "--show-toplevel"], { encoding: "utf8" }).trim();
const git = (...args: string[]) =>
	execFileSync("git", ["-C", root, ...args], { encoding: "utf8", maxBuffer: 64 * MiB });
const before = makeTestDir("notable-before");
const now = makeTestDir("notable-now");
const thenNames = git("ls-tree", "--name-only", `${commit}:${TEXT_DIR}`)
	.split("\n")
	.filter((f) => f.endsWith(".ts"));
const nowNames = git("ls-files", TEXT_DIR)
	.split("\n")
	.filter((f) => f.endsWith(".ts"))
	.map((f) => f.slice(TEXT_DIR.length + 1));
copyTree(before, thenNames, (path) => git("show", `${commit}:${path}`));
copyTree(now, nowNames, (path) => readFileSync(join(root, path), "utf8")); // the working tree

{
	const caps = capsArg.split(",").map(Number);
	const text = corpusText(Number(mibArg) * MiB);
	const old = (await import(pathToFileURL(join(before, "notable.ts")).href)) as Scan;
	const cur = (await import(pathToFileURL(join(now, "notable.ts")).href)) as Scan;
	if (JSON.stringify(old.scanNotableAt(text, caps)) !== JSON.stringify(cur.scanNotableAt(text, caps))) {
		throw new Error("the two scans differ on the benchmark's text");
	}
}

const self = fileURLToPath(import.meta.url);
const times = {
	before: { scan: [] as number[], skeleton: [] as number[] },
	now: { scan: [] as number[], skeleton: [] as number[] },
};
for (let p = 0; p < Number(processesArg); p++) {
	for (const tree of p % 2 === 0 ? (["before", "now"] as const) : (["now", "before"] as const)) {
		const out = execFileSync(
			process.execPath,
			["--import", "jiti/register", self, "--child", tree === "before" ? before : now, mibArg, roundsArg, capsArg],
			{ cwd: root, encoding: "utf8", maxBuffer: MiB },
		);
		const got = JSON.parse(out.trim().split("\n").pop() as string) as { scan: number[]; skeleton: number[] };
		times[tree].scan.push(...got.scan);
		times[tree].skeleton.push(...got.skeleton);
	}
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[xs.length >> 1];
const quartile = (xs: number[]) => sorted(xs)[xs.length >> 2];
const part = (t: { scan: number[]; skeleton: number[] }) => t.scan.map((x, r) => x - t.skeleton[r]);
console.log(
	`${mibArg} MiB, caps ${capsArg}, ${processesArg} processes × ${roundsArg} rounds per tree (CPU ms: median / first quartile)`,
);
for (const tree of ["before", "now"] as const) {
	const label = tree === "before" ? `at ${commit}` : "now";
	const figures = (xs: number[]) => `${median(xs).toFixed(1)} / ${quartile(xs).toFixed(1)}`;
	console.log(
		`  ${label.padEnd(16)} scan ${figures(times[tree].scan)}, skeleton ${figures(times[tree].skeleton)}, ` +
			`part ${median(part(times[tree])).toFixed(1)}`,
	);
}
console.log(
	`  scan now / then ${(median(times.now.scan) / median(times.before.scan)).toFixed(3)}; ` +
		`the part outside search and rules now / then ${(median(part(times.now)) / median(part(times.before))).toFixed(3)}`,
);

/**
 * Token-estimate error per corpus against o200k_base; estimateTokens' throughput per kind of text
 * beside the character-at-a-time estimator it replaced (test/unit/tokens-reference.ts), measured
 * in the same run; and the estimator's speed next to bytes ÷ 4 and o200k's own counter.
 * Run: node --import jiti/register test/bench/tokens.bench.ts   (or: npm run bench -- tokens)
 * Exits 1 if the estimate under-counts any calibration corpus by more than 10%.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import {
	CONSERVATIVE_BYTES_PER_TOKEN,
	estimateTokens,
	utf8Length,
	utf8LengthPortable,
} from "../../extensions/shared/text/tokens.ts";
import { makeRng } from "../fixtures/corpora/generate.ts";
import { loadCorpora } from "../fixtures/corpora/index.ts";
import { referenceEstimateTokens } from "../unit/tokens-reference.ts";

/** The contract: never under-count o200k_base by more than this share on a calibration corpus. */
const MAX_UNDER_COUNT = 0.1;
/** Each timing runs at least this long (ms), and the median of this many runs is reported. */
const MIN_RUN_MS = 200;
const RUNS = 5;
/** Calls of each estimator per text in the side-by-side table, alternating between the two. */
const SIDE_BY_SIDE_CALLS = 200;

function pct(estimate: number, actual: number): string {
	const d = (estimate / actual - 1) * 100;
	return `${d >= 0 ? "+" : ""}${d.toFixed(1)}%`;
}

/** Texts outside the contract, shown so the limits of the estimate are visible. */
function stressTexts(): Array<{ name: string; text: string }> {
	const rng = makeRng(7);
	const bytes = Buffer.from(Array.from({ length: 48 * 1024 }, () => Math.floor(rng() * 256)));
	return [
		{ name: "base64 (stress)", text: bytes.toString("base64") },
		{ name: "hex (stress)", text: bytes.toString("hex").slice(0, 64 * 1024) },
	];
}

/**
 * Tool output as a model sees it (seeded): test-runner lines with check marks, compiler errors
 * with paths and positions, a directory listing, log lines with timestamps and hashes.
 */
function toolOutputText(): string {
	const rng = makeRng(11);
	const int = (lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
	const pick = <T>(list: readonly T[]): T => list[Math.floor(rng() * list.length)];
	const names = ["projection", "artifactStore", "contextTrim", "handoffProbe", "subagentRun", "tokenEstimate"];
	const dirs = ["extensions/shared/text", "extensions/tool-artifacts", "test/unit", "test/e2e", "src/lib"];
	const hex = (len: number) => Array.from({ length: len }, () => "0123456789abcdef"[int(0, 15)]).join("");
	const lines: string[] = [];
	for (let bytes = 0; bytes < 96 * 1024; bytes += lines[lines.length - 1].length + 1) {
		const file = `${pick(dirs)}/${pick(names)}.ts`;
		switch (int(0, 4)) {
			case 0:
				lines.push(`  ${pick(["✓", "✓", "✓", "×"])} ${file} (${int(1, 40)} tests) ${int(2, 900)}ms`);
				break;
			case 1:
				lines.push(
					`${file}:${int(1, 900)}:${int(1, 80)} - error TS${int(2300, 2800)}: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.`,
				);
				break;
			case 2:
				lines.push(
					`-rw-r--r--  1 dev  staff  ${int(100, 99999)} Aug ${int(1, 28)} 1${int(0, 9)}:${int(10, 59)} ${pick(names)}.ts`,
				);
				break;
			case 3:
				lines.push(
					`2025-08-${String(int(1, 28)).padStart(2, "0")}T1${int(0, 9)}:${int(10, 59)}:${int(10, 59)}.${int(100, 999)}Z INFO [${pick(names)}] stored ${int(1, 4096)} KiB as sha256:${hex(16)}`,
				);
				break;
			default:
				lines.push(
					`    at ${pick(names)}.${pick(["run", "project", "flush", "handleEvent"])} (${file}:${int(1, 900)}:${int(1, 80)})`,
				);
		}
	}
	return lines.join("\n");
}

/** The fastest of `calls` calls of each function over `text`, alternating between them, in MiB/s. */
function sideBySide(text: string, fns: ReadonlyArray<(t: string) => number>, calls: number): number[] {
	const mib = utf8Length(text) / (1024 * 1024);
	const best = fns.map(() => Number.POSITIVE_INFINITY);
	let sink = 0;
	for (let warm = 0; warm < 5; warm++) for (const fn of fns) sink += fn(text);
	for (let call = 0; call < calls; call++) {
		for (let f = 0; f < fns.length; f++) {
			const start = performance.now();
			sink += fns[f](text);
			best[f] = Math.min(best[f], performance.now() - start);
		}
	}
	if (sink < 0) console.log(sink); // keeps the calls observable
	return best.map((ms) => mib / (ms / 1000));
}

/** Median throughput in MiB/s of fn over text. */
function throughput(text: string, fn: (t: string) => number): number {
	const mib = utf8Length(text) / (1024 * 1024);
	const rates: number[] = [];
	let sink = 0;
	for (const warmUp = performance.now(); performance.now() - warmUp < MIN_RUN_MS; ) sink += fn(text);
	for (let run = 0; run < RUNS; run++) {
		let iterations = 0;
		const start = performance.now();
		let elapsed = 0;
		do {
			sink += fn(text);
			iterations++;
			elapsed = performance.now() - start;
		} while (elapsed < MIN_RUN_MS);
		rates.push((mib * iterations) / (elapsed / 1000));
	}
	if (sink < 0) console.log(sink); // keeps the calls observable
	return rates.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
}

const corpora = loadCorpora();
let failed = false;
console.log("Token estimate vs o200k_base (positive = over-count, the safe side)\n");
console.log(
	"| corpus | UTF-8 bytes | o200k tokens | bytes/token | estimateTokens | bytes ÷ 4 | bytes ÷ 2.5 (budget ratio) |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const c of [...corpora, ...stressTexts()]) {
	const bytes = utf8Length(c.text);
	const actual = countTokens(c.text);
	const estimate = estimateTokens(c.text);
	const inContract = !c.name.includes("stress");
	if (inContract && estimate < (1 - MAX_UNDER_COUNT) * actual) failed = true;
	console.log(
		`| ${c.name} | ${bytes.toLocaleString("en-US")} | ${actual.toLocaleString("en-US")} | ${(bytes / actual).toFixed(2)} | ` +
			`${pct(estimate, actual)} | ${pct(Math.ceil(bytes / 4), actual)} | ${pct(Math.ceil(bytes / CONSERVATIVE_BYTES_PER_TOKEN), actual)} |`,
	);
}

const all = corpora.map((c) => c.text).join("\n");
const kinds = [
	...corpora,
	{ name: "tool output", text: toolOutputText() },
	{ name: "all four corpora (mixed)", text: all },
	...stressTexts(),
];
// Both estimators see every kind of text before any timing, as they would in a session.
for (let warm = 0; warm < 3; warm++) for (const k of kinds) estimateTokens(k.text) + referenceEstimateTokens(k.text);
console.log(
	`\nestimateTokens vs the character-at-a-time reference (same run, fastest of ${SIDE_BY_SIDE_CALLS} alternating calls):\n`,
);
console.log("| text | KiB | estimateTokens MiB/s | reference MiB/s | speed-up |");
console.log("|---|---:|---:|---:|---:|");
for (const k of kinds) {
	const same = estimateTokens(k.text) === referenceEstimateTokens(k.text);
	if (!same) failed = true;
	const [fast, reference] = sideBySide(k.text, [estimateTokens, referenceEstimateTokens], SIDE_BY_SIDE_CALLS);
	console.log(
		`| ${k.name}${same ? "" : " (ESTIMATES DIFFER)"} | ${(utf8Length(k.text) / 1024).toFixed(0)} | ${fast.toFixed(0)} | ${reference.toFixed(0)} | ${(fast / reference).toFixed(2)}× |`,
	);
}

console.log(`\nSpeed on all four corpora together (${(utf8Length(all) / 1024).toFixed(0)} KiB), median of ${RUNS}:\n`);
console.log("| method | MiB/s |");
console.log("|---|---:|");
const rows: Array<[string, (t: string) => number]> = [
	["Math.ceil(Buffer.byteLength(text) / 4)", (t) => Math.ceil(Buffer.byteLength(t, "utf8") / 4)],
	["utf8Length(text) (native)", utf8Length],
	["utf8LengthPortable(text) (JS loop)", utf8LengthPortable],
	["estimateTokens(text)", estimateTokens],
	["o200k countTokens(text)", countTokens],
];
for (const [name, fn] of rows) console.log(`| ${name} | ${throughput(all, fn).toFixed(0)} |`);

if (failed) {
	console.error(
		"\nFAIL: the estimate under-counts a calibration corpus by more than 10%, or differs from the reference",
	);
	process.exit(1);
}

/**
 * Token-estimate error per corpus against o200k_base, and the estimator's speed next to bytes ÷ 4.
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

/** The contract: never under-count o200k_base by more than this share on a calibration corpus. */
const MAX_UNDER_COUNT = 0.1;
/** Each timing runs at least this long (ms), and the median of this many runs is reported. */
const MIN_RUN_MS = 200;
const RUNS = 5;

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
	console.error("\nFAIL: the estimate under-counts a calibration corpus by more than 10%");
	process.exit(1);
}

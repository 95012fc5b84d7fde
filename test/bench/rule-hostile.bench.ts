/**
 * Hostile lines against every regular expression the notable-line scan applies to a line (issue 32, cost): each
 * rule's pattern, `needs`, `failing`, `not` guards (one by one and merged as the scan merges them) and context
 * `while` tests, the shared guards (EXPECTED_FAILURE, RETRIED, GENERIC_NOT_FAILURE, …), and notable.ts' own
 * per-line expressions (its `const NAME = /…/` literals, read from its source: FILLER, CI_PREFIX, ANSI,
 * JSON_MESSAGE, …) with cleanLogLine and jsonMessage as functions.
 *
 * Lines are made from each expression's own pieces (the words and literals of its source, the rule's keys): a
 * piece repeated, a piece then a separator repeated, a count then a piece then a separator repeated (the shape of
 * "1 tests-1 tests-…"), two pieces interleaved, a piece (alone, after a count, before ": 1") then a long run
 * without its terminator (white space, digits, word characters, brackets, quotes). Each line is timed at 2 and
 * 8 KiB (CPU time); the two whose per-KiB cost grows most and the two that cost most per KiB at 8 KiB are timed
 * again at 4, 16 and 64 KiB (the least of 5 rounds, after warm-up runs). An expression is superlinear when its
 * per-KiB cost grows more than 2× from 4 to 64 KiB (a line of 16 KiB that takes over 250 ms is not grown to 64:
 * its growth to 16 is then scaled by 4, and marked "≥").
 *
 * Prints, per expression whose worst growth is over 1.5×, the worst line and its growth, then the number of
 * expressions and lines swept and the worst growth overall (a shared machine adds noise: a growth near 2× is
 * worth a second run with --only). The scan itself matches a line's first KiB only (MATCH_UNITS), so a
 * superlinear expression costs up to its 1 KiB cost on every such line. About a minute per engine.
 *
 *   npm run bench -- rule-hostile                                   (Node: V8's irregexp)
 *   node_modules/.bin/bun test/bench/rule-hostile.bench.ts          (Bun: JavaScriptCore's engine)
 *   … rule-hostile.bench.ts --only generic.summary [--progress]     (the expressions whose name holds a word;
 *                                                                    each one's result and slow lines on stderr)
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanLogLine, jsonMessage, mergedAlternatives } from "../../extensions/shared/text/notable.ts";
import {
	EXPECTED_FAILURE,
	GENERIC_FAILING_COUNT,
	GENERIC_FAILURE_WORD,
	GENERIC_NOT_FAILURE,
	GENERIC_SUMMARY,
	NOTABLE_RULES,
	RETRIED,
} from "../../extensions/shared/text/notable-rules.ts";

const K = 1024;
const argv = process.argv.slice(2);
const only = argv.includes("--only") ? argv[argv.indexOf("--only") + 1] : undefined;
const engine = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined" ? "Bun (JavaScriptCore)" : "Node (V8)";

/** One expression (or function of a line) to sweep, with the pieces its lines are made of. */
interface Target {
	readonly name: string;
	readonly run: (line: string) => unknown;
	readonly pieces: readonly string[];
	/** Put before every line (made once, not per run: a string built per run costs its copy under Bun). */
	readonly prefix?: string;
}

/** The literal words and marks of a regular expression's source (escapes and classes' ranges taken apart). */
function piecesOf(source: string): string[] {
	const out = new Set<string>();
	// Words (with the spaces and dashes between them), as written: "test cases", "TEST-UNEXPECTED-", "Caused by".
	const plain = source.replace(/\\[bBdDsSwWnrtu](?:[0-9a-fA-F]{4})?|\(\?<?[=!:]|\(\?<\w+>|\\k<\w+>/g, " ");
	for (const m of plain.matchAll(/[A-Za-z][A-Za-z_-]*(?: [A-Za-z][A-Za-z_-]*)*/g)) {
		out.add(m[0]);
		for (const w of m[0].split(/[ -]/)) if (w.length > 1) out.add(w);
	}
	// Marks the source names (escaped or in a class): each alone.
	for (const m of source.matchAll(/\\([^\w\s])|([^\w\s\\()[\]{}|?*+^$.])/g)) out.add(m[1] ?? m[2]);
	return [...out].filter((p) => p.trim() !== "");
}

const targets: Target[] = [];
const seen = new Set<RegExp>();
function addRegex(name: string, re: RegExp, extra: readonly string[] = []): void {
	if (seen.has(re) || (only !== undefined && !name.includes(only))) return;
	seen.add(re);
	const flags = re.flags.replace(/[gy]/g, "");
	const plain = new RegExp(re.source, flags); // test() from 0 each time, as the scan uses it
	const pieces = [...new Set([...piecesOf(re.source), ...extra])];
	// At most 24 pieces: the source's first words and marks, and the rule's keys.
	targets.push({ name, run: (l) => plain.test(l), pieces: pieces.slice(0, 24) });
}

addRegex("EXPECTED_FAILURE", EXPECTED_FAILURE);
addRegex("RETRIED", RETRIED);
addRegex("GENERIC_SUMMARY (reference only)", GENERIC_SUMMARY);
addRegex("GENERIC_FAILING_COUNT", GENERIC_FAILING_COUNT);
addRegex("GENERIC_FAILURE_WORD", GENERIC_FAILURE_WORD);
for (const [i, re] of GENERIC_NOT_FAILURE.entries()) addRegex(`GENERIC_NOT_FAILURE[${i}]`, re);
for (const rule of NOTABLE_RULES) {
	const keys = rule.keys;
	addRegex(`${rule.id} pattern`, rule.pattern, keys);
	if (rule.needs) addRegex(`${rule.id} needs`, rule.needs, keys);
	if (rule.failing) addRegex(`${rule.id} failing`, rule.failing, keys);
	for (const [i, re] of (rule.not ?? []).entries()) addRegex(`${rule.id} not[${i}]`, re, keys);
	const vetoes = [...(rule.not ?? []), ...(rule.kind === "failure" ? [EXPECTED_FAILURE] : [])];
	for (const [i, re] of mergedAlternatives(vetoes).entries())
		if (vetoes.length > 1) addRegex(`${rule.id} vetoes merged[${i}]`, re, keys);
	if (rule.after?.while) addRegex(`${rule.id} after.while`, rule.after.while, keys);
	if (rule.before?.while) addRegex(`${rule.id} before.while`, rule.before.while, keys);
}
// notable.ts' own per-line expressions: every `const NAME = /…/flags;` of its source.
const here = dirname(fileURLToPath(import.meta.url));
const notableSource = readFileSync(join(here, "../../extensions/shared/text/notable.ts"), "utf8");
for (const m of notableSource.matchAll(/^const (\w+) =\s*\/((?:[^/\\\n[]|\\.|\[(?:[^\]\\\n]|\\.)*\])+)\/([a-z]*);$/gm))
	addRegex(`notable.ts ${m[1]}`, new RegExp(m[2], m[3]));
const cleanPieces = [
	"\u001b[",
	"\u001b]",
	"\r",
	"\u001b",
	"[task ",
	"2024-01-01T00:00:00.000Z ",
	"12:00:00 ",
	"PID 1 | ",
	"GECKO(1) | ",
	"\uFEFF",
	" ",
	"INFO - ",
];
if (only === undefined || "cleanLogLine".includes(only))
	targets.push({ name: "notable.ts cleanLogLine()", run: cleanLogLine, pieces: cleanPieces });
if (only === undefined || "jsonMessage".includes(only))
	targets.push({
		name: "notable.ts jsonMessage()",
		run: jsonMessage,
		prefix: "{",
		pieces: ['"message":', '"msg": "', '"Output":"', "\\", '\\"', '"', ":", " ", "\\u00"],
	});

/** Separators and runs that hostile lines put between and after pieces. */
const SEPARATORS = [" ", "-", ", ", ": ", "(", '"', "\t"];
const RUNS = [" ", "\t", "0", "a", "-", ".", "(", "<", '"', "'", "a-", "1 ", "=1 "];

/** Hostile line makers for one target: each returns the line at `units` UTF-16 units (about). */
function makers(t: Target): [label: string, make: (units: number) => string][] {
	const out: [string, (units: number) => string][] = [];
	const rep = (unit: string) => (units: number) => unit.repeat(Math.max(1, Math.ceil(units / unit.length)));
	const head = (start: string, run: string) => (units: number) => `${start}${rep(run)(units)}x`;
	const p = t.pieces;
	for (const a of p) {
		out.push([`(${a})×`, rep(a)]);
		for (const s of SEPARATORS) {
			out.push([`(${a}${s})×`, rep(a + s)]);
			out.push([`(1 ${a}${s})×`, rep(`1 ${a}${s}`)]);
		}
		out.push([`(${a}: 1)×`, rep(`${a}: 1`)], [`(${a}=1,)×`, rep(`${a}=1,`)]);
		for (const r of RUNS)
			out.push(
				[`${a}(${r})×x`, head(a, r)],
				[`1 ${a}(${r})×x`, head(`1 ${a}`, r)],
				[`${a}: 1(${r})×x`, head(`${a}: 1`, r)],
			);
		out.push([`1 ${a} (${a})×`, head(`1 ${a} `, a)]);
	}
	// Two pieces interleaved: each with the next in source order, and with the last.
	for (let i = 0; i + 1 < p.length; i++)
		for (const b of new Set([p[i + 1], p[p.length - 1]])) {
			out.push([`(${p[i]} ${b} )×`, rep(`${p[i]} ${b} `)], [`(1 ${p[i]} 1 ${b}-)×`, rep(`1 ${p[i]} 1 ${b}-`)]);
		}
	for (const r of RUNS) out.push([`(${r})×`, rep(r)]);
	const prefix = t.prefix;
	return prefix === undefined ? out : out.map(([label, make]) => [label, (units: number) => prefix + make(units)]);
}

function cpu(): number {
	const u = process.cpuUsage();
	return u.user + u.system;
}
/**
 * CPU µs of one run of `t` on `line`: the least of `count` rounds (after two warm-up runs: a regular expression's
 * first runs are interpreted, and a repeated string is flattened on first use), each as many runs as fill `fill`
 * µs. The least, not the median: on a shared machine noise only ever adds.
 */
function time(t: Target, line: string, count = 5, fill = 500): number {
	t.run(line);
	t.run(line);
	let best = Number.POSITIVE_INFINITY;
	let reps = 1;
	for (let r = 0; r < count; r++) {
		for (;;) {
			const start = cpu();
			for (let i = 0; i < reps; i++) t.run(line);
			const took = cpu() - start;
			if (took >= fill || reps >= 4096) {
				best = Math.min(best, took / reps);
				break;
			}
			reps *= took < fill / 8 ? 8 : 2;
		}
		if (best > 100_000) break; // slow: once is enough
	}
	return best;
}

interface Worst {
	name: string;
	line: string;
	growth: number;
	capped: boolean;
	perKiB64: number;
}
const results: Worst[] = [];
let swept = 0;
const started = Date.now();
for (const t of targets) {
	let worst: Worst = { name: t.name, line: "", growth: 0, capped: false, perKiB64: 0 };
	const distinct = new Set<string>();
	const lines = makers(t).filter(([, make]) => {
		const key = make(K);
		if (distinct.has(key)) return false;
		distinct.add(key);
		return true;
	});
	swept += lines.length;
	const screened: [string, (units: number) => string, number, number][] = [];
	for (const [label, make] of lines) {
		// Screen: per-KiB cost at 16 KiB against 1 KiB (noisy at 1 KiB, so a wide margin).
		const a = time(t, make(2 * K), 1, 50) / 2;
		const b = time(t, make(8 * K), 1, 50) / 8;
		if (argv.includes("--progress") && b * 8 > 5000)
			console.error(`  slow: ${label} ${((b * 8) / 1000).toFixed(0)} ms at 8 KiB`);
		screened.push([label, make, b / Math.max(a, 0.05), b]);
	}
	// The two that grow most and the two that cost most per KiB at 8 KiB, timed at 4, 16, 64 KiB.
	const growing = [...screened].sort((x, y) => y[2] - x[2]).slice(0, 2);
	const costly = [...screened].sort((x, y) => y[3] - x[3]).slice(0, 2);
	for (const [label, make] of new Set([...growing, ...costly])) {
		const at4 = time(t, make(4 * K)) / 4;
		const at16 = time(t, make(16 * K)) / 16;
		let growth: number;
		let capped = false;
		let perKiB64: number;
		if (at16 * 16 > 250_000) {
			growth = (at16 / at4) * 4;
			capped = true;
			perKiB64 = at16 * 4;
		} else {
			perKiB64 = time(t, make(64 * K)) / 64;
			growth = perKiB64 / at4;
		}
		if (growth > worst.growth) worst = { name: t.name, line: label, growth, capped, perKiB64 };
	}
	results.push(worst);
	if (argv.includes("--progress"))
		console.error(`${t.name}: ${worst.growth.toFixed(1)}× (${((Date.now() - started) / 1000).toFixed(0)} s)`);
}

const shown = (s: string) => JSON.stringify(s).slice(1, -1).replace(/\|/g, "\\|");
console.log(`hostile lines, ${engine}: per-KiB cost at 64 KiB over 4 KiB, per expression (worst line)`);
console.log("| expression | worst line | growth 4→64 KiB | µs per KiB at 64 |");
console.log("|---|---|---:|---:|");
const over = results.filter((r) => r.growth > 1.5).sort((a, b) => b.growth - a.growth);
for (const r of over)
	console.log(
		`| ${r.name} | \`${shown(r.line)}\` | ${r.capped ? "≥" : ""}${r.growth.toFixed(1)}× | ${r.perKiB64.toFixed(1)} |`,
	);
const top = [...results].sort((a, b) => b.growth - a.growth)[0];
console.log(
	`\n${targets.length} expressions, ${swept} hostile lines; worst growth ${top ? `${top.growth.toFixed(1)}× (${top.name})` : "none"}; ` +
		`${over.filter((r) => r.growth > 2).length} over 2×; ${((Date.now() - started) / 1000).toFixed(0)} s`,
);

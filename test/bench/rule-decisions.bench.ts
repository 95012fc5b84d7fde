/**
 * The rules' decisions on candidate lines (issue 32, cost): the table as it is against the table before its
 * patterns were reshaped for speed, and against the previous round's table (both in
 * test/fixtures/notable-rule-shapes.ts, decided by the previous round's algorithm), in one process,
 * interleaved, CPU time, median of per-round ratios (a shared machine is noisy).
 *
 * Lines: those the scan decides, a line whose first KiB holds a key, cleaned as the scan cleans it, with the
 * keys the scan's search finds in it: of the stub-path benchmark's seed (each real log's first 64 KiB, every
 * occurrence, in order), and every distinct one of both corpora. Every line must be decided alike (else exit 1).
 * Then single hostile lines (1 KiB runs) on which an old shape backtracked, old against new.
 *
 *   node --import jiti/register test/bench/rule-decisions.bench.ts   (or: npm run bench -- rule-decisions)
 *   … rule-decisions.bench.ts --main      (only against main before the hostile-lines round, and more rounds)
 */
import {
	cleanLogLine,
	decideLine,
	jsonMessage,
	MATCH_UNITS,
	mergedAlternatives,
	NOTABLE_KEYS,
	NOTABLE_RULES,
	type NotableRule,
} from "../../extensions/shared/text/notable.ts";
import { GENERIC_NOT_FAILURE } from "../../extensions/shared/text/notable-rules.ts";
import { buildWordAutomaton } from "../../extensions/shared/text/word-automaton.ts";
import { loadEvalLogs } from "../fixtures/notable-eval.ts";
import {
	FAILING_BEFORE,
	GENERIC_NOT_FAILURE_BEFORE,
	NOT_BEFORE,
	NOTABLE_RULES_BEFORE,
	NOTABLE_RULES_MAIN,
	NOTABLE_RULES_PREVIOUS,
	PATTERN_BEFORE,
	PYTEST_SUMMARY_PREVIOUS,
	SUMMARY_AT_COUNT_PREVIOUS,
	vetoesBefore,
} from "../fixtures/notable-rule-shapes.ts";
import { loadRealLogs } from "../fixtures/real-logs.ts";

const automaton = buildWordAutomaton(NOTABLE_KEYS);
const ALL = new Uint8Array(NOTABLE_RULES.length).fill(1);

/** decide/decideLine of notable.ts (the previous round's algorithm) over `table` (the same rules, other shapes). */
function decider(table: readonly NotableRule[]): (clean: string, keys: readonly number[]) => NotableRule | undefined {
	const rulesOf = NOTABLE_KEYS.map((w) =>
		table.flatMap((rule, i) => (rule.keys.some((k) => k.toLowerCase() === w) ? [i] : [])),
	);
	const vetoes = table.map((rule) => mergedAlternatives(vetoesBefore(rule)));
	const marks = new Uint8Array(table.length);
	const listed: number[] = [];
	function rulesFor(keys: readonly number[]): readonly number[] {
		if (keys.length === 1) return rulesOf[keys[0]];
		listed.length = 0;
		for (const k of keys)
			for (const r of rulesOf[k]) {
				if (marks[r] === 1) continue;
				marks[r] = 1;
				let at = listed.length;
				listed.push(r);
				while (at > 0 && listed[at - 1] > r) {
					listed[at] = listed[at - 1];
					at--;
				}
				listed[at] = r;
			}
		for (const r of listed) marks[r] = 0;
		return listed;
	}
	function decide(clean: string, keys: readonly number[]): NotableRule | undefined {
		for (const r of rulesFor(keys)) {
			const rule = table[r];
			if (rule.needs?.test(clean) === false || !rule.pattern.test(clean)) continue;
			for (const veto of vetoes[r]) if (veto.test(clean)) return undefined;
			return rule;
		}
		return undefined;
	}
	return (clean, keys) => {
		const decided = decide(clean, keys);
		if ((decided && !decided.weak) || clean.charCodeAt(0) !== 0x7b) return decided;
		const message = jsonMessage(clean);
		if (message === undefined) return decided;
		const inner = decide(message, automaton.indicesIn(message));
		return inner && inner.kind === "failure" && !inner.weak ? inner : decided;
	};
}
const only = process.argv.includes("--main");
const TABLES: [string, ReturnType<typeof decider>][] = [
	["before the reshaping", decider(NOTABLE_RULES_BEFORE)],
	["the third round's start", decider(NOTABLE_RULES_PREVIOUS)],
	["main before the hostile-lines round", decider(NOTABLE_RULES_MAIN)],
];
if (only) TABLES.splice(0, 2);

type Candidate = [clean: string, keys: number[]];

/** The lines of `text` the scan decides: a first KiB holding a key, cleaned, with the keys found in it. */
function candidates(lines: Iterable<string>): Candidate[] {
	const out: Candidate[] = [];
	for (const raw of lines) {
		const window = raw.slice(0, MATCH_UNITS);
		const keys = automaton.indicesIn(window);
		if (keys.length > 0) out.push([cleanLogLine(window), keys]);
	}
	return out;
}

/** The stub-path benchmark's seed: each real log's first 64 KiB, cut at a line end. */
function seedLines(): string[] {
	return loadRealLogs().flatMap((log) => {
		let end = Math.min(log.raw.length, 64 * 1024);
		const nl = log.raw.indexOf(10, end);
		end = end === log.raw.length || nl === -1 ? log.raw.length : nl + 1;
		return Buffer.from(log.raw.subarray(0, end)).toString("utf8").split("\n");
	});
}

function cpu(): number {
	const u = process.cpuUsage();
	return u.user + u.system;
}
function median(xs: number[]): number {
	const s = [...xs].sort((a, b) => a - b);
	return s[s.length >> 1];
}

/** Old vs new over `lines`, `rounds` rounds of `reps` passes each, the order alternating per round. */
function compare(
	lines: Candidate[],
	decideLineBefore: (clean: string, keys: readonly number[]) => NotableRule | undefined,
	rounds: number,
	reps: number,
): { before: number; now: number; ratio: number } {
	for (const [clean, keys] of lines) {
		const a = decideLineBefore(clean, keys)?.id;
		const b = decideLine(clean, keys, ALL, true)?.id;
		if (a !== b) {
			console.error(`decided differently: ${JSON.stringify(clean)}: before ${a}, now ${b}`);
			process.exit(1);
		}
	}
	const passBefore = () => {
		for (let i = 0; i < reps; i++) for (const [clean, keys] of lines) decideLineBefore(clean, keys);
	};
	const passNow = () => {
		for (let i = 0; i < reps; i++) for (const [clean, keys] of lines) decideLine(clean, keys, ALL, true);
	};
	const before: number[] = [];
	const now: number[] = [];
	const ratios: number[] = [];
	for (let r = 0; r < rounds + 2; r++) {
		let a = 0;
		let b = 0;
		for (const which of r % 2 === 0 ? [0, 1] : [1, 0]) {
			const t = cpu();
			if (which === 0) passBefore();
			else passNow();
			if (which === 0) a = cpu() - t;
			else b = cpu() - t;
		}
		if (r < 2) continue; // warm-up
		before.push(a / reps / lines.length);
		now.push(b / reps / lines.length);
		ratios.push(a / b);
	}
	return { before: median(before), now: median(now), ratio: median(ratios) };
}

const rows: string[][] = [];
const seed = candidates(seedLines());
const distinct = candidates(new Set(loadEvalLogs().flatMap((log) => log.text.split("\n"))));
for (const [table, decideLineBefore] of TABLES)
	for (const [name, lines, rounds, reps] of [
		["stub-path seed (every occurrence)", seed, only ? 25 : 15, 40],
		["both corpora (each distinct line once)", distinct, only ? 11 : 5, 1],
	] as const) {
		const t = compare(lines, decideLineBefore, rounds, reps);
		rows.push([table, name, String(lines.length), t.before.toFixed(2), t.now.toFixed(2), `${t.ratio.toFixed(2)}×`]);
	}
console.log(
	`the rules' decisions on candidate lines: an earlier table vs now (CPU µs per line, median of ${only ? 25 : 15} rounds on the seed, ${only ? 11 : 5} on the corpora)`,
);
console.log("| earlier table | lines | count | earlier µs | now µs | earlier / now |");
console.log("|---|---|---:|---:|---:|---:|");
for (const r of rows) console.log(`| ${r.join(" | ")} |`);

/** One test of `re` on `line`, CPU µs (median of 5). */
function once(re: RegExp, line: string): number {
	const ts: number[] = [];
	for (let i = 0; i < 5; i++) {
		const t = cpu();
		re.test(line);
		ts.push(cpu() - t);
	}
	return median(ts);
}
const rule = (id: string) => NOTABLE_RULES.find((r) => r.id === id)?.pattern ?? /$^/;
const K = 1024;
const hostile: [string, RegExp, RegExp, string][] = [
	["generic.verdict-line", PATTERN_BEFORE["generic.verdict-line"], rule("generic.verdict-line"), `x${" ".repeat(K)}x`],
	["generic.verdict-line", PATTERN_BEFORE["generic.verdict-line"], rule("generic.verdict-line"), `x${".".repeat(K)}x`],
	[
		"generic.verdict-line",
		PATTERN_BEFORE["generic.verdict-line"],
		rule("generic.verdict-line"),
		`x  FAIL${" ".repeat(K)}x`,
	],
	["not: a pass", GENERIC_NOT_FAILURE_BEFORE[3], GENERIC_NOT_FAILURE[3], `ok${" ".repeat(K)}x`],
	["not: an XML element", GENERIC_NOT_FAILURE_BEFORE[7], GENERIC_NOT_FAILURE[7], `<${"a".repeat(K)}`],
	[
		"generic.tool-summary failing",
		FAILING_BEFORE["generic.tool-summary"],
		NOTABLE_RULES.find((r) => r.id === "generic.tool-summary")?.failing ?? /$^/,
		`SUMMARY: X ${"a-".repeat(K / 2)}`,
	],
	["nunit.summary", PATTERN_BEFORE["nunit.summary"], rule("nunit.summary"), "<test-run ".repeat(K / 10)],
	["nunit.failed", PATTERN_BEFORE["nunit.failed"], rule("nunit.failed"), "<test-case ".repeat(K / 11)],
	["junit.suite", PATTERN_BEFORE["junit.suite"], rule("junit.suite"), "<testsuite ".repeat(K / 11)],
	["junit.failure", PATTERN_BEFORE["junit.failure"], rule("junit.failure"), "<failure ".repeat(K / 9)],
	["trx.summary", PATTERN_BEFORE["trx.summary"], rule("trx.summary"), "<Counters ".repeat(K / 10)],
	["yarn.error", PATTERN_BEFORE["yarn.error"], rule("yarn.error"), "➤ YN0000: ".repeat(K / 10)],
	["runtime.assertion", PATTERN_BEFORE["runtime.assertion"], rule("runtime.assertion"), "Assertion '".repeat(K / 11)],
	[
		"runtime.fatal not",
		NOT_BEFORE["runtime.fatal"][0],
		NOTABLE_RULES.find((r) => r.id === "runtime.fatal")?.not?.[0] ?? /$^/,
		"FATAL ".repeat(K / 6),
	],
	["not: if … fails", GENERIC_NOT_FAILURE_BEFORE[2], GENERIC_NOT_FAILURE[2], "if ".repeat(K / 3)],
	["not: a pass", GENERIC_NOT_FAILURE_BEFORE[3], GENERIC_NOT_FAILURE[3], "ok(".repeat(K / 3)],
	// The hostile-lines round's (test/bench/rule-hostile.bench.ts): before = main before that round.
	["generic.summary", SUMMARY_AT_COUNT_PREVIOUS, rule("generic.summary"), "1 tests-".repeat(K / 8)],
	["generic.summary", SUMMARY_AT_COUNT_PREVIOUS, rule("generic.summary"), `1 tests${" ".repeat(K)}x`],
	["pytest.summary", PYTEST_SUMMARY_PREVIOUS, rule("pytest.summary"), "1 passed, ".repeat(K / 10)],
];
console.log("\nsingle hostile lines (1 KiB runs), one test, CPU µs");
console.log("| pattern | line | before µs | now µs |");
console.log("|---|---|---:|---:|");
for (const [name, old, now, line] of hostile) {
	if (old.test(line) !== now.test(line)) {
		console.error(`${name} differs on a hostile line`);
		process.exit(1);
	}
	const shown = JSON.stringify(
		line.replace(/(.{1,16}?)\1{7,}/g, (run, unit: string) => `(${unit})×${run.length / unit.length}`),
	);
	console.log(`| ${name} | ${shown} | ${once(old, line).toFixed(0)} | ${once(now, line).toFixed(0)} |`);
}

/**
 * The rules' patterns reshaped for speed and linear time (issue 32, cost) decide every line as the shapes they
 * replace (kept verbatim in test/fixtures/notable-rule-shapes.ts): on every line of both corpora, cleaned as
 * the rules see it, and on random lines made of corpus lines, the rules' keys in any case, counts, separators
 * and long runs of one character. The scan uses only whether a pattern matches (never the match's text), so
 * that is what is compared; and the table before and the table now pick the same rule for every such line.
 * Also: no pattern keeps an optional group beside a run of white space that it can split two ways.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	cleanLogLine,
	decideLine,
	jsonMessage,
	mergedAlternatives,
	NOTABLE_KEYS,
	NOTABLE_RULES,
	type NotableRule,
} from "../../extensions/shared/text/notable.ts";
import { GENERIC_NOT_FAILURE, GENERIC_SUMMARY } from "../../extensions/shared/text/notable-rules.ts";
import { buildWordAutomaton } from "../../extensions/shared/text/word-automaton.ts";
import { loadEvalLogs } from "../fixtures/notable-eval.ts";
import {
	cleanLogLinePrevious,
	FAILING_BEFORE,
	GENERIC_NOT_FAILURE_BEFORE,
	NOT_BEFORE,
	NOTABLE_RULES_BEFORE,
	PATTERN_BEFORE,
	PYTEST_SUMMARY_PREVIOUS,
	SUMMARY_AT_COUNT_PREVIOUS,
	vetoesBefore,
} from "../fixtures/notable-rule-shapes.ts";

/** Every line of both corpora, cleaned as the rules see it (the scan matches a line's first KiB), once. */
const RAW = [...new Set(loadEvalLogs().flatMap((log) => log.text.split("\n")))].map((l) => l.slice(0, 1024));
const LINES = [...new Set(RAW.map(cleanLogLine))];

const ruleOf = (id: string): NotableRule => {
	const rule = NOTABLE_RULES.find((r) => r.id === id);
	if (!rule) throw new Error(`no rule ${id}`);
	return rule;
};

/** [name, the shape before, the test now] for each reshaped pattern or guard. */
const PAIRS: [string, RegExp, (line: string) => boolean][] = [
	...Object.entries(PATTERN_BEFORE).map(([id, before]): [string, RegExp, (line: string) => boolean] => {
		const rule = ruleOf(id);
		return [id, before, (l) => (rule.needs === undefined || rule.needs.test(l)) && rule.pattern.test(l)];
	}),
	["generic.summary is GENERIC_SUMMARY", GENERIC_SUMMARY, (l) => ruleOf("generic.summary").pattern.test(l)],
	[
		"generic.summary is its previous shape",
		SUMMARY_AT_COUNT_PREVIOUS,
		(l) => ruleOf("generic.summary").pattern.test(l),
	],
	...Object.entries(FAILING_BEFORE).map(([id, before]): [string, RegExp, (line: string) => boolean] => [
		`${id} failing`,
		before,
		(l) => ruleOf(id).failing?.test(l) === true,
	]),
	...Object.entries(NOT_BEFORE).flatMap(([id, list]) =>
		list.map((before, i): [string, RegExp, (line: string) => boolean] => [
			`${id} not[${i}]`,
			before,
			(l) => ruleOf(id).not?.[i].test(l) === true,
		]),
	),
	...GENERIC_NOT_FAILURE_BEFORE.flatMap((before, i): [string, RegExp, (line: string) => boolean][] =>
		before === GENERIC_NOT_FAILURE[i]
			? []
			: [[`GENERIC_NOT_FAILURE[${i}]`, before, (l) => GENERIC_NOT_FAILURE[i].test(l)]],
	),
];

/** Lines of their own for a reshaped guard that no corpus line trips (checked beside the corpus lines). */
const SILENT_ON_CORPORA: Readonly<Record<string, readonly string[]>> = {
	"runtime.fatal not[0]": ["FATAL: 3 tests, 0 errors", "FATAL: 2 errors", "FATAL FATAL: no error", "no errors FATAL"],
};

/** The table before, decided as notable.ts decides (first rule in table order holding a key, unless vetoed). */
const automaton = buildWordAutomaton(NOTABLE_KEYS);
const vetoes = NOTABLE_RULES_BEFORE.map((rule) => mergedAlternatives(vetoesBefore(rule)));
function decideBefore(clean: string, keys: readonly number[]): NotableRule | undefined {
	const held = new Set(keys.map((k) => NOTABLE_KEYS[k]));
	for (const [r, rule] of NOTABLE_RULES_BEFORE.entries()) {
		if (!rule.keys.some((k) => held.has(k.toLowerCase()))) continue;
		if (rule.needs?.test(clean) === false || !rule.pattern.test(clean)) continue;
		return vetoes[r].some((veto) => veto.test(clean)) ? undefined : rule;
	}
	return undefined;
}
function decideLineBefore(clean: string, keys: readonly number[]): NotableRule | undefined {
	const decided = decideBefore(clean, keys);
	if ((decided && !decided.weak) || clean.charCodeAt(0) !== 0x7b) return decided;
	const message = jsonMessage(clean);
	if (message === undefined) return decided;
	const inner = decideBefore(message, automaton.indicesIn(message));
	return inner && inner.kind === "failure" && !inner.weak ? inner : decided;
}
const ALL = new Uint8Array(NOTABLE_RULES.length).fill(1);

/** A key of the table in a random mix of cases. */
const key = fc
	.tuple(fc.constantFrom(...NOTABLE_KEYS), fc.array(fc.boolean(), { maxLength: 40 }))
	.map(([k, up]) => [...k].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(""));
/** A run of one character, up to 300 long (what made the old shapes backtrack). */
const run = fc
	.tuple(fc.constantFrom(" ", ".", "-", "a", "0", "<", "*", "\t", "a-"), fc.integer({ min: 1, max: 300 }))
	.map(([c, n]) => c.repeat(n));
/** Random lines: corpus lines, keys, counts, separators and words the patterns look for, runs. */
const line = fc
	.array(
		fc.oneof(
			{ weight: 3, arbitrary: key },
			{ weight: 2, arbitrary: fc.nat(LINES.length - 1).map((i) => LINES[i]) },
			{ weight: 2, arbitrary: fc.nat(100_000).map(String) },
			{ weight: 1, arbitrary: run },
			{
				weight: 4,
				arbitrary: fc.constantFrom(
					" ",
					"  ",
					"\t",
					":",
					": ",
					"=",
					'"',
					",",
					";",
					"|",
					"(",
					")",
					"[",
					"]",
					"/",
					"...",
					"*** ",
					"-",
					"_",
					".",
					"x",
					"A-",
					"0",
					"1",
					"12",
					" of ",
					" out of ",
					"All ",
					"There were ",
					"There was ",
					"tests",
					"test cases",
					"examples",
					"assertions",
					"passed",
					"failures",
					"errors",
					"FAIL",
					"FAILED",
					"FAILURE",
					"ERROR",
					"Error",
					"ok",
					"OK",
					"PASS",
					"no ",
					"without ",
					"on-",
					"on_error",
					"ignore-",
					"--",
					"<",
					">",
					"</",
					"test-case",
					'result="Failed"',
					'"status": "failed"',
					"-CRITICAL **",
					"SUMMARY: AddressSanitizer: ",
					"heap-buffer-overflow",
					"-overflow",
					"use-after-free",
					"undefined",
					"race",
					"0 errors",
					"no leaks",
					"SEGV",
					"\r",
					"retrying",
					"will retry",
					"will be retried",
					"Next Attempt in",
					"trying again",
					"retry",
					"retried",
					"if ",
					"If ",
					"fails",
					"if x ",
					"<test-run",
					"<test-run ",
					"<test-case ",
					"<testsuites ",
					"<testsuite ",
					"<Counters ",
					"<ResultSummary ",
					"<failure ",
					"<error ",
					'failures="1"',
					'errors="0"',
					'failed="2"',
					'outcome="Failed"',
					"message=",
					"type=",
					"➤ YN0001: ",
					"➤ yn0001: ",
					"FATAL ",
					"no errors",
					"0 error",
					"<test-runs ",
					'result="Passed"',
					"10 ",
					"tests",
					"test suites",
					" failed",
					"=",
					"\u274c",
					"\u2714",
				),
			},
		),
		{ maxLength: 14 },
	)
	.map((parts) => parts.join(""));

describe("reshaped patterns decide as the shapes they replace", () => {
	it("reshape something, each listed once", () => {
		expect(PAIRS.map(([name]) => name)).toEqual([
			"generic.summary",
			"generic.verdict-line",
			"generic.report-field",
			"nunit.summary",
			"junit.failure",
			"nunit.failed",
			"trx.summary",
			"junit.suite",
			"runtime.assertion",
			"yarn.error",
			"generic.tests-failed",
			"pytest.summary",
			"generic.summary is GENERIC_SUMMARY",
			"generic.summary is its previous shape",
			"generic.tool-summary failing",
			"runtime.fatal not[0]",
			"GENERIC_NOT_FAILURE[1]",
			"GENERIC_NOT_FAILURE[2]",
			"GENERIC_NOT_FAILURE[3]",
			"GENERIC_NOT_FAILURE[5]",
			"GENERIC_NOT_FAILURE[7]",
			"GENERIC_NOT_FAILURE[9]",
		]);
		// Each changed its pattern or gained a needs.
		for (const [id, before] of Object.entries(PATTERN_BEFORE)) {
			const was = NOTABLE_RULES_BEFORE.find((r) => r.id === id);
			expect(ruleOf(id).pattern.source !== before.source || ruleOf(id).needs !== was?.needs, id).toBe(true);
		}
	});

	it("on every line of both corpora", () => {
		for (const [name, before, now] of PAIRS) {
			const differ = LINES.filter((l) => before.test(l) !== now(l));
			expect(differ, name).toEqual([]);
			// Each tells lines apart on the corpora (no pair agrees by matching everything or nothing), or, for a
			// guard no corpus line trips, on lines of its own.
			const lines = SILENT_ON_CORPORA[name] ?? LINES;
			expect(lines.some((l) => before.test(l)) && lines.some((l) => !before.test(l)), name).toBe(true);
			for (const l of SILENT_ON_CORPORA[name] ?? []) expect(now(l), `${name}: ${l}`).toBe(before.test(l));
		}
	});

	it("on random lines of keys, counts, separators and runs", () => {
		fc.assert(
			fc.property(line, (l) => {
				for (const [name, before, now] of PAIRS) expect(now(l), `${name}: ${JSON.stringify(l)}`).toBe(before.test(l));
			}),
			{ numRuns: 4000 },
		);
	});

	it("on random lines of many starts, the fields after them, '>' and other words (runs stopped at a start)", () => {
		const dense = fc
			.array(
				fc.constantFrom(
					"<test-run",
					"<test-case",
					"<testsuites",
					"<testsuite",
					"<Counters",
					"<ResultSummary",
					"<failure",
					"<error",
					"<failure>",
					"<test-runs",
					"<",
					">",
					" ",
					"x",
					"-",
					'result="Passed"',
					'result="Failed"',
					'outcome="x"',
					'failures="0"',
					'errors="3"',
					'failed="1"',
					"message=",
					"type=",
					"➤ YN0001: ",
					"➤ yn0002:",
					"failed",
					"error",
					"FATAL",
					"0 errors",
					"no error",
					"if ",
					"IF ",
					"if",
					"fails",
					"errors",
					"10 ",
					"tests",
					"test suites",
					" failed",
					" to",
					"ok(",
					"ok",
					"PASSED",
					"(",
					")",
					"Assertion '",
					"Assertion `",
					"assertion `",
					"' failed",
					"` failed",
					"'",
					"\u2028",
					"\n",
				),
				{ maxLength: 24 },
			)
			.map((parts) => parts.join(""));
		fc.assert(
			fc.property(dense, (l) => {
				for (const [name, before, now] of PAIRS) expect(now(l), `${name}: ${JSON.stringify(l)}`).toBe(before.test(l));
			}),
			{ numRuns: 3000 },
		);
	});

	it("on random lines that end in a pass, a parenthesis or white space (the pass guard read from its end)", () => {
		const bit = fc.constantFrom(
			"",
			" ",
			"  ",
			"\t",
			"x",
			"(",
			")",
			"ok",
			"OK",
			"PASSED",
			"passed",
			"xok",
			"\u2028",
			"\n",
		);
		const tail = fc
			.tuple(
				fc.array(bit, { maxLength: 6 }),
				fc.constantFrom("ok", "PASS", "Successful", "succeeded", "oks", "ok(", "x"),
				fc.constantFrom("", " ", "\t  "),
				fc.constantFrom("(", "", ")"),
				fc.array(bit, { maxLength: 6 }),
				fc.constantFrom(")", "", "("),
				fc.constantFrom("", " ", "\t ", "\n", " x"),
			)
			.map(([a, word, ws, open, middle, close, end]) => [...a, word, ws, open, ...middle, close, end].join(""));
		fc.assert(
			fc.property(tail, (l) => {
				for (const [name, before, now] of PAIRS) expect(now(l), `${name}: ${JSON.stringify(l)}`).toBe(before.test(l));
			}),
			{ numRuns: 3000 },
		);
	});

	it("and the table picks the same rule as before for every corpus and random line", () => {
		const decide = (l: string): [string | undefined, string | undefined] => {
			const keys = automaton.indicesIn(l);
			return [decideLineBefore(l, keys)?.id, decideLine(l, keys, ALL, true)?.id];
		};
		const differ = LINES.map(decide).filter(([a, b]) => a !== b);
		expect(differ).toEqual([]);
		fc.assert(
			fc.property(line, (l) => {
				const [a, b] = decide(l);
				expect(b, JSON.stringify(l)).toBe(a);
			}),
			{ numRuns: 2000 },
		);
	});
});

describe("patterns that split no run of white space two ways", () => {
	/** One (possibly nested once) group's body: characters, escapes, classes, inner groups. */
	const GROUP = String.raw`(?:[^()[\\]|\\.|\[(?:[^\]\\]|\\.)*\]|\((?:[^()[\\]|\\.|\[(?:[^\]\\]|\\.)*\])*\))*`;
	/**
	 * An optional group between two runs of white space, `\s*(…)?\s*`, or one that starts with a run and is
	 * followed by one, `(\s*…)?\s*`: the engine tries every split of a long run between them (a 1 KiB run
	 * costs milliseconds). A group whose leading run must be followed by `\S` splits nothing and is allowed.
	 */
	const OPTIONAL_GROUP_IN_RUN = new RegExp(
		String.raw`\\s[*+]\((?:\?:)?${GROUP}\)\?\\s[*+]|\((?:\?:)?\\s[*+](?!\\S)${GROUP}\)\?\\s[*+]`,
	);

	it("has no optional group inside a run of white space in any pattern, veto, needs or failing test", () => {
		const offending = NOTABLE_RULES.flatMap((rule) =>
			[rule.pattern, rule.needs, rule.failing, ...(rule.not ?? [])]
				.filter((re): re is RegExp => re !== undefined && OPTIONAL_GROUP_IN_RUN.test(re.source))
				.map((re) => `${rule.id}: ${re.source}`),
		);
		expect(offending).toEqual([]);
		// The shapes it catches (the old ones) and those it lets pass (the new ones, a run that must end).
		expect(OPTIONAL_GROUP_IN_RUN.test(GENERIC_NOT_FAILURE_BEFORE[3].source)).toBe(true);
		expect(OPTIONAL_GROUP_IN_RUN.test(PATTERN_BEFORE["generic.verdict-line"].source)).toBe(true);
		expect(OPTIONAL_GROUP_IN_RUN.test(String.raw`\s*(?:\(.*\)\s*)?$`)).toBe(false);
		expect(OPTIONAL_GROUP_IN_RUN.test(String.raw`(\s+\S+\s+([\d.]+s|x))?\s*`)).toBe(false);
	});

	it("decides a 4 KiB run as the old shapes did (which backtracked on it; the bench times both)", () => {
		for (const l of [
			`SUMMARY: X ${"a-".repeat(2048)}`,
			`x${" ".repeat(4096)}x`,
			`x  FAIL${" ".repeat(4096)}x`,
			`ok${" ".repeat(4096)}x`,
			`<${"a".repeat(4096)}`,
			"<test-run ".repeat(410),
			`${"<test-run ".repeat(409)}result="Passed">`,
			`${"<test-case ".repeat(372)}result="Failed"`,
			`${"<testsuites ".repeat(341)}failures="0"`,
			`${"<testsuite ".repeat(372)}errors="2"`,
			`${"<Counters ".repeat(409)}failed="1"`,
			`${"<ResultSummary ".repeat(273)}outcome="x"`,
			`${"<failure ".repeat(455)}message=`,
			`${"➤ YN0000: ".repeat(410)}failed`,
			`${"FATAL ".repeat(682)}no errors`,
			"ok(".repeat(1365),
			`${"ok(".repeat(1365)})`,
			"Assertion '".repeat(372),
			`${"Assertion '".repeat(372)} failed`,
			"if ".repeat(1365),
			`${"if ".repeat(1365)}fails`,
			`${"if a ".repeat(819)}x`,
			"1 tests-".repeat(512),
			`${"1 tests-".repeat(511)}, 2 failed`,
			`1 tests${" ".repeat(4096)}x`,
			`1 tests${" ".repeat(4096)}2 failed`,
			`tests: 1${" ".repeat(4096)}x`,
			`${"1 passed, ".repeat(409)}x`,
			`${"1 passed, ".repeat(409)} in 1.5s`,
		]) {
			for (const [name, before, now] of PAIRS) expect(now(l), name).toBe(before.test(l));
		}
	});
});

/** Pieces of generic.summary's and pytest.summary's wordings, line ends of every kind among them. */
const SUMMARY_PIECES = fc.constantFrom(
	"1",
	"2",
	"10",
	"0",
	"2/3",
	"/",
	" ",
	"  ",
	"\t",
	" \t ",
	"\u00a0",
	"\r",
	"\n",
	"\u2028",
	"\u2029",
	"tests",
	"test",
	"test cases",
	"test case",
	"cases",
	"case",
	"examples",
	"failed",
	"failures",
	"passed",
	"passing",
	"errors",
	"ok",
	"warnings",
	"xfailed",
	":",
	"=",
	'"',
	",",
	", ",
	";",
	"|",
	"(",
	")",
	"]",
	"-",
	"x",
	"_",
	"of",
	" out of ",
	"All ",
	"There were ",
	" in 1.5s",
	" in ",
	"= ",
	"1 tests",
	"tests: 1",
	"tests 1,",
	"test cases: 2",
);

describe("this round's shapes (hostile lines) decide as the previous ones", () => {
	const lines = fc.array(SUMMARY_PIECES, { maxLength: 24 }).map((parts) => parts.join(""));
	const summary = ruleOf("generic.summary").pattern;
	const pytest = ruleOf("pytest.summary").pattern;

	it("generic.summary and pytest.summary on random lines of their pieces (counts, words, separators, line ends)", () => {
		fc.assert(
			fc.property(lines, (l) => {
				const name = JSON.stringify(l);
				expect(summary.test(l), `summary: ${name}`).toBe(SUMMARY_AT_COUNT_PREVIOUS.test(l));
				expect(summary.test(l), `summary vs GENERIC_SUMMARY: ${name}`).toBe(GENERIC_SUMMARY.test(l));
				expect(pytest.test(l), `pytest: ${name}`).toBe(PYTEST_SUMMARY_PREVIOUS.test(l));
			}),
			{ numRuns: 20_000 },
		);
	});

	it("separators inside a count, runs of white space and line ends are read as before", () => {
		// A separator inside a count ("2/3", "tests 1, …"), runs of white space, line ends inside a count.
		for (const l of [
			"1 tests -2/3 tests",
			"1 tests x-2 tests: 3",
			"1 tests -tests: 3 failed",
			"1 tests -tests 1, 2 failed",
			"1 tests -test cases: 3",
			"1 tests -tests\t \t3 failed",
			"1 tests -tests:\t3 failed",
			"1 tests -tests\u2028: 3 failed",
			"1 tests -tests 1\u2028, 2 failed",
			"1 tests\u2028, 2 failed",
			"1 tests \u2028 2 failed",
			"1 tests\t\t 2 failed",
			"1 tests\t\t2 failed",
			"1 tests -tests:\u2028 3 failed",
			'1 tests -tests": 3 failed',
			"1 tests -tests: 3",
		]) {
			expect(summary.test(l), JSON.stringify(l)).toBe(SUMMARY_AT_COUNT_PREVIOUS.test(l));
			expect(summary.test(l), JSON.stringify(l)).toBe(GENERIC_SUMMARY.test(l));
		}
		// They tell lines apart (no pair agrees by matching everything or nothing).
		expect(summary.test("1 tests -2/3 tests")).toBe(true);
		expect(summary.test("1 tests -tests\u2028: 3 failed")).toBe(false);
	});

	it("cleanLogLine cleans every corpus line and random lines of returns, escapes and prefixes as before", () => {
		for (const l of RAW) expect(cleanLogLine(l), JSON.stringify(l)).toBe(cleanLogLinePrevious(l));
		const piece = fc.constantFrom(
			"\r",
			"\r\r",
			" ",
			"\t",
			"x",
			"ok",
			"\u001b[31m",
			"\u001b[0m",
			"2024-01-01T00:00:00.000Z ",
			"[task 2024] ",
			"12:00:00     INFO - ",
			"PID 12 | ",
			"\uFEFF",
			"\u2028",
		);
		fc.assert(
			fc.property(fc.array(piece, { maxLength: 16 }), (parts) => {
				const l = parts.join("");
				expect(cleanLogLine(l), JSON.stringify(l)).toBe(cleanLogLinePrevious(l));
			}),
			{ numRuns: 5000 },
		);
		// And on a line of many returns, which the previous shape read once per return (quadratic).
		for (const l of [`1 \r${"\r".repeat(4096)}`, `x\r${"\r".repeat(4096)}x`, `${"\r ".repeat(2048)}`])
			expect(cleanLogLine(l)).toBe(cleanLogLinePrevious(l));
	});
});

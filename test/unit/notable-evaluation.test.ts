/**
 * How the scan evaluates the rule table (issue 32, cost), apart from what the rules say: speed-ups that must
 * not change a single decision. A rule's `needs` (a cheap test tried before its pattern) never rejects a line
 * the pattern matches; a rule's vetoes merged into one alternation per set of flags veto exactly the lines the
 * guards veto one by one. Checked on every line of both corpora and on random lines made of the words the
 * patterns look for. (That whole scans are unchanged is notable-caps.property.test.ts' and the corpus tests'.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cleanLogLine, mergedAlternatives, NOTABLE_KEYS, NOTABLE_RULES } from "../../extensions/shared/text/notable.ts";
import { EXPECTED_FAILURE } from "../../extensions/shared/text/notable-rules.ts";
import { loadEvalLogs } from "../fixtures/notable-eval.ts";

/** Every line of both corpora, cleaned as the rules see it, once. */
const LINES = [...new Set(loadEvalLogs().flatMap((log) => log.text.split("\n")))].map((l) =>
	cleanLogLine(l.slice(0, 1024)),
);

/** A key in a random case mix. */
const key = fc
	.tuple(fc.constantFrom(...NOTABLE_KEYS), fc.array(fc.boolean(), { maxLength: 40 }))
	.map(([k, up]) => [...k].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(""));

/** Random lines: the rules' keys, the words and marks the patterns look for, runs of white space and dots. */
const line = fc
	.array(
		fc.oneof(
			{ weight: 3, arbitrary: key },
			{ weight: 2, arbitrary: fc.nat(LINES.length - 1).map((i) => LINES[i]) },
			{
				weight: 4,
				arbitrary: fc.constantFrom(
					"FAIL",
					"FAILED",
					"FAILURE",
					"ERROR",
					"Error",
					"Errors",
					"Fatal",
					"PANIC",
					"Panic",
					"CRASHED",
					"TIMEOUT",
					"not ok",
					"Failures",
					"Failed",
					"*** ",
					"**",
					"...",
					"  ",
					" ",
					"\t",
					":",
					"!",
					"-",
					"_",
					".",
					"x",
					"A-",
					"3",
					"(1 s)",
					"[a]",
					"\u274c",
					"\u2717",
					"\u2718",
					"\u2716",
					"0 failed",
					"xfail",
					"# ",
					"ok 1",
				),
			},
		),
		{ maxLength: 12 },
	)
	.map((parts) => parts.join(""));

const WITH_NEEDS = NOTABLE_RULES.filter((rule) => rule.needs !== undefined);

describe("a rule's needs", () => {
	it("is set on the rules it speeds up", () => {
		expect(WITH_NEEDS.map((r) => r.id)).toContain("generic.verdict-line");
	});

	it("passes every line of both corpora that its rule's pattern matches", () => {
		for (const rule of WITH_NEEDS) {
			const rejected = LINES.filter((l) => rule.pattern.test(l) && !rule.needs?.test(l));
			expect(rejected, rule.id).toEqual([]);
			// It must reject something, or it is no guard.
			expect(LINES.some((l) => !rule.needs?.test(l))).toBe(true);
		}
	});

	it("passes every random line its rule's pattern matches", () => {
		fc.assert(
			fc.property(line, (l) => {
				for (const rule of WITH_NEEDS) if (rule.pattern.test(l)) expect(rule.needs?.test(l), rule.id).toBe(true);
			}),
			{ numRuns: 3000 },
		);
	});
});

describe("a rule's vetoes merged into one alternation per set of flags", () => {
	const lists = NOTABLE_RULES.map((rule) => [
		...(rule.not ?? []),
		...(rule.kind === "failure" ? [EXPECTED_FAILURE] : []),
	]);
	/** Each distinct list once (many rules share the generic guards), with a rule that has it. */
	const distinct = [...new Map(lists.map((list, i) => [list.map(String).join("\u0000"), { list, i }])).values()];
	/** The corpus lines a rule is tried on: those holding a key. */
	const keyed = LINES.filter((l) => NOTABLE_KEYS.some((k) => l.toLowerCase().includes(k)));

	it("veto exactly the corpus lines the guards veto one by one", () => {
		for (const { list, i } of distinct) {
			const merged = mergedAlternatives(list);
			expect(merged.length).toBeLessThanOrEqual(Math.min(list.length, 2));
			for (const l of keyed) {
				const one = list.some((re) => re.test(l));
				if (merged.some((re) => re.test(l)) !== one) expect([NOTABLE_RULES[i].id, l, one]).toBe("the same");
			}
		}
	});

	it("veto exactly the random lines the guards veto one by one", () => {
		const merged = lists.map(mergedAlternatives);
		fc.assert(
			fc.property(line, (l) => {
				for (const [i, list] of lists.entries())
					expect(
						merged[i].some((re) => re.test(l)),
						NOTABLE_RULES[i].id,
					).toBe(list.some((re) => re.test(l)));
			}),
			{ numRuns: 1000 },
		);
	});

	it("keeps a guard alone where joining would change it: a back-reference, a global or sticky one", () => {
		const list = [/(a)\1/, /b/g, /c/y, /d/i, /e/i, /f/];
		const merged = mergedAlternatives(list);
		expect(merged.map((re) => re.source)).toEqual(["(?:d)|(?:e)", "(?:f)", "(a)\\1", "b", "c"]);
		expect(merged.some((re) => re.test("xaax"))).toBe(true);
		expect(merged.some((re) => re.test("xyz"))).toBe(false);
	});
});

describe("generic.report-field on any line, in linear time", () => {
	const rule = NOTABLE_RULES.find((r) => r.id === "generic.report-field");
	/** The pattern as it was: its element's name could backtrack and its attributes ran past a "<". */
	const QUADRATIC =
		/<(?![\w:-]*(suites?|runs?|assembl(y|ies)|collections?|summary|results)\b)[\w:-]+\b[^>]*\b(result|outcome|status|state)="(fail(ed|ure)?|error(ed)?|broken|time[ds]?out|timedout|aborted)"|"(status|result|outcome|state|conclusion)"\s*:\s*"(fail(ed|ure)?|error(ed)?|broken|timed_?out|timeout)"/i;
	/** Two "<" with no ">" between: the only lines on which the two can differ (XML has none). */
	const STRAY = /<[^>]*</;
	const xmlish = fc
		.array(
			fc.constantFrom(
				"<",
				">",
				"</",
				"/>",
				"a",
				"test-case",
				"testsuite",
				"suites",
				"results",
				"x:y",
				"-",
				":",
				"_",
				" ",
				"  ",
				"=",
				'"',
				'status="failed"',
				'result="Failed"',
				'outcome="Error"',
				'state="timedout"',
				'status="passed"',
				'"status": "failed"',
				'"conclusion":"failure"',
				"\u00e9",
			),
			{ maxLength: 16 },
		)
		.map((parts) => parts.join(""));

	it("decides every corpus line as the pattern before it did", () => {
		expect(rule).toBeDefined();
		const differ = LINES.filter((l) => rule?.pattern.test(l) !== QUADRATIC.test(l));
		expect(differ).toEqual([]);
	});

	it("decides every random line without a stray '<' inside an element as before", () => {
		fc.assert(
			fc.property(xmlish, (l) => {
				if (!STRAY.test(l)) expect(rule?.pattern.test(l), l).toBe(QUADRATIC.test(l));
			}),
			{ numRuns: 5000 },
		);
	});

	it("reads an element's attributes up to the next '<' (the one way it differs), and finds a field after junk", () => {
		expect(rule?.pattern.test('<a <testsuite status="failed">')).toBe(false);
		expect(QUADRATIC.test('<a <testsuite status="failed">')).toBe(true);
		expect(rule?.pattern.test('<a <test-case status="failed">')).toBe(true);
		const hostile = `${"<a-".repeat(330)} <test-case name="x" result="Failed">`;
		expect(rule?.pattern.test(hostile)).toBe(true);
		expect(rule?.pattern.test(`${"<a-".repeat(340)}`)).toBe(false);
		expect(rule?.pattern.test('<-status="failed"/>')).toBe(QUADRATIC.test('<-status="failed"/>'));
	});
});

describe("patterns linear in a line's length", () => {
	/** `\s*X?\s*` (X one item): the engine tries every split of a run of white space around the optional X. */
	const SPLIT_RUN = /\\s[*+](\[[^\]]*\]|[^\\([]|\\.)\?\\s[*+]/;

	it("no rule's pattern, veto, needs or failing test has an optional item between two runs of white space", () => {
		const offending = NOTABLE_RULES.flatMap((rule) =>
			[rule.pattern, rule.needs, rule.failing, ...(rule.not ?? [])]
				.filter((re): re is RegExp => re !== undefined && SPLIT_RUN.test(re.source))
				.map((re) => `${rule.id}: ${re.source}`),
		);
		expect(offending).toEqual([]);
		expect(SPLIT_RUN.test(String.raw`code\s*[:=]?\s*\d`)).toBe(true);
		expect(SPLIT_RUN.test(String.raw`code\s*(?:[:=]\s*)?\d`)).toBe(false);
	});

	it("finds exit codes after white space as before (the rewritten separators read the same lines)", () => {
		const old =
			/\b(exit code|exit status|return ?code|exit_code|exited with( exit)?( code| status)?)\b( was| is| of)?\s*[:=]?\s*'?\(?-?\d+/i;
		const exit = NOTABLE_RULES.find((r) => r.id === "generic.exit-code");
		for (const l of [
			"exit code 1",
			"exit code:  2",
			"exit code  =3",
			"exit code =  (4",
			"exit code::5",
			"exit code   x 1",
			`exit code${" ".repeat(900)}`,
		])
			expect(exit?.pattern.test(l), l).toBe(old.test(l));
		const differ = LINES.filter((l) => exit?.pattern.test(l) !== old.test(l));
		expect(differ).toEqual([]);
	});
});

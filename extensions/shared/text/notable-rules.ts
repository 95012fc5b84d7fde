/**
 * The rules of the notable-line scan (notable.ts), as data: one table, grouped by ecosystem. Each rule says
 * which lines of a log say that something went wrong (`failure`) or how a run ended (`summary`), which lines
 * around them carry the message (`context`), and which look-alikes are not failures (`not`).
 *
 * How a line is matched: ANSI escapes and a CI prefix (an ISO timestamp as GitHub Actions writes it, a
 * `[task …]` or mozharness `HH:MM:SS  INFO - ` prefix) are removed first; then the rules are tried in table
 * order and the first that matches (and is not vetoed by its `not` guards or, for a failure, by
 * EXPECTED_FAILURE) decides. A rule is only tried on a line holding one of its `keys` (the scan searches the
 * text for every rule's keys at once, so a line holding none costs no rule at all); a key a real line lacks
 * makes the rule miss it, which the rule's test on real text in test/unit/notable.test.ts catches.
 *
 * Adding a rule: put it in its ecosystem's group (before any broader rule it must win over), give it an id
 * `<ecosystem>.<what>`, and add a real line from a public log to the rule's examples in the unit test; the
 * drift test there fails for a rule without one.
 *
 * Patterns stay linear in a line's length (a 1 KiB line of white space must not cost milliseconds): an optional
 * separator between white space is `\s*(?:[:=]\s*)?`, never `\s*[:=]?\s*` (the same lines, but the engine tries
 * every split of the run); test/unit/notable-evaluation.test.ts checks the table for that shape, and
 * test/unit/notable-rule-shapes.test.ts for an optional group inside such a run. Nor may a pattern rescan from
 * each of many starts: where a start (`<test-case`, `if `) is followed by `[^>]*` or `.*` before what it looks
 * for, the run stops at the next start too (`<test-case\b[^<>]*(?:<(?!test-case\b)[^<>]*)*\bresult=…`, the
 * unrolled and cheaper form of `(?:(?!<test-case\b)[^>])*`: a later start reads the same line from there, so the
 * same lines match), else "<test-case <test-case …" costs starts × length. A pattern reshaped for speed keeps its
 * old shape in test/fixtures/notable-rule-shapes.ts, where that test checks both match the same lines. And
 * JavaScriptCore (Pi on Bun) runs a group inside a lookahead inside a repeated group, or a long alternation
 * inside a repeated lookahead, on its slow path: `(?!a\b|b\b)`, not `(?!(?:a|b)\b)`. test/bench/rule-hostile.bench.ts
 * sweeps every expression with lines made of its own pieces, under Node and Bun, and names any that grows.
 *
 * Pure data at the ground of `extensions/shared/`: this module imports nothing.
 */

/** Lines around a hit that carry its message (the assertion under a failure header, the last frames). */
export interface NotableContext {
	/** Lines to carry, blank lines not counted (at most MAX_CONTEXT_LINES). */
	readonly lines: number;
	/** Carry only while lines match this; without it, any line that is not itself a hit. */
	readonly while?: RegExp;
	/**
	 * Before a hit only: instead of the lines just above, the first line of the record the hit is a field of (a
	 * pretty-printed JSON report's object: the line below the nearest less indented line that opens it with
	 * "{", at most MAX_RECORD_LINES above), which names what the field is about (its id, its name).
	 */
	readonly record?: true;
}

/** One rule of the table. */
export interface NotableRule {
	/** `<ecosystem>.<what>`, unique, e.g. `pytest.failed`. */
	readonly id: string;
	/**
	 * The ecosystem it belongs to (the table's grouping); `generic` for a rule that needs none. Which corpus
	 * ecosystems each group was written or fitted on is RULE_ECOSYSTEMS.
	 */
	readonly ecosystem: string;
	/**
	 * Lower-case words one of which every line this rule matches contains (compared case-insensitively):
	 * the scan tries the rule only on lines that hold one, and searches the text for all rules' words at once.
	 */
	readonly keys: readonly string[];
	/**
	 * `failure`: something went wrong; `summary`: how a run (or a step) ended; `marker`: no notable line
	 * itself, it tells the scan where a step starts (`marker: "step"`) or that the failure just above was
	 * ignored (`marker: "ignored"`, Ansible's `...ignoring`).
	 */
	readonly kind: "failure" | "summary" | "marker";
	/**
	 * For a marker: what it marks. `checked-step`: a step of a CI that prints a verdict for every step that
	 * fails (GitHub Actions' `##[error]Process completed with exit code N.`, Azure's), so one that ends
	 * without a failing verdict passed.
	 */
	readonly marker?: "step" | "checked-step" | "ignored";
	/**
	 * For a summary: it is a CI's or a build tool's verdict that ends a step (`step`: Travis' `The command "…"
	 * exited with N.`) or the whole run (`run`: `Done. Your build exited with 0.`, Jenkins' `Finished:
	 * SUCCESS`). A passing verdict clears the failures of what it ends (the command succeeded); a failing one
	 * keeps their weak evidence.
	 */
	readonly ends?: "step" | "run";
	/**
	 * Failure vocabulary in any wording (a generic rule): weak evidence that keeps the latest lines and ranks
	 * them newest first, after every other failure.
	 */
	readonly vocabulary?: boolean;
	/** Matched against the line with ANSI escapes and the CI prefix removed. */
	readonly pattern: RegExp;
	/**
	 * A cheap test every line `pattern` matches passes (a literal the pattern cannot match without), tried
	 * first: an expensive pattern is then tried only on the lines that can match it. Speed only: the drift
	 * test in test/unit/notable-evaluation.test.ts checks it never rejects a line the pattern matches.
	 */
	readonly needs?: RegExp;
	/** Look-alikes that are not this rule's hit ("0 failed", "# SKIP", an expected failure). */
	readonly not?: readonly RegExp[];
	/** A summary that reports a failure (a nonzero failure count): ranked with the failures, kind stays summary. */
	readonly failing?: RegExp;
	/** Weak evidence (a bare "Error:" line, a maven [ERROR]): ranked after strong hits, dropped in a run that passed. */
	readonly weak?: boolean;
	/** A runner's or a build's own verdict on a test or a step (`--- FAIL`, `TEST-UNEXPECTED-FAIL`): ranked first. */
	readonly verdict?: boolean;
	/** Lines after the hit that carry its message. Lines that still match `while` past the count are skipped. */
	readonly after?: NotableContext;
	/** Lines before the hit that carry its message (the last frames above a Python exception). */
	readonly before?: NotableContext;
}

/**
 * For each rule group (a rule's `ecosystem`), the ecosystems of the log corpora whose logs it was written or
 * fitted on: the language communities of the held-out corpus (`python`, `java`, …) and the labels of the
 * real-log corpus (`mozilla-ci`, `junit-xml`, …). A leave-one-ecosystem-out fold for ecosystem E disables
 * every rule whose group lists E. The `generic` group lists none: it was written from the failure vocabulary
 * of CI systems and runners in general, never from one ecosystem's logs.
 */
export const RULE_ECOSYSTEMS: Readonly<Record<string, readonly string[]>> = {
	generic: [],
	mozilla: ["mozilla-ci", "cpp", "javascript"],
	ci: ["github-actions", "mozilla-ci", "ci-task"],
	make: ["c", "cpp"],
	jest: ["javascript", "typescript", "junit-xml"],
	"vitest/jest/node:test": ["javascript", "typescript"],
	bazel: ["github-actions", "cpp", "java"],
	"json reports": ["mocha", "npm-audit", "javascript"],
	mocha: ["mocha", "javascript"],
	tap: ["tap", "javascript", "perl"],
	unittest: ["python"],
	pytest: ["python", "github-actions"],
	"go test": ["go", "go-test"],
	"go test -json": ["go", "go-test-json"],
	"go build": ["go"],
	"cargo test": ["rust"],
	junit: ["java", "junit-xml", "kotlin", "scala"],
	nunit: ["dotnet", "nunit-xml"],
	"dotnet trx": ["dotnet", "dotnet-trx"],
	maven: ["java"],
	"dotnet test": ["dotnet"],
	pester: ["powershell", "dotnet"],
	tsc: ["typescript", "javascript"],
	msbuild: ["dotnet", "cpp"],
	rustc: ["rust"],
	javac: ["java"],
	"gcc/clang": ["c", "cpp"],
	npm: ["javascript", "typescript"],
	pnpm: ["javascript", "typescript"],
	yarn: ["javascript", "typescript", "yarn"],
	pip: ["python"],
	"npm audit": ["npm-audit", "javascript"],
	"npm audit/trivy": ["npm-audit", "trivy", "javascript"],
	"trivy/dependency-check": ["trivy", "java"],
	"npm audit/dependency-check/trivy": ["npm-audit", "trivy", "javascript", "java"],
	sanitizers: ["sanitizer", "c", "cpp"],
	runtime: ["go", "go-runtime", "rust", "python", "java", "java-runtime", "javascript", "c", "cpp"],
	chromium: ["chromium", "cpp"],
	python: ["python"],
	java: ["java", "java-runtime"],
	cli: ["rust", "javascript"],
};

/** Whether `rule` was written or fitted on logs of `ecosystem` (a corpus ecosystem), per RULE_ECOSYSTEMS. */
export function writtenFor(rule: NotableRule, ecosystem: string): boolean {
	return (RULE_ECOSYSTEMS[rule.ecosystem] ?? []).includes(ecosystem);
}

/** Most context lines any rule carries on one side. */
export const MAX_CONTEXT_LINES = 8;
/** Most lines above a field that its record's first line is looked for (`record` context). */
export const MAX_RECORD_LINES = 64;

/**
 * The context of a failure (or a failing summary) whose rule names none: the next lines of the block it heads,
 * whatever the ecosystem (a test's name under a "FAILURES" header, the message under a failing test's name, the
 * `symbol:` line under a compiler error).
 */
export const BLOCK_CONTEXT: NotableContext = { lines: 2 };

/** Said of a failure that was expected: never a failure (applies to every failure rule). */
export const EXPECTED_FAILURE =
	/\b(x-?fail(ed|s)?|known[- ]fail(ure|s)?|expected[- ]fail(ure|s)?|TEST-EXPECTED-FAIL|fails? as expected|(failures?|errors?) [\w ]{0,20}\bare expected)\b/i;

/**
 * An error the tool says it retries ("Next Attempt in: 11535 ms", "retrying"): not (yet) a failure. The same
 * lines as `\b(retrying|will retry|will be retried|next attempt in|trying again)\b`, in a shape that starts
 * at the words' last part and reads "will", "will be" behind it.
 */
export const RETRIED =
	/(?:retr(?:ying|y\b|ied)|next attempt in|trying again)(?<=\b(?:retrying|will retry|will be retried|next attempt in|trying again))\b/i;

/** A summary whose failure count is not zero. */
const NONZERO_FAILED = /\b[1-9]\d* (failed|failing|failures?|errors?)\b/i;

const INDENTED = /^\s+\S/;

/** Words a runner counts in its summary (tests, examples, runs, assertions, and how they ended). */
const COUNTED =
	"(tests?|test cases?|cases|examples?|specs?|scenarios?|steps|runs?|assertions?|checks?|suites?|files|doctests?|properties|passe?d?|passing|ok|succeeded|successes|failed|failing|failures?|fail|errors?|errored|broken|crashed|skipped|skips?|pending|ignored|todo|canceled|cancelled|unexpected|xfailed|xpassed|deselected|rerun|reruns|warnings?)";
/** A count next to such a word, either order ("3 failed", "Failures: 3", "failed=3", "FAIL 3"). */
const COUNT_PAIR = `(\\b\\d+(/\\d+)? ${COUNTED}\\b|\\b${COUNTED}"?(\\s*[:=]\\s*"?\\d+\\b|\\s+\\d+\\s*[|,;\\]]))`;
/**
 * Any runner's summary line: two counts next to such words in any order ("10 examples, 2 failures",
 * "Tests: 10, Assertions: 20, Failures: 1.", "ok=10 changed=2 failed=1"), or tests counted with how they ended
 * ("1 out of 10 tests failed", "All 10 tests passed", "*** 1 TEST FAILED ***").
 */
export const GENERIC_SUMMARY = new RegExp(
	`${COUNT_PAIR}.*?[,;|(/ ]\\s*${COUNT_PAIR}|\\b\\d+ (out )?of \\d+ (tests?|test cases|examples|specs|checks)( \\w+)? (passed|failed|succeeded)\\b|\\b(All )?\\d+ (tests?|test cases|examples|specs|checks|test suites)( \\w+)? (passed|failed|succeeded|ok|pass|fail)\\b|^\\W*\\d+ (passing|failing|passed|failed|pending)( \\([^)]*\\)| in [\\d.]+ ?m?s)?\\W*$|^\\W*There (were|was) \\d+ (failures?|errors?|failed tests?)\\W*$`,
	"i",
);
/** `source` with every capturing group made non-capturing (none is read: the scan only tests). */
function uncaptured(source: string): string {
	return source.replace(/(?<!\\)\((?!\?)/g, "(?:");
}
/** COUNT_PAIR without capturing groups. */
const PAIR_NC = uncaptured(COUNT_PAIR);
/** A separator before a second count, and white space (of a run, its first space only: a later one finds no more). */
const SEPARATOR = `(?:[,;|(/]|(?<! \\s*?) )\\s*`;
/** Before a second count: SEPARATOR, a first count ending before it on its line (read back from there). */
const SECOND = `(?<=${PAIR_NC}.*?)${SEPARATOR}`;
/** After a first count: a separator and a second count within 16 characters (most summaries: cheap to find). */
const NEAR = `.{0,16}?${SEPARATOR}${PAIR_NC}`;
/**
 * GENERIC_SUMMARY in a shape that is linear in a line's length and skips most positions (speed only: the same
 * lines). Every wording holds a count, so each alternative begins at the first digit of a count (`\d(?<!\w\d)`:
 * most digits of a line are inside a number or a name) and reads a word before the count behind it, `(?<=…)`;
 * the engine then skips every position but such a digit, where the first shape
 * (`^(?=[^]*?\d)[^]*?(?:GENERIC_SUMMARY)`) tried its whole alternation at every position of a line with a digit.
 * ("All " before a count is dropped: a count at a word's start is one with or without it.)
 *
 * Two counts ("10 examples, 2 failures", COUNT_PAIR twice, a separator between): each count is read as the first
 * with a second one near after it (NEAR: most summaries), or as the second with a separator before it and a first
 * count anywhere before that on its line, read back from there (SECOND). The previous shape read forward from
 * every first count to the line's end, which cost counts × length on "1 tests-1 tests-…" and spaces × run on
 * "1 tests" and spaces. Read back, a count whose look back fails has no count ending before its separator, so
 * every later count after a separator finds it: few fail, each reading back once; of a run of white space only
 * its first space is a separator (a later one finds no more). The reference test in
 * test/unit/notable-rule-shapes.test.ts checks it decides every line as GENERIC_SUMMARY and the previous shape
 * (kept in test/fixtures/notable-rule-shapes.ts) do.
 */
const SUMMARY_AT_COUNT = new RegExp(
	// Each count (three wordings) is read as a first count with a second one near after it, or as a second count
	// with a first one anywhere before it on its line.
	`\\d(?<!\\w\\d)(?:\\d*(?:(?:/\\d+)? ${COUNTED}\\b(?:${NEAR}|(?<=${SECOND}\\d+(?:/\\d+)? ${COUNTED}))` +
		`| (out )?of \\d+ (tests?|test cases|examples|specs|checks)( \\w+)? (passed|failed|succeeded)\\b| (tests?|test cases|examples|specs|checks|test suites)( \\w+)? (passed|failed|succeeded|ok|pass|fail)\\b)` +
		`|(?<=[\\s:="]\\d)(?<=\\b${COUNTED}"?\\s*[:=]\\s*"?\\d)\\d*\\b(?:${NEAR}|(?<=${SECOND}\\b${COUNTED}"?\\s*[:=]\\s*"?\\d+))` +
		`|(?<=\\s\\d)(?<=\\b${COUNTED}"?\\s+\\d)\\d*\\s*[|,;\\]](?:${NEAR}|(?<=${SECOND}\\b${COUNTED}"?\\s+\\d+\\s*[|,;\\]]))` +
		`|(?<=^\\W*\\d)\\d* (passing|failing|passed|failed|pending)( \\([^)]*\\)| in [\\d.]+ ?m?s)?\\W*$|(?<=^\\W*There (were|was) \\d)\\d* (failures?|errors?|failed tests?)\\W*$)`,
	"i",
);
/** A summary whose count of failures or errors is not zero (a look-alike "0 failed" is not). */
export const GENERIC_FAILING_COUNT =
	/\b[1-9]\d*(\/\d+)? (\w+ )?(failed|failing|failures?|fail|errors?|errored|broken|crashed|unexpected)\b|\b(failed|failing|failures?|fail|errors?|errored|broken|crashed)"?\s*(?:[:=]\s*)?"?[1-9]|\b[1-9]\d* (out )?of \d+ [\w ]{0,20}\bfailed\b/i;
/** Failure vocabulary as a word of its own (not inside a name like error_handler, -Werror or error.c). */
export const GENERIC_FAILURE_WORD =
	/(^|[^\w/.])(fail(ed|ure|ures|s)?|error(s|ed)?|fatal|exception|panic(ked)?|abort(ed)?|crash(ed)?|segfault|timed out|traceback|not ok|exited with|segmentation fault|core dumped|bus error|SIG(SEGV|ABRT|BUS|ILL|FPE))($|[^\w/-])|[a-z\d](Error|Exception)(:|\s|$)/i;
/**
 * Lines that hold a failure word but report no failure: zero counts, passes, warnings, option names. Shapes for
 * speed and linear time (the same lines as the plainer forms kept in test/fixtures/notable-rule-shapes.ts): a
 * guard about a failure word starts at the word and reads what stands before it behind it (`(?<=…)`), and no
 * run is split two ways (`\s*(\(.*\))?\s*$` is `\s*(?:\(.*\)\s*)?$`).
 */
export const GENERIC_NOT_FAILURE: readonly RegExp[] = [
	// A TAP test that passed, whatever its name says.
	/^\s*ok \d+\b/,
	/(?:errors?|failures?|failed|fail)(?:(?<=\b(?:0|no|zero|without|none) (?:errors?|failures?|failed|fail))\b|(?<=\b(?:errors?|failures?|failed|fail))\s*[:=]\s*0\b)|0(?<=\s0)\s*$/i,
	// A shell comment or an option naming a failure word, a sentence about a failure that may come. The words
	// after "if" skip another "if" (a later "if" reads the same sentence from there), so "if if if …" is linear.
	/^\s*(\++ )?#|=(?<=\w=)(error|fatal|fail)\b|^\s*[\w-]+: (error|fail|warn)\s*$|\bif (?:(?!if )\w+ )*(fails?|errors?)\b/i,
	// A pass at the line's end, or before a parenthesis that ends it: read from that parenthesis back (one pass
	// over "ok(ok(ok(…", which each "ok" read to the end before).
	/\b(PASS(ED)?|OK|ok|passed|Success(ful)?|succeeded)\b\s*$|\)\s*$(?<=\b(?:PASS(?:ED)?|OK|ok|passed|Success(?:ful)?|succeeded)\b\s*\(.*\)\s*)|[✓✔]/,
	/^\s*(warning|warn|note|info|debug|hint)\b[:\s[]/i,
	/(?:errors?|fail(?:ures?)?)\b(?<=\b(?:on|if|when|ignore|allow|expect|continue|retry|handle|skip)[_-]?(?:on[_-])?(?:errors?|fail(?:ures?)?))|--\w*(fail|error)/i,
	/\berror(s|ed)? (handling|handler|message|page|code|reporting|types?|case)s?\b/i,
	// An XML report's element (the junit/nunit rules read those) and a GLib warning that names an assertion.
	/^\s*<\/?[\w:-][^>]*>\s*$|-(CRITICAL|WARNING) \*\*/,
	// An option or a name with a lower-case failure word after a dash (-Wno-error, on-failure).
	/\w-(no-)?(error|fail\w*|fatal|abort|crash|panic)\b/,
	// An error the tool retries.
	RETRIED,
	// A shell variable's assignment (TIMEOUT=timeout, a script printed before it runs).
	/^\s*(export )?[A-Z][A-Z\d_]*=/,
	// A test's or a step's name in a JSON report ("title": "should fail on …"): a name, not a verdict.
	/^\s*"(full[_-]?)?(title|name|description|desc|label|summary|displayName)"\s*:\s*"/i,
];

/** The table. Order matters within it: the first matching rule decides. */
export const NOTABLE_RULES: readonly NotableRule[] = [
	// Mozilla harnesses (mochitest, reftest, xpcshell, mozharness)
	{
		id: "mozilla.unexpected",
		verdict: true,
		keys: ["test-unexpected-", "process-crash"],
		ecosystem: "mozilla",
		kind: "failure",
		pattern: /\bTEST-UNEXPECTED-[A-Z]+\b|\bPROCESS-CRASH\b/,
		after: { lines: 2, while: /^\s+(at |#\d|\S+\.(js|cpp|h|rs):\d)/ },
	},
	{
		id: "mozilla.summary",
		keys: [
			"successful:",
			"unexpected:",
			"passed:",
			"failed:",
			"unexpected results:",
			" unexpected statuses",
			" unexpected results",
		],
		ecosystem: "mozilla",
		kind: "summary",
		pattern:
			/\bREFTEST INFO \| (Successful|Unexpected|Known problems): \d+|\b(Passed|Failed|Todo|Unexpected results):\s+\d+\s*$|^Got \d+ unexpected (statuses|results)\b/,
		failing: /\b(Unexpected|Failed|Unexpected results):\s+[1-9]|^Got [1-9]\d* unexpected/,
	},

	// Generic: any CI system's verdict on a step or on the whole run (no ecosystem needed). Before the table's
	// CI rules, so a verdict line ends its step.
	{
		id: "generic.step-verdict",
		keys: [
			'the command "',
			"***",
			"process completed with exit code",
			" with exit code",
			"exited with code",
			"exited with status",
			"command failed",
			"child return code",
			"bad exit status",
			"result: ",
			"build failed",
			"build successful",
			"failure: build failed",
		],
		ecosystem: "generic",
		kind: "summary",
		ends: "step",
		pattern:
			/(^|\r)The command ".*" ((failed and )?exited with -?\d+|failed \d+ times)|^(g?make|ninja)(\[\d+\])?: \*\*\* .*\bError \d+|^##\[error\]Process completed with exit code \d+|^##\[error\].*\b(exited|failed) with (exit )?code:? '?\d+|\bThe command exited with status \d+|^(user command error: )?exit status \d+\s*$|^ERROR: Command failed\b|^Child return code was: \d+|^error: Bad exit status from |^Result: (FAIL|PASS|NOTESTS)\b|^\s*BUILD (FAILED|SUCCESSFUL)\b|^FAILURE: Build failed\b/,
		failing:
			/\*\*\*|exited with -?[1-9]|failed \d+ times|exit code:? '?[1-9]|exited with status [1-9]|exit status [1-9]|Command failed|return code was: [1-9]|Bad exit status|Result: FAIL|BUILD FAILED|Build failed/,
		// A failed step's last lines: what it printed just before it failed.
		before: { lines: 3 },
	},
	{
		id: "generic.run-verdict",
		keys: ["your build exited with", "job failed", "job succeeded", "finished: ", "marked build as failure"],
		ecosystem: "generic",
		kind: "summary",
		ends: "run",
		pattern:
			/^Done\. Your build exited with \d+\.|(^|\r)(ERROR: )?Job failed\b|(^|\r)Job succeeded\b|^Finished: [A-Z_]+\s*$|\bmarked build as failure\b/,
		failing: /exited with [1-9]|Job failed|Finished: (?!SUCCESS)|marked build as failure/,
	},
	{
		id: "generic.ansible-failed",
		verdict: true,
		keys: ["fatal: [", "failed: ["],
		ecosystem: "generic",
		kind: "failure",
		pattern: /^(fatal|failed): \[[^\]]*\]( => \(item=.*\))?: (FAILED|UNREACHABLE)!|^failed: \[[^\]]*\] \(item=/,
	},
	{
		id: "generic.ignoring",
		keys: ["...ignoring"],
		ecosystem: "generic",
		kind: "marker",
		marker: "ignored",
		pattern: /^\.\.\.ignoring\s*$/,
	},

	// GitHub Actions, Azure Pipelines, make, generic exit codes
	{
		id: "ci.error-marker",
		verdict: true,
		keys: ["##[error]", "::error", "[taskcluster:error]"],
		ecosystem: "ci",
		kind: "failure",
		pattern: /^(##\[error\]|::error\b|\[taskcluster:error\])/,
		not: [RETRIED],
	},

	{
		id: "make.error",
		keys: ["***", "build stopped"],
		ecosystem: "make",
		kind: "failure",
		pattern: /^(g?make|ninja)(\[\d+\])?: \*\*\* .*\bError \d+|^ninja: build stopped: subcommand failed/,
	},

	// Test runners
	{
		id: "jest.fail-file",
		verdict: true,
		keys: ["fail "],
		ecosystem: "jest",
		kind: "failure",
		pattern: /^\s*FAIL\s+\S+\.(test|spec)\.\w+|^ FAIL {2}\S/,
		after: { lines: 2, while: /^\s*(●|Test suite failed)/ },
	},
	{
		id: "jest.test-failure",
		verdict: true,
		keys: ["●"],
		ecosystem: "jest",
		kind: "failure",
		pattern: /^\s*● \S/,
		not: [/^\s*● Console\b/],
		after: { lines: 6 },
	},
	{
		id: "jest.summary",
		keys: ["tests:", "test suites:", "test files ", "tests ", "snapshots:"],
		ecosystem: "jest",
		kind: "summary",
		pattern: /^\s*(Tests|Test Suites|Test Files|Snapshots):?\s+\d+ (failed|passed|skipped|todo|total)\b/,
		failing: NONZERO_FAILED,
	},
	{
		id: "tests.cross-mark",
		verdict: true,
		keys: ["×", "✕", "✖", "✗"],
		ecosystem: "vitest/jest/node:test",
		kind: "failure",
		pattern: /^\s*[×✕✖✗]\s+\S/,
		not: [/^\s*✖ \d+ problems?\b/],
	},
	{
		id: "bazel.summary",
		keys: ["executed "],
		ecosystem: "bazel",
		kind: "summary",
		pattern: /^Executed \d+ out of \d+ tests?: /,
		failing: /\bfail/i,
	},
	{
		id: "json.counts",
		keys: ['"failures":', '"failed":', '"errors":'],
		ecosystem: "json reports",
		kind: "summary",
		pattern: /^\s*"(failures|failed|errors)":\s*(\d+|\[\s*\]?)\s*(?:,\s*)?$/,
		failing: /:\s*([1-9]|\[\s*$)/,
	},
	{
		id: "mocha.summary",
		keys: ["passing", "failing"],
		ecosystem: "mocha",
		kind: "summary",
		pattern: /^\s*\d+ (passing|failing|pending)\b/,
		failing: /^\s*[1-9]\d* failing\b/,
	},
	{
		id: "tap.not-ok",
		verdict: true,
		keys: ["not ok"],
		ecosystem: "tap",
		kind: "failure",
		pattern: /^\s*not ok\b/,
		not: [/#\s*(TODO|SKIP)\b/i],
		after: { lines: 6, while: /^\s+\S/ },
	},
	{
		id: "tap.bail-out",
		verdict: true,
		keys: ["bail out!"],
		ecosystem: "tap",
		kind: "failure",
		pattern: /^Bail out!/,
	},
	{
		id: "tap.summary",
		keys: ["# fail", "# pass", "ℹ fail", "ℹ pass", "# tests", "ℹ tests"],
		ecosystem: "tap",
		kind: "summary",
		pattern: /^[#ℹ] (fail|pass|tests|failed|passed)\s+\d+\s*$/,
		failing: /^[#ℹ] fail(ed)?\s+[1-9]/,
	},
	{
		id: "unittest.summary",
		keys: ["failed ("],
		ecosystem: "unittest",
		kind: "summary",
		pattern: /^FAILED \((failures|errors)=\d+/,
		failing: /./,
	},
	{
		id: "unittest.failure",
		verdict: true,
		keys: ["fail: ", "error: "],
		ecosystem: "unittest",
		kind: "failure",
		pattern: /^(FAIL|ERROR): \w+ \([\w.]+\)/,
	},
	{
		id: "pytest.failed",
		verdict: true,
		keys: ["failed ", "error ", " failed", " error"],
		ecosystem: "pytest",
		kind: "failure",
		pattern: /^(FAILED|ERROR) (\[[\d.]+m?s\] )?[\w./\\-]+\.py(::\S+)?( - |\s*$)|^[\w./\\-]+\.py::\S+ (FAILED|ERROR)\b/,
	},
	{
		id: "pytest.summary",
		keys: [
			" passed in ",
			" failed in ",
			" error in ",
			" errors in ",
			" skipped in ",
			" xfailed in ",
			" xpassed in ",
			" deselected in ",
			" rerun in ",
			" warning in ",
			" warnings in ",
			" passed, ",
			" failed, ",
		],
		ecosystem: "pytest",
		kind: "summary",
		// One count, then anything: `(\d+ (passed|…)(, )?)+.*` matches the same lines, but the engine read the rest
		// of the line after each count of "1 passed, 1 passed, …" (counts × length).
		pattern: /^[= ]*\d+ (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun).* in [\d.]+s\b/,
		failing: NONZERO_FAILED,
	},
	{
		id: "pytest.e-line",
		keys: ["e    "],
		ecosystem: "pytest",
		kind: "failure",
		pattern: /^E {2,}(\S.*)?(Error|Exception|assert|[Ff]ail)/,
		after: { lines: 4, while: /^E\s|^[\w./\\-]+\.py:\d+: / },
	},

	{
		id: "go.fail-test",
		verdict: true,
		keys: ["--- fail"],
		ecosystem: "go test",
		kind: "failure",
		pattern: /^\s*--- FAIL: \S+/,
		after: { lines: 4, while: /^\s{4,}\S/ },
	},
	{
		id: "go.race",
		verdict: true,
		keys: ["data race"],
		ecosystem: "go test",
		kind: "failure",
		pattern: /^WARNING: DATA RACE\b/,
	},
	{
		id: "go.fail-package",
		verdict: true,
		keys: ["fail\t", "fail "],
		ecosystem: "go test",
		kind: "failure",
		pattern: /^FAIL(\s+\S+\s+([\d.]+s|\[[\w ]+\]))?\s*$/,
	},
	{
		id: "gotest-json.output-fail",
		verdict: true,
		keys: ["--- fail", '"output":"fail\\t', '"output":"panic: '],
		ecosystem: "go test -json",
		kind: "failure",
		pattern: /"Output":\s*"(\s*--- FAIL: |FAIL\\t|panic: )/,
	},
	{
		id: "gotest-json.fail",
		keys: ['"fail"'],
		ecosystem: "go test -json",
		kind: "failure",
		pattern: /"Action":\s*"fail"/,
	},
	{
		id: "cargo.test-failed",
		verdict: true,
		keys: ["... failed"],
		ecosystem: "cargo test",
		kind: "failure",
		pattern: /^test \S+( - should panic)? \.\.\. FAILED\s*$/,
	},
	{
		id: "cargo.test-result",
		keys: ["test result:"],
		ecosystem: "cargo test",
		kind: "summary",
		pattern: /^test result: (ok|FAILED)\. \d+ passed; \d+ failed/,
		failing: /^test result: FAILED/,
	},
	{
		id: "junit.failure",
		verdict: true,
		keys: ["<failure", "<error"],
		ecosystem: "junit",
		kind: "failure",
		// The next start is `(?!failure\b|error\b)`, not `(?!(?:failure|error)\b)` (the same lines): JavaScriptCore
		// reads a group inside a lookahead inside a repeated group with its slow engine, which took 200 ms on 64 KiB
		// of "<" after "<error" (found by test/bench/rule-hostile.bench.ts).
		pattern: /<(failure|error)\b[^<>]*(?:<(?!failure\b|error\b)[^<>]*)*\b(message|type)=|<(failure|error)>\s*\S/,
		before: { lines: 1, while: /<testcase\b/ },
		after: { lines: 2 },
	},
	{
		id: "nunit.failed",
		verdict: true,
		keys: ['result="failed"'],
		ecosystem: "nunit",
		kind: "failure",
		pattern: /<test-case\b[^<>]*(?:<(?!test-case\b)[^<>]*)*\bresult="Failed"/,
		after: { lines: 3, while: /^\s*<(failure|message|!\[CDATA)/ },
	},
	{
		id: "nunit.message",
		keys: ["<message><![cdata["],
		ecosystem: "nunit",
		kind: "failure",
		pattern: /^\s*<message><!\[CDATA\[\s*\S/,
	},
	{
		id: "nunit.summary",
		keys: ["<test-run"],
		ecosystem: "nunit",
		kind: "summary",
		pattern: /<test-run\b[^<>]*(?:<(?!test-run\b)[^<>]*)*\bresult="\w+"/,
		failing: /\bresult="Failed"|\bfailed="[1-9]/,
	},
	{
		id: "trx.summary",
		keys: ["<resultsummary", "<counters"],
		ecosystem: "dotnet trx",
		kind: "summary",
		pattern:
			/<ResultSummary\b[^<>]*(?:<(?!ResultSummary\b)[^<>]*)*\boutcome="\w+"|<Counters\b[^<>]*(?:<(?!Counters\b)[^<>]*)*\bfailed="\d+"/,
		failing: /\boutcome="Failed"|\bfailed="[1-9]|\berror="[1-9]/,
	},
	{
		id: "junit.suite",
		keys: ['failures="', 'errors="'],
		ecosystem: "junit",
		kind: "summary",
		pattern:
			/<testsuites\b[^<>]*(?:<(?!testsuites\b)[^<>]*)*\b(failures|errors)="\d+"|<testsuite\b[^<>]*(?:<(?!testsuite\b)[^<>]*)*\b(failures|errors)="[1-9]/,
		failing: /\b(failures|errors)="[1-9]/,
	},
	{
		id: "maven.tests-run",
		keys: ["tests run:"],
		ecosystem: "maven",
		kind: "summary",
		pattern: /\bTests run: \d+, Failures: \d+, Errors: \d+/,
		failing: /\b(Failures|Errors): [1-9]/,
	},
	{
		id: "maven.build",
		keys: ["build failure", "build success"],
		ecosystem: "maven",
		kind: "summary",
		pattern: /^(\[\w+\] )?BUILD (FAILURE|SUCCESS)\b/,
		failing: /FAILURE/,
	},
	{
		id: "dotnet.summary",
		keys: ["failed:"],
		ecosystem: "dotnet test",
		kind: "summary",
		pattern: /^\s*(Passed|Failed)!\s+-\s+Failed:\s+\d+|^\s*Total tests: \d+\. Passed: \d+\. Failed: \d+/,
		failing: /Failed:\s+[1-9]/,
	},

	// Pester (PowerShell's test runner): "[-] <test> <time>" is a failed test, its message on the next lines.
	{
		id: "pester.failed",
		verdict: true,
		keys: ["[-] "],
		ecosystem: "pester",
		kind: "failure",
		pattern: /^\s*\[-\] \S/,
		after: { lines: 2 },
	},

	// Compilers and type checkers
	{
		id: "tsc.error",
		verdict: true,
		keys: ["error ts"],
		ecosystem: "tsc",
		kind: "failure",
		pattern: /\berror TS\d+:/,
	},
	{
		id: "tsc.found",
		keys: [" error.", " errors.", " errors in ", " error in "],
		ecosystem: "tsc",
		kind: "summary",
		pattern: /^Found \d+ errors?\b/,
		failing: /^Found [1-9]/,
	},
	{
		id: "msbuild.error",
		verdict: true,
		keys: [": error ", ": fatal error "],
		ecosystem: "msbuild",
		kind: "failure",
		pattern: /: (fatal )?error [A-Z]+\d+\s*:/,
	},
	{
		id: "msbuild.result",
		keys: ["build failed.", "build succeeded.", "error(s)"],
		ecosystem: "msbuild",
		kind: "summary",
		pattern: /^\s*(Build FAILED\.|Build succeeded\.|\d+ Error\(s\))\s*$/,
		failing: /FAILED|^\s*[1-9]\d* Error/,
	},
	{
		id: "rustc.summary",
		keys: ["error: "],
		ecosystem: "rustc",
		kind: "summary",
		pattern: /^error: (aborting due to|could not compile)\b/,
		failing: /./,
	},
	{
		id: "rustc.error",
		verdict: true,
		keys: ["error["],
		ecosystem: "rustc",
		kind: "failure",
		pattern: /^error\[E\d{4}\]: /,
		after: { lines: 3, while: /^\s*(-->|\d+\s*\||\|)/ },
	},
	{
		id: "javac.error",
		verdict: true,
		keys: [": error: "],
		ecosystem: "javac",
		kind: "failure",
		pattern: /^\S+\.java:\d+: error: /,
		after: { lines: 2 },
	},
	{
		id: "cc.error",
		verdict: true,
		keys: [": error: ", ": fatal error: "],
		ecosystem: "gcc/clang",
		kind: "failure",
		pattern: /^[^\s:][^:]*:\d+(:\d+)?: (fatal )?error: /,
	},
	{
		id: "cc.link",
		keys: ["undefined reference", "ld returned", "ld: error:"],
		ecosystem: "gcc/clang",
		kind: "failure",
		pattern: /undefined reference to|\bld returned \d+ exit status|^ld(\.\w+)?: error:/,
	},

	{
		id: "javac.count",
		keys: [" error"],
		ecosystem: "javac",
		kind: "summary",
		pattern: /^\d+ errors?\s*$/,
		failing: /^[1-9]/,
	},
	{
		id: "go.build-error",
		verdict: true,
		keys: [".go:"],
		ecosystem: "go build",
		kind: "failure",
		pattern: /^\S+\.go:\d+:\d+: \S/,
	},

	// Package managers
	{
		id: "npm.error",
		keys: ["npm err!", "npm error"],
		ecosystem: "npm",
		kind: "failure",
		pattern: /^npm (ERR!|error) \S/,
		after: { lines: 6, while: /^npm (ERR!|error)\b/ },
	},
	{
		id: "pnpm.error",
		keys: ["err_pnpm_", "elifecycle"],
		ecosystem: "pnpm",
		kind: "failure",
		pattern: /\bERR_PNPM_\w+|^\s*ELIFECYCLE\s+Command failed/,
	},
	{
		id: "yarn.error",
		keys: ["command failed", "unexpected error", "exit code", "yn0"],
		ecosystem: "yarn",
		kind: "failure",
		pattern:
			/^error (Command failed|An unexpected error|.*\bexit code)|➤ YN\d{4}: (?:(?!➤ YN\d{4}: ).)*\b(failed|error)\b/i,
	},
	{
		id: "yarn.trace",
		keys: ["trace:"],
		ecosystem: "yarn",
		kind: "failure",
		pattern: /^Trace:\s*$/,
		after: { lines: 2 },
	},
	{
		id: "pip.error",
		keys: ["error: "],
		ecosystem: "pip",
		kind: "failure",
		pattern:
			/^ERROR: (Could not|No matching|Failed|Cannot|pip's dependency resolver)|^error: subprocess-exited-with-error/,
	},

	{
		id: "ci.exit-code",
		keys: ["exit code", "exit status", "exited with", "exit_code", "return code"],
		ecosystem: "ci",
		kind: "summary",
		pattern:
			/\b(exit code|exit status|exited with( exit)? code|exit_code|returned exit code|return code)\s*(?:[=:]\s*)?\(?[1-9]\d*\b|\bexited with status [1-9]/i,
		not: [/\bWARNING: process \d+ exited\b/],
		failing: /./,
	},
	{
		id: "ci.exit-zero",
		keys: ["exit code", "exit status", "return code"],
		ecosystem: "ci",
		kind: "summary",
		pattern: /\b(exit code|exit status|return code)\b:?\s*0\b/i,
	}, // Security scanners
	{
		id: "audit.count",
		keys: ["vulnerab", "total: "],
		ecosystem: "npm audit/trivy",
		kind: "summary",
		pattern: /\bfound \d+ vulnerabilit(y|ies)\b|^\d+ (\w+ severity )?vulnerabilit(y|ies)\b|^Total: \d+ \(UNKNOWN: /,
		failing: /\bfound [1-9]|^[1-9]\d* (\w+ severity )?vulnerab|^Total: [1-9]/,
	},
	{
		id: "audit.json-counts",
		keys: ['"critical":', '"high":'],
		ecosystem: "npm audit",
		kind: "summary",
		pattern: /^\s*"(critical|high)":\s*\d+,?\s*$/,
		failing: /:\s*[1-9]/,
	},
	{
		id: "audit.severity",
		keys: ['"severity":'],
		ecosystem: "trivy/dependency-check",
		kind: "failure",
		pattern: /"[Ss]everity":\s*"(CRITICAL|HIGH|critical|high)"/,
	},
	{
		id: "audit.advisory",
		keys: ["cve-", "ghsa-"],
		ecosystem: "npm audit/dependency-check/trivy",
		kind: "failure",
		pattern: /\bCVE-\d{4}-\d{4,}\b|\bGHSA(-[23456789cfghjmpqrvwx]{4}){3}\b/,
		not: [/^\s*"https?:\/\/[^"\s]*",?\s*$/],
	},

	// Runtimes and tools
	{
		id: "sanitizer.report",
		verdict: true,
		keys: ["sanitizer", "runtime error: "],
		ecosystem: "sanitizers",
		kind: "failure",
		pattern:
			/==\d+==\s*ERROR: \w+Sanitizer|^(WARNING: )?ThreadSanitizer:|^SUMMARY: \w+Sanitizer:|^\S+:\d+:\d+: runtime error: /,
		after: { lines: 3, while: /^\s*(#\d+ |READ|WRITE|Direct leak)/ },
	},
	{
		id: "runtime.crash",
		keys: ["segmentation fault", "sigsegv", "segfault", "sigabrt", "core dumped", "bus error"],
		ecosystem: "runtime",
		kind: "failure",
		pattern: /Segmentation fault|\bSIGSEGV\b|\bsegfault\b|\bSIGABRT\b|\bcore dumped\b|\bBus error\b/i,
	},
	{
		id: "runtime.panic",
		keys: ["panic: ", "panicked at", "fatal error: "],
		ecosystem: "runtime",
		kind: "failure",
		pattern: /^panic: |^thread '[^']*' panicked at|^fatal error: (all goroutines|concurrent map)/,
		after: { lines: 4 },
	},
	{
		id: "runtime.assertion",
		keys: ["assertion"],
		ecosystem: "runtime",
		kind: "failure",
		// "Assertion '…' failed" is read from a line's (`m`: a segment's) first "Assertion '", which finds the
		// quote a later one would (a later start may hold the closing quote, so its run cannot stop there).
		pattern:
			/AssertionError\b|\bassertion (`[^`]*` )?failed\b|^(?:(?!\bAssertion [`']).)*\bAssertion [`'].*['`] failed|\b[Aa]ssertion failed\b/m,
		not: [/-CRITICAL \*\*|\bWARNING: g_\w+: assertion/],
		after: { lines: 3, while: INDENTED },
	},
	{
		id: "runtime.uncaught",
		weak: true,
		keys: ["uncaught", "unhandled", "exception in thread"],
		ecosystem: "runtime",
		kind: "failure",
		pattern:
			/\bUncaught (exception|\w*Error)\b|\bUnhandled(PromiseRejection| promise rejection| exception| rejection)|^Exception in thread /i,
		after: { lines: 3, while: /^\s+at / },
	},
	{
		id: "chromium.check",
		verdict: true,
		keys: ["check failed: "],
		ecosystem: "chromium",
		kind: "failure",
		pattern: /\bCheck failed: /,
	},
	{
		id: "runtime.fatal",
		keys: ["fatal"],
		ecosystem: "runtime",
		kind: "failure",
		pattern: /\bFATAL\b|^fatal: |^Fatal error: /,
		not: [/\bFATAL\b(?:(?!\bFATAL\b).)*\b(0|no) errors?\b/],
	},
	{
		id: "python.traceback",
		keys: ["traceback"],
		ecosystem: "python",
		kind: "failure",
		pattern: /^Traceback \(most recent call last\):/,
		weak: true,
	},
	{
		id: "runtime.exception",
		keys: ["error:", "exception", "error ["],
		ecosystem: "runtime",
		kind: "failure",
		pattern:
			/^([A-Za-z_][\w$]*\.)*[A-Z]\w*(Error|Exception)(\s*\[\w+\])?: \S|^([A-Za-z_][\w$]*\.)*[A-Z]\w*(Error|Exception)\s*$/,
		before: { lines: 2, while: /^\s+(File "|\S)/ },
		after: { lines: 2, while: /^\s+at / },
	},
	{
		id: "java.caused-by",
		keys: ["caused by: "],
		ecosystem: "java",
		kind: "failure",
		pattern: /^Caused by: \S+(Exception|Error)\b/,
		weak: true,
	},
	{
		id: "maven.error",
		keys: ["[error]"],
		ecosystem: "maven",
		kind: "failure",
		pattern: /^\[ERROR\] \S/,
		not: [/^\[ERROR\] *$/, /^\[ERROR\] (-> \[Help|Re-run Maven|To see the full stack|For more information|\[Help \d)/],
		weak: true,
	},
	// Generic: a tool's own report of what went wrong, before the weak catch-alls below.
	{
		id: "generic.tool-error",
		keys: ["error: ", "fatal: "],
		ecosystem: "generic",
		kind: "failure",
		// "ERROR: <Tool>: <what>", a tool's fatal report (a sanitizer's, a checker's), a process id before it.
		// A runner may quote the tool's output behind a short mark ("= ==123==ERROR: …").
		pattern: /^([^\w\s]{1,3} )?(==\d+==\s*)?(ERROR|FATAL): [A-Z][\w-]+: \S/,
		not: GENERIC_NOT_FAILURE,
	},
	{
		id: "generic.diagnostic",
		keys: [": error: ", ": fatal error: ", ": error[", ": error "],
		ecosystem: "generic",
		kind: "failure",
		// A compiler's or a checker's diagnostic, "file:line[:col]: error: message" (the GNU format most tools
		// print): the first ones of a build say what broke it.
		pattern: /^\S+?:\d+(:\d+)?:? (fatal )?error(\[[\w-]+\])?:? \S/,
		not: GENERIC_NOT_FAILURE,
	},
	{
		id: "generic.tool-summary",
		keys: ["summary: "],
		ecosystem: "generic",
		kind: "summary",
		// A tool's SUMMARY line (sanitizers, valgrind's ERROR SUMMARY): failing unless it counts nothing.
		pattern: /^([^\w\s]{1,3} )?(==\d+==\s*)?((ERROR|LEAK) )?SUMMARY: [A-Z\d][\w-]*:? \S/,
		// A crash named by its signal (AddressSanitizer's "SUMMARY: AddressSanitizer: SEGV …") fails too. A
		// sanitizer's kind of error ("heap-buffer-overflow") counts anywhere in a word: `.*(overflow|…)` reads the
		// same lines as `.*\b[\w-]*(overflow|…)[\w-]*\b` (a word character starts and ends each of them) in
		// linear time (that one tried every start in a run like "a-a-a-…": 10 ms for 2 KiB).
		failing:
			/^(?!.*\b(0|no) (errors?|issues?|problems?|leaks?|failures?|bytes)\b)(?=.*\b(errors?|leak(ed|s)?|fail\w*|SEGV|SIGSEGV|SIGBUS|SIGILL|SIGFPE|SIGABRT|deadly signal|deadlock)\b|.*(overflow|after-free|undefined|race|violation))/i,
	},
	{
		id: "generic.report-field",
		verdict: true,
		keys: [
			'result="',
			'outcome="',
			'status="',
			'state="',
			'"status"',
			'"result"',
			'"outcome"',
			'"state"',
			'"conclusion"',
		],
		ecosystem: "generic",
		kind: "failure",
		// Every field it reads has a value starting `"fail`, `"error`, `"broken`, `"time` or `"aborted`.
		needs: /"(?:fail|error|broken|time|aborted)/i,
		// A machine report's verdict on one test, as a field: an XML element's `result="Failed"` (NUnit's
		// test-case, xUnit's test, a TRX UnitTestResult's `outcome="Failed"`), a JSON record's `"status":
		// "failed"` (the reporters of jest, playwright, cucumber, pytest-json-report, a CI's API). A suite's or a
		// run's element is its summary, not a test's verdict. Linear on any line: the element's name is taken once
		// (up to its first word boundary, `(?=(?<name>…))\k<name>` does not backtrack) and its attributes end at
		// the next "<" as well as ">", so no start rescans what another start covered (unclosed "<a-<a-…" lines
		// cost 2–3 ms each before; XML never has a raw "<" inside an element).
		pattern:
			/<(?![\w:-]*(suites?|runs?|assembl(y|ies)|collections?|summary|results)\b)(?=(?<name>[\w:-]+?\b))\k<name>[^<>]*\b(result|outcome|status|state)="(fail(ed|ure)?|error(ed)?|broken|time[ds]?out|timedout|aborted)"|"(status|result|outcome|state|conclusion)"\s*:\s*"(fail(ed|ure)?|error(ed)?|broken|timed_?out|timeout)"/i,
		// The report's message under the test's element (`<failure>`, `<message>`, TRX's `<ErrorInfo>`).
		after: { lines: 2, while: /^\s*<(failure|error|message|reason|output|errorinfo|stack-?trace|!\[CDATA)\b/i },
	},
	{
		id: "generic.report-severity",
		keys: ['"severity"'],
		ecosystem: "generic",
		kind: "failure",
		// A pretty-printed JSON report's finding, its severity field alone on its line with a value that is no
		// note or warning (a scanner's vulnerability, a linter's or an analyzer's issue): a failure, carried with
		// the first line of its record, which names it (`"VulnerabilityID": "CVE-…"`, `"ruleId": …`).
		pattern: /^\s+"severity"\s*:\s*"(critical|high|medium|moderate|error|fatal|blocker)",?\s*$/i,
		before: { lines: 1, record: true },
	},
	{
		id: "generic.tests-failed",
		verdict: true,
		keys: [" failed"],
		ecosystem: "generic",
		kind: "failure",
		// A runner's or a harness's sentence that tests (a suite, a compilation) failed, in any wording: "Unit
		// tests failed", "Some test suites failed", "Running the tests in 'tests/all.R' failed.", "[compilation
		// failed]". A harness's verdict on its step, often the only one outside the runner's own output. Shaped for
		// speed: it starts at the noun and reads the count that must not stand before it behind it (a lookbehind
		// at the start was tried at every position of a line: about 2.5× this shape's cost).
		pattern:
			/\b(?:tests?|test suites?|test runs?|suites?|specs?|compilation)(?<=(?<!\d+ (?:\w+ )?)\b(?:tests?|test suites?|test runs?|suites?|specs?|compilation))( in \S+| for \S+| of \S+)? (have |has )?failed\b(?!\s*(to|because|on retry|[:=]\s*0)\b)/i,
		// Counted tests ("10 tests failed") are a runner's summary (generic.summary), not this sentence.
		not: [...GENERIC_NOT_FAILURE, /\b(no|zero|none of the|if|when|unless) (\w+ )?(tests?|suites?|specs?)\b/i],
	},
	{
		id: "generic.returned",
		keys: [" returned "],
		ecosystem: "generic",
		kind: "summary",
		// A process's exit status in the words "<test|command|…> returned N" (a harness: "Dubious, test returned
		// 1 (wstat 256, 0x100)", "Command 'make' returned non-zero exit status 2."): failing unless it is 0.
		pattern:
			/\b(tests?|command|process|script|program|subprocess|job|step|task|build)\b('[^']*'|"[^"]*"|\s\S+)?\s+returned (non-?zero|-?\d+\b(?!\.\d| ?(rows?|results?|items?|records?|bytes?|entries|objects?|lines?|matches|values?|%)))/i,
		failing: /\breturned (non-?zero|-?[1-9])/i,
	},
	{
		id: "cli.error",
		keys: ["error:", "error["],
		ecosystem: "cli",
		kind: "failure",
		pattern: /^(error|ERROR|Error)(\[\w+\])?: \S/,
		weak: true,
	},

	// Generic: any runner's summary, failure vocabulary in any wording, and where a CI step starts. Last, so
	// every specific rule decides first.
	{
		id: "generic.summary",
		keys: [
			"passed",
			"passing",
			"failed",
			"failing",
			"failure",
			"error",
			"skipped",
			"skips",
			"pending",
			"succeeded",
			"fail ",
			"fail:",
			"broken",
			"tests pass",
			"tests fail",
		],
		ecosystem: "generic",
		kind: "summary",
		// GENERIC_SUMMARY, tried only where a count starts (SUMMARY_AT_COUNT): its many alternatives were most of
		// the rules' regex time.
		pattern: SUMMARY_AT_COUNT,
		// A stack frame, a TAP pass, a URL; a nested suite's element in an XML report (the report's root element,
		// unindented, holds the run's counts).
		not: [/^\s*(at |File "|from |ok \d+\b)|https?:\/\/|^\s+<(test-?suite|suite)\b/i],
		failing: GENERIC_FAILING_COUNT,
	},
	{
		id: "generic.exit-code",
		keys: ["exit code", "exit status", "return code", "returncode", "exit_code", "exited with"],
		ecosystem: "generic",
		kind: "summary",
		pattern:
			/\b(exit code|exit status|return ?code|exit_code|exited with( exit)?( code| status)?)\b( was| is| of)?\s*(?:[:=]\s*)?'?\(?-?\d+/i,
		// A debug-level log record (mock's root.log: "DEBUG util.py:610:  Child return code was: 6") is shown
		// but reports no failure: a tool logs its probes' codes at that level.
		failing:
			/^(?!\s*\[?(DEBUG|TRACE)\b)[\s\S]*?\b(exit code|exit status|return ?code|exit_code|exited with( exit)?( code| status)?)\b( was| is| of)?\s*(?:[:=]\s*)?'?\(?-?[1-9]/i,
	},
	{
		id: "generic.verdict-line",
		weak: true,
		keys: ["fail", "error", "fatal", "panic", "crash", "timeout", "not ok", "\u274c", "\u2717", "\u2718", "\u2716"],
		ecosystem: "generic",
		kind: "failure",
		// A verdict word at the start of a line, or in capitals after a test's name ("… took 0.7 FAILURE",
		// "… *** FAILED ***"), or a cross mark before a message. Shaped for speed and linear time (the same
		// lines as the plainer form in test/fixtures/notable-rule-shapes.ts): an alternative not at the line's
		// start starts at its verdict word and reads what stands before it behind it, `(?<=…)` (a run of white
		// space or dots: its last two or three characters), and the optional bracket before the end splits no
		// run of white space.
		// Every alternative holds one of these words, case as written, or a cross mark (about 4 in 5 lines with
		// the keys hold none: "error" in lower case).
		needs: /FAIL|ERROR|FATAL|PANIC|CRASH|TIMEOUT|not ok|Error|Fatal|Fail|Panic|[\u274c\u2717\u2718\u2716]/,
		pattern:
			/^\W{0,4}([\w.]+[-_ ])?([A-Z]+-){0,2}(FAIL(ED|URE|S)?|ERROR|FATAL|PANIC|CRASH(ED)?|TIMEOUT|not ok)\b|^\s*(Errors?|Fatal|Failures?|Failed|Panic)\b\s*[:!]|(?:FAIL(?:ED|URE)?|ERROR)(?<=(?:\s\s|\.\.\.\s?)(?:FAIL(?:ED|URE)?|ERROR))\s*(?:[[(][^\])]*[\])]\s*)?$|F(?<=\w\W{0,3} (?:\*{2,3} )?F)AIL(?:ED|URE)\b(?!:)|^.{0,6}[\u274c\u2717\u2718\u2716]\s/,
		not: GENERIC_NOT_FAILURE,
	},
	{
		id: "generic.numbered-failure",
		weak: true,
		keys: ["0) ", "1) ", "2) ", "3) ", "4) ", "5) ", "6) ", "7) ", "8) ", "9) "],
		ecosystem: "generic",
		kind: "failure",
		pattern: /^\s{0,6}[1-9]\d{0,3}\) [^\s)]/,
		not: [/^\s*\d+\) (\$|#|\/\/)/],
		after: { lines: 2 },
	},
	{
		id: "generic.expected",
		weak: true,
		keys: ["expected", "but got", "but was"],
		ecosystem: "generic",
		kind: "failure",
		pattern:
			/^\W{0,4}(Expected|expected)\b.*\b(but (got|was|received)|got|to (be|equal|match|include|have|contain)|[Aa]ctual)\b|\bbut (got|was) |\b[Ee]xpected and actual (values? )?differ|^\s*Expected( value)?\s*: \S/,
		not: [/^\s*(#|\/\/)/],
	},
	{
		id: "generic.failure",
		vocabulary: true,
		weak: true,
		keys: [
			"fail",
			"error",
			"fatal",
			"exception",
			"panic",
			"abort",
			"crash",
			"timed out",
			"traceback",
			"not ok",
			"exited with",
			"segfault",
			"segmentation fault",
			"core dumped",
			"bus error",
			"sigsegv",
			"sigabrt",
		],
		ecosystem: "generic",
		kind: "failure",
		pattern: GENERIC_FAILURE_WORD,
		not: GENERIC_NOT_FAILURE,
	},
	{
		id: "generic.checked-step",
		keys: ["##[group]run ", "##[section]starting: "],
		ecosystem: "generic",
		kind: "marker",
		marker: "checked-step",
		pattern: /^(##\[group\]Run |##\[section\]Starting: )/,
	},
	{
		id: "generic.step",
		keys: ["[pipeline] stage", "$ ", "task [", "section_start:", "~~~ "],
		ecosystem: "generic",
		kind: "marker",
		marker: "step",
		pattern: /^(\[Pipeline\] stage\b|\$ \S|TASK \[|section_start:\d+:|~~~ \S)/,
	},
];

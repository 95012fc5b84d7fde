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
 * Pure data at the ground of `extensions/shared/`: this module imports nothing.
 */

/** Lines around a hit that carry its message (the assertion under a failure header, the last frames). */
export interface NotableContext {
	/** Lines to carry, blank lines not counted (at most MAX_CONTEXT_LINES). */
	readonly lines: number;
	/** Carry only while lines match this; without it, any line that is not itself a hit. */
	readonly while?: RegExp;
}

/** One rule of the table. */
export interface NotableRule {
	/** `<ecosystem>.<what>`, unique, e.g. `pytest.failed`. */
	readonly id: string;
	/** The ecosystem it belongs to (the table's grouping). */
	readonly ecosystem: string;
	/**
	 * Lower-case words one of which every line this rule matches contains (compared case-insensitively):
	 * the scan tries the rule only on lines that hold one, and searches the text for all rules' words at once.
	 */
	readonly keys: readonly string[];
	/** `failure`: something went wrong; `summary`: how a run (or a step) ended. */
	readonly kind: "failure" | "summary";
	/** Matched against the line with ANSI escapes and the CI prefix removed. */
	readonly pattern: RegExp;
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

/** Most context lines any rule carries on one side. */
export const MAX_CONTEXT_LINES = 8;

/** Said of a failure that was expected: never a failure (applies to every failure rule). */
export const EXPECTED_FAILURE =
	/\b(x-?fail(ed|s)?|known[- ]fail(ure|s)?|expected[- ]fail(ure|s)?|TEST-EXPECTED-FAIL|fails? as expected)\b/i;

/** A summary whose failure count is not zero. */
const NONZERO_FAILED = /\b[1-9]\d* (failed|failing|failures?|errors?)\b/i;

const INDENTED = /^\s+\S/;

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

	// GitHub Actions, Azure Pipelines, make, generic exit codes
	{
		id: "ci.error-marker",
		verdict: true,
		keys: ["##[error]", "::error", "[taskcluster:error]"],
		ecosystem: "ci",
		kind: "failure",
		pattern: /^(##\[error\]|::error\b|\[taskcluster:error\])/,
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
		keys: ["failed", "passed"],
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
		pattern: /^\s*"(failures|failed|errors)":\s*(\d+|\[\s*\]?)\s*,?\s*$/,
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
		keys: ["failed", "error"],
		ecosystem: "pytest",
		kind: "failure",
		pattern: /^(FAILED|ERROR) (\[[\d.]+m?s\] )?[\w./\\-]+\.py(::\S+)?( - |\s*$)|^[\w./\\-]+\.py::\S+ (FAILED|ERROR)\b/,
	},
	{
		id: "pytest.summary",
		keys: ["passed", "failed", " error"],
		ecosystem: "pytest",
		kind: "summary",
		pattern:
			/^[= ]*(\d+ (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)(, )?)+.* in [\d.]+s\b/,
		failing: NONZERO_FAILED,
	},
	{
		id: "pytest.e-line",
		keys: ["e    "],
		ecosystem: "pytest",
		kind: "failure",
		pattern: /^E {2,}(\S.*)?(Error|Exception|assert|[Ff]ail)/,
		after: { lines: 3, while: /^E\s/ },
	},
	{
		id: "pytest.location",
		keys: [".py:"],
		ecosystem: "pytest",
		kind: "failure",
		pattern: /^[\w./\\-]+\.py:\d+: \w*(Error|Exception|Failed)\b/,
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
		keys: ["fail"],
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
		pattern: /<(failure|error)\b[^>]*\b(message|type)=|<(failure|error)>\s*\S/,
		before: { lines: 1, while: /<testcase\b/ },
		after: { lines: 2 },
	},
	{
		id: "nunit.failed",
		verdict: true,
		keys: ['result="failed"'],
		ecosystem: "nunit",
		kind: "failure",
		pattern: /<test-case\b[^>]*\bresult="Failed"/,
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
		pattern: /<test-run\b[^>]*\bresult="\w+"/,
		failing: /\bresult="Failed"|\bfailed="[1-9]/,
	},
	{
		id: "trx.summary",
		keys: ["<resultsummary", "<counters"],
		ecosystem: "dotnet trx",
		kind: "summary",
		pattern: /<ResultSummary\b[^>]*\boutcome="\w+"|<Counters\b[^>]*\bfailed="\d+"/,
		failing: /\boutcome="Failed"|\bfailed="[1-9]|\berror="[1-9]/,
	},
	{
		id: "junit.suite",
		keys: ['failures="', 'errors="'],
		ecosystem: "junit",
		kind: "summary",
		pattern: /<testsuites\b[^>]*\b(failures|errors)="\d+"|<testsuite\b[^>]*\b(failures|errors)="[1-9]/,
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
		keys: ["found "],
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
		pattern: /^error (Command failed|An unexpected error|.*\bexit code)|➤ YN\d{4}: .*\b(failed|error)\b/i,
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
			/\b(exit code|exit status|exited with( exit)? code|exit_code|returned exit code|return code)\s*[=:]?\s*\(?[1-9]\d*\b|\bexited with status [1-9]/i,
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
		pattern: /AssertionError\b|\bassertion (`[^`]*` )?failed\b|\bAssertion [`'].*['`] failed|\b[Aa]ssertion failed\b/,
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
		not: [/\bFATAL\b.*\b(0|no) errors?\b/],
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
	{
		id: "cli.error",
		keys: ["error:", "error["],
		ecosystem: "cli",
		kind: "failure",
		pattern: /^(error|ERROR|Error)(\[\w+\])?: \S/,
		weak: true,
	},
];

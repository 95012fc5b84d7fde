/**
 * The generic evidence of the notable scan (issue 32): any runner's summary, any CI's verdict, failure
 * vocabulary in any wording, and a log read as steps, so a passing summary of one step never silences the
 * failure evidence of another, and a step or a run its CI says passed claims no failure. The lines are
 * verbatim real ones where a real one is named (held-out dev logs, public captured runs); the logs around
 * them are built to put them in steps.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	cleanLogLine,
	isTableRule,
	jsonMessage,
	matchRule,
	type NotableLine,
	scanNotable,
} from "../../extensions/shared/text/notable.ts";
import {
	GENERIC_FAILING_COUNT,
	GENERIC_SUMMARY,
	NOTABLE_RULES,
	type NotableRule,
	RULE_ECOSYSTEMS,
	writtenFor,
} from "../../extensions/shared/text/notable-rules.ts";

const claims = (lines: readonly NotableLine[]) => lines.filter((n) => n.kind === "failure" || n.failing);
const texts = (lines: readonly NotableLine[]) => lines.map((n) => n.text);

describe("any runner's summary", () => {
	const failing = [
		"2 runs, 4 assertions, 1 failures, 0 errors, 0 skips", // minitest
		"10 examples, 2 failures, 1 pending", // rspec
		"Tests: 10, Assertions: 20, Failures: 1.", // phpunit
		"1 out of 10 tests failed (0.01s)", // tasty
		"TEST COMPLETE, 10 ok, 1 failed of 11 test cases", // common test
		"Executed 10 tests, with 1 failure (0 unexpected) in 0.100 (0.101) seconds", // XCTest
		"[ FAIL 1 | WARN 0 | SKIP 0 | PASS 10 ]", // testthat
		"localhost                  : ok=8    changed=5    unreachable=0    failed=1    skipped=0", // ansible recap
		"================== 1 failed, 182 deselected, 2 rerun in 0.36s ==================", // corpus gha-pytorch-job-2:622
		"  1 failing", // mocha, held-out gha-mocha-sequelize-db2-upsert:3024
		'<testsuites name="jest tests" tests="4239" failures="2" errors="0" time="165.872">', // corpus jest-junit-large:2
	];
	const passing = [
		"10 examples, 0 failures",
		"4 runs, 4 assertions, 0 failures, 0 errors, 0 skips",
		"All 10 tests passed (0.01s)",
		"lab06-vm                   : ok=8    changed=5    unreachable=0    failed=0",
		"3 passed, 1 xfailed",
		"Executed 26 out of 26 tests: 26 tests pass.", // bazel, corpus gha-pytorch-bazel-pass:15732
		"  1639 passing (3m)", // mocha, held-out gha-mocha-sequelize-db2-upsert:3022
		'    <Counters total="804" executed="803" passed="803" failed="0" error="0" timeout="0" />', // corpus dotnet-trx-large:4646
	];
	for (const line of failing)
		it(`reads ${JSON.stringify(line)} as a failing summary`, () => {
			expect(GENERIC_SUMMARY.test(line)).toBe(true);
			expect(GENERIC_FAILING_COUNT.test(line)).toBe(true);
		});
	for (const line of passing)
		it(`reads ${JSON.stringify(line)} as a passing one`, () => {
			expect(GENERIC_SUMMARY.test(line)).toBe(true);
			expect(GENERIC_FAILING_COUNT.test(line)).toBe(false);
		});
	it("does not take a version or a single count for a summary", () => {
		for (const line of ["Collecting pytest==7.4.0", "Downloaded 12 files", "error 13 while reading", "1 failing test"])
			expect(GENERIC_SUMMARY.test(line), line).toBe(false);
	});

	it("takes a report's root element for the run's counts, not a nested suite's", () => {
		const rule = NOTABLE_RULES.find((r) => r.id === "generic.summary");
		// corpus jest-junit-large:3, a nested suite of a failing report
		const nested =
			'  <testsuite name="packages/jest-config/src/__tests__/normalize.test.js" errors="0" failures="1" skipped="0" tests="118">';
		expect(rule?.not?.some((re) => re.test(nested))).toBe(true);
		expect(scanNotable(nested).lines.filter((n) => n.rule === "generic.summary")).toEqual([]);
	});
});

describe("a log as steps", () => {
	it("keeps a failing step's weak evidence when a later step prints a passing summary", () => {
		const log = [
			"$ make check",
			"Error: cannot open shared object file libfoo.so",
			'The command "make check" exited with 2.',
			"$ npm run lint",
			"Tests:       16 passed, 16 total",
			'The command "npm run lint" exited with 0.',
		].join("\n");
		const found = scanNotable(log).lines;
		expect(texts(found)).toContain("Error: cannot open shared object file libfoo.so");
		expect(texts(found)).toContain('The command "make check" exited with 2.');
		// The scan as it was (one step) drops nothing here either, since the verdict fails: but without the
		// generic verdict it had no failing evidence, and the passing summary silenced the error.
		const before = scanNotable(log, { evaluation: { rules: isTableRule, steps: false } }).lines;
		expect(texts(before)).not.toContain("Error: cannot open shared object file libfoo.so");
	});

	it("lets a passing summary vouch only for what its step printed before it (generic rules alone)", () => {
		// Real lines of corpus mozilla-taskcluster-timeout (59, 372, 2682): an early "exit code 0" of a set-up
		// command silenced the task's abort at the end of the same step.
		const generic = { rules: (r: (typeof NOTABLE_RULES)[number]) => !isTableRule(r) };
		const after = [
			"[taskcluster 2025-02-13T11:46:09.225Z]    Exit Code: 0",
			"[task 2025-02-13T11:46:21.860Z] 11:46:21     INFO - Return code: 0",
			"running the tests",
			"[taskcluster:error] Aborting task...",
		].join("\n");
		expect(claims(scanNotable(after, { evaluation: generic }).lines).map((n) => n.line)).toEqual([4]);
		// The same weak line before the passing summary is what the summary vouches for: dropped.
		const before = ["[taskcluster:error] Aborting task...", "running the tests", "Return code: 0"].join("\n");
		expect(claims(scanNotable(before, { evaluation: generic }).lines)).toEqual([]);
	});

	it("claims no failure inside a step its CI says exited 0", () => {
		const log = [
			"$ mypy src",
			"src/app.py:12: error: Incompatible return value type",
			"Found 1 error in 1 file (checked 20 source files)",
			'The command "mypy src || true" exited with 0.',
			"$ pytest",
			"====== 12 passed in 0.50s ======",
			'The command "pytest" exited with 0.',
			"Done. Your build exited with 0.",
		].join("\n");
		const scan = scanNotable(log);
		expect(claims(scan.lines)).toEqual([]);
		expect(scan.failures).toBe(0);
	});

	it("claims nothing in a run whose CI says it succeeded", () => {
		const log = ["ERROR: something non-fatal happened", "panic: recovered in handler", "Finished: SUCCESS"].join("\n");
		expect(claims(scanNotable(log).lines)).toEqual([]);
	});

	it("reads a GitHub Actions step without a failing verdict as passed, and one with it as failed", () => {
		const log = [
			"2024-07-08T16:48:14.0073484Z ##[group]Run mypy .",
			"2024-07-08T16:48:14.0073484Z ##[endgroup]",
			"2024-07-08T16:48:15.0000000Z ##[error]src/a.py:3: error: Name 'x' is not defined",
			"2024-07-08T16:48:16.0073484Z ##[group]Run pytest",
			"2024-07-08T16:48:16.0073484Z ##[endgroup]",
			"2024-07-08T16:48:17.0000000Z FAILED tests/test_a.py::test_one - AssertionError: 1 != 2",
			"2024-07-08T16:48:17.5000000Z ##[error]Process completed with exit code 1.",
		].join("\n");
		const found = claims(scanNotable(log).lines).map((n) => n.line);
		expect(found).toEqual([6, 7]);
	});

	it("keeps what a GitHub Actions step that runs after a failed one reports (a test report)", () => {
		// Real lines of held-out gha-gradle-jabref-theme-then-report (845-898): an `if: failure()` step formats
		// the failed step's test results.
		const log = [
			"2022-06-22T20:39:40.0000000Z ##[group]Run ./gradlew check",
			"2022-06-22T20:39:44.3164485Z ##[error]Process completed with exit code 1.",
			"2022-06-22T20:39:44.3205458Z ##[group]Run sudo apt-get install -qq -y xml-twig-tools xsltproc",
			"2022-06-22T20:39:44.3285366Z ##[endgroup]",
			"2022-06-22T20:40:08.3142622Z Tests run: 7, Failures: 1, Errors: 0, Time elapsed: 3.7 sec",
			"2022-06-22T20:40:08.3144663Z Testcase: installThemeOnScene() took 0.749 FAILURE org.opentest4j.AssertionFailedError: expected: <2> but was: <3>",
		].join("\n");
		expect(claims(scanNotable(log).lines).map((n) => n.line)).toEqual([2, 5, 6]);
		// The same step before any failure passed: what it printed claims nothing.
		const passing = log
			.split("\n")
			.filter((_, i) => i !== 1)
			.join("\n");
		expect(claims(scanNotable(passing).lines)).toEqual([]);
	});

	it("drops an Ansible failure the play ignored, keeps one it did not", () => {
		const log = [
			"TASK [probe] ***",
			'fatal: [web1]: FAILED! => {"changed": false, "msg": "probe failed"}',
			"...ignoring",
			"TASK [install] ***",
			'fatal: [web1]: FAILED! => {"changed": false, "msg": "No package nginx available."}',
		].join("\n");
		expect(claims(scanNotable(log).lines).map((n) => n.line)).toEqual([5]);
	});

	it("never promotes zero counts, passes or an xfail (property)", () => {
		const benign = fc.constantFrom(
			"0 failed",
			"Failures: 0",
			"failed=0",
			"no errors found",
			"ok 3 - handles errors",
			"XFAIL tests/test_a.py::test_b - flaky",
			"test_error_handling PASSED",
			"  if-no-files-found: error",
			"-Wno-error=deprecated",
		);
		fc.assert(
			fc.property(fc.array(benign, { minLength: 1, maxLength: 20 }), (lines) => {
				expect(claims(scanNotable(lines.join("\n")).lines)).toEqual([]);
			}),
		);
	});
});

describe("a failure's block", () => {
	// Lines of held-out dev logs: a pytest header and the test's name under it (scikit-learn-562431016:3589),
	// a javac error and its symbol (gha-gradle-grasscutter-missing-symbol:624-627), Maven's filler lines.
	const log = [
		"collected 10 items",
		"=================================== FAILURES ===================================",
		"____________________________ test_unsorted_indices _____________________________",
		"",
		"    def test_unsorted_indices():",
		"src/main/java/emu/grasscutter/game/dungeons/challenge/DungeonChallenge.java:91: error: cannot find symbol",
		"[INFO] ",
		"------------------------------------------------------------------------",
		"  symbol:   method getDungeonSettleObservers()",
		"  location: class Scene",
		"  more of the block",
		"done",
	].join("\n");

	it("carries the lines under a failure without context of its own, stepping over filler lines", () => {
		const lines = scanNotable(log).lines;
		const context = lines.filter((n) => n.kind === "context");
		expect(context.map((n) => [n.line, n.of])).toEqual([
			[3, 2],
			[5, 2],
			[9, 6],
			[10, 6],
		]);
		expect(texts(lines)).not.toContain("[INFO] ");
		expect(texts(lines)).not.toContain("  more of the block"); // two lines per block
	});

	it("ranks a failure's first context line after the next failure, within a small cap", () => {
		const lines = scanNotable(log, { maxLines: 3 }).lines;
		// The javac error (a strong rule) first, the header (failure vocabulary) next, then the error's symbol.
		expect(lines.map((n) => [n.line, n.kind])).toEqual([
			[2, "failure"],
			[6, "failure"],
			[9, "context"],
		]);
		const byRank = [...lines].sort((a, b) => a.rank - b.rank).map((n) => n.line);
		expect(byRank).toEqual([6, 2, 9]);
	});

	it("is not the scan as it was before (its own context only, filler lines included)", () => {
		const before = scanNotable(log, { evaluation: { rules: isTableRule, steps: false } }).lines;
		expect(before.filter((n) => n.kind === "context").map((n) => n.line)).toEqual([7, 8]);
	});
});

describe("rule ecosystems (leave-one-ecosystem-out)", () => {
	it("maps every rule group to the corpus ecosystems it was written on; generic to none", () => {
		for (const rule of NOTABLE_RULES) expect(RULE_ECOSYSTEMS[rule.ecosystem], rule.id).toBeDefined();
		expect(RULE_ECOSYSTEMS.generic).toEqual([]);
		const pytest = NOTABLE_RULES.find((r) => r.id === "pytest.failed");
		expect(pytest && writtenFor(pytest, "python")).toBe(true);
		for (const rule of NOTABLE_RULES.filter((r) => r.ecosystem === "generic"))
			expect(writtenFor(rule, "python")).toBe(false);
	});
});

describe("issue 32, recall: report fields, harness sentences, exit statuses, tool reports (generic rules)", () => {
	/** The scan with every rule, and with one rule left out (what the line is without it). */
	const withAndWithout = (text: string, id: string) => ({
		with: scanNotable(text).lines,
		without: scanNotable(text, { evaluation: { rules: (r) => r.id !== id } }).lines,
	});
	const frame = (line: string) => ["set-up", line, "clean-up"].join("\n");

	it("reads a machine report's verdict field on one test as a failure, not a suite's nor a passing one", () => {
		// corpus nunit-jenkins:55, shortened (the fields kept are the log's own); the other two are built.
		const nunit =
			'                  <test-case id="1-1163" name="UI_MyTask_MR_Grid_GridViewValidation(True)" runstate="Runnable" result="Failed" label="Error" duration="31.060108" asserts="0">';
		const trx = '    <UnitTestResult testName="Parses the header" outcome="Failed" duration="00:00:00.012" />';
		const json = '{"title":"parses the header","fullName":"parser parses the header","status":"failed","duration":12}';
		for (const line of [nunit, trx, json]) {
			// In a table without the specific rules (a fold that left NUnit out), the generic field still reads it.
			const generic = scanNotable(frame(line), { evaluation: { rules: (r) => !isTableRule(r) } }).lines;
			expect(
				generic.find((n) => n.line === 2),
				line,
			).toMatchObject({ rule: "generic.report-field", kind: "failure" });
			const without = scanNotable(frame(line), {
				evaluation: { rules: (r) => !isTableRule(r) && r.id !== "generic.report-field" },
			}).lines;
			// Without it the line is at most failure vocabulary: weak, ranked after every verdict.
			expect(["none", "generic.failure"], line).toContain(without.find((n) => n.line === 2)?.rule ?? "none");
		}
		for (const line of [
			'    <test-suite type="TestSuite" id="1-1344" name="Ui" result="Failed" total="150">',
			'<test-run id="2" testcasecount="150" result="Failed" total="150" failed="144">',
			'<UnitTestResult testName="Parses the header" outcome="Passed" />',
			'{"title":"retries the upload","status":"passed","retries":1}',
			'  "status": "skipped",',
		])
			expect(
				scanNotable(frame(line), { evaluation: { rules: (r) => !isTableRule(r) } }).lines.filter(
					(n) => n.rule === "generic.report-field",
				),
				line,
			).toEqual([]);
	});

	it("reads a harness's sentence that tests failed as a strong failure, counted ones as a summary", () => {
		const sentences = [
			"++: Unit tests failed\r", // held-out neovim-567614596:3580
			"  functional tests failed with error: 1\r", // held-out busted-neovim-asan-segv-exit:6497
			"Running the tests in ‘tests/test-all.R’ failed.\r", // held-out shiny-575046224:736
			"Some test suites failed\r", // held-out tsnode-angular-aio-e2e-tserror:4289
		];
		for (const line of sentences) {
			const { with: now, without } = withAndWithout(frame(line), "generic.tests-failed");
			expect(
				now.find((n) => n.line === 2),
				line,
			).toMatchObject({ rule: "generic.tests-failed", kind: "failure" });
			// Without it the line is failure vocabulary at best: weak, dropped where a passing summary follows.
			expect(without.find((n) => n.line === 2)?.rule ?? "none", line).not.toBe("generic.tests-failed");
		}
		expect(matchRule("10 tests failed")?.id).toBe("generic.summary");
		for (const line of ["if tests failed, rerun them with --verbose", "Tests failed: 0", "No tests failed"])
			expect(claims(scanNotable(line).lines), line).toEqual([]);
	});

	it("keeps a strong 'tests failed' line where weak evidence would be dropped by a passing summary after it", () => {
		const log = ["$ make unittest", "++: Unit tests failed", "Tests:       16 passed, 16 total", "$ echo done"].join(
			"\n",
		);
		expect(claims(scanNotable(log).lines).map((n) => n.line)).toEqual([2]);
		const without = scanNotable(log, { evaluation: { rules: (r) => r.id !== "generic.tests-failed" } }).lines;
		expect(claims(without)).toEqual([]);
	});

	it("reads '<process> returned N' as an exit status: failing unless 0, never a count of rows", () => {
		const dubious = "Dubious, test returned 1 (wstat 256, 0x100)\r"; // held-out prove-git-p4-options-fail:1258
		const { with: now, without } = withAndWithout(frame(dubious), "generic.returned");
		expect(now.find((n) => n.line === 2)).toMatchObject({ rule: "generic.returned", kind: "summary", failing: true });
		expect(without.find((n) => n.line === 2)).toBeUndefined();
		expect(scanNotable("the test script returned 0").lines[0]).toMatchObject({
			rule: "generic.returned",
			failing: false,
		});
		for (const line of ["the query returned 5 rows", "search returned 12 results.", "request returned 200"])
			expect(claims(scanNotable(line).lines), line).toEqual([]);
	});

	it("reads a sanitizer's report quoted behind a runner's mark, and a SEGV summary as failing", () => {
		// held-out busted-neovim-asan-segv-exit:4877 and :4963 (shortened), with the sanitizer rules left out
		const generic = { rules: (r: NotableRule) => !isTableRule(r) };
		const error = "= ==16539==ERROR: AddressSanitizer: SEGV on unknown address 0x000001d548d0 (pc 0x000000455084)";
		expect(scanNotable(frame(error), { evaluation: generic }).lines.find((n) => n.line === 2)).toMatchObject({
			rule: "generic.tool-error",
			kind: "failure",
		});
		const summary =
			"= SUMMARY: AddressSanitizer: SEGV /tmp/final/llvm.src/projects/compiler-rt/lib/sanitizer_common.h:30";
		expect(scanNotable(frame(summary), { evaluation: generic }).lines.find((n) => n.line === 2)).toMatchObject({
			rule: "generic.tool-summary",
			failing: true,
		});
		expect(
			scanNotable("==12==ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)", { evaluation: generic })
				.lines[0],
		).toMatchObject({ rule: "generic.tool-summary", failing: false });
	});

	it("raises no false alarm on passing material that holds the same words", () => {
		const passing = [
			'<test-case id="1-7" name="Parses" result="Passed" success="True" asserts="1" />',
			'<test-suite type="Assembly" name="Ui.dll" result="Passed" total="150" failed="0">',
			'{"Action":"pass","Package":"example.com/x","Test":"TestFailedLogin","Elapsed":0.01}',
			"ok 12 - a test named 'login failed' is handled",
			"t9807-git-p4-options.sh .. ok",
			"All tests successful.",
			"the command returned 0",
			"Tests failed: 0, passed: 12",
			"test_failed_login (tests.test_auth.AuthTest) ... ok",
		].join("\n");
		expect(claims(scanNotable(passing).lines)).toEqual([]);
	});
});

describe("pester (PowerShell's runner; written on the powershell and dotnet logs, so out of their folds)", () => {
	it("reads '[-] <test>' as a failed test with its message, and is left out of the powershell fold", () => {
		// held-out powershell-536509309:5597 and the message lines of pester-rspec-runtime-poc:711-712
		const log = [
			"    [+] ThreadJob with ScriptBlock 120ms",
			"    [-] ThreadJob with ScriptBlock and Using variables 356ms",
			"      Expected: '/var/folders/dir/file1.Tests.ps1'",
			"      Actual  : 'file1.Tests.ps1'",
			"Tests Passed: 4, Failed: 1, Skipped: 0",
		].join("\n");
		const now = scanNotable(log).lines;
		expect(now.find((n) => n.line === 2)).toMatchObject({ rule: "pester.failed", kind: "failure" });
		// Its message: the next lines (the "Expected:" line is an assertion's message of its own).
		expect(now.map((n) => n.line)).toEqual([2, 3, 4, 5]);
		const pester = NOTABLE_RULES.find((r) => r.id === "pester.failed");
		expect(pester && writtenFor(pester, "powershell")).toBe(true);
		const fold = scanNotable(log, { evaluation: { rules: (r) => !writtenFor(r, "powershell") } }).lines;
		expect(fold.find((n) => n.line === 2)).toBeUndefined();
		expect(claims(scanNotable("    [+] ThreadJob with ScriptBlock 120ms\n[-] \n").lines)).toEqual([]);
	});
});

describe("issue 32, recall: a report's message and an assertion's message", () => {
	it("carries the message under a failed test's element, stepping over a bare XML element", () => {
		// corpus nunit-jenkins:55-57, shortened
		const log = [
			'                  <test-case id="1-1163" name="UI_MyTask_MR_Grid_GridViewValidation(True)" result="Failed" label="Error">',
			"                    <failure>",
			"                      <message><![CDATA[OpenQA.Selenium.WebDriverTimeoutException : Timed out after 30 seconds]]></message>",
			"                    </failure>",
			"                  </test-case>",
		].join("\n");
		const fold = scanNotable(log, { evaluation: { rules: (r) => !isTableRule(r) } }).lines;
		expect(fold.map((n) => [n.line, n.kind])).toEqual([
			[1, "failure"],
			[3, "context"],
		]);
		// The first context line is the one ranked right behind the entries: the message, not "<failure>".
		const first = scanNotable(log, { maxLines: 2, evaluation: { rules: (r) => !isTableRule(r) } }).lines;
		expect(first.map((n) => n.line)).toEqual([1, 3]);
	});

	it("reads an assertion's 'Expected: X' line and 'Expected and actual values differ' in any runner", () => {
		const generic = { rules: (r: NotableRule) => !isTableRule(r) };
		for (const line of [
			"Expected: '/var/folders/bb/n7t3rs157850byt_jfdcq9k80000gn/T/dir/file1.Tests.ps1'\r\r", // held-out pester-rspec-runtime-poc:711
			"[-] - Each parametrized test has unique id -> Expected and actual values differ!", // held-out pester-rspec-runtime-poc:908, shortened
			"  Expected: 5", // NUnit's message form (built)
		]) {
			const now = scanNotable(frame(line), { evaluation: generic }).lines;
			expect(now.find((n) => n.line === 2)?.rule, line).toBe("generic.expected");
		}
		// A passing run's settings and docs that name an expectation are no failure.
		for (const line of ["Expected output written to out/expected.txt", "expected: ok", "# Expected: 5"])
			expect(claims(scanNotable(`${line}\n10 tests passed`).lines), line).toEqual([]);
	});
});

const frame = (line: string) => ["set-up", line, "clean-up"].join("\n");

describe("issue 32, recall: a line a carriage return rewrote", () => {
	it("is matched and shown as the terminal shows it: the text after the last carriage return", () => {
		// held-out latexmk-draft-undefined-refs:541, the command shortened
		const raw =
			'travis_time:end:2350293c:start=1565137610957272470,finish=1565137790546871170,duration=179589598700\r\u001b[0K\u001b[31;1mThe command "latexmk -pdf std.tex" exited with 1.\u001b[0m\r';
		expect(cleanLogLine(raw)).toBe('The command "latexmk -pdf std.tex" exited with 1.');
		const hit = scanNotable(`$ latexmk -pdf std.tex\n${raw}\n`).lines.find((n) => n.line === 2);
		expect(hit).toMatchObject({ rule: "generic.step-verdict", failing: true });
		// The verdict leads the shown text, so a view that clips it still shows how the step ended.
		expect(hit?.text.startsWith("The command")).toBe(true);
		expect(cleanLogLine("progress 10%\rprogress 100%\r")).toBe("progress 100%");
		expect(cleanLogLine("Expected: 'mock'\r\r")).toBe("Expected: 'mock'");
		expect(cleanLogLine("kept\r   \r")).toBe("kept\r   ");
	});
});

describe("issue 32, recall: a harness's sentence ranks with the runners' verdicts", () => {
	it("keeps 'Some test suites failed' under a cap that thirty compiler errors before it would fill", () => {
		const errors = Array.from(
			{ length: 30 },
			(_, i) => `../node_modules/@types/jasmine/index.d.ts(142,${i + 40}): error TS1005: ';' expected.`,
		);
		// held-out tsnode-angular-aio-e2e-tserror:4289 after errors shaped like its lines 1934-1953
		const log = [...errors, "Some test suites failed", "error Command failed with exit code 1."].join("\n");
		const kept = scanNotable(log, { maxLines: 10 }).lines;
		expect(kept.find((n) => n.line === 31)).toMatchObject({ rule: "generic.tests-failed", kind: "failure" });
		expect(NOTABLE_RULES.find((r) => r.id === "generic.tests-failed")?.verdict).toBe(true);
	});
});

describe("issue 32, false alarms: a run's own final verdict decides", () => {
	it("claims nothing of a 'Job failed' the run's tests printed when the job itself succeeded", () => {
		// Built like a CI runner's own unit tests: they run jobs and print those jobs' verdicts.
		const run = [
			"section_start:1621524000:step_script",
			"$ go test ./executors/...",
			"=== RUN   TestJobFailure",
			"ERROR: Job failed: exit code 1",
			"--- PASS: TestJobFailure (0.01s)",
			"ok  \tgitlab.example/runner/executors\t0.104s",
			"section_end:1621524100:step_script",
		];
		const passed = [...run, "Job succeeded"].join("\n");
		const scan = scanNotable(passed);
		expect(claims(scan.lines)).toEqual([]);
		expect(scan.failures).toBe(0);
		// Without the run's verdict, the same printed verdict still claims a failure: the final verdict decides.
		expect(claims(scanNotable(run.join("\n")).lines).map((n) => n.line)).toEqual([4]);
		// And a run that failed after it still says so.
		const failed = [...run, "ERROR: Job failed: command terminated with exit code 1"].join("\n");
		expect(claims(scanNotable(failed).lines).map((n) => n.line)).toContain(8);
	});
});

describe("issue 32, recall: a JSON-lines record says what its message says", () => {
	const withoutGoJson = { rules: (r: NotableRule) => !writtenFor(r, "go-test-json") };

	it("reads a record's message field as a line (go test -json, Docker's json-file log, a JSON logger)", () => {
		const records = [
			'{"Time":"2022-06-19T13:44:44.9-04:00","Action":"output","Package":"example.com/p","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\\n"}',
			'{"log":"FAIL\\texample.com/p\\t0.020s\\n","stream":"stdout","time":"2024-01-02T03:04:05.000000000Z"}',
			'{"level":50,"time":1700000000000,"msg":"panic: runtime error: index out of range [3] with length 3"}',
		];
		for (const record of records) {
			const rule = matchRule(record, withoutGoJson);
			expect(rule?.kind, record).toBe("failure");
			expect(rule?.weak, record).toBeFalsy();
		}
		// The scan shows the record itself, verbatim, as a strong failure.
		const scan = scanNotable(records.join("\n"), { evaluation: withoutGoJson });
		expect(claims(scan.lines).map((n) => n.text)).toEqual(records);
	});

	it("keeps the raw line's decision when the message says nothing stronger, and the scan as it was unchanged", () => {
		const passing = '{"Action":"output","Test":"TestA","Output":"--- PASS: TestA (0.00s)\\n"}';
		expect(matchRule(passing, withoutGoJson)).toBeUndefined();
		const vocabulary = '{"Action":"output","Output":"    a_test.go:9: this failed\\n"}';
		expect(matchRule(vocabulary, withoutGoJson)?.id).toBe("generic.failure");
		// The scan as it was before issue 32 reads the raw line only.
		const fail = '{"Action":"output","Output":"--- FAIL: TestA (0.00s)\\n"}';
		expect(matchRule(fail, { rules: (r) => isTableRule(r) && !writtenFor(r, "go-test-json"), steps: false })).toBe(
			undefined,
		);
	});

	it("jsonMessage: the unescaped, cleaned first line of the message field, or undefined (property)", () => {
		fc.assert(
			fc.property(fc.constantFrom("Output", "log", "msg", "message", "text"), fc.string(), (field, message) => {
				const record = `{"time":"2024-01-02T03:04:05Z",${JSON.stringify(field)}:${JSON.stringify(message)}}`;
				const first = message.split("\n")[0];
				const expected = cleanLogLine(first).trim() === "" ? undefined : cleanLogLine(first);
				expect(jsonMessage(record)).toBe(expected);
			}),
		);
		expect(jsonMessage('not a record "msg":"FAIL"')).toBeUndefined();
		expect(jsonMessage('{"msg":"bad escape \\q"}')).toBeUndefined();
		expect(jsonMessage('{"level":"info"}')).toBeUndefined();
	});
});

describe("issue 32, recall: a JSON report's finding, named by its record", () => {
	// Built like a scanner's pretty-printed report (npm audit's, grype's, trivy's shape).
	const report = (severity: string) =>
		[
			"{",
			'  "matches": [',
			"    {",
			'      "id": "GHSA-xxxx-yyyy-zzzz",',
			'      "package": "left-pad",',
			'      "description": "A long description\\nof the issue",',
			'      "fix": {',
			'        "versions": ["1.3.1"]',
			"      },",
			`      "severity": "${severity}",`,
			'      "url": "https://example.com/advisory"',
			"    }",
			"  ]",
			"}",
		].join("\n");
	const generic = { rules: (r: NotableRule) => !isTableRule(r) };

	it("reads a severity field that is no note as a failure, with the first line of its record", () => {
		for (const severity of ["CRITICAL", "high", "Medium", "moderate", "error"]) {
			const scan = scanNotable(report(severity), { evaluation: generic });
			expect(
				claims(scan.lines).map((n) => n.line),
				severity,
			).toEqual([10]);
			expect(scan.lines.find((n) => n.kind === "context" && n.of === 10)?.text).toBe(
				'      "id": "GHSA-xxxx-yyyy-zzzz",',
			);
		}
	});

	it("never reads a low, a warning or a note, nor a one-line log record's severity, as a finding", () => {
		for (const severity of ["low", "warning", "info", "note", "negligible", "unknown"])
			expect(claims(scanNotable(report(severity), { evaluation: generic }).lines), severity).toEqual([]);
		expect(matchRule('{"severity":"ERROR","message":"retrying in 5s"}', generic)?.id).not.toBe(
			"generic.report-severity",
		);
	});
});

/**
 * The notable-line scan (extensions/shared/text/notable.ts) on real text: every rule of the table has at least
 * one real line it must find (a drift test keeps it so), look-alikes it must not promote, and line numbers as
 * Pi's read counts them.
 *
 * The lines below are verbatim from public logs: "corpus <id>:<line>" names a log of the real-log corpus of
 * this project (test/fixtures/real-logs, with its source and license in that index), "public" a line copied
 * from a public repository's recorded tool output (a CI log, a README's captured run, a test fixture).
 */
import { describe, expect, it } from "vitest";
import {
	cleanLogLine,
	isTableRule,
	matchRule,
	NOTABLE_KEYS,
	type NotableLine,
	scanNotable,
} from "../../extensions/shared/text/notable.ts";
import { NOTABLE_RULES } from "../../extensions/shared/text/notable-rules.ts";
import { toWellFormed } from "../../extensions/shared/text/utf8.ts";

interface Example {
	rule: string;
	text: string;
	from: string;
	/** A summary that reports a failure (true) or a passing one (false). */
	failing?: boolean;
}

const REAL: Example[] = [
	// Mozilla harnesses
	{
		rule: "mozilla.unexpected",
		text: "[task 2025-02-13T21:23:04.546Z] 21:23:04     INFO - REFTEST TEST-UNEXPECTED-FAIL | layout/reftests/bugs/1804872-2.html == layout/reftests/bugs/1804872-2-ref.html | image comparison, max difference: 255, number of differing pixels: 22456",
		from: "corpus mozilla-reftest-fail:13565",
	},
	{
		rule: "mozilla.unexpected",
		text: "TEST-UNEXPECTED-FAIL | leakcheck large nsGlobalWindowInner | browser/extensions/webcompat/tests/browser/browser.toml",
		from: "corpus mozilla-leak:23371",
	},
	{
		rule: "mozilla.summary",
		text: "REFTEST INFO | Unexpected: 1 (1 unexpected fail, 0 unexpected pass, 0 unexpected asserts, 0 failed load, 0 exception)",
		from: "corpus mozilla-reftest-fail:26502",
		failing: true,
	},
	{ rule: "mozilla.summary", text: "\tFailed: 1", from: "corpus mozilla-mochitest-fail:9840", failing: true },
	{ rule: "mozilla.summary", text: "Got 29 unexpected statuses", from: "corpus mozilla-wpt:17836", failing: true },
	// CI markers and exit codes
	{
		rule: "generic.step-verdict",
		text: "##[error]Process completed with exit code 1.",
		from: "corpus gha-pytorch-job:4047",
		failing: true,
	},
	{ rule: "ci.error-marker", text: "[taskcluster:error] exit status 2", from: "corpus mozilla-xpcshell-crash:35773" },
	{
		rule: "ci.exit-code",
		text: "[taskcluster 2025-02-13 21:37:12.997Z] Unsuccessful task run with exit code: 1 completed in 1285.402 seconds",
		from: "corpus mozilla-reftest-fail:26556",
		failing: true,
	},
	{ rule: "ci.exit-code", text: "Return code: 1", from: "corpus mozilla-mochitest-fail:9846", failing: true },
	{
		rule: "ci.exit-zero",
		text: "AWSY exited with return code 0: SUCCESS",
		from: "corpus mozilla-awsy:1442",
		failing: false,
	},
	{ rule: "make.error", text: "make: *** [Makefile:12: build] Error 2", from: "public" },
	// Test runners
	{ rule: "jest.fail-file", text: "FAIL tests/uc11-voice-control.test.js", from: "public" },
	{ rule: "jest.test-failure", text: "  ● Test suite failed to run", from: "corpus jest-junit-large:7491" },
	{
		rule: "jest.summary",
		text: "Tests:       1 failed, 9 passed, 10 total",
		from: "public",
		failing: true,
	},
	{ rule: "jest.summary", text: "      Tests  2 failed | 192 passed (194)", from: "public", failing: true },
	{ rule: "jest.summary", text: "Tests:       16 passed, 16 total", from: "public", failing: false },
	{ rule: "tests.cross-mark", text: "    ✕ should have info level configured (5 ms)", from: "public" },
	{
		rule: "tests.cross-mark",
		text: "    × [DOC EXPECTATION] concurrent redemptions must not exceed the available balance (38 ms)",
		from: "public",
	},
	{ rule: "mocha.summary", text: "  1 failing", from: "public", failing: true },
	{ rule: "mocha.summary", text: "  12 passing (30ms)", from: "public", failing: false },
	{ rule: "tap.not-ok", text: "not ok 123 test/test-descriptions.js", from: "corpus tap-tests:424" },
	{ rule: "tap.bail-out", text: "Bail out! Couldn't connect to database.", from: "public" },
	{ rule: "tap.summary", text: "# fail  5", from: "corpus tap-tests:676", failing: true },
	{ rule: "tap.summary", text: "ℹ fail 2", from: "public", failing: true },
	{ rule: "unittest.summary", text: "FAILED (failures=30, errors=2, skipped=4)", from: "public", failing: true },
	{ rule: "unittest.failure", text: "FAIL: test_a (genpkg.test_x.T.test_a)", from: "public" },
	{
		rule: "pytest.failed",
		text: "2024-07-12T17:22:03.2512319Z FAILED [0.0103s] inductor/test_triton_kernels.py::KernelTests::test_triton_kernel_tracing_dynamic_True - TypeError: unhashable type: non-nested SymInt",
		from: "corpus gha-pytorch-job-2:750",
	},
	{ rule: "pytest.failed", text: "FAILED test_sample.py::test_answer - assert 4 == 5", from: "public" },
	{
		rule: "pytest.summary",
		text: "2024-07-12T17:22:03.2519862Z ================== 1 failed, 182 deselected, 2 rerun in 0.36s ==================",
		from: "corpus gha-pytorch-job-2:757",
		failing: true,
	},
	{
		rule: "pytest.summary",
		text: "========== 3758 passed, 1153 skipped, 49 xfailed in 462.74s (0:07:42) ==========",
		from: "corpus gha-pytorch-test-ops:9516",
		failing: false,
	},
	{
		rule: "pytest.e-line",
		text: "E       AssertionError: assert b'<!-- superh... {}\\n}\\n```\\n' == b'<!-- superh...  }\\n}\\n```\\n'",
		from: "public",
	},
	{ rule: "go.fail-test", text: "--- FAIL: TestRace (0.00s)", from: "corpus go-test-race:40" },
	{ rule: "go.fail-package", text: "FAIL\tpackage/race\t0.005s", from: "corpus go-test-race:45" },
	{ rule: "go.race", text: "WARNING: DATA RACE", from: "corpus go-test-race:4" },
	{
		rule: "gotest-json.output-fail",
		text: '{"Time":"2022-12-14T09:49:02.572963923Z","Action":"output","Package":"github.com/mafredri/test","Test":"TestHello","Output":"panic: test timed out after 1s\\n"}',
		from: "corpus go-test-json-panic-race:6",
	},
	{
		rule: "go.fail-package",
		text: "FAIL    github.com/gypsydave5/learn-go-with-tests/concurrency/v1 [build failed]",
		from: "public",
	},
	{
		rule: "gotest-json.output-fail",
		text: '{"Time":"2022-06-19T13:44:44.914498183-04:00","Action":"output","Package":"gotest.tools/gotestsum/testjson/internal/parallelfails","Test":"TestNestedParallelFailures","Output":"--- FAIL: TestNestedParallelFailures (0.00s)\\n"}',
		from: "corpus go-test-json:161",
	},
	{
		rule: "gotest-json.fail",
		text: '{"Time":"2022-12-14T09:49:02.574754586Z","Action":"fail","Package":"github.com/mafredri/test","Elapsed":1.012}',
		from: "corpus go-test-json-panic-race:39",
	},
	{ rule: "cargo.test-failed", text: "test parser::tests::parses_negative ... FAILED", from: "public" },
	{
		rule: "cargo.test-result",
		text: "test result: FAILED. 8938 passed; 1 failed; 70 ignored; 0 measured; 0 filtered out",
		from: "public",
		failing: true,
	},
	{
		rule: "cargo.test-result",
		text: "test result: ok. 1 passed; 0 failed; 0 ignored",
		from: "public",
		failing: false,
	},
	{
		rule: "junit.failure",
		text: '    <failure type="java.lang.AssertionError" message="expected [1.2.1] but found [1.2.0]">',
		from: "corpus java-junit-pulsar:6",
	},
	{
		rule: "nunit.failed",
		text: '                  <test-case id="1-1163" name="UI_MyTask_MR_Grid_GridViewValidation(True,&quot;chrome&quot;)" result="Failed" label="Error">',
		from: "corpus nunit-jenkins:55 (shortened attributes)",
	},
	{
		rule: "nunit.message",
		text: "                      <message><![CDATA[OpenQA.Selenium.WebDriverTimeoutException : Timed out after 30 seconds",
		from: "corpus nunit-jenkins:57",
	},
	{
		rule: "nunit.summary",
		text: '<test-run id="2" testcasecount="150" result="Failed" total="150" passed="6" failed="144" inconclusive="0">',
		from: "corpus nunit-jenkins:2 (attributes shortened)",
		failing: true,
	},
	{
		rule: "trx.summary",
		text: '  <ResultSummary outcome="Completed">',
		from: "corpus dotnet-trx-large:4645",
		failing: false,
	},
	{
		rule: "trx.summary",
		text: '    <Counters total="804" executed="803" passed="803" failed="0" error="0" timeout="0" aborted="0">',
		from: "corpus dotnet-trx-large:4646 (attributes shortened)",
		failing: false,
	},
	{
		rule: "junit.suite",
		text: '<testsuites tests="808" failures="1" errors="0" skipped="14" time="2126.5310000000004">',
		from: "corpus java-junit-pulsar:2",
		failing: true,
	},
	{ rule: "maven.tests-run", text: "Tests run: 2, Failures: 1, Errors: 0, Skipped: 0", from: "public", failing: true },
	{ rule: "maven.build", text: "[INFO] BUILD FAILURE", from: "public", failing: true },
	{ rule: "maven.build", text: "[INFO] BUILD SUCCESS", from: "public", failing: false },
	{
		rule: "dotnet.summary",
		text: "Failed!  - Failed:     4, Passed:    10, Skipped:     0, Total:    14, Duration: 2 s - PetClinic.Tests.Api.dll (net10.0)",
		from: "public",
		failing: true,
	},
	{
		rule: "bazel.summary",
		text: "2023-10-04T15:38:56.0453750Z Executed 26 out of 26 tests: 26 tests pass.",
		from: "corpus gha-pytorch-bazel-pass:15732",
		failing: false,
	},
	{ rule: "json.counts", text: '    "failures": 0,', from: "corpus mocha-json-large:7", failing: false },
	// Compilers and type checkers
	{
		rule: "tsc.error",
		text: "src/components/carrier/imports/TemplateDecision.tsx(797,7): error TS2322: Type 'string' is not assignable to type 'number'.",
		from: "public",
	},
	{ rule: "tsc.found", text: "Found 2 errors in 1 file.", from: "public", failing: true },
	{
		rule: "msbuild.error",
		text: "C:\\actions-runner\\_work\\pytorch\\pytorch\\third_party\\kineto\\libkineto\\src\\plugin\\xpupti\\XpuptiActivityApi.cpp(253): error C2065: 'PTI_VIEW_COMMUNICATION': undeclared identifier",
		from: "public CI log",
	},
	{ rule: "msbuild.result", text: "Build FAILED.", from: "public", failing: true },
	{ rule: "msbuild.result", text: "    0 Error(s)", from: "public", failing: false },
	{ rule: "rustc.summary", text: "error: aborting due to 5 previous errors", from: "public CI log", failing: true },
	{
		rule: "rustc.summary",
		text: "error: could not compile `rama-core` (lib) due to 3 previous errors",
		from: "public",
		failing: true,
	},
	{ rule: "rustc.error", text: "error[E0432]: unresolved import `rama_error::OpaqueError`", from: "public" },
	{
		rule: "cc.error",
		text: "src/main.c:12:5: error: 'undeclared' undeclared (first use in this function)",
		from: "public",
	},
	{
		rule: "cc.link",
		text: "kernel/bpf/net_namespace.c:32: undefined reference to `bpf_sk_lookup_enabled'",
		from: "public",
	},
	{ rule: "javac.error", text: "AnInstance.java:6: error: cannot find symbol", from: "public" },
	{ rule: "javac.count", text: "1 error", from: "public", failing: true },
	{ rule: "go.build-error", text: "./websiteChecker_test.go:18:10: undefined: WebsiteChecker", from: "public" },
	// Package managers
	{ rule: "npm.error", text: "npm ERR! code ELIFECYCLE", from: "public" },
	{ rule: "pnpm.error", text: " ELIFECYCLE  Command failed with exit code 1.", from: "public" },
	{
		rule: "pnpm.error",
		text: "ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  @now-playing/windows-companion@0.1.0 dev: `node scripts/dev.mjs`",
		from: "public",
	},
	{ rule: "yarn.error", text: "error Command failed with exit code 1.", from: "public" },
	{ rule: "yarn.trace", text: "Trace: ", from: "corpus yarn-error:4486" },
	{
		rule: "pip.error",
		text: "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.",
		from: "corpus gha-pytorch-job:3466",
	},
	// Security scanners
	{ rule: "audit.count", text: "8 vulnerabilities (2 moderate, 6 high)", from: "public", failing: true },
	{ rule: "audit.count", text: "found 0 vulnerabilities", from: "public", failing: false },
	{ rule: "audit.json-counts", text: '      "critical": 1,', from: "corpus npm-audit-critical:37", failing: true },
	{ rule: "audit.severity", text: '          "Severity": "CRITICAL",', from: "corpus trivy-alpine:414" },
	{ rule: "audit.advisory", text: '          "VulnerabilityID": "CVE-2019-1549",', from: "corpus trivy-alpine:75" },
	{
		rule: "audit.advisory",
		text: '          "url": "https://github.com/advisories/GHSA-28xh-wpgr-7fm8",',
		from: "corpus npm-audit-critical:14",
	},
	// Runtimes and tools
	{
		rule: "sanitizer.report",
		text: "[task 2025-02-13T22:10:09.075Z] 22:10:09     INFO - PID 16211 | SUMMARY: AddressSanitizer: heap-use-after-free /builds/worker/workspace/obj-build/dist/include/nsISupportsImpl.h:388:19 in operator++",
		from: "corpus mozilla-asan-uaf:5541",
	},
	{
		rule: "sanitizer.report",
		text: "==3236==ERROR: LeakSanitizer: detected memory leaks",
		from: "corpus lsan-leaks:8",
	},
	{
		rule: "sanitizer.report",
		text: "WARNING: ThreadSanitizer: heap-use-after-free (pid=26043)",
		from: "corpus tsan-uaf:2",
	},
	{ rule: "runtime.crash", text: " Crash reason:  EXC_SOFTWARE / SIGABRT", from: "corpus mozilla-xpcshell-crash:3299" },
	{ rule: "runtime.panic", text: "panic: runtime error: index out of range", from: "corpus go-panic:1" },
	{ rule: "runtime.panic", text: "thread 'main' panicked at src/main.rs:3:5:", from: "public" },
	{
		rule: "runtime.assertion",
		text: "assertion `left == right` failed: 1회 저장에서 꼬리말 문단이 변했다",
		from: "public",
	},
	{
		rule: "runtime.uncaught",
		text: `[844:844:0908/072011.342058:INFO:CONSOLE:1] "Uncaught SyntaxError: Unexpected identifier 'Observable'", source: file:///x.js (1)`,
		from: "corpus chrome-check-failure:560 (source shortened)",
	},
	{
		rule: "chromium.check",
		text: "[844:844:0908/072011.896438:FATAL:ui/accessibility/platform/inspect/ax_tree_formatter_auralinux.cc:143] Check failed: atk_child.",
		from: "corpus chrome-check-failure:627",
	},
	{ rule: "runtime.fatal", text: "FATAL EXCEPTION: ConnectivityManager", from: "corpus java-fatal-exception:893" },
	{ rule: "runtime.fatal", text: "fatal: unknown commit main", from: "corpus gha-pytorch-test-ops:2454" },
	{ rule: "python.traceback", text: "Traceback (most recent call last):", from: "corpus gha-pytorch-job:3947" },
	{
		rule: "runtime.exception",
		text: "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files and it looks like gpt2 is not the path to a directory containing a file named config.json.",
		from: "corpus gha-pytorch-job:4037",
	},
	{
		rule: "runtime.exception",
		text: "java.util.ConcurrentModificationException",
		from: "corpus java-fatal-exception:895",
	},
	{
		rule: "java.caused-by",
		text: "Caused by: java.lang.IllegalArgumentException: bogus opcode: 0073",
		from: "public",
	},
	{ rule: "maven.error", text: "[ERROR] COMPILATION ERROR :", from: "public" },
	{ rule: "cli.error", text: "error: build failed", from: "public CI log" },
	// Generic rules (issue 32): any CI's verdicts, any runner's summary, failure vocabulary, steps. "held-out
	// <id>:<line>" names a dev-split log of test/fixtures/heldout-logs.
	{
		rule: "generic.step-verdict",
		text: "ERROR: Command failed: ",
		from: "held-out copr-gstreamer-builddep-missing:975",
		failing: true,
	},
	{
		rule: "generic.step-verdict",
		text: "Child return code was: 11",
		from: "held-out koji-boto3-buildrequires-build:39",
		failing: true,
	},
	{
		rule: "generic.step-verdict",
		text: "Child return code was: 0",
		from: "held-out koji-boto3-buildrequires-build:11",
		failing: false,
	},
	{
		rule: "generic.run-verdict",
		text: "Finished: FAILURE",
		from: "held-out jenkins-node-git-fetch-timeout:97",
		failing: true,
	},
	{
		rule: "generic.run-verdict",
		text: "Build step 'Execute shell' marked build as failure",
		from: "held-out jenkins-node-osx-no-compiler:106",
		failing: true,
	},
	{
		rule: "generic.ansible-failed",
		text: 'fatal: [server1.netology]: FAILED! => {"changed": false, "msg": "Could not find or access \'~/.ssh/id_rsa.pub\' on the Ansible Controller."}',
		from: "public (a README's captured ansible-playbook run)",
	},
	{ rule: "generic.ignoring", text: "...ignoring", from: "public (the same run)" },
	{
		rule: "generic.exit-code",
		text: "[task 2025-02-13T22:02:06.249Z] 22:02:06     INFO - Browser exited with return code -15",
		from: "corpus mozilla-asan-uaf:2044",
		failing: true,
	},
	{
		rule: "generic.verdict-line",
		text: "[task 2025-02-13T21:37:11.762Z] 21:37:11     INFO -  TEST-FAIL | services/fxaccounts/tests/xpcshell/test_commands_closetab.js | took 10303ms",
		from: "corpus mozilla-xpcshell-crash:17949",
	},
	{
		rule: "generic.verdict-line",
		text: "[info] - http/2 client, http/1.1 server (streaming): symmetric reader and getContent *** FAILED ***",
		from: "held-out finagle-565063041:5462",
	},
	{
		rule: "generic.verdict-line",
		text: "2022-06-22T20:40:08.3144663Z Testcase: installThemeOnScene() took 0.749 FAILURE org.opentest4j.AssertionFailedError: expected: <2> but was: <3>",
		from: "held-out gha-gradle-jabref-theme-then-report:898",
	},
	{
		rule: "generic.verdict-line",
		text: "nl\u001b[31m\u274c  \u001b[0m/Users/travis/build/SwiftyJSON/SwiftyJSON/Source/SwiftyJSON.swift:97:2: \u001b[31munknown attribute 'dynamicMemberLookup'\u001b[0m",
		from: "held-out swiftyjson-431821442:3103",
	},
	{
		rule: "generic.failure",
		text: "Copr build error: Build failed",
		from: "held-out copr-gstreamer-builddep-missing:988",
	},
	{
		rule: "generic.step-verdict",
		text: 'travis_time:end:2c598ad1:start=1557479896106535814,finish=1557480458336098364,duration=562229562550\r\u001b[0K\u001b[31;1mThe command "./sapi/cli/php run-tests.php -P" exited with 1.\u001b[0m',
		from: "held-out php-src-530655545:2993 (the command shortened)",
		failing: true,
	},
	{
		rule: "generic.step-verdict",
		text: '\u001b[31;1mThe command "./sbt ++2.12.8 coverage finagle-http/test coverageReport" failed 3 times.\u001b[0m\r',
		from: "held-out finagle-565063041:23116 (Travis' travis_retry)",
		failing: true,
	},
	{
		rule: "generic.summary",
		text: "There were 10 failures:\r",
		from: "held-out symfony-567055431:9330",
		failing: true,
	},
	{
		rule: "generic.verdict-line",
		text: "\u001b[?1h\u001b=\u001b[?1l\u001b>insert-mode/autoindent                            ERROR\r",
		from: "held-out vis-234575042:928 (a status column)",
	},
	{
		rule: "generic.verdict-line",
		text: "2022-06-13T09:58:10.4843781Z [INFO] Fusion CSRF tests with custom context path ......... FAILURE [ 44.640 s]",
		from: "held-out gha-failsafe-selenium-vaadin-csrf:12893",
	},
	{ rule: "generic.verdict-line", text: "Failures:\r", from: "held-out angular-502677197:1606 (a list's header)" },
	{
		rule: "generic.diagnostic",
		text: "/builddir/build/BUILD/dolphin-emu-2409-build/dolphin-2409/Source/Core/Common/MsgHandler.h:45:30: error: \u2018is_compile_string\u2019 is not a member of \u2018fmt::v11::detail\u2019; did you mean \u2018compile_string\u2019? [-Wtemplate-body]",
		from: "held-out koji-dolphin-cmake-compile:596",
	},
	{
		rule: "generic.tool-error",
		text: "[task 2025-02-13T22:10:07.053Z] 22:10:07    ERROR - PID 16211 | ==16211==ERROR: AddressSanitizer: heap-use-after-free on address 0x512000dacef0 at pc 0x7f5f778257ff bp 0x7fff65bbc1b0 sp 0x7fff65bbc1a8\r",
		from: "corpus mozilla-asan-uaf:5437",
	},
	{
		rule: "generic.tool-summary",
		text: "[task 2025-02-13T22:10:09.075Z] 22:10:09     INFO - PID 16211 | SUMMARY: AddressSanitizer: heap-use-after-free /builds/worker/workspace/obj-build/dist/include/nsISupportsImpl.h:388:19 in operator++\r",
		from: "corpus mozilla-asan-uaf:5541",
		failing: true,
	},
	{
		rule: "generic.tool-summary",
		text: "SUMMARY: AddressSanitizer: 3079 byte(s) leaked in 252 allocation(s).",
		from: "corpus lsan-leaks:20",
		failing: true,
	},
	{
		rule: "generic.verdict-line",
		text: "[task 2025-02-13T21:23:04.546Z] 21:23:04     INFO - REFTEST TEST-UNEXPECTED-FAIL | layout/reftests/bugs/1804872-2.html == layout/reftests/bugs/1804872-2-ref.html | image comparison, max difference: 255, number of differing pixels: 22456",
		from: "corpus mozilla-reftest-fail:13565 (a compound verdict token)",
	},
	{
		rule: "generic.failure",
		text: "011+ Segmentation fault (core dumped)\r\r",
		from: "held-out php-src-530655545:522",
	},
	{
		rule: "generic.summary",
		text: "2 runs, 4 assertions, 1 failures, 0 errors, 0 skips",
		from: "public (a tutorial's captured minitest run)",
		failing: true,
	},
	{
		rule: "generic.numbered-failure",
		text: "1) Symfony\\Component\\VarDumper\\Tests\\CasterExceptionCasterTest::testDefaultSettings",
		from: "held-out symfony-567055431:9332",
	},
	{
		rule: "generic.expected",
		text: "Expected {1 2 3 4 5}, but got {GlobalVar}.",
		from: "held-out powershell-536509309:5646",
	},
	{
		rule: "generic.report-field",
		text: '                  <test-case id="1-1163" name="UI_MyTask_MR_Grid_GridViewValidation(True,&quot;chrome&quot;,&quot;/#/tasks/access-certification/overview&quot;)" methodname="UI_MyTask_MR_Grid_GridViewValidation" runstate="Runnable" seed="273136287" result="Failed" label="Error" start-time="2017-05-25 12:57:49Z" end-time="2017-05-25 12:58:20Z" duration="31.060108" asserts="0">\r',
		from: "corpus nunit-jenkins:55 (fullname and classname left out)",
	},
	{
		rule: "generic.report-severity",
		text: '      "severity": "critical",',
		from: "corpus npm-audit-critical:6",
	},
	{
		rule: "generic.tests-failed",
		text: "++: Unit tests failed\r",
		from: "held-out neovim-567614596:3580",
	},
	{
		rule: "generic.returned",
		text: "Dubious, test returned 1 (wstat 256, 0x100)\r",
		from: "held-out prove-git-p4-options-fail:1258",
		failing: true,
	},
	{
		rule: "pester.failed",
		text: "    [-] ThreadJob with ScriptBlock and Using variables 356ms\r",
		from: "held-out powershell-536509309:5597",
	},
	{
		rule: "generic.checked-step",
		text: "2024-07-08T16:48:14.6230487Z ##[group]Run pytorch/test-infra/.github/actions/setup-ssh@main",
		from: "corpus gha-pytorch-job:50",
	},
	{
		rule: "generic.step",
		text: "$ npx playwright test --config=app/tests/e2e/config/playwright.config.prod.ts --project=chromium -g c1",
		from: "held-out buildkite-playwright-pass:1",
	},
];

/** Lines that look like failures and are not: each must not come back as a failure (nor a failing summary). */
const DECOYS: Array<{ text: string; from: string }> = [
	{
		text: "REFTEST TEST-KNOWN-FAIL | layout/reftests/bugs/368155-negative-margins-1.html == layout/reftests/bugs/368155-negative-margins-1-ref.html | image comparison",
		from: "corpus mozilla-reftest-fail:5511",
	},
	{
		text: "REFTEST INFO | Known problems: 130 (24 known fail, 4 known asserts, 25 random, 77 skipped, 0 slow)",
		from: "corpus mozilla-reftest-fail:26503",
	},
	{ text: "XFAIL tests/test_b.py::test_tracing - reason: flaky on CI", from: "pytest's xfail report line" },
	{ text: "not ok 3 - captures TODO description # TODO not written yet", from: "TAP TODO form" },
	{ text: "ok 1 - a set of tests to be done later", from: "corpus tap-todo:16" },
	{ text: "Failed: 0", from: "corpus mozilla-mochitest-fail" },
	{ text: "test result: ok. 1 passed; 0 failed; 0 ignored", from: "public" },
	{
		text: '<testsuite name="org.apache.pulsar.PulsarBrokerStarterTest" tests="9" errors="0" failures="0">',
		from: "corpus java-junit-pulsar:30",
	},
	{ text: "found 0 vulnerabilities", from: "public" },
	{ text: "    <failure>", from: "corpus nunit-jenkins:22 (the message follows on its own line)" },
	{
		text: "[task 2025-02-13T21:27:11.586Z] 21:27:11     INFO - Return code: 0",
		from: "corpus mozilla-xpcshell-crash:371",
	},
	{
		text: "GECKO(1047) | (firefox-default:1047): GLib-GObject-CRITICAL **: 10:22:24.811: g_type_add_interface_static: assertion 'g_type_parent (interface_type) == G_TYPE_INTERFACE' failed",
		from: "corpus mozilla-mochitest-fail:4208",
	},
	{
		text: "/usr/bin/clang++ -o Unified_cpp_dom0.o -c -fno-exceptions -Werror=format-security -Wno-error=deprecated Unified_cpp_dom0.cpp",
		from: "a compile command line of a build log",
	},
	{
		text: " PID 2029 | [Parent 2029, IPC I/O Parent] WARNING: process 2050 exited with status 5: file /builds/worker/checkouts/gecko/ipc/chromium/src/chrome/common/process_watcher_posix_sigchld.cc:126",
		from: "corpus mozilla-xpcshell-crash:4334",
	},
	{
		text: '                "https://access.redhat.com/security/cve/CVE-2019-1549",',
		from: "corpus trivy-alpine:124 (a reference URL, not a finding)",
	},
	{
		text: "========== 3758 passed, 1153 skipped, 49 xfailed in 462.74s (0:07:42) ==========",
		from: "corpus gha-pytorch-test-ops:9516",
	},
	{ text: "✖ 1 problem (1 error, 0 warnings)", from: "public (a linter's count, not a test)" },
	{
		text: "==4242== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)",
		from: "valgrind's closing line on a clean run (public format)",
	},
	{ text: "LEAK SUMMARY: no leaks are possible", from: "valgrind's leak summary wording on a clean run" },
	{
		text: "[taskcluster:error] Error downloading \"public/image.tar.zst\" from task ID \"ACAekLExQ9ilBJ5DxWMSHA\". Error: Expected size is '1315403107' but received '1157356944' Next Attempt in: 11535.73 ms.",
		from: "corpus mozilla-crashtest-timeout:17 (retried)",
	},
	{
		text: "Pending: (Failures listed here are expected and do not affect your suite's status)\r",
		from: "held-out discourse-565656484:8468 (rspec's pending section)",
	},
	{
		text: "DEBUG util.py:610:  Child return code was: 6",
		from: "held-out dev mock-root-log-c10s-noisy:554 (group more: a passing run's probe, at debug level)",
	},
	{ text: "    TIMEOUT=timeout", from: "held-out purescript-573124345:500 (a script's variable)" },
	{ text: "Errors: 0", from: "a runner's zero count" },
	{ text: "[INFO] Reactor Summary for app 1.0 .......... SUCCESS [ 4.2 s]", from: "Maven's reactor summary, a pass" },
	{ text: "There were 0 failures", from: "a zero count in prose" },
	{ text: "-- Performing Test FLAG_C_FORMAT_WARNING_TO_ERROR", from: "held-out koji-dolphin-cmake-compile:484" },
	{ text: "src/app.py:12: note: error codes are listed below", from: "a checker's note, not an error" },
	{ text: '      "title": "should error on timeout",', from: "corpus mocha-json-large:11425 (a test's name)" },
	{
		text: '      "fullTitle": "node-flags isNodeFlag() for all allowed node environment flags --report-on-fatalerror should return true",',
		from: "corpus mocha-json-large:12605",
	},
];

/** The scan of `text` framed by noise, and the line it reports at `line`. */
function found(lines: readonly NotableLine[], line: number): NotableLine | undefined {
	return lines.find((l) => l.line === line && l.kind !== "context");
}

describe("the rules on real lines", () => {
	for (const ex of REAL) {
		it(`${ex.rule} finds ${JSON.stringify(ex.text.slice(0, 70))} (${ex.from})`, () => {
			if (NOTABLE_RULES.find((r) => r.id === ex.rule)?.kind === "marker") {
				// A marker is no notable line: it tells the scan where a step starts or what was ignored.
				expect(matchRule(cleanLogLine(ex.text))?.id).toBe(ex.rule);
				return;
			}
			const text = `  compiling module 1 of 12\n${ex.text}\n  cleaning up`;
			// Each rule against its own table: the specific rules alone, or the generic ones alone (in the
			// combined table a generic CI verdict decides a line first, e.g. make's "*** … Error 2").
			const own = NOTABLE_RULES.find((r) => r.id === ex.rule);
			const scan = scanNotable(text, { evaluation: { rules: (r) => !own || isTableRule(r) === isTableRule(own) } });
			const hit = found(scan.lines, 2);
			expect(hit?.rule).toBe(ex.rule);
			const rule = NOTABLE_RULES.find((r) => r.id === ex.rule);
			expect(hit?.kind).toBe(rule?.kind);
			if (ex.failing !== undefined) expect(hit?.failing).toBe(ex.failing);
			expect(hit?.text).toBe(cleanLogLine(ex.text));
		});
	}

	it("has a real line for every rule of the table, and no example of a rule that is gone (drift)", () => {
		const ids = NOTABLE_RULES.map((r) => r.id);
		expect(new Set(ids).size).toBe(ids.length);
		const covered = new Set(REAL.map((e) => e.rule));
		expect(ids.filter((id) => !covered.has(id))).toEqual([]);
		expect([...covered].filter((id) => !ids.includes(id))).toEqual([]);
	});

	it("names each rule <ecosystem>.<what> with lower-case keys that its real lines hold", () => {
		for (const rule of NOTABLE_RULES) {
			expect(rule.id).toMatch(/^[a-z][\w-]*\.[a-z][\w-]*$/);
			expect(rule.keys.length).toBeGreaterThan(0);
			for (const k of rule.keys) expect(k).toBe(k.toLowerCase());
		}
		for (const ex of REAL) {
			const rule = NOTABLE_RULES.find((r) => r.id === ex.rule);
			const line = cleanLogLine(ex.text).toLowerCase();
			expect(
				rule?.keys.some((k) => line.includes(k)),
				ex.rule,
			).toBe(true);
		}
		expect(NOTABLE_KEYS.length).toBeGreaterThan(20);
	});
});

describe("without crying wolf", () => {
	for (const d of DECOYS) {
		it(`does not promote ${JSON.stringify(d.text.slice(0, 70))} (${d.from})`, () => {
			const scan = scanNotable(d.text);
			expect(scan.failures).toBe(0);
			expect(scan.lines.filter((l) => l.kind === "failure" || l.failing)).toEqual([]);
		});
	}

	it("folds identical lines into one with a count, and counts every one", () => {
		const line = "npm ERR! code ELIFECYCLE";
		const text = ["start", line, "x", line, "y", line].join("\n");
		const scan = scanNotable(text);
		const hits = scan.lines.filter((l) => l.rule === "npm.error" && l.kind === "failure");
		expect(hits).toEqual([expect.objectContaining({ line: 2, count: 3 })]);
		expect(scan.failures).toBe(3);
		expect(scan.dropped).toBe(0);
	});

	it("drops weak noise in a run whose summary says it passed, and keeps it in one that failed", () => {
		const noise = ["Error: connect ECONNREFUSED 127.0.0.1:6379 (retrying)", "error: cache miss for key build-42"];
		const passed = scanNotable([...noise, "Tests:       16 passed, 16 total"].join("\n"));
		expect(passed.lines.map((l) => l.kind)).toEqual(["summary"]);
		expect(passed.lines[0].failing).toBe(false);
		expect(passed.dropped).toBe(2);
		const failed = scanNotable([...noise, "Tests:       1 failed, 15 passed, 16 total"].join("\n"));
		expect(failed.lines.map((l) => l.line)).toEqual([1, 2, 3]);
	});

	it("ranks a runner's verdict above earlier noise when the cap is tight", () => {
		const lines = [
			...Array.from({ length: 30 }, (_, i) => `[ERROR] Failed to fetch mirror ${i}`),
			"--- FAIL: TestParse (0.00s)",
			"FAIL\texample.com/parse\t0.012s",
		];
		const scan = scanNotable(lines.join("\n"), { maxLines: 3 });
		expect(scan.lines.map((l) => l.line)).toEqual(expect.arrayContaining([31, 32]));
		expect(scan.lines.length).toBeLessThanOrEqual(3);
	});

	it("always keeps the last summary lines under a cap (how the run ended), and failures from both ends", () => {
		const lines = [
			...Array.from({ length: 50 }, (_, i) => `--- FAIL: TestCase${i} (0.00s)`),
			"=================== 19 failed, 3 passed in 1.20s ===================",
			"=================== 19 passed in 1.10s ===================",
		];
		const scan = scanNotable(lines.join("\n"), { maxLines: 5 });
		// The first failures and the latest ones, alternately (the failure that ended a run is often its last).
		expect(scan.lines.map((l) => l.line)).toEqual([1, 2, 50, 51, 52]);
		expect(scan.dropped).toBe(47);
		// The scan as it was kept the first ones only.
		const before = scanNotable(lines.join("\n"), { maxLines: 5, evaluation: { rules: isTableRule, steps: false } });
		expect(before.lines.map((l) => l.line)).toEqual([1, 2, 3, 51, 52]);
	});
});

describe("context that carries the message", () => {
	it("keeps the pytest E lines with their location and the frames under a Go test failure", () => {
		const text = [
			"    def test_answer():",
			">       assert inc(3) == 5",
			"E       assert 4 == 5",
			"E        +  where 4 = inc(3)",
			"",
			"test_sample.py:6: AssertionError",
			"--- FAIL: TestFailWithStdoutAndTestOutput (0.00s)",
			"    stdout_test.go:13: multi",
			"        line output",
			"ok  \tpackage/other\t0.001s",
		].join("\n");
		const scan = scanNotable(text);
		const byLine = new Map(scan.lines.map((l) => [l.line, l]));
		expect(byLine.get(3)?.kind).toBe("failure");
		expect(byLine.get(4)).toMatchObject({ kind: "context", of: 3 });
		expect(byLine.get(6)).toMatchObject({ kind: "context", of: 3 });
		expect(byLine.get(7)).toMatchObject({ kind: "failure", rule: "go.fail-test" });
		expect(byLine.get(8)).toMatchObject({ kind: "context", of: 7 });
		expect(byLine.has(10)).toBe(false);
	});

	it("keeps the last frames above a Python exception line", () => {
		const text = [
			"Traceback (most recent call last):",
			'  File "run.py", line 3, in <module>',
			"    main()",
			"ValueError: bad input",
		].join("\n");
		const scan = scanNotable(text);
		expect(scan.lines.map((l) => [l.line, l.kind])).toEqual([
			[1, "failure"],
			[2, "context"],
			[3, "context"],
			[4, "failure"],
		]);
	});
});

describe("line numbers as Pi's read counts them", () => {
	it("counts lines split on \\n only; a CRLF line's \\r is not shown", () => {
		const text = "one\r\ntwo\r\n--- FAIL: TestX (0.00s)\r\nfour\r\n";
		const scan = scanNotable(text);
		expect(scan.lines).toEqual([expect.objectContaining({ line: 3, text: "--- FAIL: TestX (0.00s)" })]);
		expect(text.split("\n")[scan.lines[0].line - 1]).toBe("--- FAIL: TestX (0.00s)\r");
	});

	it("finds a hit on the last line with and without a trailing newline, and nothing in empty text", () => {
		expect(scanNotable("a\nb\n--- FAIL: TestX (0.00s)").lines[0]?.line).toBe(3);
		expect(scanNotable("a\nb\n--- FAIL: TestX (0.00s)\n").lines[0]?.line).toBe(3);
		expect(scanNotable("--- FAIL: TestX (0.00s)").lines[0]?.line).toBe(1);
		expect(scanNotable("")).toEqual({ lines: [], failures: 0, summaries: 0, dropped: 0 });
		expect(scanNotable("\n\n\n").lines).toEqual([]);
	});

	it("clips a giant single line to maxLineChars on a character boundary", () => {
		const text = `panic: ${"é😀".repeat(1_000_000)}`;
		const scan = scanNotable(text, { maxLineChars: 101 });
		expect(scan.lines).toHaveLength(1);
		const shown = scan.lines[0].text;
		expect(shown.length).toBeLessThanOrEqual(101);
		expect(shown.endsWith("…")).toBe(true);
		expect(toWellFormed(shown)).toBe(shown);
		expect(text.startsWith(shown.slice(0, -1))).toBe(true);
	});

	it("shows a lone surrogate as U+FFFD, as the artifact stores it", () => {
		const scan = scanNotable("ok\n--- FAIL: Test\uD800Broken (0.00s)\nok");
		expect(scan.lines[0]).toMatchObject({ line: 2, text: "--- FAIL: Test\uFFFDBroken (0.00s)" });
	});

	it("numbers lines after ANSI colours and CI timestamps by the original text", () => {
		const text = [
			"2024-07-12T17:22:03.2170016Z setup",
			"2024-07-12T17:22:03.2170017Z \u001b[31mFAILED\u001b[0m tests/test_io.py::test_read - OSError",
		].join("\n");
		expect(scanNotable(text).lines[0]).toMatchObject({
			line: 2,
			rule: "pytest.failed",
			text: "FAILED tests/test_io.py::test_read - OSError",
		});
	});

	it("counts the line after a bare ESC at a line's end, and keeps its hit", () => {
		const lines = scanNotable("ok\n\u001b\nerror: boom\nnext\nerror: two").lines;
		// "next" is the block under the first error (its context).
		expect(lines.map((l) => [l.line, l.text])).toEqual([
			[3, "error: boom"],
			[4, "next"],
			[5, "error: two"],
		]);
	});

	it("refuses a non-string with a clear error", () => {
		expect(() => scanNotable(42 as unknown as string)).toThrow(/text must be a string/);
	});
});

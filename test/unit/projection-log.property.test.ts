/**
 * Properties of projectLog's layout (issue 32, how the stub spends its bytes): whatever the log and the
 * limits, the view never exceeds its surface's bytes and lines; every line number shown names the line it
 * shows; the tail keeps the log's last line; no line is shown twice (a notable line the head or the tail
 * shows whole is not listed again, unless it stands for folded repeats); and a log whose scan found failures
 * gives its notable section more of the view than a log that only has summaries. A view that may grow when its
 * failing section overflows stays within the limits plus the growth, grows only then, lists more lines when it
 * does, and keeps the log's first and last lines in its head and tail.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { logScanLines, projectLog } from "../../extensions/shared/projection/log.ts";
import { project } from "../../extensions/shared/projection/projection.ts";
import { cleanLogLine, NOTABLE_KEYS, scanNotable } from "../../extensions/shared/text/notable.ts";
import { toWellFormed, utf8ByteLength } from "../../extensions/shared/text/utf8.ts";

const PATH =
	"/home/u/.pi/agent/cache/headroom/artifacts/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.txt";
const STORED = { ok: true as const, path: PATH, sha256: "0".repeat(64) };

/** Failure lines of several ecosystems (real wordings, see notable.test.ts), some long. */
const FAILURES = [
	"--- FAIL: TestRace (0.00s)",
	"FAILED tests/test_io.py::test_read_header - AssertionError: assert 3 == 4",
	"src/main.c:12:5: error: 'undeclared' undeclared (first use in this function)",
	"npm ERR! code ELIFECYCLE",
	`FAILED [0.0103s] inductor/test_triton_kernels.py::KernelTests::test_${"x".repeat(300)} - TypeError: no`,
	"##[error]Process completed with exit code 1.",
	"    header_test.go:41: got 3 fields, want 4",
];
const SUMMARIES = ["test result: ok. 3 passed; 0 failed; 0 ignored", "Tests:       9 passed, 9 total"];

/** A line that holds no key of any rule (so it can never be notable). */
const plainLine = fc
	.string({ unit: fc.constantFrom(..."abcdhjkmoqwyz 0123456789./-_😀é\t"), maxLength: 90 })
	.filter((s) => NOTABLE_KEYS.every((k) => !s.toLowerCase().includes(k)));
const logLines = (notable: readonly string[]) =>
	fc.array(fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...notable) }, { weight: 6, arbitrary: plainLine }), {
		minLength: 1,
		maxLength: 1500,
		size: "max",
	});
/** Limits of a stub's excerpt: what a command stub's header and footer leave, and smaller and larger ones. */
const limits = fc.record({
	maxBytes: fc.integer({ min: 1200, max: 9000 }),
	maxLines: fc.integer({ min: 12, max: 200 }),
});

/** The lines the head and the tail show whole: 1..head and tail..total. */
function wholeLines(view: { head: string; tail: string; totalLines: number }): { head: number; tail: number } {
	const newlines = (s: string) => s.split("\n").length - 1;
	// The tail's first line may be cut: only the lines after its first newline are surely whole.
	return { head: newlines(view.head), tail: view.totalLines - newlines(view.tail) + 1 };
}

describe("projectLog layout properties", () => {
	it("fits the limits, numbers each line right, keeps the last line, and shows no line twice", () => {
		let laid = 0;
		fc.assert(
			fc.property(logLines([...FAILURES, ...SUMMARIES]), limits, fc.boolean(), (lines, lim, saved) => {
				const text = lines.join("\n");
				const options = { ...lim, stored: saved ? STORED : undefined };
				const view = projectLog(text, "toolArtifacts.stub.command", options);
				const plain = project(text, "toolArtifacts.stub.command", options);
				expect(utf8ByteLength(view.text)).toBeLessThanOrEqual(plain.maxBytes);
				expect(view.text.split("\n").length).toBeLessThanOrEqual(plain.maxLines);
				if (!plain.truncated) return;
				// The tail keeps the last line (cut only when it alone is longer than the tail's room).
				if (utf8ByteLength(lines[lines.length - 1]) < 200)
					expect(view.tail.endsWith(lines[lines.length - 1])).toBe(true);
				if (view.notable.length === 0) return;
				laid++;
				const whole = wholeLines(view);
				const listed = new Set<number>();
				for (const l of view.notable) {
					expect(listed.has(l.line)).toBe(false);
					listed.add(l.line);
					expect(toWellFormed(cleanLogLine(lines[l.line - 1])).startsWith(l.text.replace(/…$/, ""))).toBe(true);
					if (l.count === 1) {
						expect(l.line > whole.head, `L${l.line} is in the head`).toBe(true);
						expect(l.line < whole.tail, `L${l.line} is in the tail`).toBe(true);
					}
				}
				if (!saved) return;
				for (const m of view.text.matchAll(/^L(\d+): (.*)$/gm)) {
					const shown = m[2].replace(/ \(×[\d,]+\)$/, "").replace(/…$/, "");
					expect(toWellFormed(cleanLogLine(lines[Number(m[1]) - 1])).startsWith(shown)).toBe(true);
				}
				expect(view.text.match(/^L\d+: /gm)?.length ?? 0).toBe(view.notable.length);
			}),
			{ numRuns: 120 },
		);
		expect(laid).toBeGreaterThan(20); // the notable layout itself was exercised
	});

	it("gives the notable section of a failing log more room than one of a log that only has summaries", () => {
		fc.assert(
			fc.property(fc.integer({ min: 60, max: 200 }), fc.integer({ min: 0, max: 999 }), (count, seed) => {
				// The same log shape, many distinct notable lines: failures in one, passing summaries in the other.
				const of = (word: string) =>
					Array.from({ length: 3000 }, (_, i) =>
						i % Math.floor(3000 / count) === 0 ? `${word} ${seed}-${i}` : `step ${i} of the build`,
					).join("\n");
				const sectionBytes = (text: string) => {
					const view = projectLog(text, "toolArtifacts.stub.command", { stored: STORED });
					expect(view.notable.length).toBeGreaterThan(0);
					return utf8ByteLength(view.text) - utf8ByteLength(view.head) - utf8ByteLength(view.tail);
				};
				expect(sectionBytes(of("--- FAIL: TestCase"))).toBeGreaterThan(
					sectionBytes(of("Tests: 9 passed, 9 total; run")),
				);
			}),
			{ numRuns: 20 },
		);
	});

	it("grows only when a failing log's section overflows: within the growth, more lines, head and tail kept", () => {
		let grew = 0;
		let kept = 0;
		fc.assert(
			fc.property(
				logLines([...FAILURES, ...FAILURES.map((f) => `${f} #2`), ...SUMMARIES]),
				limits,
				fc.record({ maxBytes: fc.integer({ min: 0, max: 2048 }), maxLines: fc.integer({ min: 0, max: 24 }) }),
				(lines, lim, grow) => {
					const text = lines.join("\n");
					const options = { ...lim, stored: STORED };
					const scanLines = logScanLines(text, "toolArtifacts.stub.command", { ...options, grow });
					if (scanLines === undefined) return;
					const scan = scanNotable(text, { maxLines: scanLines });
					const normal = projectLog(text, "toolArtifacts.stub.command", { ...options, scan });
					const view = projectLog(text, "toolArtifacts.stub.command", { ...options, scan, grow });
					const plain = project(text, "toolArtifacts.stub.command", options);
					if (view.text === normal.text) {
						// Not grown: the view without growth (its limits are the first property's).
						kept++;
						return;
					}
					grew++;
					// It grew: the scan found failures, the section at the surface's limits left some out.
					expect(scan.lines.some((l) => l.kind !== "summary" || l.failing)).toBe(true);
					expect(normal.notableOmitted).toBeGreaterThan(0);
					expect(view.notable.length).toBeGreaterThan(normal.notable.length);
					expect(utf8ByteLength(view.text)).toBeLessThanOrEqual(plain.maxBytes + grow.maxBytes);
					expect(view.text.split("\n").length).toBeLessThanOrEqual(plain.maxLines + grow.maxLines);
					// Head and tail are still there, with the log's first and last lines.
					expect(view.truncated).toBe(true);
					if (normal.head.startsWith(lines[0])) expect(view.head.startsWith(lines[0])).toBe(true);
					if (normal.tail.endsWith(lines[lines.length - 1])) {
						expect(view.tail.endsWith(lines[lines.length - 1])).toBe(true);
					}
					expect(utf8ByteLength(view.head) + utf8ByteLength(view.tail)).toBeGreaterThan(0);
				},
			),
			{ numRuns: 150 },
		);
		expect(grew).toBeGreaterThan(5);
		expect(kept).toBeGreaterThan(5);
	});

	it("does not grow by lines alone at the cost of the head's first line (a case random runs found)", () => {
		const first = `FAILED [0.0103s] inductor/test_triton_kernels.py::KernelTests::test_${"x".repeat(300)} - TypeError: no`;
		const race = "--- FAIL: TestRace (0.00s)";
		const lines = [
			first,
			race,
			"",
			"",
			"",
			"",
			"test result: ok. 3 passed; 0 failed; 0 ignored",
			"",
			race,
			"",
			"",
			race,
			"",
			race,
		];
		const text = lines.join("\n");
		const options = { maxBytes: 2379, maxLines: 13, stored: STORED };
		const grow = { maxBytes: 0, maxLines: 2 };
		const scanLines = logScanLines(text, "toolArtifacts.stub.command", { ...options, grow });
		expect(scanLines).toBeDefined();
		const scan = scanNotable(text, { maxLines: scanLines ?? 0 });
		const normal = projectLog(text, "toolArtifacts.stub.command", { ...options, scan });
		const view = projectLog(text, "toolArtifacts.stub.command", { ...options, scan, grow });
		expect(normal.head.startsWith(first)).toBe(true);
		expect(view.head.startsWith(first)).toBe(true);
	});
});

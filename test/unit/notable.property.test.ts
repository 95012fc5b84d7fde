/**
 * Properties of the notable-line scan and of projectLog, the view that lays a log's notable lines out first:
 * line numbers and texts match the input's lines as Pi's read counts them, output is bounded, inserting
 * lines that hold no key shifts numbers exactly, a text without failure keys claims no failure, and a log's
 * view stays within its surface with every listed line number right.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { projectLog } from "../../extensions/shared/projection/log.ts";
import { project } from "../../extensions/shared/projection/projection.ts";
import { NOTABLE_HEADING, NOTABLE_HEADING_UNSAVED } from "../../extensions/shared/projection/prompt.ts";
import { SURFACE_NAMES, type SurfaceName, surface } from "../../extensions/shared/surfaces.ts";
import { cleanLogLine, NOTABLE_KEYS, type NotableLine, scanNotable } from "../../extensions/shared/text/notable.ts";
import { toWellFormed, utf8ByteLength } from "../../extensions/shared/text/utf8.ts";

const RUNS = { numRuns: 200 };

/** Real notable lines (see notable.test.ts for where they come from) and plain lines around them. */
const NOTABLE = [
	"--- FAIL: TestRace (0.00s)",
	"FAIL\tpackage/race\t0.005s",
	"2024-07-12T17:22:03.2512319Z FAILED [0.0103s] inductor/test_triton_kernels.py::KernelTests::test_x - TypeError: no",
	"================== 1 failed, 182 deselected, 2 rerun in 0.36s ==================",
	"Tests:       1 failed, 9 passed, 10 total",
	"npm ERR! code ELIFECYCLE",
	"##[error]Process completed with exit code 1.",
	"==3236==ERROR: LeakSanitizer: detected memory leaks",
	"TEST-UNEXPECTED-FAIL | leakcheck large nsGlobalWindowInner | browser/extensions/webcompat/tests/browser/browser.toml",
	"test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
	"src/main.c:12:5: error: 'undeclared' undeclared (first use in this function)",
	"Error: connect ECONNREFUSED 127.0.0.1:6379",
	"test result: ok. 3 passed; 0 failed; 0 ignored",
	"Traceback (most recent call last):",
	"ValueError: bad input",
];
const PLAIN = [
	"compiling module 3 of 12",
	"  downloading https://example.test/pkg.tgz",
	"",
	"\t\tcleanup done",
	"[task 2025-02-13T21:37:11.083Z] + local rv=1",
	"résumé 😀 ok",
	"\r",
];

/** A line that holds no key of any rule (so it can never be notable). */
const plainLine = fc
	.string({ unit: fc.constantFrom(..."abcdhjkmoqwyz 0123456789./-_😀é\t\r"), maxLength: 60 })
	.filter((s) => !s.includes("\n") && NOTABLE_KEYS.every((k) => !s.toLowerCase().includes(k)));
const logLine = fc.oneof(
	{ weight: 1, arbitrary: fc.constantFrom(...NOTABLE) },
	{ weight: 3, arbitrary: fc.constantFrom(...PLAIN) },
	{ weight: 2, arbitrary: plainLine },
);
const logLines = fc.array(logLine, { maxLength: 80, size: "medium" });

describe("scanNotable properties", () => {
	it("reports each line at its number with its cleaned text, in line order, within the caps", () => {
		fc.assert(
			fc.property(logLines, fc.integer({ min: 0, max: 30 }), fc.integer({ min: 2, max: 200 }), (lines, cap, chars) => {
				const text = lines.join("\n");
				const scan = scanNotable(text, { maxLines: cap, maxLineChars: chars });
				expect(scan.lines.length).toBeLessThanOrEqual(cap);
				let previous = 0;
				for (const l of scan.lines) {
					expect(l.line).toBeGreaterThan(previous);
					previous = l.line;
					const input = text.split("\n")[l.line - 1];
					expect(input).toBeDefined();
					const clean = toWellFormed(cleanLogLine(input));
					expect(l.text.length).toBeLessThanOrEqual(chars);
					if (l.text.endsWith("…") && clean !== l.text) expect(clean.startsWith(l.text.slice(0, -1))).toBe(true);
					else expect(l.text).toBe(clean);
					expect(l.count).toBeGreaterThanOrEqual(1);
				}
				expect(scan.dropped).toBeGreaterThanOrEqual(0);
				const represented = scan.lines.filter((l) => l.kind !== "context").reduce((a, l) => a + l.count, 0);
				expect(represented + scan.dropped).toBe(scan.failures + scan.summaries);
			}),
			RUNS,
		);
	});

	it("shifts every number by exactly the count of plain lines inserted before the text", () => {
		fc.assert(
			fc.property(logLines, fc.array(plainLine, { minLength: 1, maxLength: 20 }), (lines, inserted) => {
				const before = scanNotable(lines.join("\n"));
				const after = scanNotable([...inserted, ...lines].join("\n"));
				// An inserted line may only ever be context (a frame above an exception), never a hit.
				const moved = after.lines.filter((l) => l.line > inserted.length);
				expect(after.lines.filter((l) => l.line <= inserted.length).every((l) => l.kind === "context")).toBe(true);
				const shape = (l: NotableLine, by: number) => ({
					line: l.line - by,
					text: l.text,
					rule: l.rule,
					kind: l.kind,
					count: l.count,
					of: l.of === undefined ? undefined : l.of - by,
				});
				expect(moved.map((l) => shape(l, inserted.length))).toEqual(before.lines.map((l) => shape(l, 0)));
				expect(after.failures).toBe(before.failures);
			}),
			RUNS,
		);
	});

	it("claims no failure and no line on a text that holds no key", () => {
		fc.assert(
			fc.property(fc.array(plainLine, { maxLength: 50 }), (lines) => {
				const scan = scanNotable(lines.join("\n"));
				expect(scan).toEqual({ lines: [], failures: 0, summaries: 0, dropped: 0 });
			}),
			RUNS,
		);
	});

	it("gives the same answer for the same text, any newline style inside a line aside", () => {
		fc.assert(
			fc.property(logLines, (lines) => {
				const text = lines.join("\n");
				expect(scanNotable(text)).toEqual(scanNotable(`${text}`));
				const crlf = scanNotable(lines.map((l) => `${l}\r`).join("\n"));
				expect(crlf.lines.map((l) => l.line)).toEqual(scanNotable(text).lines.map((l) => l.line));
			}),
			{ numRuns: 100 },
		);
	});
});

/** Surfaces a log can be shortened on (not a clipped one). */
const LOG_SURFACES = SURFACE_NAMES.filter((name) => !surface(name).clip) as SurfaceName[];
const PATH =
	"/home/u/.pi/agent/cache/headroom/artifacts/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.txt";

describe("projectLog properties", () => {
	it("fits the surface's bytes and lines, lists right line numbers, and is project() when nothing is notable", () => {
		let led = 0;
		fc.assert(
			fc.property(
				fc.array(logLine, { minLength: 0, maxLength: 400, size: "max" }),
				fc.constantFrom(...LOG_SURFACES),
				fc.option(fc.integer({ min: 1, max: 6000 }), { nil: undefined }),
				fc.boolean(),
				(lines, name, maxBytes, saved) => {
					const text = lines.join("\n");
					const stored = saved ? { ok: true as const, path: PATH, sha256: "0".repeat(64) } : undefined;
					const options = { stored, maxBytes };
					const view = projectLog(text, name, options);
					const plain = project(text, name, options);
					expect(utf8ByteLength(view.text)).toBeLessThanOrEqual(plain.maxBytes);
					expect(view.text.split("\n").length).toBeLessThanOrEqual(plain.maxLines);
					if (view.notable.length === 0) {
						expect(view.text).toBe(plain.text);
						return;
					}
					expect(plain.truncated).toBe(true);
					led++;
					const heading = stored ? NOTABLE_HEADING : NOTABLE_HEADING_UNSAVED;
					expect(view.text.startsWith(`${heading}\n`)).toBe(true);
					const all = text.split("\n");
					for (const m of view.text.matchAll(/^L(\d+): (.*)$/gm)) {
						const n = Number(m[1]);
						const shown = m[2].replace(/ \(×[\d,]+\)$/, "").replace(/…$/, "");
						expect(toWellFormed(cleanLogLine(all[n - 1])).startsWith(shown)).toBe(true);
					}
				},
			),
			{ numRuns: 150 },
		);
		expect(led).toBeGreaterThan(10); // the notable layout itself was exercised, not only project()'s
	});
});

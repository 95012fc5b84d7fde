/**
 * cleanLogLine's fast paths (issue 32 item 4: the CI prefix ruled out from a line's first characters, one
 * search for "\r") return exactly what the cleaning did before them, kept below as the reference: on every line
 * of the real-log corpus and on random lines made of CI prefixes, their near misses, white space of every kind
 * JavaScript's `\s` knows, ANSI sequences and carriage returns.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cleanLogLine } from "../../extensions/shared/text/notable.ts";
import { loadRealLogs } from "../fixtures/real-logs.ts";

// The reference: cleanLogLine before the fast paths, verbatim.
const ANSI = /\u001b(\[[0-9;?]*[ -/]*[@-~]|\][^\u0007\u001b]*(\u0007|\u001b\\)|[@-Z\\-_])/g;
const CI_PREFIX =
	/^(\uFEFF)?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z? ?|\[(task|taskcluster|vcs|setup|fetches) [^\]]*\] ?)*(\[\d+\] )?(\d\d:\d\d:\d\d(\.\d+)?\s+(INFO|WARNING|ERROR|CRITICAL|DEBUG|FATAL) - )?(\s*(PID \d+|GECKO\(\d+\)) \| )?/;
const PREFIX_START = /^[\uFEFF\d[\s]|^(PID|GECKO)/;
function referenceClean(raw: string): string {
	let s = raw.indexOf("\u001b") === -1 ? raw : raw.replace(ANSI, "");
	if (s.endsWith("\r")) s = s.slice(0, -1);
	if (s.indexOf("\r") !== -1) s = shownAfterReturn(s);
	if (!PREFIX_START.test(s)) return s;
	const m = CI_PREFIX.exec(s);
	return m && m[0].length > 0 ? s.slice(m[0].length) : s;
}
function shownAfterReturn(s: string): string {
	const shown = s.replace(/\r+$/, "");
	const at = shown.lastIndexOf("\r");
	return at !== -1 && shown.slice(at + 1).trim() !== "" ? shown.slice(at + 1) : shown;
}

/** Every character JavaScript's `\s` matches, and a few that look like it and are not. */
const SPACES = [
	..."\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff",
];
const NOT_SPACES = ["\u0085", "\u180e", "\u200b", "\u0008", "\u001f", "\u007f", "\u00ad"];

/** Pieces a line is made of: prefixes, their near misses, white space, escapes, returns, text. */
const piece = fc.oneof(
	{
		weight: 4,
		arbitrary: fc.constantFrom(
			"2024-01-02T03:04:05.123Z ",
			"2024-01-02T03:04:05Z",
			"2024-01-02T03:04:05",
			"2024-01-02 03:04:05 ",
			"2024-",
			"[task 2024-01-02T03:04:05.678Z] ",
			"[taskcluster 2024] ",
			"[vcs x]",
			"[setup 1] ",
			"[fetches a] ",
			"[tasks x] ",
			"[12] ",
			"[12]",
			"[x] ",
			"12:00:01     INFO - ",
			"12:00:01.5 ERROR - ",
			"12:00:01 NOTE - ",
			"12:0",
			"PID 12 | ",
			"PID x | ",
			"GECKO(1234) | ",
			"GECKO( | ",
			"PIDGIN ",
			"Gradle ",
			"P",
			"G",
			"-",
			":",
			"T",
			"Z",
			" ",
			"  ",
		),
	},
	{ weight: 3, arbitrary: fc.constantFrom(...SPACES, ...NOT_SPACES) },
	{ weight: 2, arbitrary: fc.constantFrom("0", "1", "12", "2024", "9", "[", "]", "|", "(", ")", ".") },
	{
		weight: 2,
		arbitrary: fc.constantFrom("\u001b[31m", "\u001b[0m", "\u001b", "\u001b]0;t\u0007", "\r", "\r\r", "\r\n"),
	},
	{ weight: 2, arbitrary: fc.constantFrom("FAILED test_x", "error: no", "ok", "é", "中文", "\uD83D\uDE00", "\uD83D") },
	{ weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }) },
);
const line = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(""));

describe("cleanLogLine (property)", () => {
	it("cleans every line of the real-log corpus as before its fast paths", () => {
		let lines = 0;
		for (const log of loadRealLogs()) {
			for (const raw of log.text.split("\n")) {
				lines++;
				if (cleanLogLine(raw) !== referenceClean(raw)) expect(cleanLogLine(raw)).toBe(referenceClean(raw));
			}
		}
		expect(lines).toBeGreaterThan(10_000);
	});

	it("cleans random lines of prefixes, near misses, white space, escapes and returns as before", () => {
		fc.assert(
			fc.property(line, (raw) => {
				expect(cleanLogLine(raw)).toBe(referenceClean(raw));
			}),
			{ numRuns: 20_000 },
		);
	});

	it("takes each kind of prefix off (the reference agrees)", () => {
		const cases: [string, string][] = [
			["2024-01-02T03:04:05.1234567Z FAILED x", "FAILED x"],
			["[task 2024-01-02T03:04:05.678Z] 12:00:01     INFO - error: y", "error: y"],
			["[12] error", "error"],
			["  \u00a0PID 12 | Assertion failed", "Assertion failed"],
			["\uFEFFGECKO(7) | crash", "crash"],
			["   plain indented", "   plain indented"],
			["12 failed, 3 passed", "12 failed, 3 passed"],
			["[x] ok\r", "[x] ok"],
		];
		for (const [raw, clean] of cases) {
			expect(cleanLogLine(raw)).toBe(clean);
			expect(referenceClean(raw)).toBe(clean);
		}
	});
});

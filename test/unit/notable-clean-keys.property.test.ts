/**
 * A cleaned line holds no key its raw window does not, when the window has no ANSI escape (the scan then takes a
 * carried context line whose raw window holds no key as keyless without searching its cleaned text, issue 32
 * item 4), and the same keys when cleaning took out one unit only (a CRLF line's "\r"): cleaning such a line only cuts a piece out of it (a CI prefix, a trailing "\r", what a carriage
 * return overwrote), and the key search matches words anywhere. Checked on every corpus line and on random lines
 * made of CI prefixes, carriage returns and key words.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cleanLogLine, NOTABLE_KEYS } from "../../extensions/shared/text/notable.ts";
import { buildWordAutomaton } from "../../extensions/shared/text/word-automaton.ts";
import { loadRealLogs } from "../fixtures/real-logs.ts";

const KEYS = buildWordAutomaton(NOTABLE_KEYS);

/**
 * Whether every key of cleanLogLine(raw) is a key of raw, and when cleaning took out one unit only (a CRLF line's
 * "\r", a BOM: the scan then takes the raw window's keys as the cleaned text's), whether they are the same keys.
 */
function keysKept(raw: string): boolean {
	const own = new Set(KEYS.indicesIn(raw));
	const clean = cleanLogLine(raw);
	const kept = KEYS.indicesIn(clean);
	if (!kept.every((k) => own.has(k))) return false;
	return raw.length - clean.length !== 1 || kept.length === own.size;
}

const piece = fc.oneof(
	fc.constantFrom(
		"2024-01-02T10:11:12.1234567Z ",
		"[task 2024-01-02T10:11:12.123Z] ",
		"[vcs x] ",
		"10:11:12     INFO - ",
		" PID 12 | ",
		"GECKO(3) | ",
		"\uFEFF",
		"\r",
		"\r\r",
		" ",
		"\t",
		"\u00a0",
	),
	fc.constantFrom(...NOTABLE_KEYS.slice(0, 60)),
	fc.string({ maxLength: 6 }).map((s) => s.replace(/[\n\u001b]/g, "")),
);

describe("cleaned line keys (property)", () => {
	it("holds on every line of the corpus without an escape", () => {
		let lines = 0;
		for (const log of loadRealLogs()) {
			for (const line of log.text.split("\n")) {
				const raw = line.slice(0, 1024);
				if (raw.includes("\u001b")) continue;
				lines++;
				if (!keysKept(raw)) expect(raw).toBe("a line whose cleaned text holds a new key");
			}
		}
		expect(lines).toBeGreaterThan(10000);
	});

	it("holds on random lines of CI prefixes, carriage returns and keys", () => {
		fc.assert(
			fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
				expect(keysKept(pieces.join(""))).toBe(true);
			}),
			{ numRuns: 3000 },
		);
	});
});

/**
 * The scan's cache of the rules' decisions (DecisionCache, issue 32 item 4) answers exactly what decideLine does,
 * whatever the order of the lines asked: lines of the real-log corpus that hold a key, repeated, and near copies
 * of them (one unit changed where the slot's fingerprint does not look, so they share a slot with the line they
 * copy), with their keys or other keys, under every rule and under the table's rules alone, records read or not,
 * in caches of several sizes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	cleanLogLine,
	DecisionCache,
	decideLine,
	isTableRule,
	jsonMessage,
	lineFingerprint,
	NOTABLE_KEYS,
	NOTABLE_RULES,
} from "../../extensions/shared/text/notable.ts";
import { buildWordAutomaton } from "../../extensions/shared/text/word-automaton.ts";
import { loadRealLogs } from "../fixtures/real-logs.ts";

const KEYS = buildWordAutomaton(NOTABLE_KEYS);

/** Every cleaned corpus line that holds a key (the lines a scan asks the rules about), once each. */
const keyLines = [
	...new Set(
		loadRealLogs().flatMap((log) =>
			log.text
				.split("\n")
				.map((raw) => cleanLogLine(raw.slice(0, 1024)))
				.filter((clean) => KEYS.indicesIn(clean).length > 0),
		),
	),
];

/**
 * `s` with its unit at `at` (modulo its length) changed (`changed`), unless the fingerprint reads that unit (the length, the
 * last unit and those at the half and the quarters): a copy that shares its slot with `s`, or `s` itself.
 */
const nearCopy = (s: string, at: number): string => {
	const n = s.length;
	const i = n === 0 ? 0 : at % n;
	if (n === 0 || i === n - 1 || i === n >> 1 || i === n >> 2 || i === n - 1 - (n >> 2)) return s;
	return `${s.slice(0, i)}${changed(s[i])}${s.slice(i + 1)}`;
};

/** Another unit for `c` that keeps the line's keys where it can (case-insensitive) but may change its decision. */
const changed = (c: string): string => {
	if (c >= "0" && c <= "9") return c === "0" ? "1" : "0"; // "0 failed" / "1 failed"
	if (c.toUpperCase() !== c) return c.toUpperCase(); // "fail" / "fAil"
	if (c.toLowerCase() !== c) return c.toLowerCase();
	return c === " " ? "x" : " ";
};

/** A few lines of the corpus per run (so that lines, their repeats and their near copies meet in slots). */
const pool = fc.uniqueArray(fc.nat({ max: keyLines.length - 1 }), { minLength: 1, maxLength: 6 });

const ask = fc.record({
	at: fc.nat({ max: 5 }),
	near: fc.option(fc.nat({ max: 1024 })),
	otherKeys: fc.option(fc.uniqueArray(fc.nat({ max: NOTABLE_KEYS.length - 1 }), { minLength: 1, maxLength: 4 })),
});

describe("DecisionCache (property)", () => {
	it("has corpus lines to ask about", () => {
		expect(keyLines.length).toBeGreaterThan(1000);
	});

	it("decides as decideLine does, for any sequence of lines, repeats and near copies", () => {
		const masks = [
			new Uint8Array(NOTABLE_RULES.length).fill(1),
			Uint8Array.from(NOTABLE_RULES, (rule) => (isTableRule(rule) ? 1 : 0)),
		];
		fc.assert(
			fc.property(
				pool,
				fc.array(ask, { minLength: 1, maxLength: 100 }),
				fc.nat({ max: 1 }),
				fc.boolean(),
				fc.constantFrom(0, 40_000, 1 << 20), // 16, 64 and 1024 slots
				(lines, asks, mask, records, units) => {
					const cache = new DecisionCache(masks[mask], records, units);
					for (const a of asks) {
						// A fresh string object each time, as the scan slices each line anew.
						const base = keyLines[lines[a.at % lines.length]];
						const clean = a.near === null ? `#${base}`.slice(1) : nearCopy(base, a.near);
						const keys = a.otherKeys ?? KEYS.indicesIn(clean);
						const rule = decideLine(clean, keys, masks[mask], records);
						// Asked as a rule or as its index (what decidePart records), alternately: one cache, one answer.
						if (a.at % 2 === 0) expect(cache.decide(clean, keys)).toBe(rule ?? null);
						else expect(cache.decideIndex(clean, keys)).toBe(rule ? NOTABLE_RULES.indexOf(rule) : -1);
					}
				},
			),
			{ numRuns: 300 },
		);
	});

	it("reads a JSON-lines record's message as the full table would (only a strong failure is taken from it)", () => {
		const masks = [
			new Uint8Array(NOTABLE_RULES.length).fill(1),
			Uint8Array.from(NOTABLE_RULES, (rule) => (isTableRule(rule) ? 1 : 0)),
		];
		/** decideLine as it was: the message decided by every rule, then taken only when a strong failure. */
		const reference = (clean: string, keys: readonly number[], mask: Uint8Array) => {
			const decided = decideLine(clean, keys, mask, false);
			if ((decided && !decided.weak) || clean.charCodeAt(0) !== 0x7b) return decided;
			const message = jsonMessage(clean);
			if (message === undefined) return decided;
			const inner = decideLine(message, KEYS.indicesIn(message), mask, false);
			return inner && inner.kind === "failure" && !inner.weak ? inner : decided;
		};
		// Every record of the corpus, and every corpus key line as a `go test -json` record's output.
		const records = [
			...keyLines.filter((s) => s.startsWith("{")),
			...keyLines.map((s) => JSON.stringify({ Action: "output", Output: `${s}\n` })),
		];
		let strong = 0;
		for (const clean of records) {
			for (const mask of masks) {
				const keys = KEYS.indicesIn(clean);
				const want = reference(clean, keys, mask);
				expect(decideLine(clean, keys, mask, true)).toBe(want);
				if (want && want.kind === "failure" && !want.weak) strong++;
			}
		}
		expect(strong).toBeGreaterThan(100);
	});

	it("gives a near copy the slot of the line it copies (so the cache compares them)", () => {
		const long = keyLines.filter((s) => s.length >= 8).slice(0, 200);
		for (const s of long)
			for (const at of [1, 5, 99]) expect(lineFingerprint(nearCopy(s, at), 7)).toBe(lineFingerprint(s, 7));
	});
});

/**
 * Verbatim evidence beside any summary (issue 32 item 3): on the real-log corpus, each log `cat` through bash
 * is stubbed once with the summary model down (unreachable) and once with it up, answering a fixed text that
 * says nothing useful. The critical lines visible must be the same but for at most one per log that the
 * summary's own bytes push out (the figure holds within 2%); the summary never replaces the notable lines; where the scan found failures and the summary mentions none, the stub says the two disagree.
 */
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { scanNotable } from "../../extensions/shared/text/notable.ts";
import { mentionsFailure, summaryDisagrees } from "../../extensions/tool-artifacts/agreement.ts";
import { buildStub, type StubDeps, stubSurface } from "../../extensions/tool-artifacts/artifacts.ts";
import { SUMMARY_DISAGREES_NOTE, summaryLabel } from "../../extensions/tool-artifacts/prompt.ts";
import { catFacts, isStubbed, piBashResult, unreachableSummaryDeps } from "../fixtures/real-log-views.ts";
import { criticalVisible, loadRealLogs, type RealLog } from "../fixtures/real-logs.ts";
import { makeTestDir, removeQuietly } from "../fixtures/test-dirs.ts";

/** What a summary model that says nothing useful answers, every time. */
const USELESS = "The command ran and printed a long log of its progress.";
const MODEL = "mock/mock-cheap";

const dir = makeTestDir("summary-evidence");
afterAll(() => removeQuietly(dir));
const store = new ArtifactStore({ agentDir: join(dir, "agent") });
const down = unreachableSummaryDeps(store);
const up = (text: string): StubDeps => ({
	...down,
	summarize: async () => ({ ok: true, text, model: MODEL }),
});

interface Pair {
	log: RealLog;
	down: string;
	up: string;
	limits: { maxBytes: number; maxLines: number };
}
const pairs: Pair[] = [];

beforeAll(async () => {
	for (const log of loadRealLogs()) {
		const pi = piBashResult(log.text, dir);
		if (!isStubbed(pi, down)) continue;
		const fact = catFacts(log.file, pi);
		const a = await buildStub(fact, pi.text, down);
		const b = await buildStub(fact, pi.text, up(USELESS));
		if ("notStored" in a || "notStored" in b) throw new Error(`${log.id}: not stored`);
		pairs.push({ log, down: a.text, up: b.text, limits: stubSurface(b.kind, down.config) });
	}
}, 300_000);

describe("the summary never replaces the verbatim lines (real-log corpus)", () => {
	it("critical lines visible with the summary model up are those shown down, less at most one per log", () => {
		// The summary's bytes come out of the same stub: a log whose notable section overflows may lose its
		// last-ranked line to them, never one the summary pushes out of order, and the figure holds.
		expect(pairs.length).toBeGreaterThan(20);
		let visibleDown = 0;
		let visibleUp = 0;
		for (const p of pairs) {
			const a = criticalVisible(p.down, p.log).visible.map((m) => m.line);
			const b = criticalVisible(p.up, p.log).visible.map((m) => m.line);
			visibleDown += a.length;
			visibleUp += b.length;
			for (const line of b) expect(a, `${p.log.id}: L${line} is shown up, not down`).toContain(line);
			expect(a.length - b.length, p.log.id).toBeLessThanOrEqual(1);
		}
		expect(visibleUp).toBeGreaterThanOrEqual(visibleDown * 0.98);
	});

	it("with the model up the stub carries its summary after the notable lines, within the same surface", () => {
		for (const p of pairs) {
			expect(p.up, p.log.id).toContain(`${summaryLabel(MODEL)}\n${USELESS}`);
			const notable = p.up.indexOf("Notable lines (L<n> is line n of the full text");
			if (p.down.includes("Notable lines (L<n>")) {
				expect(notable, p.log.id).toBeGreaterThan(0);
				expect(notable, p.log.id).toBeLessThan(p.up.indexOf(summaryLabel(MODEL)));
			}
			expect(Buffer.byteLength(p.up), p.log.id).toBeLessThanOrEqual(p.limits.maxBytes);
			expect(p.up.split("\n").length, p.log.id).toBeLessThanOrEqual(p.limits.maxLines);
		}
	});

	it("says the summary and the scan disagree exactly where the scan found failures the summary does not mention", async () => {
		let flagged = 0;
		for (const p of pairs) {
			const found = scanNotable(p.log.text).lines.some((l) => l.kind === "failure" || l.failing);
			expect(p.up.includes(SUMMARY_DISAGREES_NOTE), p.log.id).toBe(found);
			if (found) flagged++;
		}
		expect(flagged).toBeGreaterThan(10);
		// A summary that names the failure is not contradicted.
		const failing = pairs.find((p) => p.log.outcome === "fail" && p.up.includes(SUMMARY_DISAGREES_NOTE)) as Pair;
		const pi = piBashResult(failing.log.text, dir);
		const named = await buildStub(
			catFacts(failing.log.file, pi),
			pi.text,
			up("2 tests failed with an assertion error."),
		);
		expect(named.text).not.toContain(SUMMARY_DISAGREES_NOTE);
	});
});

describe("mentionsFailure", () => {
	it("finds failures in any wording and ignores negated or zero ones", () => {
		for (const yes of [
			"3 tests failed",
			"The build FAILED at the link step.",
			"error: cannot find symbol",
			"It crashed with a segmentation fault",
			"The job exited with code 2",
			"A timeout in the integration suite",
			"Traceback shows a KeyError",
			"no compile errors, but 2 tests failed",
			"Tests: 1 failure",
		]) {
			expect(mentionsFailure(yes), yes).toBe(true);
		}
		for (const no of [
			"All tests passed.",
			"No errors or failures.",
			"0 failed, 120 passed",
			"The build did not fail.",
			"Finished without errors",
			"failures: 0, errors: 0",
			"The command ran and printed a long log of its progress.",
		]) {
			expect(mentionsFailure(no), no).toBe(false);
		}
	});

	it("a negated failure word never counts, whatever surrounds it (property)", () => {
		const filler = fc.constantFrom("The run", "Overall", "In short,", "Summary:", "");
		const negation = fc.constantFrom("no", "without", "zero", "0", "never any");
		const word = fc.constantFrom("errors", "failures", "failed tests", "exceptions", "crashes");
		fc.assert(
			fc.property(filler, negation, word, (a, n, w) => {
				expect(mentionsFailure(`${a} ${n} ${w}.`)).toBe(false);
				expect(summaryDisagrees(`${a} ${n} ${w}.`, [])).toBe(false);
			}),
		);
	});
});

/**
 * Verbatim evidence beside any summary (issue 32 item 3): on the real-log corpus, each log `cat` through bash
 * is stubbed once with the summary model down (unreachable) and once with it up, answering a fixed text that
 * says nothing useful. The verbatim excerpt is the same byte for byte (the summary and the notes about it are a
 * part of their own, on top of the excerpt's limits), so the critical lines visible are the same; the summary never
 * replaces the notable lines; where the scan found failures and the summary mentions none, the stub says the two
 * disagree.
 */
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { scanNotable } from "../../extensions/shared/text/notable.ts";
import { mentionsFailure, summaryDisagrees } from "../../extensions/tool-artifacts/agreement.ts";
import { buildStub, type StubDeps, stubSurface } from "../../extensions/tool-artifacts/artifacts.ts";
import { EXCERPT_LABEL, SUMMARY_DISAGREES_NOTE, summaryLabel } from "../../extensions/tool-artifacts/prompt.ts";
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
	it("the verbatim excerpt is the same with the summary model up and down, so are the critical lines visible", () => {
		// The summary and the notes about it never take the excerpt's bytes: it is laid out as without a model.
		expect(pairs.length).toBeGreaterThan(20);
		let visible = 0;
		for (const p of pairs) {
			expect(excerptOf(p.up, summaryLabel(MODEL)), p.log.id).toBe(excerptOf(p.down));
			const a = criticalVisible(p.down, p.log).visible.map((m) => m.line);
			expect(
				criticalVisible(p.up, p.log).visible.map((m) => m.line),
				p.log.id,
			).toEqual(a);
			visible += a.length;
		}
		expect(visible).toBeGreaterThan(60);
	});

	it("with the model up the stub carries its summary after the notable lines, its part on top of the stub's", () => {
		const beside = SURFACES["toolArtifacts.summaryBeside"];
		const grow = SURFACES["toolArtifacts.stubOverflow"];
		for (const p of pairs) {
			expect(p.up, p.log.id).toContain(`${summaryLabel(MODEL)}\n${USELESS}`);
			const notable = p.up.indexOf("Notable lines (L<n> is line n of the full text");
			if (p.down.includes("Notable lines (L<n>")) {
				expect(notable, p.log.id).toBeGreaterThan(0);
				expect(notable, p.log.id).toBeLessThan(p.up.indexOf(summaryLabel(MODEL)));
			}
			expect(Buffer.byteLength(p.up), p.log.id).toBeLessThanOrEqual(
				p.limits.maxBytes + beside.maxBytes + grow.maxBytes,
			);
			expect(p.up.split("\n").length, p.log.id).toBeLessThanOrEqual(
				p.limits.maxLines + beside.maxLines + grow.maxLines,
			);
			// What the summary part adds is no more than its own surface.
			const added = Buffer.byteLength(p.up) - Buffer.byteLength(p.down.replace(/\n\[Summary unavailable[^\n]*/, ""));
			expect(added, p.log.id).toBeLessThanOrEqual(beside.maxBytes);
		}
	});

	it("property: any summary, of any length, leaves the excerpt as it is down and adds at most its surface", async () => {
		const beside = SURFACES["toolArtifacts.summaryBeside"];
		const grow = SURFACES["toolArtifacts.stubOverflow"];
		const sample = pairs.filter((_, i) => i % 5 === 0);
		const text = fc.oneof(
			fc.string({ unit: "binary", minLength: 1, maxLength: 3000 }),
			fc.array(fc.string({ maxLength: 200 }), { minLength: 1, maxLength: 60 }).map((l) => l.join("\n")),
		);
		await fc.assert(
			fc.asyncProperty(fc.constantFrom(...sample), text, async (p, said) => {
				fc.pre(said.trim().length > 0);
				const pi = piBashResult(p.log.text, dir);
				const built = await buildStub(catFacts(p.log.file, pi), pi.text, up(said));
				if ("notStored" in built) throw new Error(built.notStored);
				const lines = built.text.split("\n");
				const label = lines.indexOf(summaryLabel(MODEL));
				expect(label).toBeGreaterThan(0);
				expect(lines.slice(lines.indexOf(EXCERPT_LABEL) + 1, label).join("\n")).toBe(excerptOf(p.down));
				expect(Buffer.byteLength(built.text)).toBeLessThanOrEqual(p.limits.maxBytes + beside.maxBytes + grow.maxBytes);
				expect(lines.length).toBeLessThanOrEqual(p.limits.maxLines + beside.maxLines + grow.maxLines);
			}),
			{ numRuns: 25, endOnFailure: true },
		);
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

/** The verbatim excerpt of a stub: from its label to the summary's label (when `until` is given) or the footer. */
function excerptOf(stub: string, until?: string): string {
	const lines = stub.split("\n");
	const from = lines.indexOf(EXCERPT_LABEL) + 1;
	const to = until === undefined ? lines.length - 1 : lines.indexOf(until);
	expect(from).toBeGreaterThan(0);
	expect(to).toBeGreaterThan(from);
	return lines.slice(from, to).join("\n");
}

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

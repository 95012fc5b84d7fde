/**
 * The corpus tests of issues 20 and 32: real logs public projects published, each `cat` through bash with the
 * summary model unreachable, so the stub's body is the package's own excerpt (and the held-out figures once more
 * with the summary model up, answering a text that says nothing). On the real-log corpus (what the
 * table's rules were written on, test/fixtures/real-logs/) the stub must show at least 90% of the hand-picked
 * critical lines, as before; on the held-out corpus (test/fixtures/heldout-logs/, logs no rule was written on)
 * it must show issue 32's goal of 90% overall and 80% in every leave-one-ecosystem-out fold of both corpora' ecosystems
 * (the other thresholds are figures reached, rounded down), beat the scan as it was and the naive keyword baseline,
 * in at most 10% of the bytes Pi alone shows. On a passing run of either corpus no notable line may claim a
 * failure. Every figure: `npm run bench -- notable-corpus`.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { scanNotable } from "../../extensions/shared/text/notable.ts";
import { buildStub, stubSurface } from "../../extensions/tool-artifacts/artifacts.ts";
import {
	falseAlarms,
	folds,
	type LogResult,
	loadEvalLogs,
	measure,
	pooledFolds,
	share,
	tally,
} from "../fixtures/notable-eval.ts";
import {
	catFacts,
	isStubbed,
	piBashResult,
	unreachableSummaryDeps,
	uselessSummaryDeps,
} from "../fixtures/real-log-views.ts";
import { criticalVisible } from "../fixtures/real-logs.ts";
import { makeTestDir, removeQuietly } from "../fixtures/test-dirs.ts";

/** Share of the real-log corpus' critical lines the stubs must show (issue 20; never lowered; reached: 99.0%). */
const MIN_VISIBLE_OWN = 0.95;
/** Share of the held-out corpus' critical lines the stubs show (reached: 93.0%; issue 32's goal, 90%). */
const MIN_VISIBLE_HELDOUT = 0.9;
/** The same on the held-out test split alone, never looked at while writing rules or the layout (reached: 92.6%). */
const MIN_VISIBLE_HELDOUT_TEST = 0.9;
/** Every held-out log in its own leave-one-ecosystem-out fold, pooled (reached: 92.2%). */
const MIN_VISIBLE_FOLDS = 0.89;
/**
 * Issue 32's goal for every leave-one-ecosystem-out fold, of the held-out corpus' ecosystems and of the rules' own
 * corpus' (worst: tex 81.8%; trivy's JSON report and go test -json reach it through a JSON report's finding and a
 * JSON-lines record's message, generic evidence).
 */
const MIN_VISIBLE_EACH_FOLD = 0.8;
/**
 * The held-out figure and the pooled folds with the summary model up, answering a text that says nothing
 * (reached: the same as down, 93.0% and 92.2%: the summary never takes the excerpt's bytes).
 */
const MIN_VISIBLE_HELDOUT_UP = 0.9;
const MIN_VISIBLE_FOLDS_UP = 0.89;
/** Most bytes the stubs show, as a share of what Pi alone shows. */
const MAX_BYTES_SHARE = 0.1;

const dir = makeTestDir("notable-corpus");
afterAll(() => removeQuietly(dir));
const store = new ArtifactStore({ agentDir: join(dir, "agent") });
const deps = unreachableSummaryDeps(store);
const upDeps = uselessSummaryDeps(store);

const results: LogResult[] = [];
const limits = new Map<string, { maxBytes: number; maxLines: number }>();

beforeAll(async () => {
	for (const log of loadEvalLogs()) {
		results.push(await measure(log, deps, dir, ["before", "combined"], upDeps));
		const pi = piBashResult(log.text, dir);
		if (!isStubbed(pi, deps)) continue;
		const built = await buildStub(catFacts(log.file, pi), pi.text, deps);
		if ("notStored" in built) throw new Error(`${log.id}: not stored: ${built.notStored}`);
		// The stub's surface, the growth of a log whose failures overflow its notable lines, and the summary's part
		// (with the model down: the note that says why there is none).
		const surface = stubSurface(built.kind, deps.config);
		const extra = [SURFACES["toolArtifacts.stubOverflow"], SURFACES["toolArtifacts.summaryBeside"]];
		limits.set(`${log.corpus}/${log.id}`, {
			maxBytes: extra.reduce((sum, s) => sum + s.maxBytes, surface.maxBytes),
			maxLines: extra.reduce((sum, s) => sum + s.maxLines, surface.maxLines),
		});
	}
}, 900_000);

const own = () => results.filter((r) => r.log.corpus === "real-logs");
const heldout = () => results.filter((r) => r.log.corpus === "heldout");
const missing = (rs: readonly LogResult[]) =>
	rs
		.filter((r) => r.log.split !== "test") // the test split's lines are never printed
		.flatMap((r) =>
			criticalVisible(r.modes.combined.stub, r.log).missing.map((m) => `${r.log.id}:${m.line} ${m.text.slice(0, 80)}`),
		)
		.join("\n");

describe("notable lines on real logs (issues 20 and 32)", () => {
	it("the stubs show at least 90% of the critical lines of the rules' own corpus", () => {
		const t = tally(own(), (r) => r.modes.combined.stub);
		expect(t.critical).toBeGreaterThan(0);
		expect(share(t), `missing:\n${missing(own())}`).toBeGreaterThanOrEqual(MIN_VISIBLE_OWN);
	});

	it("on the held-out corpus they show what the generic rules reach, test split included", () => {
		const all = heldout();
		expect(all.length).toBeGreaterThanOrEqual(200);
		expect(new Set(all.map((r) => r.log.ecosystem)).size).toBeGreaterThanOrEqual(15);
		expect(new Set(all.map((r) => r.log.ci)).size).toBeGreaterThanOrEqual(5);
		expect(share(tally(all, (r) => r.modes.combined.stub)), `missing:\n${missing(all)}`).toBeGreaterThanOrEqual(
			MIN_VISIBLE_HELDOUT,
		);
		const test = all.filter((r) => r.log.split === "test");
		expect(share(tally(test, (r) => r.modes.combined.stub))).toBeGreaterThanOrEqual(MIN_VISIBLE_HELDOUT_TEST);
	});

	it("with every rule written on a log's ecosystem left out, the stubs still show 80% in every fold", () => {
		expect(share(pooledFolds(heldout()).stub)).toBeGreaterThanOrEqual(MIN_VISIBLE_FOLDS);
		expect(folds(heldout()).length).toBeGreaterThanOrEqual(15);
		// Every ecosystem of both corpora (the rules' own included: trivy, go-test-json, mozilla-ci, …), each in its
		// own fold, with the summary model down and up.
		const each = folds(results);
		expect(each.map((f) => f.ecosystem)).toEqual(expect.arrayContaining(["trivy", "go-test-json", "tex"]));
		for (const f of each) expect(share(f.stub), f.ecosystem).toBeGreaterThanOrEqual(MIN_VISIBLE_EACH_FOLD);
		for (const ecosystem of new Set(results.map((r) => r.log.ecosystem))) {
			const of = results.filter((r) => r.log.ecosystem === ecosystem);
			const up = tally(of, (r) => r.up?.fold ?? "");
			expect(share(up), `${ecosystem}, summary model up`).toBeGreaterThanOrEqual(MIN_VISIBLE_EACH_FOLD);
		}
	});

	it("with the summary model up, answering a text that says nothing, the held-out figures hold", () => {
		const all = heldout();
		expect(all.every((r) => r.up !== undefined)).toBe(true);
		expect(share(tally(all, (r) => r.up?.combined ?? ""))).toBeGreaterThanOrEqual(MIN_VISIBLE_HELDOUT_UP);
		expect(share(tally(all, (r) => r.up?.fold ?? ""))).toBeGreaterThanOrEqual(MIN_VISIBLE_FOLDS_UP);
	});

	it("beat the scan as it was and the keyword baseline, in at most 10% of the bytes Pi alone shows", () => {
		const all = heldout();
		const now = tally(all, (r) => r.modes.combined.stub);
		const before = tally(all, (r) => r.modes.before.stub);
		const keyword = tally(all, (r) => r.keyword);
		const pi = tally(all, (r) => r.pi);
		expect(now.visible).toBeGreaterThan(before.visible);
		expect(now.visible).toBeGreaterThan(keyword.visible);
		expect(now.bytes).toBeLessThanOrEqual(pi.bytes * MAX_BYTES_SHARE);
	});

	it("every stub stays within its surface's byte and line limits, with its growth and the summary's part", () => {
		expect(limits.size).toBeGreaterThanOrEqual(100);
		for (const r of results) {
			const limit = limits.get(`${r.log.corpus}/${r.log.id}`);
			if (!limit) continue;
			const view = r.modes.combined.stub;
			expect(Buffer.byteLength(view, "utf8"), r.log.id).toBeLessThanOrEqual(limit.maxBytes);
			expect(view.split("\n").length, r.log.id).toBeLessThanOrEqual(limit.maxLines);
		}
	});

	it("on a passing run of either corpus no notable line claims a failure", () => {
		const passing = results.filter((r) => r.log.outcome === "pass");
		expect(passing.length).toBeGreaterThanOrEqual(70);
		for (const { log } of passing) {
			const claims = scanNotable(log.text).lines.filter((n) => n.kind === "failure" || n.failing);
			// A test-split log's lines are never printed: its claims are named by line and rule only.
			expect(
				claims.map((n) => (log.split === "test" ? `${n.line}: ${n.rule}` : `${n.line}: ${n.text}`)),
				log.id,
			).toEqual([]);
		}
	});

	it("the false alarms on passing held-out runs, per log, are 0 (the scan as it was raised some)", () => {
		const now = falseAlarms(heldout(), "combined");
		const before = falseAlarms(heldout(), "before");
		expect(now.length).toBeGreaterThanOrEqual(15);
		// Counted per log, as the benchmark prints them (the test split's lines are never printed).
		const withClaims = (a: typeof now) => a.filter((x) => x.claims.length > 0).map((x) => x.log.id);
		expect(withClaims(before).length).toBeGreaterThan(0);
		expect(withClaims(now)).toEqual([]);
	});
});

/**
 * The corpus test of issue 20: real logs public projects published (test/fixtures/real-logs/), each `cat`
 * through bash with the summary model unreachable, so the stub's body is the package's own excerpt. The
 * stubs must show at least 90% of the hand-picked critical lines, stay within their surface, and on a
 * passing run no notable line may claim a failure. Per-log figures: `npm run bench -- notable-corpus`.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { scanNotable } from "../../extensions/shared/text/notable.ts";
import { buildStub, stubSurface } from "../../extensions/tool-artifacts/artifacts.ts";
import { catFacts, isStubbed, piBashResult, unreachableSummaryDeps } from "../fixtures/real-log-views.ts";
import { criticalVisible, loadRealLogs, type RealLog } from "../fixtures/real-logs.ts";
import { makeTestDir, removeQuietly } from "../fixtures/test-dirs.ts";

/** Share of all critical lines the stubs must show (issue 20). */
const MIN_VISIBLE_SHARE = 0.9;

const dir = makeTestDir("notable-corpus");
afterAll(() => removeQuietly(dir));
const store = new ArtifactStore({ agentDir: join(dir, "agent") });
const deps = unreachableSummaryDeps(store);

interface Shown {
	log: RealLog;
	/** What the model is shown: the stub, or Pi's own result when it is under the stub threshold. */
	view: string;
	/** The stub's surface limits, when a stub was built. */
	limits?: { maxBytes: number; maxLines: number };
}

const shown: Shown[] = [];

beforeAll(async () => {
	for (const log of loadRealLogs()) {
		const pi = piBashResult(log.text, dir);
		if (!isStubbed(pi, deps)) {
			shown.push({ log, view: pi.text });
			continue;
		}
		const built = await buildStub(catFacts(log.file, pi), pi.text, deps);
		if ("notStored" in built) throw new Error(`${log.id}: not stored: ${built.notStored}`);
		shown.push({ log, view: built.text, limits: stubSurface(built.kind, deps.config) });
	}
}, 300_000);

describe("notable lines on real logs (issue 20)", () => {
	it("the stubs show at least 90% of all critical lines", () => {
		let total = 0;
		let visible = 0;
		const missing: string[] = [];
		for (const { log, view } of shown) {
			const seen = criticalVisible(view, log);
			total += log.critical.length;
			visible += seen.visible.length;
			for (const m of seen.missing) missing.push(`${log.id}:${m.line} ${m.text.slice(0, 80)}`);
		}
		expect(total).toBeGreaterThan(0);
		expect(visible / total, `missing:\n${missing.join("\n")}`).toBeGreaterThanOrEqual(MIN_VISIBLE_SHARE);
	});

	it("every stub stays within its surface's byte and line limits", () => {
		const stubs = shown.filter((s) => s.limits);
		expect(stubs.length).toBeGreaterThanOrEqual(20);
		for (const { log, view, limits } of stubs) {
			if (!limits) continue;
			expect(Buffer.byteLength(view, "utf8"), log.id).toBeLessThanOrEqual(limits.maxBytes);
			expect(view.split("\n").length, log.id).toBeLessThanOrEqual(limits.maxLines);
		}
	});

	it("on a passing run no notable line claims a failure", () => {
		const passing = shown.filter((s) => s.log.outcome === "pass");
		expect(passing.length).toBeGreaterThanOrEqual(5);
		for (const { log } of passing) {
			const claims = scanNotable(log.text).lines.filter((n) => n.kind === "failure" || n.failing);
			expect(
				claims.map((n) => `${n.line}: ${n.text}`),
				log.id,
			).toEqual([]);
		}
	});
});

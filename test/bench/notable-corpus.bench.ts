/**
 * Issue 32's figures: how many of each real log's hand-picked critical lines the model is shown, and at what
 * cost in bytes, when the log is `cat` through bash with the summary model unreachable (the stub's body is
 * then the package's own excerpt), on the real-log corpus the table's rules were written on and on the
 * held-out corpus no rule was written on (split dev/test by hash; the test split is reported apart and its
 * misses are never printed, so nobody tunes a rule on them). Views: Pi alone (bash's tail, 2000 lines /
 * 50 KB), a naive keyword baseline in 4 KB, and the stub and the scan's notable lines (no budget) with the
 * scan as it was before the generic rules, the table's rules only, the generic rules only, and both; the
 * combined stub once more with the summary model up, answering a text that says nothing. Then
 * leave-one-ecosystem-out (each ecosystem's logs with every rule written or fitted on it disabled; the summary
 * model down and up), and the
 * false alarms on passing runs, per log. The corpus test (test/unit/notable-corpus.test.ts) holds the goals.
 *
 * Run: node --import jiti/register test/bench/notable-corpus.bench.ts   (or: npm run bench -- notable-corpus)
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import {
	falseAlarms,
	folds,
	type LogResult,
	loadEvalLogs,
	measure,
	pooledFolds,
	SLICES,
	share,
	type Tally,
	tally,
	VIEWS,
} from "../fixtures/notable-eval.ts";
import { unreachableSummaryDeps, uselessSummaryDeps } from "../fixtures/real-log-views.ts";
import { criticalVisible } from "../fixtures/real-logs.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const fmt = (n: number) => n.toLocaleString("en-US");
const pct = (t: Tally) => `${(share(t) * 100).toFixed(1)}%`;
const cell = (t: Tally) => `${t.visible}/${t.critical} (${pct(t)}), ${fmt(t.bytes)} B`;

async function main(): Promise<void> {
	const tmp = makeTestDir("notable-corpus-bench");
	const store = new ArtifactStore({ agentDir: join(tmp, "agent") });
	const deps = unreachableSummaryDeps(store);
	const upDeps = uselessSummaryDeps(store);
	try {
		const logs = loadEvalLogs();
		const results: LogResult[] = [];
		for (const log of logs) results.push(await measure(log, deps, tmp, undefined, upDeps));
		const slices = Object.entries(SLICES).map(([name, pick]) => [name, results.filter(pick)] as const);
		console.log(
			`${logs.length} logs: ${slices.map(([n, r]) => `${n} ${r.length} (${r.reduce((s, x) => s + x.log.critical.length, 0)} critical)`).join(", ")}`,
		);
		console.log("Each cell: critical lines visible / in the slice (share), bytes shown.\n");
		console.log(`| view | ${slices.map(([n]) => n).join(" | ")} |`);
		console.log(`|---|${slices.map(() => "--:").join("|")}|`);
		for (const [view, pick] of Object.entries(VIEWS))
			console.log(`| ${view} | ${slices.map(([, r]) => cell(tally(r, pick))).join(" | ")} |`);

		console.log(
			`| stub, combined, summary model up (answering a text that says nothing) | ${slices.map(([, r]) => cell(tally(r, (x) => x.up?.combined ?? ""))).join(" | ")} |`,
		);

		console.log("\nLeave-one-ecosystem-out (combined rules minus those written or fitted on the ecosystem):\n");
		console.log("| ecosystem | logs | stub | stub, summary model up | scan |");
		console.log("|---|--:|--:|--:|--:|");
		const fs = folds(results);
		for (const f of fs) {
			const up = tally(
				results.filter((r) => r.log.ecosystem === f.ecosystem),
				(r) => r.up?.fold ?? "",
			);
			console.log(`| ${f.ecosystem} | ${f.stub.logs} | ${cell(f.stub)} | ${cell(up)} | ${cell(f.scan)} |`);
		}
		for (const [name, pick] of Object.entries(SLICES)) {
			const pooled = pooledFolds(results.filter(pick));
			const up = tally(results.filter(pick), (r) => r.up?.fold ?? "");
			console.log(
				`pooled over ${name}: stub ${cell(pooled.stub)}; stub, summary model up ${cell(up)}; scan ${cell(pooled.scan)}`,
			);
		}
		const worst = fs.reduce((a, b) => (share(a.stub) <= share(b.stub) ? a : b));
		console.log(`worst fold (stub): ${worst.ecosystem} ${pct(worst.stub)}`);
		for (const [name, pick] of [
			["held-out", (r: LogResult) => r.log.corpus === "heldout"],
			["held-out test", (r: LogResult) => r.log.split === "test"],
		] as const) {
			const sub = folds(results.filter(pick));
			if (sub.length === 0) continue;
			const w = sub.reduce((a, b) => (share(a.stub) <= share(b.stub) ? a : b));
			console.log(`worst fold on ${name} (stub): ${w.ecosystem} ${pct(w.stub)}`);
		}

		console.log("\nFalse alarms on passing runs (scan lines claiming a failure, per log):");
		for (const mode of ["before", "combined"] as const) {
			const alarms = falseAlarms(results, mode);
			const total = alarms.reduce((s, a) => s + a.claims.length, 0);
			console.log(
				`  ${mode}: ${total} on ${alarms.filter((a) => a.claims.length > 0).length} of ${alarms.length} passing logs; ${alarms.map((a) => `${a.log.id} ${a.claims.length}`).join(", ")}`,
			);
		}
		const decoys: string[] = [];
		for (const r of results)
			for (const d of r.log.decoys)
				if (r.modes.combined.scan.some((n) => n.line === d.line && (n.kind === "failure" || n.failing)))
					decoys.push(`${r.log.id}:${d.line}`);
		console.log(`decoys promoted as failures (combined): ${decoys.length === 0 ? "none" : decoys.join(", ")}`);

		// Misses, never for the test split (only counted there).
		const misses: string[] = [];
		const alarmLines: string[] = [];
		for (const r of results) {
			if (r.log.split === "test") continue;
			for (const m of criticalVisible(r.modes.combined.stub, r.log).missing)
				misses.push(`${r.log.corpus}/${r.log.id}:${m.line} ${JSON.stringify(m.text.slice(0, 100))}`);
			if (r.log.outcome === "pass")
				for (const n of r.modes.combined.scan.filter((x) => x.kind === "failure" || x.failing))
					alarmLines.push(`${r.log.id}:${n.line} [${n.rule}] ${JSON.stringify(n.text.slice(0, 100))}`);
		}
		const foldMisses: string[] = [];
		for (const r of results) {
			if (r.log.split === "test") continue;
			for (const m of criticalVisible(r.fold.stub, r.log).missing)
				foldMisses.push(
					`${r.log.corpus}/${r.log.id} [${r.log.ecosystem}]:${m.line} ${JSON.stringify(m.text.slice(0, 100))}`,
				);
		}
		if (process.env.NOTABLE_FOLD_MISSES)
			console.log(`\ncritical lines the stub misses in its log's fold (not test split):\n  ${foldMisses.join("\n  ")}`);
		if (misses.length > 0)
			console.log(`\ncritical lines the combined stub misses (not test split):\n  ${misses.join("\n  ")}`);
		if (alarmLines.length > 0) console.log(`\nfalse alarms (not test split):\n  ${alarmLines.join("\n  ")}`);
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

await main();

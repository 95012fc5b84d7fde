/**
 * How many of each real log's critical lines the model is shown, and at what cost in bytes, when the log
 * is `cat` through bash with the summary model unreachable (the stub's body is then the package's own
 * excerpt): Pi alone (bash's tail, 2000 lines / 50 KB), this package's stub as it was before notable
 * lines (rebuilt live from the same public pieces: header, notes, the command surface's head+tail, footer),
 * the stub now, and a 2 KB head preview. Then the notable scan alone, with no budget: the critical lines it
 * finds, the lines it claims a failure on in each passing run (false alarms), and any decoy it promotes.
 * The corpus and its hand-picked critical lines are test/fixtures/real-logs/ (issue 20); the corpus test
 * (test/unit/notable-corpus.test.ts) holds the stub to at least 90% of them.
 *
 * Run: node --import jiti/register test/bench/notable-corpus.bench.ts   (or: npm run bench -- notable-corpus)
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { type NotableLine, scanNotable } from "../../extensions/shared/text/notable.ts";
import {
	headPreview,
	isStubbed,
	piBashResult,
	stubView,
	stubViewBefore,
	unreachableSummaryDeps,
} from "../fixtures/real-log-views.ts";
import { criticalVisible, loadRealLogs } from "../fixtures/real-logs.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const VIEWS = ["Pi alone", "stub before", "stub now", "2 KB head"] as const;
type View = (typeof VIEWS)[number];

const bytes = (s: string) => Buffer.byteLength(s, "utf8");
/** A notable line that says something went wrong: a failure, or a summary that reports failures. */
const claimsFailure = (n: NotableLine) => n.kind === "failure" || n.failing;
const fmt = (n: number) => n.toLocaleString("en-US");
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

async function main(): Promise<void> {
	const tmp = makeTestDir("notable-corpus-bench");
	const store = new ArtifactStore({ agentDir: join(tmp, "agent") });
	const deps = unreachableSummaryDeps(store);
	const totals = Object.fromEntries(VIEWS.map((v) => [v, { visible: 0, bytes: 0 }])) as Record<
		View,
		{ visible: number; bytes: number }
	>;
	let critical = 0;
	let scanFound = 0;
	const scanMisses: string[] = [];
	const alarmLines: string[] = [];
	const alarms: string[] = [];
	const promotedDecoys: string[] = [];
	let identicalBefore = 0;
	let stubbed = 0;
	const rows: string[] = [];
	const misses: string[] = [];
	try {
		const logs = loadRealLogs();
		for (const log of logs) {
			const pi = piBashResult(log.text, tmp);
			const views: Record<View, string> = {
				"Pi alone": pi.text,
				"stub before": await stubViewBefore(log.file, pi, deps),
				"stub now": await stubView(log.file, pi, deps),
				"2 KB head": headPreview(log.text),
			};
			if (isStubbed(pi, deps)) stubbed++;
			if (views["stub before"] === views["stub now"]) identicalBefore++;
			critical += log.critical.length;
			// The scan alone, before any budget: which critical lines it finds, and what it claims went wrong.
			const scan = scanNotable(log.text);
			const byScan = criticalVisible(scan.lines.map((n) => n.text).join("\n"), log);
			scanFound += byScan.visible.length;
			for (const m of byScan.missing) scanMisses.push(`${log.id}:${m.line} ${JSON.stringify(m.text.slice(0, 90))}`);
			const claims = scan.lines.filter(claimsFailure);
			if (log.outcome === "pass") {
				alarms.push(`${log.id}: ${claims.length}`);
				for (const n of claims)
					alarmLines.push(`${log.id}:${n.line} [${n.rule}] ${JSON.stringify(n.text.slice(0, 90))}`);
			}
			for (const d of log.decoys)
				if (claims.some((n) => n.line === d.line)) promotedDecoys.push(`${log.id}:${d.line} ${JSON.stringify(d.text)}`);
			const cells = VIEWS.map((v) => {
				const seen = criticalVisible(views[v], log);
				totals[v].visible += seen.visible.length;
				totals[v].bytes += bytes(views[v]);
				if (v === "stub now")
					for (const m of seen.missing) misses.push(`${log.id}:${m.line} ${JSON.stringify(m.text.slice(0, 90))}`);
				return `${seen.visible.length}/${log.critical.length} (${kb(bytes(views[v]))})`;
			});
			rows.push(
				`| ${log.id} | ${log.outcome} | ${log.where} | ${fmt(log.bytes)} | ${fmt(log.lines)} | ${cells.join(" | ")} |`,
			);
		}
		console.log(
			`${logs.length} real logs, ${critical} critical lines; ${stubbed} are stubbed (over the bash threshold).`,
		);
		console.log("Each cell: critical lines visible / in the log (bytes shown).\n");
		console.log(`| log | outcome | where | bytes | lines | ${VIEWS.join(" | ")} |`);
		console.log(`|---|---|---|--:|--:|${VIEWS.map(() => "--:").join("|")}|`);
		for (const row of rows) console.log(row);
		const total = VIEWS.map((v) => `**${totals[v].visible}/${critical}** (${kb(totals[v].bytes)})`);
		console.log(`| **total** | | | | | ${total.join(" | ")} |`);
		console.log("");
		for (const v of VIEWS) {
			const pct = ((totals[v].visible / critical) * 100).toFixed(1);
			console.log(
				`${v}: ${totals[v].visible}/${critical} critical lines visible (${pct}%), ${fmt(totals[v].bytes)} bytes shown`,
			);
		}
		console.log(`the scan alone (no budget) finds ${scanFound}/${critical} critical lines`);
		console.log(`false alarms (notable lines claiming a failure) on passing runs: ${alarms.join(", ")}`);
		console.log(`decoys promoted as failures: ${promotedDecoys.length === 0 ? "none" : promotedDecoys.join("; ")}`);
		console.log(`stub now is byte-identical to stub before on ${identicalBefore} of ${logs.length} logs`);
		if (misses.length > 0) console.log(`\ncritical lines the stub now misses:\n  ${misses.join("\n  ")}`);
		if (scanMisses.length > 0) console.log(`\ncritical lines the scan misses:\n  ${scanMisses.join("\n  ")}`);
		if (alarmLines.length > 0) console.log(`\nfalse alarms on passing runs:\n  ${alarmLines.join("\n  ")}`);
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

await main();

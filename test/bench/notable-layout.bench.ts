/**
 * Where the stub loses critical lines the notable-line scan found (issue 32, the stub's layout): on the
 * held-out corpus' dev split and the rules' own corpus (never the test split: its logs are not even
 * measured here), each log `cat` through bash with the summary model unreachable, every critical line the
 * scan alone (no budget) finds but the stub does not show is put down to one reason:
 *
 * - `scan cap`: the scan at the section's line cap (what projectLog scans with, at about the stub's excerpt
 *   room) did not keep it;
 * - `section lines` / `section bytes`: kept by that scan, but the section stopped at its line or byte cap
 *   (`+ context` when context lines ranked before it were shown);
 * - `clip`: listed, but clipped before the critical text (the 240-byte item, or the scan's own clip).
 *
 * Beside them, what the stubs spend their bytes on: the section, head and tail, how many section lines are
 * context, and how many repeat a line the head or tail shows anyway. Critical lines the scan does not find
 * at all are counted by where they are (the last lines a longer tail would show, or elsewhere).
 *
 * Run: npm run bench -- notable-layout   (NOTABLE_LAYOUT_FOLD=1: each log in its leave-one-ecosystem-out fold;
 * NOTABLE_LAYOUT_LIST=1: list each lost line with its reason, never for the test split; STUB_BYTES=5120: what
 * a stub of that many bytes, when a failing log's notable section overflows, would show instead, and cost)
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { logScanLines } from "../../extensions/shared/projection/log.ts";
import { NOTABLE_HEADING } from "../../extensions/shared/projection/prompt.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import {
	type NotableEvaluation,
	type NotableLine,
	scanNotable,
	withNotableEvaluation,
} from "../../extensions/shared/text/notable.ts";
import { EXCERPT_LABEL } from "../../extensions/tool-artifacts/prompt.ts";
import { type EvalLog, foldOf, loadEvalLogs } from "../fixtures/notable-eval.ts";
import { isStubbed, piBashResult, stubView, unreachableSummaryDeps } from "../fixtures/real-log-views.ts";
import { criticalVisible, type MarkedLine, visibleNeedle } from "../fixtures/real-logs.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const bytes = (s: string) => Buffer.byteLength(s, "utf8");
const ITEM = /^L(\d+): /;
const MORE = /^… and [\d,]+ more notable line/;
const OMITTED = /^\[… [\d,]+ lines? \(/;

/** The parts of a stub's body: the notable section's items, the head, the tail. */
interface Parts {
	items: { line: number; text: string }[];
	sectionBytes: number;
	sectionLines: number;
	head: string;
	tail: string;
}

function partsOf(stub: string): Parts {
	const lines = stub.split("\n");
	const label = lines.indexOf(EXCERPT_LABEL);
	const body = lines.slice(label + 1, -1);
	let i = 0;
	const items: { line: number; text: string }[] = [];
	let sectionBytes = 0;
	let sectionLines = 0;
	if (body[0] === NOTABLE_HEADING) {
		sectionBytes += bytes(body[0]) + 1;
		sectionLines++;
		for (i = 1; i < body.length; i++) {
			const m = ITEM.exec(body[i]);
			if (!m && !MORE.test(body[i])) break;
			sectionBytes += bytes(body[i]) + 1;
			sectionLines++;
			if (m) items.push({ line: Number(m[1]), text: body[i].slice(m[0].length) });
		}
	}
	const rest = body.slice(i);
	const cut = rest.findIndex((l) => OMITTED.test(l));
	const footer = rest.findIndex((l) => l.startsWith("[Full text:"));
	const head = cut === -1 ? rest.join("\n") : rest.slice(0, cut).join("\n");
	const tail = cut === -1 ? "" : rest.slice(cut + 1, footer === -1 ? undefined : footer).join("\n");
	return { items, sectionBytes, sectionLines, head, tail };
}

const shows = (text: string, m: MarkedLine) => text.includes(visibleNeedle(m));
const scanLineOf = (lines: readonly NotableLine[], m: MarkedLine) => lines.find((n) => shows(n.text, m));

async function main(): Promise<void> {
	const tmp = makeTestDir("notable-layout-bench");
	const store = new ArtifactStore({ agentDir: join(tmp, "agent") });
	const deps0 = unreachableSummaryDeps(store);
	const deps = process.env.STUB_BYTES
		? { ...deps0, config: { ...deps0.config, stubMaxBytes: Number(process.env.STUB_BYTES) } }
		: deps0;
	const inFold = process.env.NOTABLE_LAYOUT_FOLD === "1";
	const reasons = new Map<string, number>();
	const shown = new Map<string, number>();
	const listed: string[] = [];
	const spend = {
		logs: 0,
		section: 0,
		head: 0,
		tail: 0,
		stub: 0,
		items: 0,
		context: 0,
		repeats: 0,
		critical: 0,
		criticalContext: 0,
		grown: 0,
		extra: 0,
	};
	const sectionFull = { lines: 0, bytes: 0 };
	const note = (reason: string, log: EvalLog, m: MarkedLine) => {
		reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
		if (process.env.NOTABLE_LAYOUT_LIST === "1")
			listed.push(`${reason}: ${log.corpus}/${log.id}:${m.line} ${JSON.stringify(m.text.slice(0, 90))}`);
	};
	try {
		// The test split is left out before anything is measured.
		const logs = loadEvalLogs().filter((l) => l.split !== "test");
		for (const corpus of ["real-logs", "heldout"] as const) {
			reasons.clear();
			shown.clear();
			listed.length = 0;
			for (const k of Object.keys(spend)) spend[k as keyof typeof spend] = 0;
			sectionFull.lines = 0;
			sectionFull.bytes = 0;
			let critical = 0;
			let visible = 0;
			for (const log of logs.filter((l) => l.corpus === corpus)) {
				const evaluation: NotableEvaluation = inFold ? foldOf(log.ecosystem) : {};
				const pi = piBashResult(log.text, tmp);
				critical += log.critical.length;
				if (!isStubbed(pi, deps)) {
					visible += criticalVisible(pi.text, log).visible.length;
					continue;
				}
				let stub = await withNotableEvaluation(evaluation, () => stubView(log.file, pi, deps0));
				const base = bytes(stub);
				if (
					deps !== deps0 &&
					/\n… and [\d,]+ more notable line/.test(stub) &&
					scanNotable(log.text).lines.some((n) => n.kind !== "summary" || n.failing)
				) {
					stub = await withNotableEvaluation(evaluation, () => stubView(log.file, pi, deps));
					spend.grown++;
				}
				spend.extra += bytes(stub) - base;
				const parts = partsOf(stub);
				spend.logs++;
				spend.stub += bytes(stub);
				spend.section += parts.sectionBytes;
				spend.head += bytes(parts.head);
				spend.tail += bytes(parts.tail);
				spend.items += parts.items.length;
				if (parts.sectionBytes >= 1700) sectionFull.bytes++;
				const full = scanNotable(log.text, { evaluation }).lines;
				// The stub's excerpt room is about the command surface less a header and a footer of ~500 B.
				// (with the growth a failing log's section may take: the scan is made at the grown cap)
				const grow = SURFACES["toolArtifacts.stubOverflow"];
				const room = { maxBytes: 3600, maxLines: 92, grow };
				const scanLines = logScanLines(log.text, "toolArtifacts.stub.command", room) ?? 24;
				const capped = scanNotable(log.text, { evaluation, maxLines: scanLines }).lines;
				if (parts.sectionLines >= scanLines) sectionFull.lines++;
				for (const it of parts.items) {
					const scanned = capped.find((n) => n.line === it.line);
					if (scanned?.kind === "context") spend.context++;
					const bare = it.text.replace(/ \(×[\d,]+\)$/, "").replace(/…$/, "");
					if (bare.length > 8 && (parts.tail.includes(bare) || parts.head.includes(bare))) spend.repeats++;
					if (log.critical.some((m) => m.line === it.line || shows(it.text, m))) {
						spend.critical++;
						if (scanned?.kind === "context") spend.criticalContext++;
					}
				}
				for (const m of criticalVisible(stub, log).visible) {
					const where = [
						parts.items.some((it) => shows(it.text, m)) ? "section" : "",
						shows(parts.head, m) ? "head" : "",
						shows(parts.tail, m) ? "tail" : "",
					].filter(Boolean);
					const key = where.join("+") || "elsewhere";
					shown.set(key, (shown.get(key) ?? 0) + 1);
				}
				const { missing } = criticalVisible(stub, log);
				visible += log.critical.length - missing.length;
				for (const m of missing) {
					const found = scanLineOf(full, m);
					if (!found) {
						const fromEnd = log.text.split("\n").length - m.line;
						note(fromEnd < 40 ? "not scanned, in the last 40 lines" : "not scanned, elsewhere", log, m);
						continue;
					}
					const kept = capped.find((n) => n.line === found.line);
					if (!kept) {
						note(`scan cap (${found.kind}${found.failing ? ", failing" : ""})`, log, m);
						continue;
					}
					const item = parts.items.find((it) => it.line === kept.line);
					if (item) {
						note("clip", log, m);
						continue;
					}
					const crowded = parts.items.some((it) => {
						const n = capped.find((c) => c.line === it.line);
						return n?.kind === "context" && n.rank < kept.rank;
					});
					const by = parts.sectionLines >= scanLines ? "section lines" : "section bytes";
					note(`${by}${crowded ? " + context ranked before" : ""} (${kept.kind})`, log, m);
				}
			}
			console.log(`\n${corpus}${corpus === "heldout" ? " dev" : ""}${inFold ? " (each log in its fold)" : ""}:`);
			console.log(`  stub shows ${visible}/${critical} critical lines`);
			console.log(`  shown lines by where: ${[...shown].map(([w, n]) => `${w} ${n}`).join(", ")}`);
			console.log("  lost lines by reason:");
			for (const [r, n] of [...reasons].sort((a, b) => b[1] - a[1])) console.log(`    ${n}\t${r}`);
			const per = (n: number) => Math.round(n / Math.max(1, spend.logs));
			console.log(
				`  per stubbed log (${spend.logs}): stub ${per(spend.stub)} B, section ${per(spend.section)} B, head ${per(spend.head)} B, tail ${per(spend.tail)} B`,
			);
			console.log(`  grown ${spend.grown}, extra bytes ${spend.extra}`);
			console.log(
				`  section items ${spend.items}: context ${spend.context}, repeating the head or tail ${spend.repeats}, holding a critical line ${spend.critical} (context ${spend.criticalContext}); sections at the scan's line cap ${sectionFull.lines}, over 1,700 B ${sectionFull.bytes}`,
			);
			if (listed.length > 0) console.log(`  ${listed.join("\n  ")}`);
		}
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

await main();

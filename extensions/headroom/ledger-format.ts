/**
 * Wording and layout of the context ledger (/headroom): a horizontal bar per source, what each
 * extension kept out, and this session's artifacts with their read calls. Pure: plain lines, a
 * paint function for the TUI, block bars for the TUI and ASCII bars for print and rpc.
 */

import { formatCost } from "../shared/budget/spend.ts";
import { formatCount, plural } from "../shared/text/format.ts";
import type { ChildSpend, KeptOut, Ledger } from "./ledger.ts";
import { humanBytes } from "./prompt.ts";

export type Paint = (color: string, text: string) => string;
const plain: Paint = (_c, t) => t;

/** Columns of a full bar. */
export const BAR_COLUMNS = 24;
/** Artifacts listed in the text (the JSON in details has all of them). */
export const LEDGER_ARTIFACTS_SHOWN = 20;

export interface LedgerStyle {
	/** "blocks" (█░) for the TUI, "ascii" (#.) for print and rpc. */
	bars: "blocks" | "ascii";
	paint?: Paint;
}

/** A bar of `share` (0..1) in `columns`, never empty for a non-zero share. */
export function bar(share: number, columns: number, bars: LedgerStyle["bars"]): string {
	const safe = Number.isFinite(share) ? Math.min(1, Math.max(0, share)) : 0;
	let full = Math.round(safe * columns);
	if (full === 0 && safe > 0) full = 1;
	const [on, off] = bars === "blocks" ? ["█", "░"] : ["#", "."];
	return on.repeat(full) + off.repeat(columns - full);
}

/** "12 s", "4 min", "3 h", "2 d" ago. */
export function age(ms: number): string {
	const s = Math.max(0, Math.round(ms / 1000));
	if (s < 60) return `${s} s`;
	if (s < 3600) return `${Math.round(s / 60)} min`;
	if (s < 86_400) return `${Math.round(s / 3600)} h`;
	return `${Math.round(s / 86_400)} d`;
}

const percent = (n: number) => `${(n * 100).toFixed(1)}%`;

/** context-trim's line: the latest trim's figures (each request is trimmed on its own), and how often the cut changed. */
function trimLine(k: KeptOut): string {
	const t = k.latestTrim;
	if (k.count === 0 || !t) return `${k.extension.padEnd(15)} no request trimmed this session`;
	const shortened =
		t.textsShortened > 0
			? `, ${plural(t.textsShortened, "text", "texts")} as head+tail (${humanBytes(t.shortenedFromBytes)} → ${humanBytes(t.shortenedToBytes)})`
			: "";
	return `${k.extension.padEnd(15)} latest trim: ${formatCount(t.messagesBefore)} → ${formatCount(t.messagesAfter)} messages, ≈ ${formatCount(t.tokensBefore)} → ${formatCount(t.tokensAfter)} tokens per request (≈ ${formatCount(k.keptOutTokens)} kept out, ${formatCount(t.messagesOmitted)} messages left out${shortened}); the cut changed ${plural(k.count, "time", "times")}`;
}

function keptOutLine(k: KeptOut): string {
	if (k.extension === "context-trim") return trimLine(k);
	if (k.count === 0) return `${k.extension.padEnd(15)} nothing this session`;
	const saved = `≈ ${formatCount(k.keptOutTokens)} tokens kept out`;
	if (k.extension === "handoff") {
		return `${k.extension.padEnd(15)} ${plural(k.count, "handoff", "handoffs")}: ${formatCount(k.fullTokens)} tokens of history → ${formatCount(k.shownTokens)} tokens of summary (${saved})`;
	}
	const what =
		k.extension === "tool-artifacts" ? plural(k.count, "stub", "stubs") : plural(k.count, "result", "results");
	return `${k.extension.padEnd(15)} ${what}: ${humanBytes(k.fullBytes ?? 0)} stored as artifacts, ${humanBytes(k.shownBytes)} shown (${saved})`;
}

/** "2 children: 12,345 tokens, $0.0123 (session budget 100,000 tokens: 87,655 left)"; "" with no child and no budget. */
export function spendLine(s: ChildSpend | undefined): string {
	if (!s || (s.children === 0 && !s.budget)) return "";
	const cost = s.cost !== undefined ? `, ${formatCost(s.cost)}` : "";
	let budget = "";
	if (s.budget) {
		const limits = [
			s.budget.tokens !== undefined ? `${formatCount(s.budget.tokens)} tokens` : "",
			s.budget.cost !== undefined ? formatCost(s.budget.cost) : "",
		].filter(Boolean);
		const left = [
			s.budget.tokens !== undefined ? `${formatCount(Math.max(0, s.budget.tokens - s.tokens))} tokens` : "",
			s.budget.cost !== undefined ? formatCost(Math.max(0, s.budget.cost - (s.cost ?? 0))) : "",
		].filter(Boolean);
		budget = ` (session budget ${limits.join(" or ")}: ${left.join(", ")} left)`;
	}
	return `${plural(s.children, "child", "children")}: ${formatCount(s.tokens)} tokens${cost}${budget}`;
}

/** The ledger as lines of text. */
export function formatLedger(ledger: Ledger, now: number, style: LedgerStyle): string[] {
	const paint = style.paint ?? plain;
	const lines: string[] = [];
	const total = ledger.sources.reduce((sum, s) => sum + s.tokens, 0);
	const used = ledger.usedTokens ?? total;
	const window = ledger.contextWindow;
	const head =
		ledger.basis === "pi-usage"
			? `context: ${formatCount(used)}${window ? ` of ${formatCount(window)}` : ""} tokens${window ? ` (${percent(used / window)})` : ""} — Pi's reading, split by this package's estimate`
			: `context: ≈ ${formatCount(total)} tokens${window ? ` of ${formatCount(window)}` : ""} — this package's estimate (Pi has no reading yet)`;
	lines.push(paint("accent", head));
	const labelWidth = Math.max(...ledger.sources.map((s) => s.label.length), "window used".length);
	// The composition: each source's share of what the context holds now.
	const denominator = Math.max(1, total);
	for (const s of ledger.sources) {
		const share = s.tokens / denominator;
		lines.push(
			`  ${s.label.padEnd(labelWidth)} ${formatCount(s.tokens).padStart(9)}  ${paint("accent", bar(share, BAR_COLUMNS, style.bars))} ${percent(share).padStart(6)}`,
		);
	}
	if (window && window > 0) {
		const share = Math.min(1, used / window);
		lines.push(
			`  ${"window used".padEnd(labelWidth)} ${formatCount(used).padStart(9)}  ${paint("warning", bar(share, BAR_COLUMNS, style.bars))} ${percent(share).padStart(6)}  (${formatCount(Math.max(0, window - used))} free)`,
		);
	}
	lines.push(paint("accent", "kept out of the context this session"));
	for (const k of ledger.keptOut) lines.push(`  ${keptOutLine(k)}`);
	const spend = spendLine(ledger.subagentSpend);
	if (spend) lines.push(paint("accent", "subagents' spend this session"), `  ${spend}`);
	const n = ledger.artifacts.length;
	lines.push(paint("accent", `artifacts of this session: ${formatCount(n)}${n > 0 ? " (newest first)" : ""}`));
	for (const a of ledger.artifacts.slice(0, LEDGER_ARTIFACTS_SHOWN)) {
		const size = a.bytes === undefined ? "gone" : humanBytes(a.bytes);
		const when = a.mtimeMs === undefined ? "" : `${age(now - a.mtimeMs)} ago`;
		lines.push(`  ${size.padStart(10)}  ${when.padStart(10)}  ${a.kind}`);
		lines.push(`      ${paint("dim", a.readCall)}`);
	}
	if (n > LEDGER_ARTIFACTS_SHOWN) lines.push(paint("dim", `  … ${formatCount(n - LEDGER_ARTIFACTS_SHOWN)} more`));
	return lines;
}

/**
 * TUI rendering: compact one-line-per-child views of tool calls, tool results and delivered
 * results (full projected text when expanded), and the status line / widget. The row builders
 * are pure (plain strings, a colour function) so they are tested without a terminal.
 */
import { Box, type Component, Text, truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";
import { sanitizeLine, sanitizeTerminalText } from "../../shared/text/sanitize.ts";
import { questionBrief } from "../ask/question.ts";
import { formatCount, formatDuration, statusGlyph } from "../domain/format.ts";
import { type ChildRecord, type ChildRow, type ChildState, isSettled } from "../domain/records.ts";
import { ASKING_STATE, askingCount } from "../prompt/ask.ts";

/** Colour function: Pi's theme.fg, or identity in tests. */
export type Paint = (color: string, text: string) => string;

const plain: Paint = (_c, t) => t;

/** Columns of a failure's reason in a compact row. */
export const REASON_COLUMNS = 100;

function stateColor(state: ChildState): string {
	if (state === "completed") return "success";
	if (state === "failed") return "error";
	if (
		state === "cancelled" ||
		state === "incomplete" ||
		state === "skipped" ||
		state === "interrupted" ||
		state === "budget"
	)
		return "warning";
	if (state === "waiting") return "muted";
	return "accent";
}

/**
 * "✓ sa-1 title  completed  37,212 B → 15,980 B  …/ab12cd34.txt". A child that waits for the parent's answer
 * (ask_parent) is marked "?" as in the widget, "asks you: <the question's start>" in place of its running state.
 */
export function rowText(row: ChildRow, paint: Paint = plain): string {
	const asking = row.question !== undefined;
	const mark = asking ? paint("warning", "?") : paint(stateColor(row.state), statusGlyph(row.state));
	const parts = [mark, paint("accent", row.id), oneLine(row.name)];
	if (row.agent) parts.push(paint("dim", `(${oneLine(row.agent)})`));
	// A run that ended while it asked keeps its state word (the answer starts a new run).
	if (!asking || isSettled(row.state)) parts.push(paint("muted", asking ? `${row.state},` : row.state));
	if (row.question !== undefined) parts.push(askingWords(row.question, paint));
	if (row.fullBytes !== undefined) {
		const shown =
			row.shownBytes !== undefined && row.shownBytes < row.fullBytes ? ` → ${formatCount(row.shownBytes)} B` : "";
		parts.push(paint("dim", `${formatCount(row.fullBytes)} B${shown}`));
	}
	// A note that only repeats the state ("queued queued") says nothing new.
	if (row.note && row.note !== row.state) parts.push(paint("dim", oneLine(row.note)));
	if (row.artifactPath) parts.push(paint("dim", shortPath(row.artifactPath)));
	if (row.reason) parts.push(paint("error", `— ${truncateToWidth(oneLine(row.reason).trim(), REASON_COLUMNS, "…")}`));
	return parts.join(" ");
}

/** Hex digits of a content-addressed file name kept in compact rows (the expanded view has the whole path). */
export const SHORT_HASH_CHARS = 12;

/** Last two path segments, the SHA-256 file name cut to its first hex digits, so rows stay on one line. */
export function shortPath(path: string): string {
	const segments = path.split("/").filter(Boolean);
	const last = segments.length > 0 ? segments[segments.length - 1] : "";
	const hashed = /^([0-9a-f]{64})(\.[A-Za-z0-9]+)?$/.exec(last);
	if (hashed) segments[segments.length - 1] = `${hashed[1].slice(0, SHORT_HASH_CHARS)}…${hashed[2] ?? ""}`;
	return segments.length <= 2 ? segments.join("/") || path : `…/${segments.slice(-2).join("/")}`;
}

/** Columns of a spawn call's title in its row. */
export const CALL_NAME_COLUMNS = 60;

/** Text of a tool call: name and the gist of its arguments. */
export function callText(tool: string, args: Record<string, unknown>, paint: Paint = plain): string {
	const title = paint("toolTitle", tool);
	if (tool === "subagent_spawn") {
		const given = typeof args.name === "string" && args.name ? args.name : String(args.prompt ?? "").split("\n")[0];
		const name = oneLine(given);
		const short = truncateToWidth(name, CALL_NAME_COLUMNS, "…");
		const model = typeof args.model === "string" ? oneLine(args.model) : undefined;
		const agent = typeof args.agent === "string" ? `as ${oneLine(args.agent).slice(0, 64)}` : undefined;
		const extras = [agent, model, args.context === "fork" ? "fork" : undefined].filter(Boolean).join(", ");
		return `${title} ${short}${extras ? paint("dim", ` (${extras})`) : ""}`;
	}
	const ids = oneLine(
		Array.isArray(args.ids) ? (args.ids as unknown[]).join(", ") : typeof args.id === "string" ? args.id : "",
	);
	const extra = tool === "subagent_wait" && args.mode === "any" ? " (any)" : "";
	return `${title} ${ids || (tool === "subagent_wait" ? "all outstanding" : "")}${extra}`.trimEnd();
}

/** Collapsed view: one row per child; expanded: the rows, then the full text the model saw. */
export function resultText(rows: ChildRow[], fullText: string, expanded: boolean, paint: Paint = plain): string {
	const lines = rows.map((r) => rowText(r, paint));
	if (!expanded) return lines.length > 0 ? lines.join("\n") : firstLine(fullText);
	const shown = displayText(fullText);
	return lines.length > 0 ? `${lines.join("\n")}\n\n${shown}` : shown;
}

/** Columns of the one-line fallback of a result without rows. */
const FIRST_LINE_COLUMNS = 160;

function firstLine(text: string): string {
	return truncateToWidth(oneLine(text.split("\n")[0] ?? ""), FIRST_LINE_COLUMNS, "…");
}

/**
 * Text from the model or a child, made safe to draw by the one shared sanitizer: control sequences
 * removed whole, control characters dropped, tabs to tab stops in pi-tui's columns, CR LF as LF.
 * Display only: what the model sees is untouched.
 */
export function displayText(text: string): string {
	return sanitizeTerminalText(text, { widthOf: visibleWidth });
}

/** displayText on one line: line breaks become spaces (names, ids and notes in compact rows). */
export function oneLine(text: string): string {
	return sanitizeLine(text, { widthOf: visibleWidth });
}

/**
 * Footer status: counts of running and queued children, or undefined when there is nothing to show. Children
 * that wait for the parent's answer (ask_parent) are counted apart ("1 asks you") and mark the line "?", as the
 * widget marks their rows.
 */
export function statusText(children: ChildRecord[], paint: Paint = plain): string | undefined {
	const live = children.filter((c) => c.state === "running" || c.state === "starting");
	const asking = live.filter((c) => c.question).length;
	const running = live.length - asking;
	const queued = children.filter((c) => c.state === "queued").length;
	const waiting = children.filter((c) => c.state === "waiting").length;
	if (running + asking + queued + waiting === 0) return undefined;
	const q = (queued > 0 ? `, ${queued} queued` : "") + (waiting > 0 ? `, ${waiting} waiting` : "");
	if (asking === 0) return paint("accent", `● subagents: ${running} running${q}`);
	return paint("warning", `? subagents: ${running} running${q}, ${askingCount(asking)}`);
}

/** Most child rows the widget shows; the rest become one "+N more" row (Pi cuts widgets at 10 lines, without a count). */
export const WIDGET_MAX_ROWS = 8;

/** Columns of an open question's brief in a widget or tool row (the live view shows it whole). */
export const WIDGET_QUESTION_COLUMNS = 48;

/** "asks you: <the question's start>", cut to WIDGET_QUESTION_COLUMNS: the widget's and the rows' words. */
export function askingWords(brief: string, paint: Paint = plain): string {
	return paint("warning", `${ASKING_STATE}: ${truncateToWidth(oneLine(brief), WIDGET_QUESTION_COLUMNS, "…")}`);
}

/**
 * Widget rows: each running or queued child with elapsed time and tokens, at most WIDGET_MAX_ROWS + 1 lines. A
 * child that waits for the parent's answer (ask_parent) is marked "?" and says so, with the question's start.
 */
export function widgetLines(children: ChildRecord[], now: number, paint: Paint = plain): string[] {
	const active = children.filter(
		(c) => c.state === "running" || c.state === "starting" || c.state === "queued" || c.state === "waiting",
	);
	const shown = active.length > WIDGET_MAX_ROWS + 1 ? active.slice(0, WIDGET_MAX_ROWS) : active;
	const lines = shown.map((c) => {
		const elapsed =
			c.state === "waiting"
				? `waits for ${(c.after ?? []).join(", ")}`
				: c.startedAt
					? formatDuration(now - c.startedAt)
					: "waiting";
		const tokens = c.contextTokens !== undefined ? ` · ${formatCount(c.contextTokens)} tok` : "";
		const agent = c.agent ? paint("dim", ` (${oneLine(c.agent)})`) : "";
		const mark = c.question ? paint("warning", "?") : paint(stateColor(c.state), statusGlyph(c.state));
		const asking = c.question ? ` · ${askingWords(questionBrief(c.question.text), paint)}` : "";
		return `${mark} ${c.id} ${oneLine(c.name)}${agent} · ${elapsed}${tokens}${asking}`;
	});
	const hidden = active.length - shown.length;
	if (hidden > 0) lines.push(paint("muted", `+${hidden} more`));
	return lines;
}

/** First line of a delivered-results message: what it is, and how to see the full text when collapsed. */
export function deliveredLabel(count: number, expanded: boolean, expandKey: string | undefined): string {
	const what = count === 1 ? "subagent result delivered" : `${count} subagent results delivered`;
	return expanded || !expandKey ? what : `${what} (${expandKey} for the full text)`;
}

/** Theme-like object as Pi passes it to renderers. */
interface ThemeLike {
	fg(color: string, text: string): string;
	bg?(color: string, text: string): string;
	bold?(text: string): string;
}

export function paintFor(theme: ThemeLike | undefined): Paint {
	return theme ? (color, text) => theme.fg(color as never, text) : plain;
}

export function textComponent(text: string): Text {
	return new Text(text, 0, 0);
}

/**
 * A delivered-results message as Pi draws its own custom messages: padded, on the custom-message
 * background, under a label, so it stands apart from the assistant's text around it.
 */
export function deliveredComponent(
	rows: ChildRow[],
	content: string,
	options: { expanded: boolean; expandKey?: string },
	theme: ThemeLike | undefined,
): Component {
	const paint = paintFor(theme);
	const background = theme?.bg?.bind(theme);
	const bg = background ? (t: string) => background("customMessageBg", t) : undefined;
	const box = new Box(1, 1, bg);
	const label = deliveredLabel(Math.max(rows.length, 1), options.expanded, options.expandKey);
	box.addChild(new Text(paint("customMessageLabel", theme?.bold?.(label) ?? label), 0, 0));
	box.addChild(new Text(resultText(rows, content, options.expanded, paint), 0, 0));
	return box;
}

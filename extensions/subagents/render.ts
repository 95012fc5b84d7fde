/**
 * TUI rendering: compact one-line-per-child views of tool calls, tool results and delivered
 * results (full projected text when expanded), and the status line / widget. The row builders
 * are pure (plain strings, a colour function) so they are tested without a terminal.
 */
import { Text } from "@mariozechner/pi-tui";
import { type ChildRecord, type ChildState, formatCount, formatDuration, statusGlyph } from "./domain.ts";

/** Colour function: Pi's theme.fg, or identity in tests. */
export type Paint = (color: string, text: string) => string;

const plain: Paint = (_c, t) => t;

/** One child as the renderers receive it in tool result details. */
export interface ChildRow {
	/** Child id. */
	id: string;
	/** Short title. */
	name: string;
	/** State at the time of the result. */
	state: ChildState;
	/** UTF-8 bytes of the full result, when there is one. */
	fullBytes?: number;
	/** UTF-8 bytes shown to the model for it. */
	shownBytes?: number;
	/** Artifact path, when the full text was stored. */
	artifactPath?: string;
	/** Extra words (e.g. "queued #2", "already delivered"). */
	note?: string;
}

function stateColor(state: ChildState): string {
	if (state === "completed") return "success";
	if (state === "failed") return "error";
	if (state === "cancelled") return "warning";
	return "accent";
}

/** "✓ sa-1 title  completed  37,212 B → 15,980 B  …/ab12cd34.txt". */
export function rowText(row: ChildRow, paint: Paint = plain): string {
	const parts = [paint(stateColor(row.state), statusGlyph(row.state)), paint("accent", row.id), row.name];
	parts.push(paint("muted", row.state));
	if (row.fullBytes !== undefined) {
		const shown =
			row.shownBytes !== undefined && row.shownBytes < row.fullBytes ? ` → ${formatCount(row.shownBytes)} B` : "";
		parts.push(paint("dim", `${formatCount(row.fullBytes)} B${shown}`));
	}
	if (row.note) parts.push(paint("dim", row.note));
	if (row.artifactPath) parts.push(paint("dim", shortPath(row.artifactPath)));
	return parts.join(" ");
}

/** Last two path segments, so rows stay on one line. */
export function shortPath(path: string): string {
	const segments = path.split("/").filter(Boolean);
	return segments.length <= 2 ? path : `…/${segments.slice(-2).join("/")}`;
}

/** Text of a tool call: name and the gist of its arguments. */
export function callText(tool: string, args: Record<string, unknown>, paint: Paint = plain): string {
	const title = paint("toolTitle", tool);
	if (tool === "subagent_spawn") {
		const name = typeof args.name === "string" && args.name ? args.name : String(args.prompt ?? "").split("\n")[0];
		const short = name.length > 60 ? `${name.slice(0, 59)}…` : name;
		const extras = [args.model, args.context === "fork" ? "fork" : undefined].filter(Boolean).join(", ");
		return `${title} ${short}${extras ? paint("dim", ` (${extras})`) : ""}`;
	}
	const ids = Array.isArray(args.ids) ? (args.ids as string[]).join(", ") : typeof args.id === "string" ? args.id : "";
	const extra = tool === "subagent_wait" && args.mode === "any" ? " (any)" : "";
	return `${title} ${ids || (tool === "subagent_wait" ? "all outstanding" : "")}${extra}`.trimEnd();
}

/** Collapsed view: one row per child; expanded: the rows, then the full text the model saw. */
export function resultText(rows: ChildRow[], fullText: string, expanded: boolean, paint: Paint = plain): string {
	const lines = rows.map((r) => rowText(r, paint));
	if (!expanded) return lines.length > 0 ? lines.join("\n") : firstLine(fullText);
	return lines.length > 0 ? `${lines.join("\n")}\n\n${fullText}` : fullText;
}

function firstLine(text: string): string {
	const line = text.split("\n")[0] ?? "";
	return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

/** Footer status: counts of running and queued children, or undefined when there is nothing to show. */
export function statusText(children: ChildRecord[], paint: Paint = plain): string | undefined {
	const running = children.filter((c) => c.state === "running" || c.state === "starting").length;
	const queued = children.filter((c) => c.state === "queued").length;
	if (running + queued === 0) return undefined;
	const q = queued > 0 ? `, ${queued} queued` : "";
	return paint("accent", `● subagents: ${running} running${q}`);
}

/** Widget rows: each running or queued child with elapsed time and tokens. */
export function widgetLines(children: ChildRecord[], now: number, paint: Paint = plain): string[] {
	return children
		.filter((c) => c.state === "running" || c.state === "starting" || c.state === "queued")
		.map((c) => {
			const elapsed = c.startedAt ? formatDuration(now - c.startedAt) : "waiting";
			const tokens = c.contextTokens !== undefined ? ` · ${formatCount(c.contextTokens)} tok` : "";
			return `${paint(stateColor(c.state), statusGlyph(c.state))} ${c.id} ${c.name} · ${elapsed}${tokens}`;
		});
}

/** Theme-like object as Pi passes it to renderers. */
interface ThemeLike {
	fg(color: string, text: string): string;
}

export function paintFor(theme: ThemeLike | undefined): Paint {
	return theme ? (color, text) => theme.fg(color as never, text) : plain;
}

export function textComponent(text: string): Text {
	return new Text(text, 0, 0);
}

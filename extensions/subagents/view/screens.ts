/**
 * /subagents in Pi's TUI: a picker of this session's children (newest first, live), then the running
 * children of other sessions of this process (marked, cancel only), and a live view of
 * one child (state line on top, its transcript as it streams, scrollable, a line to steer it, a key to
 * cancel it with a confirmation). Pure row builders plus two small pi-tui components; every line is
 * sanitized (shared/text/sanitize) and cut to the terminal's width with pi-tui's helpers.
 */

import {
	type Component,
	Input,
	Key,
	matchesKey,
	truncateToWidth,
	visibleWidth,
	wrapTextWithAnsi,
} from "@mariozechner/pi-tui";
import { sanitizeLine, sanitizeTerminalText } from "../../shared/text/sanitize.ts";
import { questionBrief } from "../ask/question.ts";
import { formatCount, formatDuration, statusGlyph } from "../domain/format.ts";
import { type ChildRecord, isSettled, queuePosition } from "../domain/records.ts";
import { ASKING_OTHER_CELL, ASKING_OTHER_STATE, ASKING_STATE, askingViewLine } from "../prompt/ask.ts";
import { spendOfBudget, spentCell } from "../prompt/budget.ts";
import { type OtherChild, otherTag } from "./others.ts";
import type { Paint } from "./render.ts";
import type { TranscriptItem, TranscriptState } from "./transcript.ts";

const clean = (text: string) => sanitizeLine(text, { widthOf: visibleWidth });
const cleanBlock = (text: string) => sanitizeTerminalText(text, { widthOf: visibleWidth });

/** Glyph of any state (a state this module does not know yet gets a neutral dot). */
function glyph(state: string): string {
	try {
		return statusGlyph(state as ChildRecord["state"]) ?? "·";
	} catch {
		return "·";
	}
}

function stateColor(state: string): string {
	if (state === "completed") return "success";
	if (state === "failed") return "error";
	if (state === "cancelled" || state === "incomplete" || state === "interrupted" || state === "budget")
		return "warning";
	return "accent";
}

/** The named agent a child runs as ("" for an ad-hoc child). */
function agentOf(c: ChildRecord): string {
	return typeof c.agent === "string" ? c.agent : "";
}

/** Elapsed time of the current (or last) run. */
export function elapsedOf(c: ChildRecord, now: number): string {
	if (!c.startedAt) return c.state === "queued" || c.state === "waiting" ? "waiting" : "—";
	return formatDuration((c.endedAt ?? now) - c.startedAt);
}

/** Context use: "12,345 / 128,000 (9.6%)", or "—". */
export function contextOf(c: ChildRecord): string {
	if (c.contextTokens === undefined) return "—";
	if (!c.contextWindow) return `${formatCount(c.contextTokens)} tok`;
	return `${formatCount(c.contextTokens)} (${((c.contextTokens / c.contextWindow) * 100).toFixed(1)}%)`;
}

/**
 * State words: "running", "queued #2", "failed". `other`: a child of another session, whose question (if any)
 * is for that session ("asks its session"; "asks session" in the picker's column), not for this one.
 */
export function stateWords(
	c: ChildRecord,
	all: readonly ChildRecord[],
	other: false | "line" | "cell" = false,
): string {
	if (c.state === "waiting") return `waits for ${(c.after ?? []).join(", ")}`;
	// A child waiting for the parent's answer (ask_parent) says so; one whose run ended while it asked, too.
	const asking = other === "cell" ? ASKING_OTHER_CELL : other ? ASKING_OTHER_STATE : ASKING_STATE;
	if (c.question) return isSettled(c.state) ? `${c.state}, ${asking}` : asking;
	return c.state === "queued" ? `queued #${queuePosition([...all], c.id)}` : c.state;
}

/** The picker's mark of a child: "?" while it waits for an answer, else its state's glyph. */
function markOf(c: ChildRecord): string {
	return c.question ? "?" : glyph(c.state);
}

/** The colour of a child's row and state line: the widget's "?" colour while it waits for an answer. */
function markColor(c: ChildRecord): string {
	return c.question ? "warning" : stateColor(c.state);
}

/** Picker columns: header and widths (in columns). */
const COLUMNS = [
	["", 2],
	["id", 6],
	["name", 22],
	["agent", 12],
	["model", 22],
	["state", 12],
	["elapsed", 9],
	["turns", 6],
	["tokens", 8],
	["context", 16],
	["spent", 18],
] as const;

function cell(text: string, width: number): string {
	const cut = truncateToWidth(text, width, "…");
	return cut + " ".repeat(Math.max(0, width - visibleWidth(cut)));
}

/** The picker's header line. */
export function pickerHeader(): string {
	return COLUMNS.map(([h, w]) => cell(h, w)).join(" ");
}

/** One child as a picker row (plain text; the caller paints); `other`: a child of another session. */
export function pickerRow(c: ChildRecord, all: readonly ChildRecord[], now: number, other = false): string {
	const values = [
		markOf(c),
		c.id,
		clean(c.name),
		clean(agentOf(c)),
		clean(c.model),
		stateWords(c, all, other && "cell"),
		elapsedOf(c, now),
		formatCount(c.turns),
		formatCount(c.outputTokens),
		contextOf(c),
		spentCell(c),
	];
	return values.map((v, i) => cell(v, COLUMNS[i][1])).join(" ");
}

/** Children newest first (the picker's order). */
export function newestFirst(children: readonly ChildRecord[]): ChildRecord[] {
	const n = (id: string) => Number(id.replace(/^sa-/, "")) || 0;
	return [...children].sort((a, b) => b.createdAt - a.createdAt || n(b.id) - n(a.id));
}

/** The live view's state line; `other`: a child of another session. */
export function stateLine(c: ChildRecord, all: readonly ChildRecord[], now: number, other = false): string {
	const parts = [
		`${markOf(c)} ${c.id} ${clean(c.name)}`,
		agentOf(c) ? clean(agentOf(c)) : undefined,
		clean(c.model),
		`${stateWords(c, all, other && "line")} ${elapsedOf(c, now)}`,
		`${formatCount(c.turns)} ${c.turns === 1 ? "turn" : "turns"}`,
		`${formatCount(c.outputTokens)} tok out`,
		`context ${contextOf(c)}`,
		c.spend || c.budget ? spendOfBudget(c.spend, c.budget) : undefined,
		c.run > 1 ? `run ${c.run}` : undefined,
	];
	return parts.filter(Boolean).join(" · ");
}

/** How a transcript that cannot be read is said. */
export function transcriptProblem(state: TranscriptState, c: ChildRecord): string | undefined {
	if (state.ok) return undefined;
	if (state.reason === "no-file") {
		return isSettled(c.state)
			? "No transcript: this child never wrote a session file."
			: "Waiting for the child's first reply (Pi writes its session file then).";
	}
	if (state.reason === "gone") return `Transcript gone: ${clean(state.detail)} no longer exists.`;
	return `Transcript unreadable: ${clean(state.detail)}`;
}

/** Transcript items as display lines, each prefixed by what it is; tool results as `project` shortens them. */
export function transcriptLines(
	items: readonly TranscriptItem[],
	project: (text: string) => string,
	paint: Paint,
): string[] {
	const lines: string[] = [];
	for (const item of items) {
		switch (item.kind) {
			case "task":
				lines.push(paint("accent", "task ›"), ...cleanBlock(item.text).split("\n"));
				break;
			case "message":
				lines.push(paint("accent", "message ›"), ...cleanBlock(item.text).split("\n"));
				break;
			case "assistant":
				lines.push(...cleanBlock(item.text).split("\n"));
				break;
			case "toolCall":
				lines.push(`${paint("toolTitle", `→ ${clean(item.name)}`)} ${paint("dim", clean(item.args))}`);
				break;
			case "toolResult": {
				const mark = item.isError ? paint("error", "✗") : paint("success", "←");
				lines.push(`${mark} ${paint("muted", clean(item.name))}`);
				for (const l of cleanBlock(project(item.text)).split("\n")) lines.push(paint("toolOutput", `  ${l}`));
				break;
			}
		}
		lines.push("");
	}
	return lines;
}

/** What the controller asks of the outside world. */
export interface ViewHost {
	/** The children now. */
	children(): readonly ChildRecord[];
	/** The transcript of one child (polled). */
	transcript(c: ChildRecord): { items: readonly TranscriptItem[]; state: TranscriptState };
	/** Shorten one tool result for display (through the projection). */
	project(text: string): string;
	/** Steer or re-run a child, as subagent_send does; resolves with what happened, rejects with why not. */
	send(id: string, text: string): Promise<string>;
	/** Cancel a running or queued child. */
	cancel(id: string): Promise<void>;
	/** Running, queued and waiting children of other sessions of this process (shown marked; cancel only). */
	others?(): readonly OtherChild[];
	/** Cancel a child of another session (its result is recorded and delivered in that session). */
	cancelOther?(session: string, id: string): Promise<void>;
	/** Terminal rows. */
	rows(): number;
	/** Redraw. */
	requestRender(): void;
	paint: Paint;
	/** Close /subagents. */
	close(): void;
}

/** A picker entry: a child of this session, or (with `other`) of another session of the process. */
interface Entry {
	child: ChildRecord;
	all: readonly ChildRecord[];
	other?: OtherChild;
}

/** Rows the panel leaves to Pi's chrome (widget, footer, status lines). */
const RESERVED_ROWS = 10;
const MIN_ROWS = 10;

/** The picker and the live view in one focused component (Esc in the view returns to the picker). */
export class SubagentsScreen implements Component {
	private selected = 0;
	private open: { id: string; session?: string } | undefined;
	private scroll = 0; // lines up from the bottom of the transcript
	private confirmCancel = false;
	private notice: { text: string; color: string } | undefined;
	private readonly input = new Input();
	private _focused = false;

	constructor(private readonly host: ViewHost) {
		this.input.onSubmit = (value) => this.submit(value);
	}

	get focused(): boolean {
		return this._focused;
	}
	set focused(value: boolean) {
		this._focused = value;
		this.input.focused = value;
	}

	private height(): number {
		return Math.max(MIN_ROWS, this.host.rows() - RESERVED_ROWS);
	}

	private own(): Entry[] {
		const all = this.host.children();
		return newestFirst(all).map((child) => ({ child, all }));
	}

	private others(): Entry[] {
		let others: readonly OtherChild[] = [];
		try {
			others = this.host.others?.() ?? [];
		} catch {
			others = [];
		}
		return others.map((other) => ({ child: other.child, all: other.siblings, other }));
	}

	/** This session's children newest first, then other sessions' (the picker's order). */
	private list(): Entry[] {
		return [...this.own(), ...this.others()];
	}

	private currentEntry(): Entry | undefined {
		const open = this.open;
		if (!open) return undefined;
		if (open.session === undefined) return this.own().find((e) => e.child.id === open.id);
		return this.others().find((e) => e.child.id === open.id && e.other?.session === open.session);
	}

	private submit(value: string): void {
		const entry = this.currentEntry();
		const child = entry?.child;
		const text = value.trim();
		if (!child || !text) return;
		if (entry.other) {
			this.notice = { text: "another session's child: steer it from its own session (/resume)", color: "warning" };
			return;
		}
		this.input.setValue("");
		this.notice = { text: `sending to ${child.id}…`, color: "dim" };
		this.host
			.send(child.id, value)
			.then((what) => {
				this.notice = { text: clean(what), color: "success" };
			})
			.catch((error) => {
				this.notice = { text: clean(error instanceof Error ? error.message : String(error)), color: "error" };
			})
			.finally(() => this.host.requestRender());
	}

	handleInput(data: string): void {
		if (!this.open) {
			this.pickerInput(data);
			return;
		}
		const entry = this.currentEntry();
		const child = entry?.child;
		if (this.confirmCancel) {
			this.confirmCancel = false;
			if (child && (data === "y" || data === "Y")) {
				this.notice = { text: `cancelling ${child.id}…`, color: "warning" };
				const other = entry.other;
				const cancelling = other
					? (this.host.cancelOther?.(other.session, child.id) ??
						Promise.reject(new Error("cannot cancel another session's child here")))
					: this.host.cancel(child.id);
				void cancelling
					.then(() => {
						this.notice = { text: `${child.id} cancelled`, color: "warning" };
					})
					.catch((error) => {
						this.notice = { text: clean(String(error)), color: "error" };
					})
					.finally(() => this.host.requestRender());
			} else this.notice = { text: "not cancelled", color: "dim" };
			this.host.requestRender();
			return;
		}
		const page = Math.max(1, this.height() - 6);
		if (matchesKey(data, Key.escape)) {
			this.open = undefined;
			this.notice = undefined;
			this.input.setValue("");
		} else if (matchesKey(data, Key.ctrl("x"))) {
			if (child && !isSettled(child.state)) this.confirmCancel = true;
			else this.notice = { text: "nothing to cancel: the child is not running", color: "dim" };
		} else if (matchesKey(data, Key.up)) this.scroll += 1;
		else if (matchesKey(data, Key.down)) this.scroll = Math.max(0, this.scroll - 1);
		else if (matchesKey(data, Key.pageUp)) this.scroll += page;
		else if (matchesKey(data, Key.pageDown)) this.scroll = Math.max(0, this.scroll - page);
		else if (matchesKey(data, Key.end)) this.scroll = 0;
		else this.input.handleInput(data);
		this.host.requestRender();
	}

	private pickerInput(data: string): void {
		const count = this.list().length;
		if (matchesKey(data, Key.escape) || data === "q") {
			this.host.close();
			return;
		}
		if (matchesKey(data, Key.up)) this.selected = Math.max(0, this.selected - 1);
		else if (matchesKey(data, Key.down)) this.selected = Math.min(Math.max(0, count - 1), this.selected + 1);
		else if (matchesKey(data, Key.enter) && count > 0) {
			const entry = this.list()[Math.min(this.selected, count - 1)];
			this.open = { id: entry.child.id, session: entry.other?.session };
			this.scroll = 0;
			this.notice = undefined;
		}
		this.host.requestRender();
	}

	render(width: number): string[] {
		const lines = this.open ? this.renderView(width) : this.renderPicker(width);
		return lines.map((l) => truncateToWidth(l, width));
	}

	private renderPicker(width: number): string[] {
		const { paint } = this.host;
		const own = this.own();
		const others = this.others();
		const entries = [...own, ...others];
		const now = Date.now();
		this.selected = Math.min(this.selected, Math.max(0, entries.length - 1));
		const rule = paint("borderMuted", "─".repeat(width));
		const out = [rule, paint("accent", `subagents of this session: ${own.length} (newest first)`)];
		// Every line below the headings, with the entry it draws (headings have none): scrolled as one list.
		const body: Array<{ text: string; entry?: number }> = [];
		if (own.length === 0) body.push({ text: paint("dim", "  no subagents in this session yet") });
		const row = (e: Entry, i: number) => {
			const pointer = i === this.selected ? paint("accent", "›") : " ";
			const color = e.other ? "muted" : markColor(e.child);
			return { text: `${pointer} ${paint(color, pickerRow(e.child, e.all, now, e.other !== undefined))}`, entry: i };
		};
		if (entries.length > 0) body.push({ text: paint("muted", `  ${pickerHeader()}`) });
		for (const [i, e] of own.entries()) body.push(row(e, i));
		if (others.length > 0) {
			body.push({
				text: paint("accent", `running in other sessions of this process: ${others.length} (cancel only)`),
			});
			// Each session's children under its own mark (the rows are as wide as the terminal already).
			for (const [i, e] of others.entries()) {
				if (e.other && e.other.session !== others[i - 1]?.other?.session)
					body.push({ text: paint("warning", `  ${otherTag(e.other.label)}`) });
				body.push(row(e, own.length + i));
			}
		}
		const room = Math.max(1, this.height() - 4);
		const at = Math.max(
			0,
			body.findIndex((l) => l.entry === this.selected),
		);
		const start = Math.max(0, Math.min(at - room + 1, body.length - room));
		out.push(...body.slice(start, start + room).map((l) => l.text));
		out.push(paint("dim", "↑↓ select · enter open · esc close"), rule);
		return out;
	}

	private renderView(width: number): string[] {
		const { paint } = this.host;
		const entry = this.currentEntry();
		const child = entry?.child;
		const rule = paint("borderMuted", "─".repeat(width));
		if (!entry || !child) {
			const gone = this.open?.session === undefined ? "is no longer known" : "of another session has settled";
			return [rule, paint("error", `${this.open?.id} ${gone}`), paint("dim", "esc back"), rule];
		}
		const all = entry.all;
		const { items, state } = this.host.transcript(child);
		const body: string[] = [];
		for (const line of transcriptLines(items, (t) => this.host.project(t), paint)) {
			body.push(...(line === "" ? [""] : wrapTextWithAnsi(line, Math.max(10, width - 1))));
		}
		const problem = transcriptProblem(state, child);
		if (problem) body.push(paint(state.ok ? "dim" : "warning", problem));
		if (child.streamingText && !isSettled(child.state)) {
			for (const l of cleanBlock(child.streamingText).split("\n"))
				body.push(...wrapTextWithAnsi(l, Math.max(10, width - 1)));
		}
		if (isSettled(child.state) && child.error) body.push(paint("error", `${child.state}: ${clean(child.error)}`));
		const room = Math.max(1, this.height() - 6 - (child.question && !entry.other ? 1 : 0));
		const maxScroll = Math.max(0, body.length - room);
		this.scroll = Math.min(this.scroll, maxScroll);
		const end = body.length - this.scroll;
		const shown = body.slice(Math.max(0, end - room), end);
		while (shown.length < room) shown.push("");
		const where = maxScroll > 0 ? ` · lines ${Math.max(1, end - room + 1)}–${end} of ${body.length}` : "";
		const hint = this.confirmCancel
			? paint("warning", `cancel ${child.id}? press y to cancel it, any other key keeps it running`)
			: entry.other
				? paint("dim", `ctrl+x cancel · ↑↓ pgup pgdn scroll · end follow · esc back${where}`)
				: paint(
						"dim",
						`enter ${child.question ? "answer" : "steer"} · ctrl+x cancel · ↑↓ pgup pgdn scroll · end follow · esc back${where}`,
					);
		const status = this.notice ? paint(this.notice.color, this.notice.text) : "";
		// Hints on top and the input last: a Pi line that clips a tall component keeps both in sight.
		return [
			rule,
			paint(
				entry.other ? stateColor(child.state) : markColor(child),
				stateLine(child, all, Date.now(), entry.other !== undefined),
			),
			...(entry.other ? [paint("warning", `${otherTag(entry.other.label)} · its result goes to that session`)] : []),
			...(child.question && !entry.other
				? [paint("warning", clean(askingViewLine(questionBrief(child.question.text))))]
				: []),
			hint,
			rule,
			...shown,
			rule,
			status,
			...this.input.render(width),
		];
	}

	invalidate(): void {
		this.input.invalidate();
	}
}

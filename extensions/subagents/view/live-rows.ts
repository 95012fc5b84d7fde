/**
 * Rows that stay true: a spawn or wait row recorded "starting" or "queued" when the tool ran, but the
 * child moved on. Each time Pi draws the row, it is brought up to the child's current state (running,
 * done, failed, cancelled, incomplete, or queued with its position), and a settled failure carries its
 * reason in one line; a child that waits for the parent's answer (ask_parent) is marked "?" with the
 * question's start, as in the widget. A row recorded with a final state keeps it: it describes that run's result.
 * After `pi -c` the children come back from the session, so the same lookup gives their final state.
 */
import type { Component } from "@mariozechner/pi-tui";
import { Text } from "@mariozechner/pi-tui";
import { questionBrief } from "../ask/question.ts";
import type { ChildRow } from "../domain/records.ts";
import { type ChildRecord, isSettled, queuePosition } from "../domain/records.ts";
import { ASKING_STATE } from "../prompt/ask.ts";
import { type Paint, resultText } from "./render.ts";

/** The children as the manager knows them now (undefined before the first event of a session). */
export type LiveChildren = () => readonly ChildRecord[] | undefined;

/** States whose rows show a reason (the error text of the run). */
function wantsReason(state: string): boolean {
	return state !== "completed" && isSettled(state as ChildRecord["state"]);
}

/** One row brought up to date: pure, so it is unit-tested without a terminal. */
export function currentRow(row: ChildRow, children: readonly ChildRecord[]): ChildRow {
	const child = children.find((c) => c.id === row.id);
	if (!child) return row;
	const recordedFinal = isSettled(row.state);
	if (recordedFinal) {
		// The row describes one settled result; only a reason it lacks is filled in (same state, same story),
		// and a question it showed goes once it is answered (it never gains one: a later run's is not its story).
		let kept = row;
		if (!row.reason && wantsReason(row.state) && child.state === row.state && child.error) {
			kept = { ...kept, reason: child.error };
		}
		if (row.question !== undefined && !child.question) kept = withoutQuestion(kept);
		return kept;
	}
	const next: ChildRow = withoutQuestion({ ...row, state: child.state, name: child.name || row.name });
	if (child.state === "queued") next.note = `#${queuePosition([...children], child.id)}`;
	else if (child.state === "waiting") next.note = `waits for ${(child.after ?? []).join(", ")}`;
	else next.note = row.note === "queued" || row.note === ASKING_STATE ? undefined : row.note;
	// A child that waits for the parent's answer (ask_parent) shows it, as the widget does, until it is answered.
	if (child.question) next.question = questionBrief(child.question.text);
	if (wantsReason(child.state) && child.error) next.reason = child.error;
	return next;
}

function withoutQuestion(row: ChildRow): ChildRow {
	if (row.question === undefined) return row;
	const { question: _question, ...rest } = row;
	return rest;
}

/** All rows of a result, brought up to date. */
export function currentRows(rows: readonly ChildRow[], children: readonly ChildRecord[] | undefined): ChildRow[] {
	if (!children || children.length === 0) return [...rows];
	return rows.map((r) => currentRow(r, children));
}

/**
 * A tool result drawn from its rows as they are now: Pi keeps the component and calls render on every
 * frame, so a state change shows on the next redraw (the status widget's refresh requests one).
 */
export class LiveResultComponent implements Component {
	private readonly text = new Text("", 0, 0);
	private shown: string | undefined;

	constructor(
		private readonly rows: readonly ChildRow[],
		private readonly fullText: string,
		private readonly expanded: boolean,
		private readonly paint: Paint,
		private readonly children: LiveChildren,
	) {}

	private content(): string {
		let children: readonly ChildRecord[] | undefined;
		try {
			children = this.children();
		} catch {
			children = undefined;
		}
		return resultText(currentRows(this.rows, children), this.fullText, this.expanded, this.paint);
	}

	render(width: number): string[] {
		const content = this.content();
		if (content !== this.shown) {
			this.shown = content;
			this.text.setText(content);
		}
		return this.text.render(width);
	}

	invalidate(): void {
		this.shown = undefined;
		this.text.invalidate();
	}
}

/**
 * Rows that stay true: a spawn or wait row recorded "starting" or "queued" when the tool ran, but the
 * child moved on. Each time Pi draws the row, it is brought up to the child's current state (running,
 * done, failed, cancelled, incomplete, or queued with its position), and a settled failure carries its
 * reason in one line. A row recorded with a final state keeps it: it describes that run's result.
 * After `pi -c` the children come back from the session, so the same lookup gives their final state.
 */
import type { Component } from "@mariozechner/pi-tui";
import { Text } from "@mariozechner/pi-tui";
import type { ChildRow } from "../domain/records.ts";
import { type ChildRecord, isSettled, queuePosition } from "../domain/records.ts";
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
		// The row describes one settled result; only a reason it lacks is filled in (same state, same story).
		if (!row.reason && wantsReason(row.state) && child.state === row.state && child.error) {
			return { ...row, reason: child.error };
		}
		return row;
	}
	const next: ChildRow = { ...row, state: child.state, name: child.name || row.name };
	if (child.state === "queued") next.note = `#${queuePosition([...children], child.id)}`;
	else if (child.state === "waiting") next.note = `waits for ${(child.after ?? []).join(", ")}`;
	else next.note = row.note === "queued" ? undefined : row.note;
	if (wantsReason(child.state) && child.error) next.reason = child.error;
	return next;
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

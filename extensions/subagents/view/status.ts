/**
 * The status line and widget of this session's children, and one widget line counting other sessions'
 * children: redrawn on every change the manager publishes, and every STATUS_REFRESH_MS while a child is
 * active (its duration ticks). The refresh timer is this
 * module's own: it starts with the first active child and stops when none is left, or at shutdown.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { ChildRecord } from "../domain/records.ts";
import { type OtherChild, othersWidgetLine } from "./others.ts";
import { paintFor, statusText, widgetLines } from "./render.ts";

/** Refresh period of the status widget while children run, in milliseconds. */
export const STATUS_REFRESH_MS = 1_000;

export class StatusLine {
	private timer: ReturnType<typeof setInterval> | undefined;

	/** `children` is undefined while the session has none made (before first use, after shutdown). */
	constructor(
		private readonly context: () => ExtensionContext | undefined,
		private readonly children: () => ChildRecord[] | undefined,
		/** Children of other sessions of this process still running (counted apart, one widget line). */
		private readonly others: () => readonly OtherChild[] = () => [],
	) {}

	/** Redraw now from the children's current state. */
	readonly refresh = (): void => {
		const ctx = this.context();
		if (!ctx?.hasUI) return;
		try {
			const own = this.children();
			const others = this.others();
			if (!own && others.length === 0 && !this.timer) return;
			const children = own ?? [];
			const paint = paintFor(ctx.ui.theme);
			ctx.ui.setStatus("subagents", statusText(children, paint));
			const lines = widgetLines(children, Date.now(), paint);
			const elsewhere = othersWidgetLine(others, paint);
			if (elsewhere) lines.push(elsewhere);
			ctx.ui.setWidget("subagents", lines.length > 0 ? lines : undefined);
			const active = lines.length > 0;
			if (active && !this.timer) {
				this.timer = setInterval(this.refresh, STATUS_REFRESH_MS);
				this.timer.unref?.();
			} else if (!active && this.timer) this.stop();
		} catch {
			// A UI that went away (session replaced) must not break the children.
		}
	};

	/** Stop the refresh timer (shutdown). */
	stop(): void {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}
}

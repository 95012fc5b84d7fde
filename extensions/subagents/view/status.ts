/**
 * The status line and widget of this session's children: redrawn on every change the manager publishes,
 * and every STATUS_REFRESH_MS while a child is active (its duration ticks). The refresh timer is this
 * module's own: it starts with the first active child and stops when none is left, or at shutdown.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { ChildRecord } from "../domain.ts";
import { paintFor, statusText, widgetLines } from "./render.ts";

/** Refresh period of the status widget while children run, in milliseconds. */
export const STATUS_REFRESH_MS = 1_000;

export class StatusLine {
	private timer: ReturnType<typeof setInterval> | undefined;

	/** `children` is undefined while the session has none made (before first use, after shutdown). */
	constructor(
		private readonly context: () => ExtensionContext | undefined,
		private readonly children: () => ChildRecord[] | undefined,
	) {}

	/** Redraw now from the children's current state. */
	readonly refresh = (): void => {
		const ctx = this.context();
		const children = this.children();
		if (!ctx?.hasUI || !children) return;
		try {
			const paint = paintFor(ctx.ui.theme);
			ctx.ui.setStatus("subagents", statusText(children, paint));
			const lines = widgetLines(children, Date.now(), paint);
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

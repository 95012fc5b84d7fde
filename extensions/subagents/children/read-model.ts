/**
 * The manager's read model as others see it: what it publishes (a visible change, a settled run) and the
 * set of subscribers it publishes to. A subscriber that throws is logged and skipped; the others still hear.
 */
import type { ChildRecord, SettledResult } from "../domain.ts";

/** What the manager publishes to its subscribers. */
export type ChildrenEvent = { type: "changed" } | { type: "settled"; result: SettledResult; child: ChildRecord };
export type ChildrenListener = (event: ChildrenEvent) => void;

/** The subscribers of one manager. */
export class Subscribers {
	private readonly listeners = new Set<ChildrenListener>();

	/** Add a listener; returns its unsubscribe. */
	add(listener: ChildrenListener): () => void {
		this.listeners.add(listener);
		return () => {
			this.listeners.delete(listener);
		};
	}

	/** Tell every listener, in subscription order. */
	publish(event: ChildrenEvent): void {
		for (const listener of [...this.listeners]) {
			try {
				listener(event);
			} catch (error) {
				const what = event.type === "settled" ? `after ${event.result.key} settled` : "after a change";
				console.error(`subagents: ${what}: ${String(error)}`);
			}
		}
	}
}

/**
 * The manager's read model as others see it: what it publishes (a visible change, a settled run) and the
 * set of subscribers it publishes to. A subscriber that throws is logged and skipped; the others still hear.
 */
import type { SettledResult } from "../domain/ledger.ts";
import type { ChildRecord } from "../domain/records.ts";

/**
 * What the manager publishes to its subscribers: a visible change; a run queued (a spawn, or a new run
 * by subagent_send) or started (its session file known), both synchronously, so the parent's session
 * can record them before the tool returns; a settled run.
 */
export type ChildrenEvent =
	| { type: "changed" }
	| { type: "queued"; child: ChildRecord; run: number }
	| { type: "started"; child: ChildRecord; run: number }
	| { type: "settled"; result: SettledResult; child: ChildRecord };
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
				const what =
					event.type === "settled"
						? `after ${event.result.key} settled`
						: event.type === "changed"
							? "after a change"
							: `after ${event.child.id} run ${event.run} was ${event.type}`;
				console.error(`subagents: ${what}: ${String(error)}`);
			}
		}
	}
}

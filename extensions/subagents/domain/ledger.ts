/**
 * The delivery ledger: every settled run's result, keyed by child and run, and who consumed it (a wait or
 * automatic delivery), so each result is delivered in full exactly once. No Pi imports, no I/O.
 */

import type { ChildState } from "./records.ts";
import type { ResultExtras } from "./result-extras.ts";

/** Key of one result: a child's run. */
export function resultKey(id: string, run: number): string {
	return `${id}#${run}`;
}

/**
 * Who consumed a result: nobody yet, a subagent_wait, or automatic delivery; "relayed": children took it as
 * input and the parent was told so in one line; a subagent_wait on it still gives it in full.
 */
export type DeliveryState = "pending" | "wait" | "auto" | "relayed";

/** A settled run's result as the ledger keeps it. */
export interface SettledResult {
	/** resultKey(id, run). */
	key: string;
	/** Child id. */
	id: string;
	/** Run number (1-based). */
	run: number;
	/** Exact text the parent is owed (the child's answer, or error + partial output). */
	text: string;
	/** State the run settled in. */
	state: ChildState;
	/** Epoch ms the run settled. */
	settledAt: number;
	/** Who consumed it, if anyone. */
	delivery: DeliveryState;
	/** Artifact path once a projection stored the full text. */
	artifactPath?: string;
	/** Shown after the state in the result's header (e.g. "output valid"), from the run's steps. */
	verdict?: string;
	/** Structured value and worktree changes, for tool-result details. */
	extras?: ResultExtras;
}

/**
 * Exactly-once bookkeeping: a result is claimed once, by a wait or by automatic delivery.
 * JavaScript runs one callback at a time, so claim() is atomic with respect to both paths.
 */
export class DeliveryLedger {
	private readonly results = new Map<string, SettledResult>();

	add(result: Omit<SettledResult, "delivery"> & { delivery?: DeliveryState }): SettledResult {
		const existing = this.results.get(result.key);
		if (existing) return existing;
		const stored: SettledResult = { ...result, delivery: result.delivery ?? "pending" };
		this.results.set(result.key, stored);
		return stored;
	}

	get(key: string): SettledResult | undefined {
		return this.results.get(key);
	}

	/** Latest result of a child (highest run). */
	latest(id: string): SettledResult | undefined {
		let best: SettledResult | undefined;
		for (const r of this.results.values()) if (r.id === id && (!best || r.run > best.run)) best = r;
		return best;
	}

	/** Mark as consumed; false when someone already did (the caller must then not deliver it in full). */
	claim(key: string, by: Exclude<DeliveryState, "pending">): boolean {
		const r = this.results.get(key);
		if (r?.delivery !== "pending" && !(r?.delivery === "relayed" && by === "wait")) return false;
		r.delivery = by;
		return true;
	}

	/** Undo a claim whose delivery failed, so the result is offered again. */
	release(key: string): void {
		const r = this.results.get(key);
		if (r) r.delivery = "pending";
	}

	/** Results nobody consumed yet, oldest first. */
	pending(): SettledResult[] {
		return [...this.results.values()].filter((r) => r.delivery === "pending").sort((a, b) => a.settledAt - b.settledAt);
	}

	all(): SettledResult[] {
		return [...this.results.values()];
	}
}

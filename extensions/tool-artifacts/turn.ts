/**
 * The per-turn cap: when the tool results of one assistant message together exceed a total, the
 * largest move to artifacts first until the turn fits.
 *
 * Pi fires `tool_result` once per call, in completion order, and (in its default parallel mode)
 * runs every call's hook concurrently, after all calls were prepared and before any result is sent
 * to the model. So the batch is known: each prepared call passes `tool_call` first. A result's hook
 * waits here until every call registered so far has produced its result (or ended without one),
 * then all decide together from the same facts. In sequential mode the next call is prepared only
 * after this hook returns, so the wait ends at once and the cap works greedily: earlier results are
 * already final and count at their final size. Pure bookkeeping; no Pi imports.
 */

/** One tool result of a turn, as the cap sees it. */
export interface TurnItem {
	/** Tool call id. */
	id: string;
	/** Characters the model would see for this result if left alone. */
	chars: number;
	/** Already final (sent or decided); counts at `chars`, never moved. */
	fixed: boolean;
	/** Becomes an artifact anyway (over its threshold); counts at the stub's size. */
	forced: boolean;
	/** May be moved to an artifact (false for pass-through results and switched-off tools). */
	eligible: boolean;
}

/** What the cap decided. */
export interface TurnPlan {
	/** Ids moved to artifacts by the cap (not those forced by their threshold), largest first. */
	moved: string[];
	/** Characters the turn is expected to take after the plan. */
	totalChars: number;
	/** True when the turn fits the cap after the plan. */
	fits: boolean;
}

/**
 * Pure: which results move to artifacts. `stubChars` is the size a stub is assumed to take (its
 * budget). Largest eligible first (ties in batch order), only while the turn is over the cap, and
 * only results larger than a stub (moving a smaller one would not help).
 */
export function planTurnCap(items: readonly TurnItem[], capChars: number, stubChars: number): TurnPlan {
	const cost = (item: TurnItem) => (item.forced && !item.fixed ? Math.min(item.chars, stubChars) : item.chars);
	let total = items.reduce((sum, item) => sum + cost(item), 0);
	const candidates = items
		.map((item, index) => ({ item, index }))
		.filter(({ item }) => item.eligible && !item.fixed && !item.forced && item.chars > stubChars)
		.sort((a, b) => b.item.chars - a.item.chars || a.index - b.index);
	const moved: string[] = [];
	for (const { item } of candidates) {
		if (total <= capChars) break;
		moved.push(item.id);
		total -= item.chars - stubChars;
	}
	return { moved, totalChars: total, fits: total <= capChars };
}

type MemberState = "pending" | "arrived" | "ended";

interface Member {
	state: MemberState;
	item: TurnItem;
}

interface Waiter {
	id: string;
	resolve: (moved: boolean) => void;
}

/** Longest a result waits for its siblings before deciding with what has arrived, in milliseconds. */
export const BATCH_WAIT_LIMIT_MS = 10 * 60_000;

/**
 * One turn's tool calls. `register` on `tool_call`, `arrive` on `tool_result` (resolves once the
 * batch is complete: true when the cap moves this result), `ended` on `tool_execution_end` (a call
 * blocked or failed before its hook, which will never arrive), `finalize` once a result's final
 * size is known.
 */
export class TurnBatch {
	private readonly members = new Map<string, Member>();
	private waiters: Waiter[] = [];
	private timer: ReturnType<typeof setTimeout> | undefined;

	constructor(
		private readonly capChars: number,
		private readonly stubChars: number,
		private readonly waitLimitMs = BATCH_WAIT_LIMIT_MS,
	) {}

	/** A call that will (normally) produce a `tool_result`. */
	register(id: string): void {
		if (this.members.has(id)) return;
		this.members.set(id, {
			state: "pending",
			item: { id, chars: 0, fixed: false, forced: false, eligible: false },
		});
	}

	/** A call's result is here. Resolves when every registered call has arrived or ended. */
	arrive(item: Omit<TurnItem, "fixed">, signal?: AbortSignal): Promise<boolean> {
		const member = this.members.get(item.id);
		const next: Member = { state: "arrived", item: { ...item, fixed: false } };
		if (member) Object.assign(member, next);
		else this.members.set(item.id, next);
		const promise = new Promise<boolean>((resolve) => {
			this.waiters.push({ id: item.id, resolve });
		});
		signal?.addEventListener("abort", () => this.release(), { once: true });
		if (signal?.aborted) this.release();
		else this.releaseIfComplete();
		if (this.waiters.length > 0 && !this.timer) {
			this.timer = setTimeout(() => this.release(), this.waitLimitMs);
			this.timer.unref?.();
		}
		return promise;
	}

	/** A call ended; when it never arrived it will not, so it no longer holds the batch. */
	ended(id: string, chars: number): void {
		const member = this.members.get(id);
		if (member?.state !== "pending") return;
		member.state = "ended";
		member.item = { id, chars, fixed: true, forced: false, eligible: false };
		this.releaseIfComplete();
	}

	/** The result's final size (stub or verbatim); later decisions count it as fixed. */
	finalize(id: string, chars: number): void {
		const member = this.members.get(id);
		if (!member) return;
		member.item = { ...member.item, chars, fixed: true, forced: false };
	}

	/** Ids registered but neither arrived nor ended. */
	pendingIds(): string[] {
		return [...this.members.entries()].filter(([, m]) => m.state === "pending").map(([id]) => id);
	}

	private releaseIfComplete(): void {
		if (this.pendingIds().length === 0) this.release();
	}

	/** Decide for everyone waiting, from what is known now (pending calls count as empty). */
	private release(): void {
		if (this.waiters.length === 0) return;
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
		const items = [...this.members.values()].filter((m) => m.state !== "pending").map((m) => m.item);
		const plan = planTurnCap(items, this.capChars, this.stubChars);
		const moved = new Set(plan.moved);
		const waiters = this.waiters;
		this.waiters = [];
		for (const w of waiters) w.resolve(moved.has(w.id));
	}
}

/**
 * Automatic delivery: every result nobody received yet goes to the parent as ONE message, through the batch
 * projection, once the parent is idle. Delivery claims results in the ledger before any await, so a wait and
 * an automatic delivery can never both hand out the same result in full. AutoDelivery owns the timer that
 * debounces deliveries and polls for idle after the parent's run ends.
 */
import { headroomDetails } from "../../shared/host/details.ts";
import { singleShotMode } from "../../shared/host/pi-host.ts";
import type { SubagentManager } from "../children/manager.ts";
import { type ChildRecord, type ChildRow, resultKey, type SettledResult } from "../domain.ts";
import { autoDeliveryHeader, noRoomLine, noRoomUnsavedLine, restoredNote, resultHeader } from "../prompt.ts";
import type { SubagentServices } from "../services.ts";
import { type BatchInput, type BatchItem, type BatchOutput, projectBatch } from "./batch.ts";
import { batchOptions } from "./batch-options.ts";
import { persistDelivered } from "./persistence.ts";

/** customType of the messages that carry results to the parent. */
export const RESULT_MESSAGE_TYPE = "subagent-result";
/** Delay before an automatic delivery, in milliseconds, so children finishing together arrive together. */
export const FLUSH_DEBOUNCE_MS = 50;
/** Interval of idle polls after the parent's run ended, in milliseconds. */
export const FLUSH_POLL_MS = 25;
/** Idle polls after agent_end before giving up until the next run ends (0.73 has no agent_settled). */
export const FLUSH_POLL_ATTEMPTS = 200;

/** A result as a batch entry: header from the child, the exact text, the one-line fallback. */
export function batchInput(manager: SubagentManager, result: SettledResult): BatchInput {
	const live = manager.get(result.id);
	const child: ChildRecord = { ...(live as ChildRecord), state: result.state };
	return {
		id: result.id,
		run: result.run,
		header: resultHeader(child, result.verdict ? `${result.state}, ${result.verdict}` : result.state, result.run),
		text: result.text,
		noRoom: (stored, bytes, lines) =>
			stored.ok ? noRoomLine(child, bytes, lines, stored.path) : noRoomUnsavedLine(child, bytes, stored.error),
	};
}

/** Remember where each result's full text went, for later "already delivered" lines. */
export function recordArtifacts(manager: SubagentManager, items: BatchItem[]): void {
	for (const item of items) {
		const r = manager.ledger.get(resultKey(item.id, item.run));
		if (r && item.artifactPath) r.artifactPath = item.artifactPath;
	}
}

export function rowsOf(manager: SubagentManager, items: BatchItem[]): ChildRow[] {
	return items.map((item) => {
		const child = manager.get(item.id);
		const r = manager.ledger.get(resultKey(item.id, item.run));
		return {
			id: item.id,
			name: child?.name ?? item.id,
			state: r?.state ?? child?.state ?? "completed",
			fullBytes: item.fullBytes,
			shownBytes: item.shownBytes,
			artifactPath: item.artifactPath,
			note: item.oneLine ? "no room: path only" : undefined,
			...(child?.agent ? { agent: child.agent } : {}),
			reason: (r?.state ?? child?.state) !== "completed" ? child?.error : undefined,
		};
	});
}

/** Structured values and worktree changes of the batch's results (for other extensions), when any has them. */
function extrasOf(manager: SubagentManager, items: BatchItem[]) {
	const results = items.flatMap((item) => {
		const extras = manager.ledger.get(resultKey(item.id, item.run))?.extras;
		return extras && (extras.structured || extras.changes) ? [{ id: item.id, run: item.run, ...extras }] : [];
	});
	return results.length > 0 ? { results } : {};
}

/** Details every projected result carries. */
export function batchDetails(manager: SubagentManager, batch: BatchOutput, extraRows: ChildRow[] = []) {
	return {
		...extrasOf(manager, batch.items),
		headroom: headroomDetails({ artifacts: batch.artifacts }),
		rows: [...rowsOf(manager, batch.items), ...extraRows],
		items: batch.items,
		allocation: {
			source: batch.allocation.source,
			reason: batch.allocation.reason,
			batchBytes: batch.allocation.batchBytes,
		},
	};
}

/**
 * Deliver every unclaimed result as one message. "trigger": only when the parent is idle, and
 * start a turn; "append": add it to the session now for the next turn (used on resume).
 * Returns false when the parent was busy (try again later).
 */
export async function deliverPending(
	deps: Pick<SubagentServices, "depth" | "context" | "existingChildren" | "config" | "store" | "session">,
	how: "trigger" | "append",
): Promise<boolean> {
	const ctx = deps.context();
	const manager = deps.existingChildren();
	if (!ctx || !manager) return true;
	let idle: boolean;
	try {
		idle = ctx.isIdle();
	} catch {
		return true; // a context from a replaced session: the new instance delivers
	}
	if (how === "trigger" && !idle) return false;
	// A top-level single-shot run on Pi 1.x delivers before it settles (settle.ts); a turn started after
	// that would race the exit. What is still owed then goes to `pi -c`.
	if (how === "trigger" && deps.depth === 0 && singleShotMode(ctx)) return true;
	const pending = manager.ledger.pending();
	if (pending.length === 0) return true;
	const keys = pending.map((r) => r.key);
	for (const key of keys) manager.ledger.claim(key, "auto");
	try {
		const leading = [how === "append" ? restoredNote(pending.length) : autoDeliveryHeader(pending.length)];
		const batch = await projectBatch(
			pending.map((r) => batchInput(manager, r)),
			batchOptions(deps, ctx, "autoDelivery", { leading }),
		);
		recordArtifacts(manager, batch.items);
		const message = {
			customType: RESULT_MESSAGE_TYPE,
			content: batch.text,
			display: true,
			details: batchDetails(manager, batch),
		};
		if (how === "trigger") deps.session.sendMessage(message, { deliverAs: "followUp", triggerTurn: true });
		else deps.session.sendMessage(message);
		persistDelivered(deps, keys, "auto");
		return true;
	} catch (error) {
		for (const key of keys) manager.ledger.release(key);
		console.error(`subagents: automatic delivery failed, will retry: ${String(error)}`);
		return true;
	}
}

/** The pending automatic-delivery attempt of one extension instance, and the idle polls it has left. */
export class AutoDelivery {
	private timer: ReturnType<typeof setTimeout> | undefined;
	private attempts = 0;

	/** `deliver` is one attempt: false when the parent was busy (try again later). */
	constructor(private readonly deliver: () => Promise<boolean>) {}

	/** Try to deliver soon; with polls, keep trying while the parent is still winding down its run. */
	schedule(polls = 0): void {
		this.attempts = Math.max(this.attempts, polls);
		if (this.timer) return;
		const delay = polls > 0 ? FLUSH_POLL_MS : FLUSH_DEBOUNCE_MS;
		this.timer = setTimeout(() => {
			this.timer = undefined;
			void this.deliver().then((done) => {
				if (done) this.attempts = 0;
				else if (this.attempts > 0) {
					const left = this.attempts - 1;
					this.attempts = 0;
					this.schedule(left);
				}
			});
		}, delay);
	}

	/** Drop the pending attempt (shutdown). */
	cancel(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
		this.attempts = 0;
	}
}

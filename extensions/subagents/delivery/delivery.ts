/**
 * Automatic delivery: every result nobody received yet goes to the parent as ONE message, through the batch
 * projection, once the parent is idle. Delivery claims results in the ledger before any await, so a wait and
 * an automatic delivery can never both hand out the same result in full. AutoDelivery owns the timer that
 * debounces deliveries and polls for idle after the parent's run ends.
 */

import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { headroomDetails } from "../../shared/host/details.ts";
import { utf8Length } from "../../shared/text/tokens.ts";
import type { SubagentManager } from "../children/manager.ts";
import { parentGate } from "../domain/gate.ts";
import { resultKey, type SettledResult } from "../domain/ledger.ts";
import type { ChildRecord, ChildRow } from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import { consumersOf } from "../pipeline/graph.ts";
import { autoDeliveryHeader, noRoomLine, noRoomUnsavedLine, restoredNote, resultHeader } from "../prompt/common.ts";
import { relayedLine } from "../prompt/pipeline.ts";
import { type BatchInput, type BatchItem, type BatchOutput, projectBatch } from "./batch.ts";
import { batchOptions } from "./batch-options.ts";
import { type DeliveryProof, deliveryProof, RESULT_MESSAGE_TYPE } from "./persistence.ts";

// The automatic-delivery timer (auto-delivery.ts: the adapter holds one from start, without this module).
export { AutoDelivery, FLUSH_DEBOUNCE_MS, FLUSH_POLL_ATTEMPTS, FLUSH_POLL_MS } from "./auto-delivery.ts";
export { RESULT_MESSAGE_TYPE };

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
 * Owed results other children took as input, claimed as relayed (one line each, not in full), so a wait on
 * the last child of a pipeline tells of its intermediate results the way automatic delivery would.
 */
export function claimRelayed(manager: SubagentManager, except: readonly string[]): SettledResult[] {
	const children = manager.list();
	const relayed = manager.ledger
		.pending()
		.filter((r) => !except.includes(r.id) && consumersOf(children, r.id).length > 0);
	for (const r of relayed) manager.ledger.claim(r.key, "relayed");
	return relayed;
}

/** One line per relayed result (its full text stored first when it was not yet), with its row. */
export async function relayedLines(
	manager: SubagentManager,
	deps: Pick<SubagentServices, "store">,
	results: SettledResult[],
): Promise<{ lines: string[]; rows: ChildRow[] }> {
	const children = manager.list();
	const lines: string[] = [];
	const rows: ChildRow[] = [];
	for (const result of results) {
		const consumers = consumersOf(children, result.id);
		const child = manager.get(result.id);
		const name = child?.name ?? result.id;
		if (!result.artifactPath) {
			const put = await deps.store().put("subagent-results", result.text);
			if (put.ok) result.artifactPath = put.path;
		}
		const bytes = utf8Length(result.text);
		const line = relayedLine({ id: result.id, name }, result.state, bytes, result.artifactPath, consumers);
		lines.push(line);
		rows.push({
			id: result.id,
			name,
			state: result.state,
			fullBytes: bytes,
			shownBytes: utf8Length(line),
			artifactPath: result.artifactPath,
			note: `handed to ${consumers.join(", ")}`,
		});
	}
	return { lines, rows };
}

/**
 * Owed results as one automatic delivery: a result other children took as input is one line (id, outcome,
 * size, artifact path, who used it), the parent having waited on none of them; the rest go through the batch
 * projection in full as always. The caller has claimed `owed` already.
 */
export async function projectOwed(
	manager: SubagentManager,
	deps: Pick<SubagentServices, "config" | "store">,
	ctx: ExtensionContext | undefined,
	owed: SettledResult[],
	header: string,
): Promise<{ text: string; details: ReturnType<typeof batchDetails> }> {
	const children = manager.list();
	const relayed = owed.map((r) => ({ result: r, consumers: consumersOf(children, r.id) }));
	const handed = relayed.filter((r) => r.consumers.length > 0).map((r) => r.result);
	for (const r of handed) r.delivery = "relayed";
	const { lines, rows } = await relayedLines(manager, deps, handed);
	const full = relayed.filter((r) => r.consumers.length === 0).map((r) => r.result);
	const batch = await projectBatch(
		full.map((r) => batchInput(manager, r)),
		batchOptions(deps, ctx, "autoDelivery", { leading: [header, ...lines] }),
	);
	recordArtifacts(manager, batch.items);
	const details = batchDetails(manager, batch, rows);
	return {
		text: batch.text,
		details: {
			...details,
			headroom: headroomDetails({
				artifacts: [...batch.artifacts, ...rows.flatMap((r) => (r.artifactPath ? [r.artifactPath] : []))],
			}),
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
	// A top-level single-shot run on Pi 1.x delivers before it settles (settle.ts); what is still owed then goes
	// to `pi -c` (domain/gate.ts).
	const gate = parentGate(deps, how);
	if (typeof gate === "string") return gate === "done"; // busy: false, try again later
	const { ctx, manager } = gate;
	const pending = manager.ledger.pending();
	if (pending.length === 0) return true;
	const keys = pending.map((r) => r.key);
	for (const key of keys) manager.ledger.claim(key, "auto");
	try {
		const header = how === "append" ? restoredNote(pending.length) : autoDeliveryHeader(pending.length);
		const owed = await projectOwed(manager, deps, ctx, pending, header);
		// The message is the record of the delivery (persistence.ts, DeliveryProof): no separate entry that could
		// reach the file while the message does not.
		const message = {
			customType: RESULT_MESSAGE_TYPE,
			content: owed.text,
			display: true,
			details: { ...owed.details, ...deliveryProof({ keys, by: "auto" }) } satisfies DeliveryProof,
		};
		if (how === "trigger") deps.session.sendMessage(message, { deliverAs: "followUp", triggerTurn: true });
		else deps.session.sendMessage(message);
		return true;
	} catch (error) {
		for (const key of keys) manager.ledger.release(key);
		console.error(`subagents: automatic delivery failed, will retry: ${String(error)}`);
		return true;
	}
}

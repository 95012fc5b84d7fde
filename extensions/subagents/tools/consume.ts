/**
 * Handing out the results of named children (subagent_wait, and subagent_cancel after it stopped them): each
 * result is claimed in the ledger before any await, then all go through ONE batch projection; a result
 * someone else received already is one line naming its full text. The tool's result records the delivery
 * (its details say which results it carries: persistence.ts, DeliveryProof).
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { projectBatch } from "../delivery/batch.ts";
import { batchOptions } from "../delivery/batch-options.ts";
import { batchDetails, batchInput, claimRelayed, recordArtifacts, relayedLines } from "../delivery/delivery.ts";
import { deliveryProof } from "../delivery/persistence.ts";
import type { SettledResult } from "../domain/ledger.ts";
import { type ChildRow, isSettled } from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import * as P from "../prompt/common.ts";
import { reply, row, type ToolReturn } from "./reply.ts";

/** What handing out results uses: the children, the configuration and store (projection), the session. */
export type ConsumeDeps = Pick<SubagentServices, "children" | "config" | "store" | "session">;

/**
 * Where the full text of a result someone else received lives. The other delivery may still be
 * projecting it (a race within one tick), so the path is not known yet: the content-addressed store
 * gives the same file for the same text, so storing it here names that file (or creates it).
 */
async function deliveredPath(
	deps: Pick<SubagentServices, "store">,
	result: SettledResult,
): Promise<string | undefined> {
	if (result.artifactPath) return result.artifactPath;
	const put = await deps.store().put("subagent-results", result.text);
	if (!put.ok) return undefined;
	result.artifactPath ??= put.path;
	return put.path;
}

/** Hand out the results of `ids` (claiming them for this tool) plus status lines for the rest. */
export async function consumeResults(
	deps: ConsumeDeps,
	ctx: ExtensionContext,
	ids: string[],
	outcome: { timedOut: boolean; aborted: boolean; header?: string },
	timeoutLabel: "wait" | "cancel",
	timeoutSeconds?: number,
): Promise<ToolReturn> {
	const manager = deps.children(ctx);
	const now = Date.now();
	const leading: string[] = [];
	const extraRows: ChildRow[] = [];
	const claimed: SettledResult[] = [];
	const finished = ids.filter((id) => isSettled(manager.get(id)!.state)).length;
	if (outcome.header) leading.push(outcome.header);
	else if (outcome.timedOut) leading.push(P.waitTimeoutHeader(timeoutSeconds ?? 0, finished, ids.length));
	else if (outcome.aborted) leading.push(P.waitAbortedHeader(finished, ids.length));
	// Claims first, all before any await: a concurrent automatic delivery sees them at once. Each id's
	// line is decided here too, so a child settling during a later await cannot drop out of the text.
	const taken = new Map<string, SettledResult>();
	const unsettled: string[] = [];
	for (const id of ids) {
		const latest = manager.ledger.latest(id);
		if (!latest || !isSettled(manager.get(id)!.state)) unsettled.push(id);
		else if (manager.ledger.claim(latest.key, "wait")) claimed.push(latest);
		else taken.set(id, latest);
	}
	// Results children took as input, owed to nobody yet: one line each here, as automatic delivery would.
	const relayed = claimRelayed(manager, ids);
	try {
		const handed = await relayedLines(manager, deps, relayed);
		extraRows.push(...handed.rows);
		for (const id of ids) {
			const child = manager.get(id)!;
			const other = taken.get(id);
			if (unsettled.includes(id)) {
				leading.push(P.statusLine(child, now));
				extraRows.push(row(child));
			} else if (other) {
				const path = await deliveredPath(deps, other);
				leading.push(P.alreadyDeliveredLine(child, other.delivery === "auto" ? "auto" : "wait", path));
				extraRows.push({ ...row(child, "already received"), artifactPath: path });
			}
		}
		const batch = await projectBatch(
			claimed.map((r) => batchInput(manager, r)),
			batchOptions(deps, ctx, "wait", { leading: [...leading, ...handed.lines] }),
		);
		recordArtifacts(manager, batch.items);
		// The tool's result is the record of the delivery (persistence.ts, DeliveryProof): on disk with it, or not
		// at all (a process ended before Pi wrote the result leaves these owed to the next start).
		const proof = deliveryProof(
			{ keys: claimed.map((r) => r.key), by: "wait" },
			{ keys: relayed.map((r) => r.key), by: "auto" },
		);
		return reply(batch.text, { ...batchDetails(manager, batch, extraRows), tool: timeoutLabel, ...proof });
	} catch (error) {
		for (const r of [...claimed, ...relayed]) manager.ledger.release(r.key);
		throw error;
	}
}

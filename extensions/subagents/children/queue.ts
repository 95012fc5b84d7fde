/**
 * The manager's queue: waiting children whose inputs settled are skipped or get their first message and
 * join the queue; queued children start, oldest first, while slots are free (the rule itself is
 * childrenToStart in domain/records.ts). No Pi imports.
 */
import { type ChildRecord, childrenToStart } from "../domain/records.ts";
import { readiness } from "../pipeline/graph.ts";
import { skippedText } from "../prompt/pipeline.ts";
import type { ManagerCore, PendingHandover } from "./core.ts";
import { runChild } from "./runner.ts";
import { conclude, settleFailed } from "./settle.ts";

/** Settle or release waiting children whose inputs settled, then start queued children while slots are free. */
export function pump(core: ManagerCore): void {
	if (core.closed) return;
	advanceWaiting(core);
	for (const child of childrenToStart(core.list(), core.limits.maxConcurrent)) {
		child.state = "starting";
		void runChild(core, child);
	}
	core.changed();
}

/** Each waiting child whose inputs all settled is skipped, or gets its first message and joins the queue. */
function advanceWaiting(core: ManagerCore): void {
	const all = core.list();
	for (const child of all) {
		const handover = core.handovers.get(child.id);
		if (child.state !== "waiting" || !handover || handover.preparing) continue;
		const verdict = readiness(child.after ?? [], all, child.afterFailed);
		if (verdict.act === "wait") continue;
		if (verdict.act === "skip") {
			const text = skippedText(verdict.failed);
			void conclude(core, child, child.run, "skipped", { text }, text);
			continue;
		}
		handover.preparing = true;
		void release(core, child, handover);
	}
}

/** Make a ready child's first message from its inputs' results, then queue it (unless it was stopped meanwhile). */
async function release(core: ManagerCore, child: ChildRecord, handover: PendingHandover): Promise<void> {
	const inputs = (child.after ?? []).map((id) => ({ child: core.mustGet(id), result: core.ledger.latest(id) }));
	let first: string;
	try {
		first = await handover.compose(inputs, handover.base);
	} catch (error) {
		if (child.state !== "waiting") return;
		const why = `its inputs could not be handed over: ${error instanceof Error ? error.message : String(error)}`;
		return void settleFailed(core, child, child.run, "failed", why);
	}
	const rt = core.runtimes.get(child.id);
	if (child.state !== "waiting" || !rt || core.closed) return;
	core.handovers.delete(child.id);
	rt.pendingPrompt = first;
	child.state = "queued";
	child.queuedAt = core.now() + core.sequence / 1e6;
	core.pump();
}

/**
 * subagent_cancel's handler: stop the named children that still run, then hand out their results (partial
 * output kept) like a wait; children that had settled already get one line each.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { isSettled } from "../domain/records.ts";
import * as P from "../prompt/common.ts";
import { type ConsumeDeps, consumeResults } from "./consume.ts";
import { requireIds, type ToolReturn } from "./reply.ts";

export async function cancelTool(
	deps: ConsumeDeps,
	params: { ids: string[] },
	ctx: ExtensionContext,
): Promise<ToolReturn> {
	const manager = deps.children(ctx);
	const ids = requireIds(manager, params.ids ?? []);
	const active = ids.filter((id) => !isSettled(manager.get(id)!.state));
	await manager.cancel(active);
	const lines = ids.filter((id) => !active.includes(id)).map((id) => P.alreadySettledCancelLine(manager.get(id)!));
	const header = [P.cancelHeader(active.length), ...lines].join("\n");
	return consumeResults(deps, ctx, active, { timedOut: false, aborted: false, header }, "cancel");
}

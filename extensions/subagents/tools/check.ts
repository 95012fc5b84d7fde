/**
 * subagent_check's handler: one child's state and the recent end of its output (its result once settled,
 * else what it has written so far), through the batch projection with the check surface's head share.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { questionView } from "../ask/deliver.ts";
import { questionBrief } from "../ask/question.ts";
import { projectBatch } from "../delivery/batch.ts";
import { batchOptions } from "../delivery/batch-options.ts";
import { batchDetails } from "../delivery/delivery.ts";
import { isSettled } from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import { questionBlock } from "../prompt/ask.ts";
import * as P from "../prompt/common.ts";
import { reply, requireIds, row, type ToolReturn } from "./reply.ts";

export async function checkTool(
	deps: Pick<SubagentServices, "children" | "config" | "store">,
	params: { id: string },
	ctx: ExtensionContext,
): Promise<ToolReturn> {
	const manager = deps.children(ctx);
	const [id] = requireIds(manager, [params.id]);
	const child = manager.get(id)!;
	const recent = isSettled(child.state)
		? (manager.ledger.latest(id)?.text ?? child.finalText ?? "")
		: child.partialText;
	let output = "";
	let details: Record<string, unknown> = { rows: [row(child)] };
	if (recent.length > 0) {
		const batch = await projectBatch([{ id, run: child.run, header: "", text: recent, noRoom: () => "" }], {
			...batchOptions(deps, ctx, "check"), // its head share (0 in the table): the recent end
			notable: !isSettled(child.state), // a running child's output leads with its notable lines; a final report is prose
		});
		output = batch.text.replace(/^\n/, "");
		details = { ...batchDetails(manager, batch), rows: [row(child)] };
	}
	const now = Date.now();
	const asked = questionView(child, manager.questions.timeoutSeconds);
	// The first line says the child waits for an answer, as subagent_list does; the question follows in full.
	const text = P.checkText(child, now, output, child.question ? questionBrief(child.question.text) : undefined);
	return reply(asked ? `${text}\n${questionBlock(asked, now)}` : text, details);
}

/**
 * subagent_send's handler: steer a running child, or start a new run on a settled one; a child restored from
 * an earlier process runs again with its own model, tools and framing (resumeSettings).
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { questionBrief } from "../ask/question.ts";
import { isSettled } from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import { answeredText, lateAnswerNote, resumedAnswerText } from "../prompt/ask.ts";
import { answeredOverBudgetText } from "../prompt/budget.ts";
import { OUTPUT_SCHEMA_REMINDER } from "../prompt/checkable.ts";
import * as P from "../prompt/common.ts";
import { reply, requireIds, row, type ToolReturn } from "./reply.ts";
import { arrivalOf, resumeSettings } from "./spawn.ts";

/** What a send uses: the children, and what a resume and the arrival note read. */
export type SendDeps = Pick<SubagentServices, "children" | "depth" | "config" | "store" | "agentDir" | "agents">;

export async function sendTool(
	deps: SendDeps,
	params: { id: string; text: string },
	ctx: ExtensionContext,
): Promise<ToolReturn> {
	const manager = deps.children(ctx);
	const [id] = requireIds(manager, [params.id]);
	if (typeof params.text !== "string" || params.text.trim().length === 0) throw new Error(P.EMPTY_SEND_TEXT_ERROR);
	const child = manager.get(id)!;
	// A child waiting for an answer (ask_parent) gets this text as the answer; one whose run ended while it
	// waited (an earlier process) runs again, opening with its question and the answer.
	const asked = child.question;
	const answered = asked ? manager.questions.answer(id, params.text) : undefined;
	if (answered === "answered") {
		// Other children may have spent a budget it shares while it waited: it stops at this turn's end, unread.
		const spent = manager.budgetReached(id);
		const text = spent ? answeredOverBudgetText(child.id, spent) : answeredText(child.id, child.name);
		return reply(text, { rows: [row(child)] });
	}
	// A question that ended unanswered (timed out, withdrawn): the text is a new message, and the parent is told.
	const ended = asked ? undefined : manager.questions.unansweredOf(id);
	const given = asked && answered === "detached" ? resumedAnswerText(asked.text, params.text) : params.text;
	const resume = manager.isRestored(id) ? resumeSettings(deps, child, ctx) : undefined;
	// A structured child's new run must end with the JSON again; a steer joins the run that already must.
	const text = child.structured && isSettled(child.state) ? given + OUTPUT_SCHEMA_REMINDER : given;
	const outcome = await manager.send(id, text, resume);
	if (asked && answered === "detached" && outcome === "rerun") manager.questions.close(child, "answered");
	if (outcome === "queued-child") throw new Error(P.queuedSendError(child));
	// Told once, and only when the text went: recorded, so a resumed session does not say it again.
	if (ended) manager.questions.takeUnanswered(id);
	const said = outcome === "steered" ? P.steeredText(child) : P.rerunText(child, arrivalOf(deps, ctx));
	const late = ended
		? `\n${lateAnswerNote(child.id, questionBrief(ended.question.text), ended.how, ended.seconds)}`
		: "";
	return reply(`${said}${late}`, { rows: [row(child)] });
}

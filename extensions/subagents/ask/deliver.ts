/**
 * Questions reach the parent the way results do: as a message of their own when the parent is idle (a
 * follow-up that starts a turn), or in the result of a subagent_wait that names the child, and after a
 * resume with the session's first request. Unlike results, a question does not wait for a busy parent's turn
 * to end: while the parent runs a tool call other than subagent_wait, it is queued into that turn as a steering
 * message, which Pi (both lines) hands the model after the running tool calls, before its next request. Each
 * question is framed as the child's words (prompt/ask.ts). The child's time limit starts when the parent's
 * context holds the question (QuestionDesk.seen).
 */
import { parentGate } from "../domain/gate.ts";
import type { ChildRecord } from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import { QUESTION_MESSAGE_TYPE, type QuestionView, questionBlock, questionsHeader } from "../prompt/ask.ts";
import type { QuestionDesk } from "./desk.ts";
import { questionBody } from "./question.ts";

export { QUESTION_MESSAGE_TYPE };

/** Which questions a message or tool result carries (its details). */
export interface QuestionsCarried {
	questions: Array<{ id: string; seq: number }>;
}

/** The view of a child's open question the wording needs. */
export function questionView(child: ChildRecord, timeoutSeconds: number): QuestionView | undefined {
	const q = child.question;
	if (!q) return undefined;
	return {
		id: child.id,
		name: child.name,
		body: questionBody(q),
		timeoutSeconds,
		seenAt: q.seenAt,
		detached: q.detached,
	};
}

/**
 * Open questions of `ids` (every child when absent) as text for the parent, marked delivered; undefined when
 * there are none. `all`: questions the parent has already are stated again too (a wait names them). `seen`:
 * the text reaches the parent's next request at once (a wait's result, a message that starts a turn), so the
 * children's time limits start now; false for a steering message (they start when Pi injects it).
 */
export function takeQuestions(
	desk: QuestionDesk,
	ids?: readonly string[],
	all = false,
	now = Date.now(),
	seen = true,
): { text: string; carried: QuestionsCarried } | undefined {
	const children = all ? desk.asking(ids) : desk.undelivered(ids);
	if (children.length === 0) return undefined;
	const blocks: string[] = [];
	const carried: QuestionsCarried = { questions: [] };
	for (const child of children) {
		const view = questionView(child, desk.timeoutSeconds);
		if (!view || !child.question) continue;
		blocks.push(questionBlock(view, now));
		carried.questions.push({ id: child.id, seq: child.question.seq });
		child.question.delivered = true;
		if (seen) desk.seen(child.id, child.question.seq, now);
		else child.question.steered = true;
	}
	return { text: blocks.join("\n\n"), carried };
}

/**
 * Every open question the parent does not have yet, as one message. "trigger": only when the parent is idle,
 * and start a turn; "append": add it now for the next turn (a resumed session); "steer": only while the parent
 * runs (the caller knows a tool call other than subagent_wait runs), into that turn after its tool calls.
 * False when the parent was busy (trigger) or idle (steer): try again later.
 */
export async function deliverQuestions(
	deps: Pick<SubagentServices, "depth" | "context" | "existingChildren" | "session">,
	how: "trigger" | "append" | "steer",
): Promise<boolean> {
	// A top-level single-shot run on Pi 1.x gets a question through subagent_wait instead (domain/gate.ts).
	const gate = parentGate(deps, how === "steer" ? "append" : how);
	if (typeof gate === "string") return gate === "done"; // busy: false, try again later
	const { ctx, manager } = gate;
	if (how === "steer" && idleNow(ctx)) return false;
	// Steered questions the idle parent's context never took in (a run interrupted first) go again.
	if (how === "trigger") manager.questions.resendUnseenSteers();
	const undelivered = manager.questions.undelivered();
	if (undelivered.length === 0) return true;
	const taken = takeQuestions(manager.questions, undefined, false, Date.now(), how !== "steer");
	if (!taken) return true;
	const message = {
		customType: QUESTION_MESSAGE_TYPE,
		content: `${questionsHeader(taken.carried.questions.length)}\n${taken.text}`,
		display: true,
		details: taken.carried,
	};
	try {
		if (how === "trigger") deps.session.sendMessage(message, { deliverAs: "followUp", triggerTurn: true });
		else if (how === "steer") deps.session.sendMessage(message, { deliverAs: "steer" });
		else deps.session.sendMessage(message);
	} catch (error) {
		for (const c of undelivered)
			if (c.question) {
				c.question.delivered = false;
				c.question.steered = false;
			}
		console.error(`subagents: a question could not be delivered, will retry: ${String(error)}`);
	}
	return true;
}

function idleNow(ctx: { isIdle(): boolean }): boolean {
	try {
		return ctx.isIdle();
	} catch {
		return true;
	}
}

/**
 * A message reached the parent's context (Pi's message_end): if it is a question message (a steer Pi took into
 * the turn, or one that started a turn), its questions' time limits start now. Anything else is ignored.
 */
export function questionsSeen(desk: QuestionDesk, message: unknown, now = Date.now()): void {
	const m = message as { role?: unknown; customType?: unknown; details?: unknown } | null | undefined;
	if (m?.role !== "custom" || m.customType !== QUESTION_MESSAGE_TYPE) return;
	for (const q of carriedQuestions(m.details)) desk.seen(q.id, q.seq, now);
}

/** The questions a message of the parent's session carries (its details), checked: a message is input. */
export function carriedQuestions(details: unknown): Array<{ id: string; seq: number }> {
	const list = (details as { questions?: unknown } | null | undefined)?.questions;
	if (!Array.isArray(list)) return [];
	return list.filter(
		(q): q is { id: string; seq: number } =>
			typeof q?.id === "string" && typeof q.seq === "number" && Number.isInteger(q.seq) && q.seq > 0,
	);
}

/**
 * Questions reach the parent the way results do: as a message of their own when the parent is idle (a
 * follow-up that starts a turn), or in the result of a subagent_wait that names the child, and after a
 * resume with the session's first request. Each question is framed as the child's words (prompt/ask.ts).
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
		askedAt: q.askedAt,
		detached: q.detached,
	};
}

/**
 * Open questions of `ids` (every child when absent) as text for the parent, marked delivered; undefined when
 * there are none. `all`: questions the parent has already are stated again too (a wait names them).
 */
export function takeQuestions(
	desk: QuestionDesk,
	ids?: readonly string[],
	all = false,
	now = Date.now(),
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
	}
	return { text: blocks.join("\n\n"), carried };
}

/**
 * Every open question the parent does not have yet, as one message. "trigger": only when the parent is idle,
 * and start a turn; "append": add it now for the next turn (a resumed session). False when the parent was busy.
 */
export async function deliverQuestions(
	deps: Pick<SubagentServices, "depth" | "context" | "existingChildren" | "session">,
	how: "trigger" | "append",
): Promise<boolean> {
	// A top-level single-shot run on Pi 1.x gets a question through subagent_wait instead (domain/gate.ts).
	const gate = parentGate(deps, how);
	if (typeof gate === "string") return gate === "done"; // busy: false, try again later
	const { manager } = gate;
	const undelivered = manager.questions.undelivered();
	if (undelivered.length === 0) return true;
	const taken = takeQuestions(manager.questions);
	if (!taken) return true;
	const message = {
		customType: QUESTION_MESSAGE_TYPE,
		content: `${questionsHeader(taken.carried.questions.length)}\n${taken.text}`,
		display: true,
		details: taken.carried,
	};
	try {
		if (how === "trigger") deps.session.sendMessage(message, { deliverAs: "followUp", triggerTurn: true });
		else deps.session.sendMessage(message);
	} catch (error) {
		for (const c of undelivered) if (c.question) c.question.delivered = false;
		console.error(`subagents: a question could not be delivered, will retry: ${String(error)}`);
	}
	return true;
}

/**
 * Questions in the parent's session (custom entries, never sent to the model): one when a question is asked,
 * one when it is closed (answered, timed out, withdrawn), and one when the parent, sending to a child whose
 * question had ended unanswered, was told so (the late-answer note). A question with no closing entry was open
 * when its process ended (a shutdown, a crash): the next start finds it, hangs it on its restored child,
 * detached, and asks the parent again; the answer resumes the child. A child's latest question that ended
 * unanswered with no note yet gets its note on the next subagent_send after `pi -c` too. Session files are
 * input: every field is checked, and the text is cleaned again as a fresh question would be.
 */
import { MAX_TIMER_MS } from "../../shared/host/timers.ts";
import type { SubagentManager } from "../children/manager.ts";
import { ANSWER_ENTRY, NOTED_ENTRY, QUESTION_ENTRY } from "../domain/entries.ts";
import type { QuestionEvent, Unanswered } from "./desk.ts";
import { type AskedQuestion, cleanQuestion } from "./question.ts";

// The session entries' names (domain/entries.ts: start reads them without this module).
export { ANSWER_ENTRY, NOTED_ENTRY, QUESTION_ENTRY };

export interface QuestionEntryData {
	id: string;
	seq: number;
	run: number;
	text: string;
	options: string[];
	askedAt: number;
}

export interface AnswerEntryData {
	id: string;
	seq: number;
	how: "answered" | "timeout" | "withdrawn";
	/** A timeout: the time limit it ran out of, in seconds. */
	seconds?: number;
}

export interface NotedEntryData {
	id: string;
	seq: number;
}

/** Write what a question event leaves in the session. */
export function persistQuestion(record: (type: string, data: unknown) => void, event: QuestionEvent): void {
	const { child, question } = event;
	try {
		if (event.type === "asked") {
			const data: QuestionEntryData = {
				id: child.id,
				seq: question.seq,
				run: question.run,
				text: question.text,
				options: question.options,
				askedAt: question.askedAt,
			};
			record(QUESTION_ENTRY, data);
		} else if (event.type === "noted")
			record(NOTED_ENTRY, { id: child.id, seq: question.seq } satisfies NotedEntryData);
		else {
			const data: AnswerEntryData = { id: child.id, seq: question.seq, how: event.how };
			if (event.seconds !== undefined) data.seconds = event.seconds;
			record(ANSWER_ENTRY, data);
		}
	} catch (error) {
		console.error(`subagents: could not record ${child.id}'s question in the session: ${String(error)}`);
	}
}

const validId = (id: unknown): id is string => typeof id === "string" && /^sa-\d+$/.test(id);
const validSeq = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n > 0;
const validSeconds = (n: unknown): n is number =>
	typeof n === "number" && Number.isFinite(n) && n > 0 && n <= MAX_TIMER_MS / 1000;

/** A question that ended unanswered as read back: the time limit only when the record gave a valid one. */
export type RecordedUnanswered = Omit<Unanswered, "seconds"> & { seconds?: number };

/** A session entry as the restore reads it. */
interface Entry {
	type?: unknown;
	customType?: unknown;
	data?: unknown;
}

/**
 * Questions of the session's branch: how many were asked (they count against the cap), each child's latest
 * one still open, cleaned, and (`late`) each child's latest one that ended unanswered (timeout, withdrawn)
 * and that the parent was not yet told about (no noted entry). Pure over the entries.
 */
export function openQuestions(entries: readonly unknown[]): {
	asked: number;
	lastSeq: number;
	open: Map<string, AskedQuestion>;
	late: Map<string, RecordedUnanswered>;
} {
	const asked = new Map<string, AskedQuestion & { id: string }>();
	const closed = new Set<string>();
	const ended = new Map<string, { how: "timeout" | "withdrawn"; seconds?: number }>();
	const noted = new Set<string>();
	let lastSeq = 0;
	for (const raw of entries) {
		const e = raw as Entry;
		if (e?.type !== "custom" || !e.data || typeof e.data !== "object") continue;
		const d = e.data as Partial<QuestionEntryData & AnswerEntryData>;
		if (!validId(d.id) || !validSeq(d.seq)) continue;
		const key = `${d.id}#${d.seq}`;
		if (e.customType === ANSWER_ENTRY) {
			closed.add(key);
			// The first closing counts (a question closes once); an unknown ending is a closing without a note.
			if (!ended.has(key) && (d.how === "timeout" || d.how === "withdrawn"))
				ended.set(key, { how: d.how, ...(validSeconds(d.seconds) ? { seconds: d.seconds } : {}) });
		}
		if (e.customType === NOTED_ENTRY) noted.add(key);
		if (e.customType !== QUESTION_ENTRY) continue;
		const clean = cleanQuestion({ question: d.text, options: d.options });
		if (clean.text.length === 0) continue;
		lastSeq = Math.max(lastSeq, d.seq);
		asked.set(key, {
			id: d.id,
			seq: d.seq,
			text: clean.text,
			options: clean.options,
			run: validSeq(d.run) ? d.run : 1,
			askedAt: typeof d.askedAt === "number" && Number.isFinite(d.askedAt) ? d.askedAt : 0,
			delivered: false,
		});
	}
	const open = new Map<string, AskedQuestion>();
	const latest = new Map<string, AskedQuestion & { id: string }>();
	for (const [key, q] of asked) {
		const last = latest.get(q.id);
		if (!last || q.seq > last.seq) latest.set(q.id, q);
		if (closed.has(key)) continue;
		const known = open.get(q.id);
		if (!known || q.seq > known.seq) {
			const { id: _id, ...question } = q;
			open.set(q.id, question);
		}
	}
	// A child's latest question only: a newer one (open, answered or ended itself) replaces an older note.
	const late = new Map<string, RecordedUnanswered>();
	for (const [id, q] of latest) {
		const key = `${id}#${q.seq}`;
		const end = ended.get(key);
		if (!end || noted.has(key) || open.has(id)) continue;
		const { id: _id, ...question } = q;
		late.set(id, { question, how: end.how, ...(end.seconds !== undefined ? { seconds: end.seconds } : {}) });
	}
	return { asked: asked.size, lastSeq, open, late };
}

/**
 * Hang each open question of an earlier process on its restored child (a child of this process that runs is
 * not touched), and each question that ended unanswered without its late-answer note yet, and count the
 * session's questions. Returns how many are open again.
 */
export function restoreQuestions(manager: SubagentManager, entries: readonly unknown[]): number {
	const found = openQuestions(entries);
	manager.questions.restoreCount(found.asked, found.lastSeq);
	let restored = 0;
	for (const [id, question] of found.open) {
		const child = manager.get(id);
		if (!child || child.question || !manager.isRestored(id)) continue;
		manager.questions.restore(child, question);
		restored++;
	}
	for (const [id, late] of found.late) {
		const child = manager.get(id);
		if (!child || child.question || !manager.isRestored(id)) continue;
		manager.questions.restoreUnanswered(child, { ...late, seconds: late.seconds ?? manager.questions.timeoutSeconds });
	}
	return restored;
}

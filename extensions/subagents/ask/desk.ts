/**
 * The questions of one session's children, owned by their manager (so they live where the children live: in
 * the process-wide home across `/reload` and session switches). A child's ask_parent call blocks here until
 * the parent answers (subagent_send), the time limit passes (the child is told to decide itself), or the
 * child's run is stopped. The open question sits on the child's record (`question`), so every list, check,
 * roster and view line can name it; listeners hear each question asked and closed (persistence, delivery).
 *
 * A question whose run ended while it waited because the parent's process shut down stays open, detached:
 * nothing is recorded for it, so the next start of the session (`pi -c`) finds it open and asks the parent
 * again; the answer then resumes the child (ask/records.ts, tools/send.ts).
 */
import type { HeadroomConfig } from "../../shared/host/config.ts";
import { clampTimerMs } from "../../shared/host/timers.ts";
import type { ChildRecord } from "../domain/records.ts";
import {
	answerForChild,
	EMPTY_QUESTION_ERROR,
	lastTurnError,
	noAnswerForChild,
	OPEN_QUESTION_ERROR,
	questionCapError,
	WITHDRAWN_FOR_CHILD,
} from "../prompt/ask.ts";
import { INTERRUPTED_BY_SHUTDOWN } from "../prompt/common.ts";
import { type AskedQuestion, type AskInput, type AskLimits, askDecision, cleanQuestion } from "./question.ts";

/** How a question ended. */
export type QuestionEnd = "answered" | "timeout" | "withdrawn";

/**
 * A child's last question that ended without an answer, until the parent next sends to the child (its text then
 * goes as a new message, and the parent is told so once: the late-answer note). `seconds`: the time limit it
 * ran out of (a timeout).
 */
export interface Unanswered {
	question: AskedQuestion;
	how: "timeout" | "withdrawn";
	seconds: number;
}

export type QuestionEvent =
	| { type: "asked"; child: ChildRecord; question: AskedQuestion }
	| { type: "closed"; child: ChildRecord; question: AskedQuestion; how: QuestionEnd; seconds?: number }
	/** The parent sent to the child after its question ended unanswered, and was told so (takeUnanswered). */
	| { type: "noted"; child: ChildRecord; question: AskedQuestion };
export type QuestionListener = (event: QuestionEvent) => void;

/** Defaults until the configuration is read (subagents.maxQuestions, subagents.askTimeoutSeconds). */
export const DEFAULT_ASK_LIMITS: AskLimits = { maxQuestions: 20, timeoutMs: 600_000 };

/** The desk's limits from the configuration (the time limit clamped to the longest timer). */
export function askLimitsOf(config: HeadroomConfig): AskLimits {
	return {
		maxQuestions: config.subagents.maxQuestions,
		timeoutMs: clampTimerMs(config.subagents.askTimeoutSeconds * 1000),
	};
}

/** A blocked ask_parent call. */
interface Waiter {
	settle(text: string): void;
	/** Start the time limit (once): the parent's context holds the question now. */
	start(): void;
}

export class QuestionDesk {
	private limits: AskLimits = DEFAULT_ASK_LIMITS;
	/** Questions this session's children asked (those of earlier processes included). */
	private asked = 0;
	private seq = 0;
	/** Children whose question is open, by id. */
	private readonly open = new Map<string, ChildRecord>();
	/** The blocked tool call of each child that waits. */
	private readonly waiting = new Map<string, Waiter>();
	private readonly listeners = new Set<QuestionListener>();
	/** Each child's last question that ended without an answer (timeout, withdrawn), until the parent next sends to it. */
	private readonly unanswered = new Map<string, { ended: Unanswered; child: ChildRecord }>();

	constructor(private readonly now: () => number = Date.now) {}

	setLimits(limits: AskLimits): void {
		this.limits = limits;
	}

	/** Seconds a child waits for an answer now (not rounded: a limit under a second is told as it is). */
	get timeoutSeconds(): number {
		return clampTimerMs(this.limits.timeoutMs) / 1000;
	}

	/** Whether children may ask at all (subagents.maxQuestions > 0): they get ask_parent only then. */
	get enabled(): boolean {
		return this.limits.maxQuestions > 0;
	}

	/** Questions asked in this session so far. */
	get count(): number {
		return this.asked;
	}

	/** Hear of every question asked and closed; returns the unsubscribe. */
	subscribe(listener: QuestionListener): () => void {
		this.listeners.add(listener);
		return () => {
			this.listeners.delete(listener);
		};
	}

	private publish(event: QuestionEvent): void {
		for (const listener of [...this.listeners]) {
			try {
				listener(event);
			} catch (error) {
				console.error(`subagents: a question listener failed: ${String(error)}`);
			}
		}
	}

	/**
	 * The child asks: refused at once with the reason (thrown, so the child's tool call is an error), or it
	 * waits for the answer, the time limit, or `signal` (its run is being stopped). Resolves with what the
	 * child reads.
	 */
	ask(child: ChildRecord, input: AskInput, signal?: AbortSignal): Promise<string> {
		const clean = cleanQuestion(input);
		const refusal = askDecision(
			{ open: child.question, turns: child.turns, maxTurns: child.maxTurns, asked: this.asked },
			clean.text,
			this.limits,
		);
		if (refusal === "empty") return Promise.reject(new Error(EMPTY_QUESTION_ERROR));
		if (refusal === "open") return Promise.reject(new Error(OPEN_QUESTION_ERROR));
		if (refusal === "cap") return Promise.reject(new Error(questionCapError(this.limits.maxQuestions)));
		if (refusal === "last-turn") return Promise.reject(new Error(lastTurnError(child.maxTurns ?? 0)));
		if (signal?.aborted) return Promise.resolve(WITHDRAWN_FOR_CHILD);
		this.asked++;
		const question: AskedQuestion = {
			seq: ++this.seq,
			text: clean.text,
			options: clean.options,
			run: child.run,
			askedAt: this.now(),
			delivered: false,
		};
		child.question = question;
		this.open.set(child.id, child);
		this.unanswered.delete(child.id);
		return new Promise<string>((resolve) => {
			let timer: ReturnType<typeof setTimeout> | undefined;
			const onAbort = () => {
				// The run is being stopped: how the question ends is decided when the run settles (runEnded).
				finish();
				resolve(WITHDRAWN_FOR_CHILD);
			};
			const finish = () => {
				if (timer) clearTimeout(timer);
				signal?.removeEventListener("abort", onAbort);
				if (this.waiting.get(child.id) === waiter) this.waiting.delete(child.id);
			};
			const waiter: Waiter = {
				settle: (text) => {
					finish();
					resolve(text);
				},
				// The time limit counts from when the parent's context holds the question (seen()), not from the
				// ask: a parent busy in a long tool call cannot answer what it has not seen. Until then the child's
				// wait is bounded by its run's limit (subagents.maxRunSeconds), which counts waiting time.
				start: () => {
					if (timer || this.waiting.get(child.id) !== waiter) return;
					const seconds = this.timeoutSeconds;
					timer = setTimeout(() => {
						if (child.question !== question) return;
						waiter.settle(noAnswerForChild(seconds));
						this.close(child, "timeout", seconds);
					}, clampTimerMs(this.limits.timeoutMs));
					timer.unref?.();
				},
			};
			this.waiting.set(child.id, waiter);
			signal?.addEventListener("abort", onAbort, { once: true });
			this.publish({ type: "asked", child, question });
		});
	}

	/**
	 * The parent's answer. "answered": the waiting child has it now. "detached": nobody waits (the run that
	 * asked ended); the caller starts a new run with the answer, then closes the question. Undefined: no
	 * question is open.
	 */
	answer(id: string, text: string): "answered" | "detached" | undefined {
		const child = this.open.get(id);
		if (!child?.question) return undefined;
		const waiter = this.waiting.get(id);
		if (!waiter) return "detached";
		waiter.settle(answerForChild(text));
		this.close(child, "answered");
		return "answered";
	}

	/**
	 * The parent's context holds child `id`'s question `seq` now (its own message reached a request, a wait's
	 * result carried it, or Pi injected it into the running turn): its time limit starts, once.
	 */
	seen(id: string, seq: number, now = this.now()): void {
		const question = this.open.get(id)?.question;
		if (!question || question.seq !== seq || question.seenAt !== undefined) return;
		question.seenAt = now;
		question.delivered = true;
		this.waiting.get(id)?.start();
	}

	/**
	 * Questions queued into the parent's running turn that its context never held, now that the parent is idle
	 * (the turn ended before Pi took them in, e.g. an interrupted run whose queue was cleared): sent again.
	 */
	resendUnseenSteers(): void {
		for (const child of this.open.values()) {
			const q = child.question;
			if (q?.steered && q.seenAt === undefined && !q.detached) {
				q.delivered = false;
				q.steered = false;
			}
		}
	}

	/**
	 * Close a child's open question (answered, timed out, withdrawn); its waiter, if any, is let go. `seconds`:
	 * the time limit a timed-out question ran out of.
	 */
	close(child: ChildRecord, how: QuestionEnd, seconds = this.timeoutSeconds): void {
		const question = child.question;
		if (!question) return;
		this.waiting.get(child.id)?.settle(WITHDRAWN_FOR_CHILD);
		child.question = undefined;
		this.open.delete(child.id);
		if (how === "answered") this.unanswered.delete(child.id);
		else this.unanswered.set(child.id, { ended: { question, how, seconds }, child });
		this.publish({ type: "closed", child, question, how, ...(how === "timeout" ? { seconds } : {}) });
	}

	/** The child's last question if it ended without an answer since the parent last sent to it (not taken). */
	unansweredOf(id: string): Unanswered | undefined {
		return this.unanswered.get(id)?.ended;
	}

	/**
	 * The child's last question if it ended without an answer since the parent last sent to it (a late answer
	 * reaches the child as a new message, and the parent is told so); forgotten once taken, and recorded so (the
	 * "noted" event), so a resumed session (`pi -c`) does not say it again.
	 */
	takeUnanswered(id: string): Unanswered | undefined {
		const taken = this.unanswered.get(id);
		if (!taken) return undefined;
		this.unanswered.delete(id);
		this.publish({ type: "noted", child: taken.child, question: taken.ended.question });
		return taken.ended;
	}

	/**
	 * A question that ended unanswered in an earlier process of the session and that the parent has not sent
	 * to since (read back from the session: ask/records.ts): the next subagent_send to the child says so again.
	 */
	restoreUnanswered(child: ChildRecord, ended: Unanswered): void {
		if (child.question || this.unanswered.has(child.id)) return;
		this.unanswered.set(child.id, { ended, child });
	}

	/**
	 * A child's run settled. A question still open then is withdrawn, unless the parent's process is shutting
	 * down: then it stays open and detached, and nothing is recorded, so the next start asks the parent again.
	 */
	runEnded(child: ChildRecord): void {
		const question = child.question;
		if (!question || question.detached) return;
		if (child.error === INTERRUPTED_BY_SHUTDOWN) {
			this.waiting.get(child.id)?.settle(WITHDRAWN_FOR_CHILD);
			question.detached = true;
			return;
		}
		this.close(child, "withdrawn");
	}

	/** A question an earlier process left open (restore): detached, not yet delivered to this process's parent. */
	restore(child: ChildRecord, question: AskedQuestion): void {
		child.question = { ...question, detached: true, delivered: false };
		this.open.set(child.id, child);
		this.seq = Math.max(this.seq, question.seq);
	}

	/** Questions asked in earlier processes of the session (they count against the cap), and the highest number. */
	restoreCount(asked: number, lastSeq: number): void {
		this.asked = Math.max(this.asked, asked);
		this.seq = Math.max(this.seq, lastSeq);
	}

	/** Children with an open question, oldest question first; only `ids` when given. */
	asking(ids?: readonly string[]): ChildRecord[] {
		return [...this.open.values()]
			.filter((c) => c.question && (!ids || ids.includes(c.id)))
			.sort((a, b) => (a.question?.seq ?? 0) - (b.question?.seq ?? 0));
	}

	/** Open questions the parent does not have yet. */
	undelivered(ids?: readonly string[]): ChildRecord[] {
		return this.asking(ids).filter((c) => !c.question?.delivered);
	}
}

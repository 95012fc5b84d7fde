/**
 * The owner of this session's children: spawn or queue, run through a backend, stop, settle exactly once,
 * keep the delivery ledger, let waits block on settlements. Its read model is list()/get() and subscribe():
 * every visible change and settled run goes to the subscribers (status line, persistence, delivery). Its
 * parts share one state (core.ts): the queue (queue.ts), a run (runner.ts) and a run's settlement
 * (settle.ts); one run's inside (events, watchdog verdict, outcome) is in child-run.ts. No Pi imports: the
 * backend is an interface, so this runs in unit tests with a fake backend.
 */
import { QuestionDesk } from "../ask/desk.ts";
import { budgetVerdict } from "../budget/budget.ts";
import type { RunSteps } from "../checkable/run-steps.ts";
import { DeliveryLedger, type SettledResult } from "../domain/ledger.ts";
import { type ChildRecord, childId, deriveName, isSettled } from "../domain/records.ts";
import { type AfterResolution, resolveAfter, waitingDependents } from "../pipeline/graph.ts";
import { budgetSpentSendError } from "../prompt/budget.ts";
import {
	CANCELLED_BY_PARENT,
	EMPTY_SEND_TEXT_ERROR,
	INTERRUPTED_BY_SHUTDOWN,
	restoredSendError,
	SHUT_DOWN_ERROR,
} from "../prompt/common.ts";
import { inputCancelledText, WAITING_AT_SHUTDOWN } from "../prompt/pipeline.ts";
import type { ChildBackend, ManagerLimits, Runtime } from "./child-run.ts";
import type { ManagerCore } from "./core.ts";
import { pump } from "./queue.ts";
import { type ChildrenListener, Subscribers } from "./read-model.ts";
import type { ResumeSettings, SpawnRequest } from "./requests.ts";
import { stopChild } from "./runner.ts";
import { conclude } from "./settle.ts";
import { type WaitOptions, waitUntil } from "./wait-until.ts";

export type { ChildBackend, ChildEvent, ChildHandle, ChildSpec, ManagerLimits } from "./child-run.ts";
export type { ChildrenEvent, ChildrenListener } from "./read-model.ts";
export type { Handover, HandoverInput, ResumeSettings, SpawnRequest } from "./requests.ts";
export { ABORT_GRACE_MS } from "./runner.ts";

function idNumber(id: string): number {
	return Number(id.replace(/^sa-/, "")) || 0;
}

/** A child with inputs that has not started and whose spawn is recorded: a clean exit leaves it for `pi -c`. */
export function pipelineKept(c: ChildRecord): boolean {
	return (
		(c.state === "waiting" || c.state === "queued") &&
		(c.after?.length ?? 0) > 0 &&
		c.startedAt === undefined &&
		c.respawn !== undefined
	);
}

export class SubagentManager {
	readonly ledger: DeliveryLedger;
	/** The children's open questions to the parent (ask_parent). */
	readonly questions: QuestionDesk;
	/** The state its parts share (queue, runner, settle). */
	private readonly core: ManagerCore;
	/** The latest spawn in progress (inOrder). */
	private spawning: Promise<unknown> = Promise.resolve();

	constructor(backend: ChildBackend, limits: ManagerLimits, clock: { now?: () => number } = {}) {
		const records = new Map<string, ChildRecord>();
		const subscribers = new Subscribers();
		const now = () => clock.now?.() ?? Date.now();
		const core: ManagerCore = {
			backend,
			ledger: new DeliveryLedger(),
			questions: new QuestionDesk(now),
			records,
			runtimes: new Map(),
			waiters: new Set(),
			subscribers,
			handovers: new Map(),
			limits,
			closed: false,
			sequence: 0,
			now,
			list: () => [...records.values()].sort((a, b) => a.createdAt - b.createdAt || idNumber(a.id) - idNumber(b.id)),
			mustGet: (id) => {
				const r = records.get(id);
				if (!r) throw new Error(`unknown subagent ${id}`);
				return r;
			},
			changed: () => subscribers.publish({ type: "changed" }),
			pump: () => pump(core),
		};
		this.core = core;
		this.ledger = core.ledger;
		this.questions = core.questions;
		// A question asked or closed is a visible change, and a wait that takes questions hears of it.
		this.questions.subscribe(() => {
			core.changed();
			for (const waiter of [...core.waiters]) waiter();
		});
	}

	/** Hear of every visible change and every settled run (its result pending in the ledger); returns the unsubscribe. */
	subscribe(listener: ChildrenListener): () => void {
		return this.core.subscribers.add(listener);
	}

	setLimits(limits: ManagerLimits): void {
		this.core.limits = limits;
	}

	get maxConcurrent(): number {
		return this.core.limits.maxConcurrent;
	}

	list(): ChildRecord[] {
		return this.core.list();
	}

	get(id: string): ChildRecord | undefined {
		return this.core.records.get(id);
	}

	ids(): string[] {
		return this.list().map((c) => c.id);
	}

	/**
	 * Re-register a child known from the session (after reload/resume); it has no live session until
	 * subagent_send reopens its session file. Its latest run wins (a child may have settled several).
	 */
	restore(record: ChildRecord, result?: SettledResult): void {
		const core = this.core;
		const n = Number(record.id.replace(/^sa-/, ""));
		if (Number.isInteger(n)) core.sequence = Math.max(core.sequence, n);
		const known = core.records.get(record.id);
		if (!known || (!core.runtimes.has(record.id) && record.run >= known.run)) core.records.set(record.id, record);
		if (result) core.ledger.add(result);
	}

	/** True for a child restored from an earlier process that has not been run again here. */
	isRestored(id: string): boolean {
		return this.core.records.has(id) && !this.core.runtimes.has(id);
	}

	/** Take the next child id now (for a spawn that prepares something named after it first). */
	reserveId(): string {
		if (this.core.closed) throw new Error(SHUT_DOWN_ERROR);
		return childId(++this.core.sequence);
	}

	/**
	 * Run spawns one after another, in the order they were asked for: Pi may execute the tool calls of one
	 * message concurrently, and a spawn's `after` must see the children spawned before it in that message.
	 */
	inOrder<T>(spawn: () => Promise<T>): Promise<T> {
		const mine = this.spawning.then(spawn, spawn);
		this.spawning = mine.then(
			() => undefined,
			() => undefined,
		);
		return mine;
	}

	/** The ids a spawn's `after` names, or why it cannot be used (checked before anything is prepared). */
	planAfter(refs: readonly string[]): AfterResolution {
		return resolveAfter(refs, this.list(), childId(this.core.sequence + 1));
	}

	/** Register a child and start it, queue it past the concurrency limit, or let it wait for its inputs. */
	spawn(request: SpawnRequest): ChildRecord {
		const core = this.core;
		if (core.closed) throw new Error(SHUT_DOWN_ERROR);
		const id = request.id && !core.records.has(request.id) ? request.id : childId(++core.sequence);
		// A child spawned again under its recorded id (pi -c): later spawns take ids after it.
		core.sequence = Math.max(core.sequence, idNumber(id));
		const record: ChildRecord = {
			id,
			name: deriveName(request.prompt, request.name),
			prompt: request.prompt,
			model: request.modelLabel,
			tools: request.tools,
			...(request.agent ? { agent: request.agent } : {}),
			...(request.maxTurns ? { maxTurns: request.maxTurns } : {}),
			cwd: request.cwd,
			thinking: request.thinking,
			context: request.context,
			state: "queued",
			run: 1,
			createdAt: core.now(),
			// Spawn order must be queue order even when several spawns share a millisecond.
			queuedAt: core.now() + core.sequence / 1e6,
			turns: 0,
			outputTokens: 0,
			partialText: "",
			recentTools: [],
			...(request.worktree ? { worktree: request.worktree } : {}),
			...(request.structured ? { structured: true } : {}),
		};
		const budget = request.budget?.(id);
		if (budget) record.budget = budget;
		const after = request.after ?? [];
		if (after.length > 0) {
			const plan = resolveAfter(after, this.list(), id);
			if (!plan.ok) throw new Error(`after: ${plan.problem.kind}`);
			record.state = "waiting";
			record.after = plan.ids;
			record.afterFailed = request.afterFailed ?? "skip";
			if (request.respawn) record.respawn = request.respawn;
			const base = request.firstMessage ?? request.prompt;
			core.handovers.set(id, { compose: request.handover ?? (async () => base), base, preparing: false });
		}
		core.records.set(id, record);
		const rt = this.newRuntime(request.model, request.systemAppend, request.steps);
		rt.exactTools = request.exactTools;
		rt.extensions = request.extensions;
		core.runtimes.set(id, rt);
		core.runtimes.get(id)!.pendingPrompt = request.firstMessage ?? request.prompt;
		core.subscribers.publish({ type: "queued", child: record, run: 1 });
		core.pump();
		return record;
	}

	/**
	 * Steer a running child, or start a new run on a settled one (queued if no slot is free). A child
	 * restored from an earlier process reopens its session file (with `resume`'s model and prompt).
	 */
	async send(id: string, text: string, resume?: ResumeSettings): Promise<"steered" | "rerun" | "queued-child"> {
		const core = this.core;
		const record = core.mustGet(id);
		if (typeof text !== "string" || text.trim().length === 0) throw new Error(EMPTY_SEND_TEXT_ERROR);
		if (core.closed) throw new Error(SHUT_DOWN_ERROR);
		let rt = core.runtimes.get(id);
		if (record.state === "queued" || record.state === "waiting") return "queued-child";
		if ((record.state === "running" || record.state === "starting") && rt?.handle) {
			await rt.handle.steer(text);
			return "steered";
		}
		// A child that spent its budget (or whose pipeline or session did) does not run again.
		const spent = budgetVerdict(record, core.list(), core.limits.sessionBudget);
		if (spent) throw new Error(budgetSpentSendError(record.id, spent));
		if (!rt) {
			// A restored child: its session lived in an earlier process; its file is the way back.
			if (!record.sessionFile) throw new Error(restoredSendError(record));
			rt = this.newRuntime(resume?.model, resume?.systemAppend ?? [], resume?.steps);
			rt.resumeFile = record.sessionFile;
			rt.settledRuns = record.run;
			core.runtimes.set(id, rt);
		}
		record.run += 1;
		record.state = "queued";
		record.queuedAt = core.now() + core.sequence / 1e6;
		record.startedAt = undefined;
		record.endedAt = undefined;
		record.turns = 0;
		record.partialText = "";
		record.error = undefined;
		rt.pendingPrompt = text;
		rt.stopReason = undefined;
		core.subscribers.publish({ type: "queued", child: record, run: record.run });
		core.pump();
		return "rerun";
	}

	/** Stop children; resolves once each has settled (with its partial output in the ledger). */
	async cancel(ids: string[], error = CANCELLED_BY_PARENT): Promise<void> {
		const core = this.core;
		// Children waiting on a cancelled one are skipped first, so none of them starts on its cancelled output.
		const gone = new Set([...ids, ...waitingDependents(this.list(), ids)]);
		const skipped = waitingDependents(this.list(), ids)
			.filter((id) => !ids.includes(id))
			.map((id) => core.mustGet(id))
			.map((child) => {
				const text = inputCancelledText((child.after ?? []).filter((i) => gone.has(i)));
				return conclude(core, child, child.run, "skipped", { text }, text);
			});
		await Promise.all([...skipped, ...ids.map((id) => stopChild(core, id, { state: "cancelled", error }))]);
	}

	/**
	 * Abort every child (parent shutdown/reload); settled results stay in the ledger. With `keepPipelines`
	 * (the process ends and the session is on file), a child with inputs that has not started is left
	 * unsettled: its record in the session lets `pi -c` continue the pipeline (see pipelineKept).
	 */
	async shutdown(keepPipelines = false): Promise<void> {
		const all = this.list().filter((c) => !isSettled(c.state));
		if (keepPipelines) {
			const stopping = all.filter((c) => !pipelineKept(c));
			// Closed first: an input settling now must not start or skip the stages kept for the next process.
			this.core.closed = true;
			await Promise.all(
				stopping.map((c) => stopChild(this.core, c.id, { state: "cancelled", error: INTERRUPTED_BY_SHUTDOWN })),
			);
			return this.close();
		}
		const active = all;
		const waiting = active.filter((c) => c.state === "waiting").map((c) => c.id);
		await Promise.all([
			this.cancel(waiting, WAITING_AT_SHUTDOWN),
			this.cancel(
				active.filter((c) => c.state !== "waiting").map((c) => c.id),
				INTERRUPTED_BY_SHUTDOWN,
			),
		]);
		this.close();
	}

	private close(): void {
		this.core.closed = true;
		for (const rt of this.core.runtimes.values()) {
			if (rt.watchdog) clearInterval(rt.watchdog);
			rt.handle?.dispose();
		}
	}

	/** Resolve when `ids` are settled (mode all) or one is (mode any), on timeout, or on abort. */
	async waitFor(
		ids: string[],
		options: WaitOptions & { mode: "all" | "any"; questions?: boolean; anyQuestion?: boolean; blockedDone?: boolean },
	): Promise<{ timedOut: boolean; aborted: boolean }> {
		const done = () => {
			// With `questions`, a question the parent has not seen yet ends the wait too (subagent_wait hands it out);
			// with `anyQuestion`, one of any child of the session (it is time-limited: it must not wait behind this wait).
			if (options.questions && this.questions.undelivered(options.anyQuestion ? undefined : ids).length > 0)
				return true;
			const settled = ids.filter((id) => isSettled(this.core.mustGet(id).state)).length;
			// With `blockedDone`, a child blocked on the parent's answer (it goes on only once it has it) counts as
			// done for the wait (subagent_wait reports it as waiting for the answer), so the wait never sits it out.
			const blocked = options.blockedDone ? this.blockedOnAnswer(ids).length : 0;
			return options.mode === "any" ? settled + blocked > 0 || ids.length === 0 : settled + blocked === ids.length;
		};
		return waitUntil(this.core.waiters, done, options);
	}

	/** What budget `id` has reached (its own, its pipeline's, the session's), if any. */
	budgetReached(id: string): ReturnType<typeof budgetVerdict> {
		return budgetVerdict(this.core.mustGet(id), this.core.list(), this.core.limits.sessionBudget);
	}

	/**
	 * Those of `ids` that cannot settle before the parent answers a question: an unsettled child with an open
	 * question, a queued child while every slot is held by such children, and a pipeline stage still waiting for
	 * one of those (it starts only when its inputs settle).
	 */
	blockedOnAnswer(ids: readonly string[]): string[] {
		const blocked = new Set<string>();
		for (const c of this.core.records.values()) if (c.question && !isSettled(c.state)) blocked.add(c.id);
		// Every slot held by a child that waits for an answer: the queue moves only once one is answered.
		const active = [...this.core.records.values()].filter((c) => c.state === "running" || c.state === "starting");
		if (active.length >= this.core.limits.maxConcurrent && active.every((c) => blocked.has(c.id)))
			for (const c of this.core.records.values()) if (c.state === "queued") blocked.add(c.id);
		for (let grew = blocked.size > 0; grew; ) {
			grew = false;
			for (const c of this.core.records.values()) {
				if (blocked.has(c.id) || c.state !== "waiting" || !c.after?.some((a) => blocked.has(a))) continue;
				blocked.add(c.id);
				grew = true;
			}
		}
		return ids.filter((id) => blocked.has(id));
	}

	private newRuntime(model: unknown, systemAppend: string[], steps?: RunSteps): Runtime {
		return { model, systemAppend, steps, lastActivity: this.core.now(), toolsInFlight: 0, settledRuns: 0 };
	}
}

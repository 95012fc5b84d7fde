/**
 * The owner of this session's children: spawn or queue, run through a backend, stop, settle exactly once,
 * keep the delivery ledger, let waits block on settlements. Its read model is list()/get() and subscribe():
 * every visible change and settled run goes to the subscribers (status line, persistence, delivery). One
 * run's inside (events, watchdog verdict, outcome) is in child-run.ts. No Pi imports: the backend is an
 * interface, so this runs in unit tests with a fake backend.
 */
import { join, relative } from "node:path";
import { QuestionDesk } from "../ask/desk.ts";
import type { AskInput } from "../ask/question.ts";
import type { Reviewed, RunSteps } from "../checkable/run-steps.ts";
import {
	type ChildRecord,
	type ChildState,
	childId,
	childrenToStart,
	DeliveryLedger,
	deriveName,
	isSettled,
	resultKey,
	type SettledResult,
} from "../domain.ts";
import { type AfterResolution, readiness, resolveAfter, waitingDependents } from "../pipeline/graph.ts";
import {
	ABORTED,
	CANCELLED_BY_PARENT,
	EMPTY_SEND_TEXT_ERROR,
	failedResultText,
	INTERRUPTED_BY_SHUTDOWN,
	restoredSendError,
	SHUT_DOWN_ERROR,
	STOPPED_BEFORE_START,
} from "../prompt.ts";
import { concludeFailedNote } from "../prompt-checkable.ts";
import { inputCancelledText, skippedText, WAITING_AT_SHUTDOWN } from "../prompt-pipeline.ts";
import {
	applyEvent,
	type ChildBackend,
	type ManagerLimits,
	maxTurnsVerdict,
	type Runtime,
	runOutcome,
	type StopReason,
	watchdogTickMs,
	watchdogVerdict,
} from "./child-run.ts";
import { type ChildrenListener, Subscribers } from "./read-model.ts";
import type { Handover, ResumeSettings, SpawnRequest } from "./requests.ts";
import { type WaitOptions, waitUntil } from "./wait-until.ts";

export type { ChildBackend, ChildEvent, ChildHandle, ChildSpec, ManagerLimits } from "./child-run.ts";
export type { ChildrenEvent, ChildrenListener } from "./read-model.ts";
export type { Handover, HandoverInput, ResumeSettings, SpawnRequest } from "./requests.ts";

/** Grace period after abort() before a run that does not end is settled anyway, in milliseconds. */
export const ABORT_GRACE_MS = 5_000;

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
	readonly ledger = new DeliveryLedger();
	/** The children's open questions to the parent (ask_parent): they live as long as the children do. */
	readonly questions: QuestionDesk;
	private readonly records = new Map<string, ChildRecord>();
	private readonly runtimes = new Map<string, Runtime>();
	private sequence = 0;
	/** Waits in progress (waitFor): checked after every settled run, after the subscribers heard of it. */
	private readonly waiters = new Set<() => void>();
	private readonly subscribers = new Subscribers();
	/** Waiting children's handovers (their first message from their inputs), and whether one is being made. */
	private readonly handovers = new Map<string, { compose: Handover; base: string; preparing: boolean }>();
	private closed = false;
	/** The latest spawn in progress (inOrder). */
	private spawning: Promise<unknown> = Promise.resolve();

	constructor(
		private readonly backend: ChildBackend,
		private limits: ManagerLimits,
		private readonly clock: { now?: () => number } = {},
	) {
		this.questions = new QuestionDesk(() => this.now());
		// A question asked or closed is a visible change, and a wait that takes questions hears of it.
		this.questions.subscribe(() => {
			this.changed();
			for (const waiter of [...this.waiters]) waiter();
		});
	}

	private now(): number {
		return this.clock.now?.() ?? Date.now();
	}

	/** Hear of every visible change and every settled run (its result pending in the ledger); returns the unsubscribe. */
	subscribe(listener: ChildrenListener): () => void {
		return this.subscribers.add(listener);
	}

	setLimits(limits: ManagerLimits): void {
		this.limits = limits;
	}

	get maxConcurrent(): number {
		return this.limits.maxConcurrent;
	}

	list(): ChildRecord[] {
		return [...this.records.values()].sort((a, b) => a.createdAt - b.createdAt || idNumber(a.id) - idNumber(b.id));
	}

	get(id: string): ChildRecord | undefined {
		return this.records.get(id);
	}

	ids(): string[] {
		return this.list().map((c) => c.id);
	}

	/**
	 * Re-register a child known from the session (after reload/resume); it has no live session until
	 * subagent_send reopens its session file. Its latest run wins (a child may have settled several).
	 */
	restore(record: ChildRecord, result?: SettledResult): void {
		const n = Number(record.id.replace(/^sa-/, ""));
		if (Number.isInteger(n)) this.sequence = Math.max(this.sequence, n);
		const known = this.records.get(record.id);
		if (!known || (!this.runtimes.has(record.id) && record.run >= known.run)) this.records.set(record.id, record);
		if (result) this.ledger.add(result);
	}

	/** True for a child restored from an earlier process that has not been run again here. */
	isRestored(id: string): boolean {
		return this.records.has(id) && !this.runtimes.has(id);
	}

	/** Take the next child id now (for a spawn that prepares something named after it first). */
	reserveId(): string {
		if (this.closed) throw new Error(SHUT_DOWN_ERROR);
		return childId(++this.sequence);
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
		return resolveAfter(refs, this.list(), childId(this.sequence + 1));
	}

	/** Register a child and start it, queue it past the concurrency limit, or let it wait for its inputs. */
	spawn(request: SpawnRequest): ChildRecord {
		if (this.closed) throw new Error(SHUT_DOWN_ERROR);
		const id = request.id && !this.records.has(request.id) ? request.id : childId(++this.sequence);
		// A child spawned again under its recorded id (pi -c): later spawns take ids after it.
		this.sequence = Math.max(this.sequence, idNumber(id));
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
			createdAt: this.now(),
			// Spawn order must be queue order even when several spawns share a millisecond.
			queuedAt: this.now() + this.sequence / 1e6,
			turns: 0,
			outputTokens: 0,
			partialText: "",
			recentTools: [],
			...(request.worktree ? { worktree: request.worktree } : {}),
			...(request.structured ? { structured: true } : {}),
		};
		const after = request.after ?? [];
		if (after.length > 0) {
			const plan = resolveAfter(after, this.list(), id);
			if (!plan.ok) throw new Error(`after: ${plan.problem.kind}`);
			record.state = "waiting";
			record.after = plan.ids;
			record.afterFailed = request.afterFailed ?? "skip";
			if (request.respawn) record.respawn = request.respawn;
			const base = request.firstMessage ?? request.prompt;
			this.handovers.set(id, { compose: request.handover ?? (async () => base), base, preparing: false });
		}
		this.records.set(id, record);
		const rt = this.newRuntime(request.model, request.systemAppend, request.steps);
		rt.exactTools = request.exactTools;
		rt.extensions = request.extensions;
		this.runtimes.set(id, rt);
		this.runtimes.get(id)!.pendingPrompt = request.firstMessage ?? request.prompt;
		this.subscribers.publish({ type: "queued", child: record, run: 1 });
		this.pump();
		return record;
	}

	/**
	 * Steer a running child, or start a new run on a settled one (queued if no slot is free). A child
	 * restored from an earlier process reopens its session file (with `resume`'s model and prompt).
	 */
	async send(id: string, text: string, resume?: ResumeSettings): Promise<"steered" | "rerun" | "queued-child"> {
		const record = this.mustGet(id);
		if (typeof text !== "string" || text.trim().length === 0) throw new Error(EMPTY_SEND_TEXT_ERROR);
		if (this.closed) throw new Error(SHUT_DOWN_ERROR);
		let rt = this.runtimes.get(id);
		if (record.state === "queued" || record.state === "waiting") return "queued-child";
		if ((record.state === "running" || record.state === "starting") && rt?.handle) {
			await rt.handle.steer(text);
			return "steered";
		}
		if (!rt) {
			// A restored child: its session lived in an earlier process; its file is the way back.
			if (!record.sessionFile) throw new Error(restoredSendError(record));
			rt = this.newRuntime(resume?.model, resume?.systemAppend ?? [], resume?.steps);
			rt.resumeFile = record.sessionFile;
			rt.settledRuns = record.run;
			this.runtimes.set(id, rt);
		}
		record.run += 1;
		record.state = "queued";
		record.queuedAt = this.now() + this.sequence / 1e6;
		record.startedAt = undefined;
		record.endedAt = undefined;
		record.turns = 0;
		record.partialText = "";
		record.error = undefined;
		rt.pendingPrompt = text;
		rt.stopReason = undefined;
		this.subscribers.publish({ type: "queued", child: record, run: record.run });
		this.pump();
		return "rerun";
	}

	/** Stop children; resolves once each has settled (with its partial output in the ledger). */
	async cancel(ids: string[], error = CANCELLED_BY_PARENT): Promise<void> {
		// Children waiting on a cancelled one are skipped first, so none of them starts on its cancelled output.
		const gone = new Set([...ids, ...waitingDependents(this.list(), ids)]);
		const skipped = waitingDependents(this.list(), ids)
			.filter((id) => !ids.includes(id))
			.map((id) => this.mustGet(id))
			.map((child) => {
				const text = inputCancelledText((child.after ?? []).filter((i) => gone.has(i)));
				return this.conclude(child, child.run, "skipped", { text }, text);
			});
		await Promise.all([...skipped, ...ids.map((id) => this.stop(id, { state: "cancelled", error }))]);
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
			this.closed = true;
			await Promise.all(stopping.map((c) => this.stop(c.id, { state: "cancelled", error: INTERRUPTED_BY_SHUTDOWN })));
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
		this.closed = true;
		for (const rt of this.runtimes.values()) {
			if (rt.watchdog) clearInterval(rt.watchdog);
			rt.handle?.dispose();
		}
	}

	/** Resolve when `ids` are settled (mode all) or one is (mode any), on timeout, or on abort. */
	async waitFor(
		ids: string[],
		options: WaitOptions & { mode: "all" | "any"; questions?: boolean },
	): Promise<{ timedOut: boolean; aborted: boolean }> {
		const done = () => {
			// With `questions`, a question the parent has not seen yet ends the wait too (subagent_wait hands it out).
			if (options.questions && this.questions.undelivered(ids).length > 0) return true;
			const settled = ids.filter((id) => isSettled(this.mustGet(id).state)).length;
			return options.mode === "any" ? settled > 0 || ids.length === 0 : settled === ids.length;
		};
		return waitUntil(this.waiters, done, options);
	}

	private newRuntime(model: unknown, systemAppend: string[], steps?: RunSteps): Runtime {
		return { model, systemAppend, steps, lastActivity: this.now(), toolsInFlight: 0, settledRuns: 0 };
	}

	private mustGet(id: string): ChildRecord {
		const r = this.records.get(id);
		if (!r) throw new Error(`unknown subagent ${id}`);
		return r;
	}

	private changed(): void {
		this.subscribers.publish({ type: "changed" });
	}

	/** Settle or release waiting children whose inputs settled, then start queued children while slots are free. */
	private pump(): void {
		if (this.closed) return;
		this.advanceWaiting();
		for (const child of childrenToStart(this.list(), this.limits.maxConcurrent)) {
			child.state = "starting";
			void this.run(child);
		}
		this.changed();
	}

	/** Each waiting child whose inputs all settled is skipped, or gets its first message and joins the queue. */
	private advanceWaiting(): void {
		const all = this.list();
		for (const child of all) {
			const handover = this.handovers.get(child.id);
			if (child.state !== "waiting" || !handover || handover.preparing) continue;
			const verdict = readiness(child.after ?? [], all, child.afterFailed);
			if (verdict.act === "wait") continue;
			if (verdict.act === "skip") {
				const text = skippedText(verdict.failed);
				void this.conclude(child, child.run, "skipped", { text }, text);
				continue;
			}
			handover.preparing = true;
			void this.release(child, handover);
		}
	}

	/** Make a ready child's first message from its inputs' results, then queue it (unless it was stopped meanwhile). */
	private async release(child: ChildRecord, handover: { compose: Handover; base: string }): Promise<void> {
		const inputs = (child.after ?? []).map((id) => ({ child: this.mustGet(id), result: this.ledger.latest(id) }));
		let first: string;
		try {
			first = await handover.compose(inputs, handover.base);
		} catch (error) {
			if (child.state !== "waiting") return;
			const why = `its inputs could not be handed over: ${error instanceof Error ? error.message : String(error)}`;
			return void this.settleFailed(child, child.run, "failed", why);
		}
		const rt = this.runtimes.get(child.id);
		if (child.state !== "waiting" || !rt || this.closed) return;
		this.handovers.delete(child.id);
		rt.pendingPrompt = first;
		child.state = "queued";
		child.queuedAt = this.now() + this.sequence / 1e6;
		this.pump();
	}

	/**
	 * Settle a run once, after its conclude step (what an isolated child changed) when it has one; whoever
	 * settles the run first, the step runs once and the others wait for it.
	 */
	private conclude(
		child: ChildRecord,
		run: number,
		state: ChildState,
		result: Reviewed,
		error?: string,
	): Promise<void> {
		const rt = this.runtimes.get(child.id);
		if (!rt || rt.settledRuns >= run) return Promise.resolve();
		if (rt.concluding?.run === run) return rt.concluding.promise;
		const step = rt.steps?.conclude;
		if (!step) {
			this.settle(child, run, state, result, error);
			return Promise.resolve();
		}
		const promise = step(state, result)
			.catch((failure) => ({ ...result, text: `${concludeFailedNote(failure)}\n\n${result.text}` }))
			.then((final) => this.settle(child, run, state, final, error));
		rt.concluding = { run, promise };
		return promise;
	}

	/** Record a run's outcome once: ledger, subscribers, waiters, and the next queued child. */
	private settle(child: ChildRecord, run: number, state: ChildState, result: Reviewed, error?: string): void {
		const rt = this.runtimes.get(child.id);
		if (!rt || rt.settledRuns >= run) return;
		const text = result.text;
		rt.settledRuns = run;
		if (rt.watchdog) clearInterval(rt.watchdog);
		rt.watchdog = undefined;
		child.state = state;
		child.endedAt = this.now();
		child.error = error;
		child.finalText = text;
		this.questions.runEnded(child);
		if (rt.handle?.sessionFile) child.sessionFile = rt.handle.sessionFile;
		const key = resultKey(child.id, run);
		const settled = this.ledger.add({
			key,
			id: child.id,
			run,
			text,
			state,
			settledAt: child.endedAt,
			verdict: result.verdict,
			extras: result.extras,
		});
		rt.runDone?.();
		// The result is in the ledger either way; waiters and the queue never stall on a subscriber's failure.
		this.subscribers.publish({ type: "settled", result: settled, child });
		for (const waiter of [...this.waiters]) waiter();
		this.pump();
	}

	/** Settle with an error text first and whatever the child had produced. */
	private settleFailed(
		child: ChildRecord,
		run: number,
		state: "failed" | "cancelled" | "incomplete",
		error: string,
	): Promise<void> {
		return this.conclude(child, run, state, { text: failedResultText(state, error, child.partialText) }, error);
	}

	private async run(child: ChildRecord): Promise<void> {
		const rt = this.runtimes.get(child.id)!;
		const prompt = rt.pendingPrompt ?? child.prompt;
		rt.pendingPrompt = undefined;
		child.startedAt = this.now();
		child.respawn = undefined; // it runs: a later process has its session file, not a spawn to repeat
		rt.lastActivity = this.now();
		rt.toolsInFlight = 0;
		rt.settledRun = new Promise<void>((r) => {
			rt.runDone = r;
		});
		const run = child.run;
		const stopped = (fallback: string) => {
			const reason = rt.stopReason ?? { state: "failed" as const, error: fallback };
			void this.settleFailed(child, run, reason.state, reason.error);
		};
		try {
			await rt.steps?.beforeRun?.();
			if (rt.stopReason) return stopped(STOPPED_BEFORE_START);
			const spec = {
				id: child.id,
				cwd: child.cwd,
				tools: child.tools,
				thinking: child.thinking,
				model: rt.model,
				systemAppend: rt.systemAppend,
				sessionFile: rt.resumeFile,
				exactTools: rt.exactTools,
				extensions: rt.extensions,
				...(this.questions.enabled
					? { ask: (input: AskInput, signal?: AbortSignal) => this.questions.ask(child, input, signal) }
					: {}),
				// A worktree child's folder is trusted as the same folder of its repository is.
				...(child.worktree
					? { trustFrom: join(child.worktree.repoTop, relative(child.worktree.path, child.cwd)) }
					: {}),
			};
			rt.handle ??= await this.backend.create(spec, (event) => {
				if (applyEvent(child, rt, event, this.now()).visible) this.changed();
				const cut = event.type === "turn_end" ? maxTurnsVerdict(child, rt) : undefined;
				if (cut) void this.stop(child.id, cut);
			});
			child.sessionFile = rt.handle.sessionFile ?? child.sessionFile;
			if (rt.stopReason) return stopped(STOPPED_BEFORE_START);
			child.state = "running";
			this.subscribers.publish({ type: "started", child, run });
			this.changed();
			this.armWatchdog(child, rt);
			const handle = rt.handle;
			const messages = await handle.prompt(prompt);
			if (rt.stopReason) return stopped(ABORTED);
			const outcome = runOutcome(messages, child.partialText);
			if (outcome.state !== "completed") return void this.settleFailed(child, run, outcome.state, outcome.error);
			let result: Reviewed = { text: outcome.text };
			if (rt.steps?.review) {
				result = await rt.steps.review(outcome.text, async (text) => {
					const more = runOutcome(await handle.prompt(text), "");
					return more.state === "completed" ? { ok: true, text: more.text } : { ok: false, error: more.error };
				});
				if (rt.stopReason) return stopped(ABORTED);
			}
			await this.conclude(child, run, "completed", result);
		} catch (error) {
			if (rt.stopReason) return stopped(String(error));
			this.settleFailed(child, run, "failed", error instanceof Error ? error.message : String(error));
		}
	}

	private async stop(id: string, reason: StopReason): Promise<void> {
		const child = this.mustGet(id);
		const rt = this.runtimes.get(id);
		if (isSettled(child.state) || !rt) return;
		if (child.state === "queued" || child.state === "waiting")
			return await this.settleFailed(child, child.run, "cancelled", reason.error);
		rt.stopReason ??= reason;
		const done = rt.settledRun;
		await rt.handle?.abort().catch(() => undefined);
		// A run that ignores abort is settled anyway after a grace period; nothing waits forever.
		await Promise.race([done, new Promise((r) => setTimeout(r, ABORT_GRACE_MS).unref?.())]);
		await this.settleFailed(child, child.run, reason.state, reason.error);
	}

	private armWatchdog(child: ChildRecord, rt: Runtime): void {
		rt.watchdog = setInterval(() => {
			const verdict = watchdogVerdict(child, rt, this.limits, this.now());
			if (verdict) void this.stop(child.id, verdict);
		}, watchdogTickMs(this.limits));
		rt.watchdog.unref?.();
	}
}

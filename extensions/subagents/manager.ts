/**
 * Lifecycle of children: spawn or queue, run through a backend, watchdog, settle exactly once,
 * keep the delivery ledger, and let waits block on settlements. No Pi imports: the backend is
 * an interface, so this runs in unit tests with a fake backend.
 */
import {
	type ChildRecord,
	type ChildState,
	type ContextMode,
	childId,
	childrenToStart,
	DeliveryLedger,
	deriveName,
	isSettled,
	lastAssistant,
	RECENT_TOOL_CALLS,
	resultKey,
	type SettledResult,
} from "./domain.ts";
import {
	ABORTED,
	CANCELLED_BY_PARENT,
	emptyAnswerNote,
	failedResultText,
	INTERRUPTED_BY_SHUTDOWN,
	maxRunTimeError,
	PROVIDER_ERROR,
	restoredSendError,
	SHUT_DOWN_ERROR,
	STOPPED_BEFORE_START,
	watchdogError,
} from "./prompt.ts";

/** What a backend reports while a child runs (normalized from Pi's session events). */
export type ChildEvent =
	| { type: "activity" }
	| { type: "text"; delta: string }
	| { type: "assistant_end"; outputTokens?: number }
	| { type: "turn_end"; contextTokens?: number; contextWindow?: number }
	| { type: "tool_start"; name: string; args: string }
	| { type: "tool_end"; name: string; isError: boolean };

/** A live child session. */
export interface ChildHandle {
	/** The persistent session file, once known. */
	sessionFile?: string;
	/** Run the agent on `text`; resolves when the run ends (any way) with the session's messages of that run. */
	prompt(text: string): Promise<unknown[]>;
	/** Queue a message for a running agent. */
	steer(text: string): Promise<void>;
	abort(): Promise<void>;
	dispose(): void;
}

/** What the manager asks a backend to start. */
export interface ChildSpec {
	/** Child id. */
	id: string;
	/** Working directory. */
	cwd: string;
	/** Tool names to enable. */
	tools: string[];
	/** Thinking level, if set. */
	thinking?: string;
	/** Backend-specific model object (Pi's Model), resolved by the adapter. */
	model: unknown;
	/** Paragraphs added to the child's system prompt. */
	systemAppend: string[];
}

export interface ChildBackend {
	create(spec: ChildSpec, onEvent: (event: ChildEvent) => void): Promise<ChildHandle>;
}

export interface ManagerLimits {
	/** Children running at once; more queue. */
	maxConcurrent: number;
	/** Milliseconds without any event while the model is due to answer before the child fails. */
	inactivityTimeoutMs: number;
	/** Milliseconds a single run may take in total. */
	maxRunTimeMs: number;
	/** Watchdog check period in milliseconds. */
	watchdogTickMs?: number;
}

export interface SpawnRequest {
	/** The task as the caller gave it. */
	prompt: string;
	/** The first message the child receives (the prompt, or the narrated fork plus the prompt). */
	firstMessage?: string;
	/** Short title, if given. */
	name?: string;
	/** "provider/id" label. */
	modelLabel: string;
	/** Pi's Model object. */
	model: unknown;
	/** Tool names to enable. */
	tools: string[];
	/** Working directory (exists). */
	cwd: string;
	/** Thinking level, if set. */
	thinking?: string;
	/** Fresh or forked start. */
	context: ContextMode;
	/** Paragraphs added to the child's system prompt. */
	systemAppend: string[];
}

interface Runtime {
	/** The live session, once created. */
	handle?: ChildHandle;
	/** Pi's Model object. */
	model: unknown;
	/** Paragraphs added to the child's system prompt. */
	systemAppend: string[];
	/** Text the next run starts with. */
	pendingPrompt?: string;
	/** Why the current run is being stopped, set before abort(). */
	stopReason?: { state: "failed" | "cancelled"; error: string };
	/** Epoch ms of the last event from the child. */
	lastActivity: number;
	/** Tool calls running now (the watchdog waits for them). */
	toolsInFlight: number;
	/** Inactivity and run-time timer of the current run. */
	watchdog?: ReturnType<typeof setInterval>;
	/** Resolves when the current run has settled. */
	settledRun?: Promise<void>;
	/** Highest run number already settled (guards against settling a run twice). */
	settledRuns: number;
	/** Resolves settledRun. */
	runDone?: () => void;
}

/** Grace period after abort() before a run that does not end is settled anyway, in milliseconds. */
export const ABORT_GRACE_MS = 5_000;

function idNumber(id: string): number {
	return Number(id.replace(/^sa-/, "")) || 0;
}

export class SubagentManager {
	readonly ledger = new DeliveryLedger();
	private readonly records = new Map<string, ChildRecord>();
	private readonly runtimes = new Map<string, Runtime>();
	private sequence = 0;
	private listeners = new Set<() => void>();
	private closed = false;

	constructor(
		private readonly backend: ChildBackend,
		private limits: ManagerLimits,
		private readonly hooks: {
			/** A run settled; its result is in the ledger as pending. */
			onSettled?: (result: SettledResult, child: ChildRecord) => void;
			/** Something visible changed (for status lines). */
			onChange?: () => void;
			now?: () => number;
		} = {},
	) {}

	private now(): number {
		return this.hooks.now?.() ?? Date.now();
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

	/** Re-register a child known from the session (after reload/resume); it has no live session. */
	restore(record: ChildRecord, result?: SettledResult): void {
		const n = Number(record.id.replace(/^sa-/, ""));
		if (Number.isInteger(n)) this.sequence = Math.max(this.sequence, n);
		if (!this.records.has(record.id)) this.records.set(record.id, record);
		if (result) this.ledger.add(result);
	}

	/** Register a child and start it, or queue it past the concurrency limit. */
	spawn(request: SpawnRequest): ChildRecord {
		if (this.closed) throw new Error(SHUT_DOWN_ERROR);
		const id = childId(++this.sequence);
		const record: ChildRecord = {
			id,
			name: deriveName(request.prompt, request.name),
			prompt: request.prompt,
			model: request.modelLabel,
			tools: request.tools,
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
		};
		this.records.set(id, record);
		this.runtimes.set(id, {
			model: request.model,
			systemAppend: request.systemAppend,
			pendingPrompt: request.firstMessage ?? request.prompt,
			lastActivity: this.now(),
			toolsInFlight: 0,
			settledRuns: 0,
		});
		this.pump();
		return record;
	}

	/** Steer a running child, or start a new run on a settled one (queued if no slot is free). */
	async send(id: string, text: string): Promise<"steered" | "rerun" | "queued-child"> {
		const record = this.mustGet(id);
		const rt = this.runtimes.get(id);
		if (record.state === "queued") return "queued-child";
		if ((record.state === "running" || record.state === "starting") && rt?.handle) {
			await rt.handle.steer(text);
			return "steered";
		}
		if (!rt) {
			// A restored child: its session lived in an earlier process.
			throw new Error(restoredSendError(record));
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
		this.pump();
		return "rerun";
	}

	/** Stop children; resolves once each has settled (with its partial output in the ledger). */
	async cancel(ids: string[], error = CANCELLED_BY_PARENT): Promise<void> {
		await Promise.all(ids.map((id) => this.stop(id, { state: "cancelled", error })));
	}

	/** Abort every child (parent shutdown/reload); settled results stay in the ledger. */
	async shutdown(): Promise<void> {
		const active = this.list().filter((c) => !isSettled(c.state));
		await this.cancel(
			active.map((c) => c.id),
			INTERRUPTED_BY_SHUTDOWN,
		);
		this.closed = true;
		for (const rt of this.runtimes.values()) {
			if (rt.watchdog) clearInterval(rt.watchdog);
			rt.handle?.dispose();
		}
	}

	/** Resolve when `ids` are settled (mode all) or one is (mode any), on timeout, or on abort. */
	async waitFor(
		ids: string[],
		options: { mode: "all" | "any"; timeoutMs?: number; signal?: AbortSignal; onTick?: () => void; tickMs?: number },
	): Promise<{ timedOut: boolean; aborted: boolean }> {
		const done = () => {
			const settled = ids.filter((id) => isSettled(this.mustGet(id).state)).length;
			return options.mode === "any" ? settled > 0 || ids.length === 0 : settled === ids.length;
		};
		if (done()) return { timedOut: false, aborted: false };
		return new Promise((resolve) => {
			let timer: ReturnType<typeof setTimeout> | undefined;
			let ticker: ReturnType<typeof setInterval> | undefined;
			const finish = (outcome: { timedOut: boolean; aborted: boolean }) => {
				if (timer) clearTimeout(timer);
				if (ticker) clearInterval(ticker);
				this.listeners.delete(check);
				options.signal?.removeEventListener("abort", onAbort);
				resolve(outcome);
			};
			const check = () => {
				if (done()) finish({ timedOut: false, aborted: false });
			};
			const onAbort = () => finish({ timedOut: false, aborted: true });
			this.listeners.add(check);
			if (options.signal?.aborted) return onAbort();
			options.signal?.addEventListener("abort", onAbort, { once: true });
			if (options.timeoutMs !== undefined)
				timer = setTimeout(() => finish({ timedOut: true, aborted: false }), options.timeoutMs);
			if (options.onTick) ticker = setInterval(options.onTick, options.tickMs ?? 1000);
		});
	}

	private mustGet(id: string): ChildRecord {
		const r = this.records.get(id);
		if (!r) throw new Error(`unknown subagent ${id}`);
		return r;
	}

	private changed(): void {
		this.hooks.onChange?.();
	}

	/** Start queued children while slots are free. */
	private pump(): void {
		if (this.closed) return;
		for (const child of childrenToStart(this.list(), this.limits.maxConcurrent)) {
			child.state = "starting";
			void this.run(child);
		}
		this.changed();
	}

	/** Record a run's outcome once: ledger, hooks, waiters, and the next queued child. */
	private settle(child: ChildRecord, run: number, state: ChildState, text: string, error?: string): void {
		const rt = this.runtimes.get(child.id);
		if (!rt || rt.settledRuns >= run) return;
		rt.settledRuns = run;
		if (rt.watchdog) clearInterval(rt.watchdog);
		rt.watchdog = undefined;
		child.state = state;
		child.endedAt = this.now();
		child.error = error;
		child.finalText = text;
		if (rt.handle?.sessionFile) child.sessionFile = rt.handle.sessionFile;
		const key = resultKey(child.id, run);
		const result = this.ledger.add({ key, id: child.id, run, text, state, settledAt: child.endedAt });
		rt.runDone?.();
		this.hooks.onSettled?.(result, child);
		for (const listener of [...this.listeners]) listener();
		this.pump();
	}

	/** Settle with an error text first and whatever the child had produced. */
	private settleFailed(child: ChildRecord, run: number, state: "failed" | "cancelled", error: string): void {
		this.settle(child, run, state, failedResultText(state, error, child.partialText), error);
	}

	private async run(child: ChildRecord): Promise<void> {
		const rt = this.runtimes.get(child.id)!;
		const prompt = rt.pendingPrompt ?? child.prompt;
		rt.pendingPrompt = undefined;
		child.startedAt = this.now();
		rt.lastActivity = this.now();
		rt.toolsInFlight = 0;
		rt.settledRun = new Promise<void>((r) => {
			rt.runDone = r;
		});
		const run = child.run;
		const stopped = (fallback: string) => {
			const reason = rt.stopReason ?? { state: "failed" as const, error: fallback };
			this.settleFailed(child, run, reason.state, reason.error);
		};
		try {
			const spec = {
				id: child.id,
				cwd: child.cwd,
				tools: child.tools,
				thinking: child.thinking,
				model: rt.model,
				systemAppend: rt.systemAppend,
			};
			rt.handle ??= await this.backend.create(spec, (event) => this.onEvent(child, rt, event));
			child.sessionFile = rt.handle.sessionFile ?? child.sessionFile;
			if (rt.stopReason) return stopped(STOPPED_BEFORE_START);
			child.state = "running";
			this.changed();
			this.armWatchdog(child, rt);
			const messages = await rt.handle.prompt(prompt);
			if (rt.stopReason) return stopped(ABORTED);
			const last = lastAssistant(messages);
			if (last.stopReason === "error")
				return this.settleFailed(child, run, "failed", last.errorMessage ?? PROVIDER_ERROR);
			if (last.stopReason === "aborted")
				return this.settleFailed(child, run, "cancelled", last.errorMessage ?? ABORTED);
			const partial = child.partialText.trimEnd();
			this.settle(child, run, "completed", last.text || partial || emptyAnswerNote());
		} catch (error) {
			if (rt.stopReason) return stopped(String(error));
			this.settleFailed(child, run, "failed", error instanceof Error ? error.message : String(error));
		}
	}

	private async stop(id: string, reason: { state: "failed" | "cancelled"; error: string }): Promise<void> {
		const child = this.mustGet(id);
		const rt = this.runtimes.get(id);
		if (isSettled(child.state) || !rt) return;
		if (child.state === "queued") return this.settleFailed(child, child.run, "cancelled", reason.error);
		rt.stopReason ??= reason;
		const done = rt.settledRun;
		await rt.handle?.abort().catch(() => undefined);
		// A run that ignores abort is settled anyway after a grace period; nothing waits forever.
		await Promise.race([done, new Promise((r) => setTimeout(r, ABORT_GRACE_MS).unref?.())]);
		this.settleFailed(child, child.run, reason.state, reason.error);
	}

	private armWatchdog(child: ChildRecord, rt: Runtime): void {
		const tick = this.limits.watchdogTickMs ?? Math.max(50, Math.min(1000, this.limits.inactivityTimeoutMs / 4));
		rt.watchdog = setInterval(() => {
			if (child.state !== "running" || rt.stopReason) return;
			const now = this.now();
			if (now - (child.startedAt ?? now) > this.limits.maxRunTimeMs) {
				void this.stop(child.id, {
					state: "failed",
					error: maxRunTimeError(Math.round(this.limits.maxRunTimeMs / 1000)),
				});
			} else if (rt.toolsInFlight === 0 && now - rt.lastActivity > this.limits.inactivityTimeoutMs) {
				const seconds = Math.round(this.limits.inactivityTimeoutMs / 1000);
				void this.stop(child.id, { state: "failed", error: watchdogError(child.model, seconds) });
			}
		}, tick);
		rt.watchdog.unref?.();
	}

	private onEvent(child: ChildRecord, rt: Runtime, event: ChildEvent): void {
		rt.lastActivity = this.now();
		switch (event.type) {
			case "text":
				child.partialText += event.delta;
				break;
			case "assistant_end":
				if (event.outputTokens) child.outputTokens += event.outputTokens;
				// Separate the texts of consecutive assistant messages in the partial output.
				if (child.partialText.length > 0 && !child.partialText.endsWith("\n\n")) child.partialText += "\n\n";
				break;
			case "turn_end":
				child.turns += 1;
				if (event.contextTokens !== undefined) child.contextTokens = event.contextTokens;
				if (event.contextWindow !== undefined) child.contextWindow = event.contextWindow;
				this.changed();
				break;
			case "tool_start":
				rt.toolsInFlight += 1;
				child.recentTools.push({ name: event.name, args: event.args });
				if (child.recentTools.length > RECENT_TOOL_CALLS) child.recentTools.shift();
				break;
			case "tool_end": {
				rt.toolsInFlight = Math.max(0, rt.toolsInFlight - 1);
				const note = [...child.recentTools].reverse().find((t) => t.name === event.name && t.isError === undefined);
				if (note) note.isError = event.isError;
				break;
			}
			default:
				break;
		}
	}
}

/**
 * The subagents extension's lifecycle in one object: its session state (session-state.ts), the status line,
 * automatic delivery, the single-shot settle state, the spawn tool's current description and the parent's
 * tool calls running now, with one method per Pi event it handles (sessionStart, agentEnd, agentSettled,
 * beforeSettle, turnStart, beforeAgentStart, toolStart, toolEnd, messageEnd, sessionCompact, sessionShutdown).
 * index.ts only subscribes Pi's events to them.
 */
import { join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { ExtensionHost } from "../../shared/host/bootstrap.ts";
import { settleDeferredTools } from "../../shared/host/pi-host.ts";
import { describePolicy } from "../agents/agents.ts";
import { scheduleWorktreePrune } from "../checkable/prune-worktrees.ts";
import { sessionHomes, sessionKey } from "../children/home.ts";
import { AutoDelivery, FLUSH_POLL_ATTEMPTS } from "../delivery/auto-delivery.ts";
import type { RunEntryData } from "../delivery/persistence.ts";
import type { SettleState } from "../delivery/settle.ts";
import { QUESTION_ENTRY, RUN_ENTRY, SETTLED_ENTRY, WORKTREES_FOLDER } from "../domain/entries.ts";
import type { SubagentServices } from "../domain/services.ts";
import { QUESTION_MESSAGE_TYPE } from "../prompt/ask.ts";
import { CANCELLED_IN_VIEW, ROSTER_MESSAGE_TYPE } from "../prompt/common.ts";
import { agentsCommandText, spawnDescription } from "../prompt/spawn.ts";
import { SPAWN_PARAMETERS } from "../tools/schemas.ts";
import type { SpawnParams } from "../tools/spawn.ts";
import { RARE_TOOLS } from "../tools/table.ts";
import type { OtherSessions } from "../view/command.ts";
import { cancelOther, otherSessionChildren } from "../view/others.ts";
import { StatusLine } from "../view/status.ts";
import { type Later, later, laterIfLoaded, loadLater } from "./later.ts";
import { createSessionState, type SessionState } from "./session-state.ts";

/** The tool that hands questions out in its own result: a question is not steered while it runs. */
const WAIT_TOOL = "subagent_wait";

/** How long shutdown waits for children to stop and record their partial output, in milliseconds. */
export const SHUTDOWN_WAIT_MS = 8_000;

export const AGENTS_COMMAND_DESCRIPTION =
	"List the named agents for subagent_spawn: source file, tools, model, and any warnings";

export interface LifecycleOptions {
	pi: ExtensionAPI;
	depth: number;
	host: ExtensionHost;
	/** Builds the extension for a child one level deeper (to honour maxDepth > 1). */
	nested: (depth: number) => (pi: ExtensionAPI) => void;
	/** Register subagent_spawn with this description (it lists the agents). */
	registerSpawn: (description: string) => void;
}

export class SubagentsLifecycle {
	readonly state: SessionState;
	readonly services: SubagentServices;
	/**
	 * Children of other sessions of this process (top level only): shown marked and cancellable by the person,
	 * never by the model (every subagent_* tool stays with this session's own children).
	 */
	readonly elsewhere: OtherSessions;
	private readonly pi: ExtensionAPI;
	private readonly depth: number;
	private readonly registerSpawn: (description: string) => void;
	private readonly status: StatusLine;
	private readonly delivery: AutoDelivery;
	/** 1.x single-shot runs: the rounds taken and the wait in progress (delivery/settle.ts). */
	private readonly settle: SettleState = { rounds: 0 };
	/** The description subagent_spawn was registered with last. */
	private spawnDescriptionText = "";
	/**
	 * The parent's tool calls executing now (id → tool name): while one runs that is not subagent_wait, a child's
	 * question goes into the running turn as a steering message (Pi hands it to the model after the tool calls).
	 */
	private readonly runningTools = new Map<string, string>();

	constructor(options: LifecycleOptions) {
		const { pi, depth } = options;
		this.pi = pi;
		this.depth = depth;
		this.registerSpawn = options.registerSpawn;
		// The lifecycle's own state: the latest context, the closing flag and this session's manager live in
		// `state`; every handler gets the read-only services, narrowed by its signature.
		this.state = createSessionState({
			pi,
			depth,
			host: options.host,
			nested: options.nested,
			// Once per manager: every run and result is recorded in the parent's session, through `record`, which
			// outlives this instance (children/home.ts): a child that settles after a session switch is recorded too.
			onChildren: (manager, record) => {
				// A manager is made by the children's code, so it is loaded by now (adapter/later.ts).
				const { persistQuestion, persistRun, persistSettled } = later();
				const deps = { store: this.services.store, session: { appendEntry: record } };
				manager.questions.subscribe((event) => persistQuestion(record, event));
				manager.subscribe((event) => {
					if (event.type === "changed") return;
					if (event.type === "settled") persistSettled(deps, event.result, event.child);
					else persistRun(deps, event.child, event.run, event.type);
				});
			},
			// This instance's own listener, dropped when it lets the children go (session switch, reload).
			follow: (manager) => {
				const children = manager.subscribe((event) => {
					if (event.type === "changed") return this.status.refresh();
					if (event.type === "settled" && !this.services.closing()) this.delivery.schedule();
				});
				// A child's question goes to the parent as a result does: at once when it is idle (ask_parent).
				const questions = manager.questions.subscribe((event) => {
					if (event.type === "asked" && !this.services.closing()) this.delivery.schedule();
				});
				return () => {
					children();
					questions();
				};
			},
		});
		const services = this.state.services;
		this.services = services;
		this.elsewhere = {
			list: (ctx) =>
				depth === 0 ? otherSessionChildren(sessionHomes().values(), sessionKey(ctx), services.existingChildren()) : [],
			cancel: async (session, id) => {
				await cancelOther(sessionHomes().values(), session, id, CANCELLED_IN_VIEW);
				this.status.refresh(); // its widget line goes now, not at the next tick
			},
		};
		this.status = new StatusLine(
			services.context,
			() => services.existingChildren()?.list(),
			() => {
				const ctx = services.context();
				return ctx ? this.elsewhere.list(ctx) : [];
			},
		);
		this.delivery = new AutoDelivery(() => this.deliverNext());
	}

	/**
	 * Results first; questions at the next idle moment after them (one message starts one turn). A question
	 * does not wait for a busy parent's turn to end: while a tool call of it runs, it joins that turn.
	 */
	private async deliverNext(): Promise<boolean> {
		const services = this.services;
		// No children: nothing to deliver (the children's code, which makes them, may not even be loaded).
		if (!services.existingChildren()) return true;
		const { deliverPending, deliverQuestions } = await loadLater();
		if (this.steerable()) await deliverQuestions(services, "steer");
		return (services.existingChildren()?.ledger.pending().length ?? 0) > 0
			? deliverPending(services, "trigger")
			: deliverQuestions(services, "trigger");
	}

	/** Register subagent_spawn again only when its description changed, so the parent's prompt (and its provider cache) stays the same. */
	describeSpawn(description: string): void {
		if (description === this.spawnDescriptionText) return;
		this.spawnDescriptionText = description;
		this.registerSpawn(description);
	}

	/** The spawn tool's description lists the agents on disk now (unchanged files cost a stat). */
	refreshAgents(ctx: ExtensionContext): void {
		try {
			this.describeSpawn(spawnDescription(this.services.agents(ctx).agents));
		} catch (error) {
			console.error(`subagents: agent files could not be read (${String(error)})`);
		}
	}

	/** /agents: the named agents, their sources and warnings. */
	agentsCommand(ctx: ExtensionContext): void {
		this.state.enter(ctx);
		const snapshot = this.services.agents(ctx);
		this.refreshAgents(ctx);
		const text = agentsCommandText(
			snapshot.agents.map((a) => ({ ...a, extensions: a.extensions ? describePolicy(a.extensions) : undefined })),
			snapshot.warnings,
			this.services.config().subagents.defaultTools,
		);
		if (ctx.hasUI) ctx.ui.notify(text, "info");
		else console.log(text);
	}

	async sessionStart(ctx: ExtensionContext): Promise<void> {
		const { state, services } = this;
		state.setClosing(false);
		state.enter(ctx);
		// Kept worktrees untouched for longer than store.maxAgeDays go, once per process, off the hot path.
		try {
			scheduleWorktreePrune(join(services.store().root, WORKTREES_FOLDER), services.config().store.maxAgeDays);
		} catch {
			// No store: no worktrees either.
		}
		// Pi 1.x: the rarely used tools stay behind tool_search when it is active; otherwise they are declared.
		settleDeferredTools(this.pi, RARE_TOOLS, services.config().exposure.deferRareTools, "subagent_spawn");
		this.refreshAgents(ctx);
		// Children this session left running in the process (a reload, a switch back) are taken over as they
		// are; otherwise they are rebuilt from the session's records.
		const adopted = state.adopt(ctx);
		// No children and no records of any: the children's code is not loaded (the first spawn loads it), and
		// the manager is made when it is needed (docs/startup.md, "Loaded on first use").
		if (!adopted && !hasChildRecords(ctx.sessionManager.getBranch())) {
			this.status.refresh();
			return;
		}
		const {
			askLimitsOf,
			damagedSpawnError,
			deliverPending,
			deliverQuestions,
			limitsOf,
			recordedSpawnProblem,
			restoreFromSession,
			restoreQuestions,
			restoreWaiting,
			spawnTool,
		} = await loadLater();
		if (services.closing()) return; // shut down while it loaded
		services.children(ctx).setLimits(limitsOf(services.config()));
		services.children(ctx).questions.setLimits(askLimitsOf(services.config()));
		// Pipeline stages an earlier process left waiting are spawned again under their ids (restoreWaiting).
		const waiting: RunEntryData[] = [];
		if (!adopted) {
			restoreFromSession(services, ctx, waiting);
			// Questions an earlier process left unanswered are asked again (ask/records.ts).
			restoreQuestions(services.children(ctx), ctx.sessionManager.getBranch());
		}
		// A recorded stage's parameters pass the spawn tool's own schema again (the session file is input).
		await restoreWaiting(services, ctx, waiting, (params, id) => {
			const problem = recordedSpawnProblem(SPAWN_PARAMETERS, params);
			if (problem) throw new Error(damagedSpawnError(problem));
			return spawnTool(services, params as SpawnParams, ctx, id);
		});
		const owed = services.existingChildren()?.ledger.pending().length ?? 0;
		this.status.refresh(); // a redraw: rows of the resumed history show their children's final state
		if (owed > 0) await deliverPending(services, "append");
		if ((services.existingChildren()?.questions.undelivered().length ?? 0) > 0)
			await deliverQuestions(services, "append");
	}

	/** 0.73: sendMessage inside agent_end starts no turn, so poll for idle on later ticks. */
	agentEnd(ctx: ExtensionContext): void {
		this.state.remember(ctx);
		this.runningTools.clear();
		this.delivery.schedule(FLUSH_POLL_ATTEMPTS);
	}

	/** 1.x: agent_settled fires once the agent is really idle. */
	agentSettled(ctx: ExtensionContext): void {
		this.state.remember(ctx);
		void this.deliverNext();
	}

	/**
	 * 1.x single-shot runs (print/json mode): a run that would settle while children run waits for them and
	 * takes their results into one more turn before Pi exits (delivery/settle.ts). Acts on nothing with a UI.
	 */
	beforeSettle(event: Parameters<Later["settleSingleShot"]>[2], ctx: ExtensionContext) {
		this.state.enter(ctx);
		// No children: nothing to wait for (settleSingleShot says the same, and its code need not load for it).
		if (!this.services.existingChildren()) return Promise.resolve(undefined);
		return loadLater().then((code) => code.settleSingleShot(this.services, this.settle, event, ctx));
	}

	turnStart(ctx: ExtensionContext): void {
		this.state.remember(ctx);
	}

	/**
	 * Whether a question may be steered into the parent's turn now: one of its tool calls runs, so Pi takes the
	 * message in after them (a turn without one may end before Pi looks for steering messages, which would
	 * strand it on 0.73), and none is subagent_wait (which hands questions out in its own result).
	 */
	private steerable(): boolean {
		if (this.services.closing() || !maySteer(this.runningTools.values())) return false;
		return (this.services.existingChildren()?.questions.undelivered().length ?? 0) > 0;
	}

	/** A tool call of the parent starts: a question that waits for the parent can join its turn now. */
	toolStart(event: { toolCallId?: unknown; toolName?: unknown }, ctx: ExtensionContext): void {
		this.state.remember(ctx);
		if (typeof event.toolCallId !== "string") return;
		this.runningTools.set(event.toolCallId, typeof event.toolName === "string" ? event.toolName : "");
		if (this.steerable()) this.delivery.schedule();
	}

	toolEnd(event: { toolCallId?: unknown }): void {
		if (typeof event.toolCallId === "string") this.runningTools.delete(event.toolCallId);
	}

	/**
	 * A message reached the parent's context: a question's own (a steer Pi injected into the turn, or one that
	 * started a turn) starts its children's time limits (ask/desk.ts seen). Its details are read as input.
	 */
	messageEnd(event: { message?: unknown }): void {
		const message = event.message as { role?: unknown; customType?: unknown } | undefined;
		if (message?.role !== "custom" || message.customType !== QUESTION_MESSAGE_TYPE) return;
		// Children exist only once their code was loaded (adapter/later.ts).
		const manager = this.services.existingChildren();
		if (manager) laterIfLoaded()?.questionsSeen(manager.questions, message);
	}

	/** Agent files changed since the last prompt: the next request lists them. */
	beforeAgentStart(ctx: ExtensionContext): void {
		this.settle.rounds = 0;
		this.state.enter(ctx);
		this.refreshAgents(ctx);
	}

	/**
	 * A compaction summarizes the spawn calls away: the roster re-states, by code, what still runs or is owed.
	 * Sent without a turn: appended at once when idle; mid-run it joins the run at its next boundary.
	 */
	sessionCompact(ctx: ExtensionContext): void {
		this.state.remember(ctx);
		const manager = this.services.existingChildren();
		if (!manager) return;
		// Children exist, so their code is loaded, except right after a session start adopted them.
		const code = laterIfLoaded();
		if (!code) {
			void loadLater().then(() => this.sessionCompact(ctx));
			return;
		}
		const roster = code.rosterText(
			{ list: () => manager.list(), owed: (id) => manager.ledger.latest(id)?.delivery === "pending" },
			Date.now(),
		);
		if (!roster) return;
		this.pi.sendMessage(
			{ customType: ROSTER_MESSAGE_TYPE, content: roster.text, display: true, details: { ids: roster.ids } },
			{ triggerTurn: false },
		);
	}

	async sessionShutdown(event: unknown): Promise<void> {
		const { state, depth } = this;
		state.setClosing(true);
		this.runningTools.clear();
		this.settle.abort?.abort();
		this.delivery.cancel();
		this.status.stop();
		// A session switch (/new, /resume, /fork) or /reload: the children go on in their home, and their
		// results reach this session when it is active again. After a switch their records go straight into
		// this session's file (on disk at once, whatever ends the process later); a reload keeps the session open.
		const reason = (event as { reason?: string } | undefined)?.reason;
		if (depth === 0 && reason !== undefined && reason !== "quit") return state.detach(reason !== "reload");
		// The process ends: running children are stopped; their partial output is recorded as owed, for the next
		// start — this session's through this instance, other sessions' straight into their files.
		const manager = state.dropChildren();
		const others = depth === 0 ? [...sessionHomes().values()] : [];
		if (depth === 0) sessionHomes().clear();
		// Pipeline stages that have not started stay unsettled in a session on file, so `pi -c` continues them.
		const keep = depth === 0;
		const onFile = (() => {
			try {
				return Boolean(state.services.context()?.sessionManager.getSessionFile());
			} catch {
				return false;
			}
		})();
		const stopping = [
			...(manager ? [manager.shutdown(keep && onFile)] : []),
			...others.map((home) => home.manager.shutdown(keep).then(() => home.flushToFile())),
		];
		if (stopping.length === 0) return;
		await Promise.race([Promise.all(stopping), new Promise((r) => setTimeout(r, SHUTDOWN_WAIT_MS).unref?.())]);
		for (const home of others) home.flushToFile();
	}
}

/**
 * Whether a question may join the parent's running turn, given the names of its tool calls running now: only
 * while one runs (Pi then takes a steering message in after them), and never while subagent_wait runs (it hands
 * questions out in its own result).
 */
export function maySteer(running: Iterable<string>): boolean {
	let any = false;
	for (const name of running) {
		if (name === WAIT_TOOL) return false;
		any = true;
	}
	return any;
}

/**
 * Whether a session's branch holds records of children (their runs, results or questions): only then does a
 * session start restore anything, and load the children's code for it.
 */
export function hasChildRecords(branch: readonly unknown[]): boolean {
	const kinds: readonly unknown[] = [RUN_ENTRY, SETTLED_ENTRY, QUESTION_ENTRY];
	return branch.some((entry) => {
		const e = entry as { type?: unknown; customType?: unknown } | null;
		return e?.type === "custom" && kinds.includes(e.customType);
	});
}

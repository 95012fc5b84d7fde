/**
 * Subagents: the thin Pi adapter. Registers the seven tools with their renderers, a renderer for
 * delivered results, the status line, and the lifecycle hooks (restore on session start,
 * automatic delivery when the parent's run ends, the wait for children before a single-shot run on
 * Pi 1.x ends, persistence on shutdown). It owns the session's state (session-state.ts) and hands each
 * handler the services it names; the parts live in agents/, children/, checkable/, delivery/, tools/
 * and view/.
 */

import { join } from "node:path";
import { type ExtensionAPI, type ExtensionContext, keyText } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { bootExtension } from "../shared/host/bootstrap.ts";
import { DEFERRED_EXPOSURE, onPi1Event, settleDeferredTools } from "../shared/host/pi-host.ts";
import { createSessionState } from "./adapter/session-state.ts";
import { BUILT_IN_AGENTS, describePolicy } from "./agents/agents.ts";
import { deliverQuestions } from "./ask/deliver.ts";
import { askLimitsOf } from "./ask/desk.ts";
import { persistQuestion, restoreQuestions } from "./ask/records.ts";
import { scheduleWorktreePrune } from "./checkable/prune-worktrees.ts";
import { WORKTREES_FOLDER } from "./checkable/spawn-checkable.ts";
import { sessionHomes, sessionKey } from "./children/home.ts";
import { limitsOf } from "./children/session.ts";
import { AutoDelivery, deliverPending, FLUSH_POLL_ATTEMPTS, RESULT_MESSAGE_TYPE } from "./delivery/delivery.ts";
import {
	persistRun,
	persistSettled,
	type RunEntryData,
	restoreFromSession,
	restoreWaiting,
} from "./delivery/persistence.ts";
import { recordedSpawnProblem } from "./delivery/record-checks.ts";
import { rosterText } from "./delivery/roster.ts";
import { type SettleState, settleSingleShot } from "./delivery/settle.ts";
import type { ChildRow } from "./domain/records.ts";
import { CANCELLED_IN_VIEW, ROSTER_MESSAGE_TYPE, TOOL_TEXT } from "./prompt/common.ts";
import { SPAWN_AFTER_FAILED_PARAM, SPAWN_AFTER_PARAM } from "./prompt/pipeline.ts";
import { damagedSpawnError } from "./prompt/records.ts";
import { agentsCommandText, SPAWN_AGENT_PARAM, SPAWN_EXTENSIONS_PARAM, spawnDescription } from "./prompt/spawn.ts";
import { cancelTool } from "./tools/cancel.ts";
import { checkTool } from "./tools/check.ts";
import { cleanupTool } from "./tools/cleanup.ts";
import { listTool } from "./tools/list.ts";
import { sendTool } from "./tools/send.ts";
import { type SpawnParams, spawnTool } from "./tools/spawn.ts";
import { waitTool } from "./tools/wait.ts";
import { type OtherSessions, registerSubagentsView } from "./view/command.ts";
import { LiveResultComponent } from "./view/live-rows.ts";
import { cancelOther, otherSessionChildren } from "./view/others.ts";
import { callText, deliveredComponent, paintFor, textComponent } from "./view/render.ts";
import { StatusLine } from "./view/status.ts";

/** How long shutdown waits for children to stop and record their partial output, in milliseconds. */
export const SHUTDOWN_WAIT_MS = 8_000;
export { STATUS_REFRESH_MS } from "./view/status.ts";

const ids = () => Type.Array(Type.String(), { description: TOOL_TEXT.wait.ids });

/** Pi's default key for expanding tool output (docs/keybindings.md, `app.tools.expand`). */
const DEFAULT_EXPAND_KEY = "ctrl+o";

/**
 * The key bound to expanding tool output. Pi 1.x runs from a bundle, so the module an extension imports
 * holds its own keybinding registry without the app's bindings: keyText is then empty, and the
 * documented default is the best hint there is.
 */
function expandKey(): string {
	try {
		return keyText("app.tools.expand") || DEFAULT_EXPAND_KEY;
	} catch {
		return DEFAULT_EXPAND_KEY;
	}
}

/** Tools a parent rarely needs in every request: deferred behind Pi 1.x's tool_search when it is active. */
const RARE_TOOLS = ["subagent_check", "subagent_send", "subagent_cancel", "subagent_list"] as const;

export default function subagents(pi: ExtensionAPI): void {
	setupSubagents(pi, 0);
}

export function setupSubagents(pi: ExtensionAPI, depth: number): void {
	// The lifecycle's own state: the latest context, the closing flag and this session's manager live in
	// `state`; every handler gets the read-only services, narrowed by its signature.
	const state = createSessionState({
		pi,
		depth,
		host: bootExtension(pi, "subagents"),
		nested: (d) => (childPi) => setupSubagents(childPi, d),
		// Once per manager: every run and result is recorded in the parent's session, through `record`, which
		// outlives this instance (children/home.ts): a child that settles after a session switch is recorded too.
		onChildren: (manager, record) => {
			const deps = { store: services.store, session: { appendEntry: record } };
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
				if (event.type === "changed") return status.refresh();
				if (event.type === "settled" && !services.closing()) delivery.schedule();
			});
			// A child's question goes to the parent as a result does: at once when it is idle (ask_parent).
			const questions = manager.questions.subscribe((event) => {
				if (event.type === "asked" && !services.closing()) delivery.schedule();
			});
			return () => {
				children();
				questions();
			};
		},
	});
	const { services } = state;
	// Children of other sessions of this process (top level only): shown marked and cancellable by the person,
	// never by the model (every subagent_* tool stays with this session's own children).
	const elsewhere: OtherSessions = {
		list: (ctx) =>
			depth === 0 ? otherSessionChildren(sessionHomes().values(), sessionKey(ctx), services.existingChildren()) : [],
		cancel: async (session, id) => {
			await cancelOther(sessionHomes().values(), session, id, CANCELLED_IN_VIEW);
			status.refresh(); // its widget line goes now, not at the next tick
		},
	};
	const status = new StatusLine(
		services.context,
		() => services.existingChildren()?.list(),
		() => {
			const ctx = services.context();
			return ctx ? elsewhere.list(ctx) : [];
		},
	);
	// Results first; questions at the next idle moment after them (one message starts one turn).
	const deliverNext = () =>
		(services.existingChildren()?.ledger.pending().length ?? 0) > 0
			? deliverPending(services, "trigger")
			: deliverQuestions(services, "trigger");
	const delivery = new AutoDelivery(deliverNext);

	const render = {
		renderCall(tool: string) {
			return (args: object, theme: { fg(c: string, t: string): string }) =>
				textComponent(callText(tool, (args ?? {}) as Record<string, unknown>, paintFor(theme)));
		},
		renderResult(
			result: { content?: Array<{ type: string; text?: string }>; details?: unknown },
			options: { expanded?: boolean },
			theme: { fg(c: string, t: string): string },
		) {
			const text = (result.content ?? []).map((c) => c.text ?? "").join("");
			const rows = ((result.details as { rows?: ChildRow[] } | undefined)?.rows ?? []) as ChildRow[];
			// Drawn from the children's current state on every frame: rows never keep saying "starting".
			return new LiveResultComponent(rows, text, Boolean(options?.expanded), paintFor(theme), () =>
				services.existingChildren()?.list(),
			);
		},
	};

	const withCtx = <T>(ctx: ExtensionContext, fn: () => T): T => {
		state.enter(ctx);
		return fn();
	};

	const spawnParameters = Type.Object({
		prompt: Type.String({ description: TOOL_TEXT.spawn.prompt }),
		agent: Type.Optional(Type.String({ description: SPAWN_AGENT_PARAM })),
		name: Type.Optional(Type.String({ description: TOOL_TEXT.spawn.name })),
		model: Type.Optional(Type.String({ description: TOOL_TEXT.spawn.model })),
		tools: Type.Optional(Type.Array(Type.String(), { description: TOOL_TEXT.spawn.tools })),
		cwd: Type.Optional(Type.String({ description: TOOL_TEXT.spawn.cwd })),
		thinking: Type.Optional(Type.String({ description: TOOL_TEXT.spawn.thinking })),
		context: Type.Optional(
			Type.Union([Type.Literal("fresh"), Type.Literal("fork")], { description: TOOL_TEXT.spawn.context }),
		),
		extensions: Type.Optional(
			Type.Union([Type.Boolean(), Type.Array(Type.String())], { description: SPAWN_EXTENSIONS_PARAM }),
		),
		isolation: Type.Optional(
			Type.Union([Type.Literal("none"), Type.Literal("worktree")], { description: TOOL_TEXT.spawn.isolation }),
		),
		output_schema: Type.Optional(
			Type.Object({}, { additionalProperties: true, description: TOOL_TEXT.spawn.outputSchema }),
		),
		after: Type.Optional(Type.Array(Type.String(), { description: SPAWN_AFTER_PARAM })),
		after_failed: Type.Optional(
			Type.Union([Type.Literal("skip"), Type.Literal("run")], { description: SPAWN_AFTER_FAILED_PARAM }),
		),
	});
	// The description lists the agents; it is registered again only when that list changed, so the
	// parent's prompt (and its provider cache) stays the same from one request to the next.
	let spawnDescriptionText = "";
	const registerSpawn = (description: string) => {
		if (description === spawnDescriptionText) return;
		spawnDescriptionText = description;
		pi.registerTool({
			name: "subagent_spawn",
			label: TOOL_TEXT.spawn.label,
			description,
			promptSnippet: TOOL_TEXT.spawn.snippet,
			parameters: spawnParameters,
			execute: (_id, params, _signal, _onUpdate, ctx) => withCtx(ctx, () => spawnTool(services, params, ctx)),
			renderCall: render.renderCall("subagent_spawn"),
			renderResult: render.renderResult,
		});
	};
	const refreshAgents = (ctx: ExtensionContext) => {
		try {
			registerSpawn(spawnDescription(services.agents(ctx).agents));
		} catch (error) {
			console.error(`subagents: agent files could not be read (${String(error)})`);
		}
	};
	registerSpawn(spawnDescription(BUILT_IN_AGENTS));

	pi.registerTool({
		name: "subagent_wait",
		label: TOOL_TEXT.wait.label,
		description: TOOL_TEXT.wait.description,
		parameters: Type.Object({
			ids: Type.Optional(ids()),
			timeout_s: Type.Optional(Type.Number({ description: TOOL_TEXT.wait.timeout, minimum: 0 })),
			mode: Type.Optional(Type.Union([Type.Literal("all"), Type.Literal("any")], { description: TOOL_TEXT.wait.mode })),
		}),
		execute: (_id, params, signal, onUpdate, ctx) =>
			withCtx(ctx, () => waitTool(services, params, signal, onUpdate as never, ctx)),
		renderCall: render.renderCall("subagent_wait"),
		renderResult: render.renderResult,
	});

	pi.registerTool({
		...DEFERRED_EXPOSURE,
		name: "subagent_check",
		label: TOOL_TEXT.check.label,
		description: TOOL_TEXT.check.description,
		parameters: Type.Object({ id: Type.String({ description: TOOL_TEXT.check.id }) }),
		execute: (_id, params, _signal, _onUpdate, ctx) => withCtx(ctx, () => checkTool(services, params, ctx)),
		renderCall: render.renderCall("subagent_check"),
		renderResult: render.renderResult,
	});

	pi.registerTool({
		...DEFERRED_EXPOSURE,
		name: "subagent_send",
		label: TOOL_TEXT.send.label,
		description: TOOL_TEXT.send.description,
		parameters: Type.Object({
			id: Type.String({ description: TOOL_TEXT.send.id }),
			text: Type.String({ description: TOOL_TEXT.send.text }),
		}),
		execute: (_id, params, _signal, _onUpdate, ctx) => withCtx(ctx, () => sendTool(services, params, ctx)),
		renderCall: render.renderCall("subagent_send"),
		renderResult: render.renderResult,
	});

	pi.registerTool({
		...DEFERRED_EXPOSURE,
		name: "subagent_cancel",
		label: TOOL_TEXT.cancel.label,
		description: TOOL_TEXT.cancel.description,
		parameters: Type.Object({ ids: Type.Array(Type.String(), { description: TOOL_TEXT.cancel.ids }) }),
		execute: (_id, params, _signal, _onUpdate, ctx) => withCtx(ctx, () => cancelTool(services, params, ctx)),
		renderCall: render.renderCall("subagent_cancel"),
		renderResult: render.renderResult,
	});

	pi.registerTool({
		...DEFERRED_EXPOSURE,
		name: "subagent_list",
		label: TOOL_TEXT.list.label,
		description: TOOL_TEXT.list.description,
		parameters: Type.Object({}),
		execute: async (_id, _params, _signal, _onUpdate, ctx) => withCtx(ctx, () => listTool(services, ctx)),
		renderCall: render.renderCall("subagent_list"),
		renderResult: render.renderResult,
	});

	pi.registerTool({
		name: "subagent_cleanup",
		label: TOOL_TEXT.cleanup.label,
		description: TOOL_TEXT.cleanup.description,
		parameters: Type.Object({
			ids: Type.Array(Type.String(), { description: TOOL_TEXT.cleanup.ids }),
			discard: Type.Optional(Type.Boolean({ description: TOOL_TEXT.cleanup.discard })),
		}),
		execute: (_id, params, _signal, _onUpdate, ctx) => withCtx(ctx, () => cleanupTool(services, params, ctx)),
		renderCall: render.renderCall("subagent_cleanup"),
		renderResult: render.renderResult,
	});

	registerSubagentsView(pi, services, state.enter, elsewhere);

	pi.registerMessageRenderer(RESULT_MESSAGE_TYPE, (message, options, theme) => {
		const rows = ((message.details as { rows?: ChildRow[] } | undefined)?.rows ?? []) as ChildRow[];
		const content = typeof message.content === "string" ? message.content : "";
		return deliveredComponent(rows, content, { expanded: options.expanded, expandKey: expandKey() }, theme);
	});

	pi.registerCommand("agents", {
		description: "List the named agents for subagent_spawn: source file, tools, model, and any warnings",
		handler: async (_args, ctx) => {
			state.enter(ctx);
			const snapshot = services.agents(ctx);
			refreshAgents(ctx);
			const text = agentsCommandText(
				snapshot.agents.map((a) => ({ ...a, extensions: a.extensions ? describePolicy(a.extensions) : undefined })),
				snapshot.warnings,
				services.config().subagents.defaultTools,
			);
			if (ctx.hasUI) ctx.ui.notify(text, "info");
			else console.log(text);
		},
	});

	pi.on("session_start", async (_event, ctx) => {
		state.setClosing(false);
		state.enter(ctx);
		// Kept worktrees untouched for longer than store.maxAgeDays go, once per process, off the hot path.
		try {
			scheduleWorktreePrune(join(services.store().root, WORKTREES_FOLDER), services.config().store.maxAgeDays);
		} catch {
			// No store: no worktrees either.
		}
		// Pi 1.x: the rarely used tools stay behind tool_search when it is active; otherwise they are declared.
		settleDeferredTools(pi, RARE_TOOLS, services.config().exposure.deferRareTools, "subagent_spawn");
		refreshAgents(ctx);
		// Children this session left running in the process (a reload, a switch back) are taken over as they
		// are; otherwise they are rebuilt from the session's records.
		const adopted = state.adopt(ctx);
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
			const problem = recordedSpawnProblem(spawnParameters, params);
			if (problem) throw new Error(damagedSpawnError(problem));
			return spawnTool(services, params as SpawnParams, ctx, id);
		});
		const owed = services.existingChildren()?.ledger.pending().length ?? 0;
		status.refresh(); // a redraw: rows of the resumed history show their children's final state
		if (owed > 0) await deliverPending(services, "append");
		if ((services.existingChildren()?.questions.undelivered().length ?? 0) > 0)
			await deliverQuestions(services, "append");
	});

	// Results that settled while the parent was busy go out together once its run is over.
	// 0.73: sendMessage inside agent_end starts no turn, so poll for idle on later ticks.
	pi.on("agent_end", (_event, ctx) => {
		state.remember(ctx);
		delivery.schedule(FLUSH_POLL_ATTEMPTS);
	});
	// 1.x: agent_settled fires once the agent is really idle.
	onPi1Event<"agent_settled", ExtensionContext>(pi, "agent_settled", (_event, ctx) => {
		state.remember(ctx);
		void deliverNext();
	});
	// 1.x single-shot runs (print/json mode): a run that would settle while children run waits for them
	// and takes their results into one more turn before Pi exits (settle.ts). Acts on nothing with a UI.
	const settle: SettleState = { rounds: 0 };
	onPi1Event<"agent_before_settle", ExtensionContext>(pi, "agent_before_settle", (event, ctx) => {
		state.enter(ctx);
		return settleSingleShot(services, settle, event, ctx);
	});
	pi.on("turn_start", (_event, ctx) => {
		state.remember(ctx);
	});
	// Agent files changed since the last prompt: the next request lists them (unchanged files cost a stat).
	pi.on("before_agent_start", (_event, ctx) => {
		settle.rounds = 0;
		state.enter(ctx);
		refreshAgents(ctx);
	});

	// A compaction summarizes the spawn calls away: the roster re-states, by code, what still runs or is owed.
	// Sent without a turn: appended at once when idle; mid-run it joins the run at its next boundary.
	pi.on("session_compact", (_event, ctx) => {
		state.remember(ctx);
		const manager = services.existingChildren();
		if (!manager) return;
		const roster = rosterText(
			{ list: () => manager.list(), owed: (id) => manager.ledger.latest(id)?.delivery === "pending" },
			Date.now(),
		);
		if (!roster) return;
		pi.sendMessage(
			{ customType: ROSTER_MESSAGE_TYPE, content: roster.text, display: true, details: { ids: roster.ids } },
			{ triggerTurn: false },
		);
	});

	pi.on("session_shutdown", async (event) => {
		state.setClosing(true);
		settle.abort?.abort();
		delivery.cancel();
		status.stop();
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
	});
}

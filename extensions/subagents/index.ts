/**
 * Subagents: the thin Pi adapter. Registers the seven tools with their renderers, a renderer for
 * delivered results, the status line, and the lifecycle hooks (restore on session start,
 * automatic delivery when the parent's run ends, the wait for children before a single-shot run on
 * Pi 1.x ends, persistence on shutdown).
 */
import { type ExtensionAPI, type ExtensionContext, keyText } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { bootExtension } from "../shared/host/bootstrap.ts";
import { DEFERRED_EXPOSURE, onPi1Event, settleDeferredTools } from "../shared/host/pi-host.ts";
import { BUILT_IN_AGENTS, describePolicy } from "./agents/agents.ts";
import {
	cancelFlush,
	deliverPending,
	FLUSH_POLL_ATTEMPTS,
	persistSettled,
	RESULT_MESSAGE_TYPE,
	restoreFromSession,
	scheduleFlush,
} from "./delivery/delivery.ts";
import { type SettleState, settleSingleShot } from "./delivery/settle.ts";
import { createEnv, ensureConfig, ensureManager, limitsOf, loadAgents } from "./env.ts";
import { TOOL_TEXT } from "./prompt.ts";
import { agentsCommandText, SPAWN_AGENT_PARAM, SPAWN_EXTENSIONS_PARAM, spawnDescription } from "./prompt-spawn.ts";
import { cleanupTool } from "./tools/cleanup.ts";
import { cancelTool, checkTool, listTool, sendTool, spawnTool, waitTool } from "./tools/tools.ts";
import { registerSubagentsView } from "./view/command.ts";
import { LiveResultComponent } from "./view/live-rows.ts";
import {
	type ChildRow,
	callText,
	deliveredComponent,
	paintFor,
	statusText,
	textComponent,
	widgetLines,
} from "./view/render.ts";

/** How long shutdown waits for children to stop and record their partial output, in milliseconds. */
export const SHUTDOWN_WAIT_MS = 8_000;
/** Refresh period of the status widget while children run, in milliseconds. */
export const STATUS_REFRESH_MS = 1_000;

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
	const env = createEnv(pi, depth, (d) => (childPi) => setupSubagents(childPi, d));
	env.host = bootExtension(pi, "subagents");
	env.host.onConfig((config) => {
		env.config = config;
		env.configLoaded = true;
		env.agentDir = env.host?.agentDir() ?? env.agentDir;
	});
	let statusTimer: ReturnType<typeof setInterval> | undefined;

	const refreshStatus = () => {
		const ctx = env.ctx;
		if (!ctx?.hasUI || !env.manager) return;
		try {
			const paint = paintFor(ctx.ui.theme);
			const children = env.manager.list();
			ctx.ui.setStatus("subagents", statusText(children, paint));
			const lines = widgetLines(children, Date.now(), paint);
			ctx.ui.setWidget("subagents", lines.length > 0 ? lines : undefined);
			const active = lines.length > 0;
			if (active && !statusTimer) {
				statusTimer = setInterval(refreshStatus, STATUS_REFRESH_MS);
				statusTimer.unref?.();
			} else if (!active && statusTimer) {
				clearInterval(statusTimer);
				statusTimer = undefined;
			}
		} catch {
			// A UI that went away (session replaced) must not break the children.
		}
	};
	env.onChange = refreshStatus;
	env.onSettled = (result, child) => {
		persistSettled(env, result, child);
		if (!env.closing) scheduleFlush(env);
	};

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
				env.manager?.list(),
			);
		},
	};

	const withCtx = <T>(ctx: ExtensionContext, fn: () => T): T => {
		ensureConfig(env, ctx);
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
			execute: (_id, params, _signal, _onUpdate, ctx) => withCtx(ctx, () => spawnTool(env, params, ctx)),
			renderCall: render.renderCall("subagent_spawn"),
			renderResult: render.renderResult,
		});
	};
	const refreshAgents = (ctx: ExtensionContext) => {
		try {
			registerSpawn(spawnDescription(loadAgents(env, ctx).agents));
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
			withCtx(ctx, () => waitTool(env, params, signal, onUpdate as never, ctx)),
		renderCall: render.renderCall("subagent_wait"),
		renderResult: render.renderResult,
	});

	pi.registerTool({
		...DEFERRED_EXPOSURE,
		name: "subagent_check",
		label: TOOL_TEXT.check.label,
		description: TOOL_TEXT.check.description,
		parameters: Type.Object({ id: Type.String({ description: TOOL_TEXT.check.id }) }),
		execute: (_id, params, _signal, _onUpdate, ctx) => withCtx(ctx, () => checkTool(env, params, ctx)),
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
		execute: (_id, params, _signal, _onUpdate, ctx) => withCtx(ctx, () => sendTool(env, params, ctx)),
		renderCall: render.renderCall("subagent_send"),
		renderResult: render.renderResult,
	});

	pi.registerTool({
		...DEFERRED_EXPOSURE,
		name: "subagent_cancel",
		label: TOOL_TEXT.cancel.label,
		description: TOOL_TEXT.cancel.description,
		parameters: Type.Object({ ids: Type.Array(Type.String(), { description: TOOL_TEXT.cancel.ids }) }),
		execute: (_id, params, _signal, _onUpdate, ctx) => withCtx(ctx, () => cancelTool(env, params, ctx)),
		renderCall: render.renderCall("subagent_cancel"),
		renderResult: render.renderResult,
	});

	pi.registerTool({
		...DEFERRED_EXPOSURE,
		name: "subagent_list",
		label: TOOL_TEXT.list.label,
		description: TOOL_TEXT.list.description,
		parameters: Type.Object({}),
		execute: async (_id, _params, _signal, _onUpdate, ctx) => withCtx(ctx, () => listTool(env, ctx)),
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
		execute: (_id, params, _signal, _onUpdate, ctx) => withCtx(ctx, () => cleanupTool(env, params, ctx)),
		renderCall: render.renderCall("subagent_cleanup"),
		renderResult: render.renderResult,
	});

	registerSubagentsView(pi, env);

	pi.registerMessageRenderer(RESULT_MESSAGE_TYPE, (message, options, theme) => {
		const rows = ((message.details as { rows?: ChildRow[] } | undefined)?.rows ?? []) as ChildRow[];
		const content = typeof message.content === "string" ? message.content : "";
		return deliveredComponent(rows, content, { expanded: options.expanded, expandKey: expandKey() }, theme);
	});

	pi.registerCommand("agents", {
		description: "List the named agents for subagent_spawn: source file, tools, model, and any warnings",
		handler: async (_args, ctx) => {
			ensureConfig(env, ctx);
			const snapshot = loadAgents(env, ctx);
			refreshAgents(ctx);
			const text = agentsCommandText(
				snapshot.agents.map((a) => ({ ...a, extensions: a.extensions ? describePolicy(a.extensions) : undefined })),
				snapshot.warnings,
				env.config.subagents.defaultTools,
			);
			if (ctx.hasUI) ctx.ui.notify(text, "info");
			else console.log(text);
		},
	});

	pi.on("session_start", async (_event, ctx) => {
		env.closing = false;
		ensureConfig(env, ctx);
		// Pi 1.x: the rarely used tools stay behind tool_search when it is active; otherwise they are declared.
		settleDeferredTools(pi, RARE_TOOLS, env.config.exposure.deferRareTools, "subagent_spawn");
		refreshAgents(ctx);
		ensureManager(env, ctx).setLimits(limitsOf(env.config));
		const owed = restoreFromSession(env, ctx);
		refreshStatus(); // a redraw: rows of the resumed history show their children's final state
		if (owed > 0) await deliverPending(env, "append");
	});

	// Results that settled while the parent was busy go out together once its run is over.
	// 0.73: sendMessage inside agent_end starts no turn, so poll for idle on later ticks.
	pi.on("agent_end", (_event, ctx) => {
		env.ctx = ctx;
		scheduleFlush(env, FLUSH_POLL_ATTEMPTS);
	});
	// 1.x: agent_settled fires once the agent is really idle.
	onPi1Event<"agent_settled", ExtensionContext>(pi, "agent_settled", (_event, ctx) => {
		env.ctx = ctx;
		void deliverPending(env, "trigger");
	});
	// 1.x single-shot runs (print/json mode): a run that would settle while children run waits for them
	// and takes their results into one more turn before Pi exits (settle.ts). Acts on nothing with a UI.
	const settle: SettleState = { rounds: 0 };
	onPi1Event<"agent_before_settle", ExtensionContext>(pi, "agent_before_settle", (event, ctx) =>
		settleSingleShot(env, settle, event, ctx),
	);
	pi.on("turn_start", (_event, ctx) => {
		env.ctx = ctx;
	});
	// Agent files changed since the last prompt: the next request lists them (unchanged files cost a stat).
	pi.on("before_agent_start", (_event, ctx) => {
		settle.rounds = 0;
		ensureConfig(env, ctx);
		refreshAgents(ctx);
	});

	pi.on("session_shutdown", async () => {
		env.closing = true;
		settle.abort?.abort();
		cancelFlush(env);
		if (statusTimer) clearInterval(statusTimer);
		statusTimer = undefined;
		const manager = env.manager;
		if (!manager) return;
		// Running children are stopped; their partial output is recorded as owed, for the next start.
		await Promise.race([manager.shutdown(), new Promise((r) => setTimeout(r, SHUTDOWN_WAIT_MS).unref?.())]);
		env.manager = undefined;
	});
}

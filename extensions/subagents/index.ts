/**
 * Subagents: the thin Pi adapter. Registers the seven tools from their table (tools/table.ts) with their
 * renderers, the /subagents and /agents commands, a renderer for delivered results, and subscribes Pi's
 * lifecycle events to the one object that handles them (adapter/lifecycle.ts: restore on session start,
 * automatic delivery when the parent's run ends, the wait for children before a single-shot run on Pi 1.x
 * ends, the roster after a compaction, persistence on shutdown). It holds no state of its own; the parts
 * live in agents/, children/, checkable/, delivery/, tools/ and view/.
 */

import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { bootExtension } from "../shared/host/bootstrap.ts";
import { DEFERRED_EXPOSURE, onPi1Event } from "../shared/host/pi-host.ts";
import { loadLater } from "./adapter/later.ts";
import { AGENTS_COMMAND_DESCRIPTION, SubagentsLifecycle } from "./adapter/lifecycle.ts";
import { BUILT_IN_AGENTS } from "./agents/agents.ts";
import { RESULT_MESSAGE_TYPE } from "./domain/entries.ts";
import { spawnDescription } from "./prompt/spawn.ts";
import { SUBAGENT_TOOLS, type SubagentTool } from "./tools/table.ts";
import { renderDelivered, toolRenderers } from "./view/tool-render.ts";
import { registerSubagentsView } from "./view/view-command.ts";

export { SHUTDOWN_WAIT_MS } from "./adapter/lifecycle.ts";
export { STATUS_REFRESH_MS } from "./view/status.ts";

export default function subagents(pi: ExtensionAPI): void {
	setupSubagents(pi, 0);
}

export function setupSubagents(pi: ExtensionAPI, depth: number): void {
	const life: SubagentsLifecycle = new SubagentsLifecycle({
		pi,
		depth,
		host: bootExtension(pi, "subagents"),
		nested: (d) => (childPi) => setupSubagents(childPi, d),
		registerSpawn: (description) => register(SUBAGENT_TOOLS[0], description),
	});
	const { services, state } = life;
	const render = toolRenderers(() => services.existingChildren()?.list());

	/** One tool of the table, registered with Pi; each call hands Pi's context to the adapter first. */
	function register(tool: SubagentTool, description = tool.description ?? ""): void {
		pi.registerTool({
			...(tool.rare ? DEFERRED_EXPOSURE : {}),
			name: tool.name,
			label: tool.label,
			description,
			...(tool.promptSnippet ? { promptSnippet: tool.promptSnippet } : {}),
			parameters: tool.parameters,
			execute: async (_id, params, signal, onUpdate, ctx) => {
				state.enter(ctx);
				// The tools' run paths load on the first call (adapter/later.ts, docs/startup.md).
				return tool.run(await loadLater(), services, params, { signal, onUpdate: onUpdate as never, ctx });
			},
			renderCall: render.renderCall(tool.name),
			renderResult: render.renderResult,
		});
	}
	for (const tool of SUBAGENT_TOOLS) {
		// subagent_spawn's description lists the agents (built-in ones until the files are read).
		if (tool.description === undefined) life.describeSpawn(spawnDescription(BUILT_IN_AGENTS));
		else register(tool);
	}

	registerSubagentsView(
		pi,
		services,
		state.enter,
		() => loadLater().then((code) => code.subagentsCommand),
		life.elsewhere,
	);
	pi.registerMessageRenderer(RESULT_MESSAGE_TYPE, renderDelivered);
	pi.registerCommand("agents", {
		description: AGENTS_COMMAND_DESCRIPTION,
		handler: async (_args, ctx) => life.agentsCommand(ctx),
	});

	pi.on("session_start", (_event, ctx) => life.sessionStart(ctx));
	// Results that settled while the parent was busy go out together once its run is over: on 0.73 agent_end
	// (then polled for idle), on 1.x agent_settled.
	pi.on("agent_end", (_event, ctx) => life.agentEnd(ctx));
	onPi1Event<"agent_settled", ExtensionContext>(pi, "agent_settled", (_event, ctx) => life.agentSettled(ctx));
	onPi1Event<"agent_before_settle", ExtensionContext>(pi, "agent_before_settle", (event, ctx) =>
		life.beforeSettle(event, ctx),
	);
	pi.on("turn_start", (_event, ctx) => life.turnStart(ctx));
	// A child's question joins a busy parent's turn after its running tool calls, and its time limit starts once
	// the parent's context holds it (ask/deliver.ts).
	pi.on("tool_execution_start", (event, ctx) => life.toolStart(event, ctx));
	pi.on("tool_execution_end", (event) => life.toolEnd(event));
	pi.on("message_end", (event) => life.messageEnd(event));
	pi.on("before_agent_start", (_event, ctx) => life.beforeAgentStart(ctx));
	pi.on("session_compact", (_event, ctx) => life.sessionCompact(ctx));
	pi.on("session_shutdown", (event) => life.sessionShutdown(event));
}

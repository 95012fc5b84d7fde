/**
 * The seven tools as one table: name, wording, parameters (schemas.ts), whether Pi 1.x may keep it behind
 * tool_search, and its handler. Each handler's own signature names the few services it uses
 * (`Pick<SubagentServices, …>`); the adapter registers every row in one loop (index.ts). The handlers load with
 * the children's code on the first call (adapter/later.ts): the table itself is what a start needs.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { Static, TSchema } from "typebox";
import { loadLater } from "../adapter/later.ts";
import type { SUBAGENT_TOOL_NAMES } from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import { TOOL_TEXT } from "../prompt/common.ts";
import type { OnUpdate, ToolReturn } from "./reply.ts";
import {
	CANCEL_PARAMETERS,
	CHECK_PARAMETERS,
	CLEANUP_PARAMETERS,
	LIST_PARAMETERS,
	SEND_PARAMETERS,
	SPAWN_PARAMETERS,
	WAIT_PARAMETERS,
} from "./schemas.ts";

/** What a handler gets besides its parameters (Pi's execute arguments it may use). */
export interface ToolCall {
	signal: AbortSignal | undefined;
	onUpdate: OnUpdate;
	ctx: ExtensionContext;
}

export interface SubagentTool<P extends TSchema = TSchema> {
	name: (typeof SUBAGENT_TOOL_NAMES)[number];
	label: string;
	/** Absent for subagent_spawn: its description lists the named agents, so the adapter makes it (spawnDescription). */
	description?: string;
	promptSnippet?: string;
	parameters: P;
	/** A tool the parent rarely needs in every request: deferred behind Pi 1.x's tool_search when it is active. */
	rare: boolean;
	run(services: SubagentServices, params: Static<P>, call: ToolCall): Promise<ToolReturn>;
}

/** A row with its parameters' type kept for its handler (the table itself holds them as TSchema). */
const tool = <P extends TSchema>(row: SubagentTool<P>): SubagentTool => row as unknown as SubagentTool;

export const SUBAGENT_TOOLS: readonly SubagentTool[] = [
	tool({
		name: "subagent_spawn",
		label: TOOL_TEXT.spawn.label,
		promptSnippet: TOOL_TEXT.spawn.snippet,
		parameters: SPAWN_PARAMETERS,
		rare: false,
		run: async (services, params, { ctx }) => (await loadLater()).spawnTool(services, params, ctx),
	}),
	tool({
		name: "subagent_wait",
		label: TOOL_TEXT.wait.label,
		description: TOOL_TEXT.wait.description,
		parameters: WAIT_PARAMETERS,
		rare: false,
		run: async (services, params, { signal, onUpdate, ctx }) =>
			(await loadLater()).waitTool(services, params, signal, onUpdate, ctx),
	}),
	tool({
		name: "subagent_check",
		label: TOOL_TEXT.check.label,
		description: TOOL_TEXT.check.description,
		parameters: CHECK_PARAMETERS,
		rare: true,
		run: async (services, params, { ctx }) => (await loadLater()).checkTool(services, params, ctx),
	}),
	tool({
		name: "subagent_send",
		label: TOOL_TEXT.send.label,
		description: TOOL_TEXT.send.description,
		parameters: SEND_PARAMETERS,
		rare: true,
		run: async (services, params, { ctx }) => (await loadLater()).sendTool(services, params, ctx),
	}),
	tool({
		name: "subagent_cancel",
		label: TOOL_TEXT.cancel.label,
		description: TOOL_TEXT.cancel.description,
		parameters: CANCEL_PARAMETERS,
		rare: true,
		run: async (services, params, { ctx }) => (await loadLater()).cancelTool(services, params, ctx),
	}),
	tool({
		name: "subagent_list",
		label: TOOL_TEXT.list.label,
		description: TOOL_TEXT.list.description,
		parameters: LIST_PARAMETERS,
		rare: true,
		run: async (services, _params, { ctx }) => (await loadLater()).listTool(services, ctx),
	}),
	tool({
		name: "subagent_cleanup",
		label: TOOL_TEXT.cleanup.label,
		description: TOOL_TEXT.cleanup.description,
		parameters: CLEANUP_PARAMETERS,
		rare: false,
		run: async (services, params, { ctx }) => (await loadLater()).cleanupTool(services, params, ctx),
	}),
];

/** The rare tools' names, for settleDeferredTools. */
export const RARE_TOOLS = SUBAGENT_TOOLS.filter((t) => t.rare).map((t) => t.name);

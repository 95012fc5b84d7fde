/**
 * The seven tools as one table: name, wording, parameters (schemas.ts), whether Pi 1.x may keep it behind
 * tool_search, and its handler. Each handler's own signature names the few services it uses
 * (`Pick<SubagentServices, …>`); the adapter registers every row in one loop (index.ts). The handlers are in the
 * part loaded on first use (adapter/later.ts), handed to each call: the table itself is what a start needs.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { Static, TSchema } from "typebox";
import type { Later } from "../adapter/later.ts";
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
	/** `code`: the part loaded on first use (adapter/later.ts), which the adapter loads before the call. */
	run(code: Later, services: SubagentServices, params: Static<P>, call: ToolCall): Promise<ToolReturn>;
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
		run: async (code, services, params, { ctx }) => code.spawnTool(services, params, ctx),
	}),
	tool({
		name: "subagent_wait",
		label: TOOL_TEXT.wait.label,
		description: TOOL_TEXT.wait.description,
		parameters: WAIT_PARAMETERS,
		rare: false,
		run: async (code, services, params, { signal, onUpdate, ctx }) =>
			code.waitTool(services, params, signal, onUpdate, ctx),
	}),
	tool({
		name: "subagent_check",
		label: TOOL_TEXT.check.label,
		description: TOOL_TEXT.check.description,
		parameters: CHECK_PARAMETERS,
		rare: true,
		run: async (code, services, params, { ctx }) => code.checkTool(services, params, ctx),
	}),
	tool({
		name: "subagent_send",
		label: TOOL_TEXT.send.label,
		description: TOOL_TEXT.send.description,
		parameters: SEND_PARAMETERS,
		rare: true,
		run: async (code, services, params, { ctx }) => code.sendTool(services, params, ctx),
	}),
	tool({
		name: "subagent_cancel",
		label: TOOL_TEXT.cancel.label,
		description: TOOL_TEXT.cancel.description,
		parameters: CANCEL_PARAMETERS,
		rare: true,
		run: async (code, services, params, { ctx }) => code.cancelTool(services, params, ctx),
	}),
	tool({
		name: "subagent_list",
		label: TOOL_TEXT.list.label,
		description: TOOL_TEXT.list.description,
		parameters: LIST_PARAMETERS,
		rare: true,
		run: async (code, services, _params, { ctx }) => code.listTool(services, ctx),
	}),
	tool({
		name: "subagent_cleanup",
		label: TOOL_TEXT.cleanup.label,
		description: TOOL_TEXT.cleanup.description,
		parameters: CLEANUP_PARAMETERS,
		rare: false,
		run: async (code, services, params, { ctx }) => code.cleanupTool(services, params, ctx),
	}),
];

/** The rare tools' names, for settleDeferredTools. */
export const RARE_TOOLS = SUBAGENT_TOOLS.filter((t) => t.rare).map((t) => t.name);

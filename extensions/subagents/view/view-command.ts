/**
 * Registering /subagents at start: its name, description and the handler's loader. The view itself (the
 * picker, the live screens, transcripts, steering: command.ts) is part of what loads on first use
 * (adapter/later.ts), here at the first /subagents.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { loadLater } from "../adapter/later.ts";
import type { SubagentServices } from "../domain/services.ts";
import type { SendDeps } from "../tools/send.ts";
import type { OtherChild } from "./others.ts";

export const VIEW_COMMAND_DESCRIPTION =
	"Watch and steer this session's subagents (a live list, a child's transcript, a line to steer it); see and cancel other sessions' running ones";

/** Children of other sessions of this process: listed (marked) and cancellable from /subagents, nothing else. */
export interface OtherSessions {
	list(ctx: ExtensionContext): readonly OtherChild[];
	cancel(session: string, id: string): Promise<void>;
}

/** What the view uses: what subagent_send uses (steering), the children as they are now, the store. */
export type ViewDeps = SendDeps & Pick<SubagentServices, "existingChildren" | "store" | "agents" | "agentDir">;

/** Register /subagents; `enter` hands each command's context to the adapter first (as every tool call does). */
export function registerSubagentsView(
	pi: ExtensionAPI,
	deps: ViewDeps,
	enter: (ctx: ExtensionContext) => void,
	elsewhere?: OtherSessions,
): void {
	pi.registerCommand("subagents", {
		description: VIEW_COMMAND_DESCRIPTION,
		handler: async (args, ctx) => (await loadLater()).subagentsCommand(deps, enter, elsewhere)(args, ctx),
	});
}

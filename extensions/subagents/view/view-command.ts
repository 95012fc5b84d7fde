/**
 * Registering /subagents at start: its name, description and the handler's loader. The view itself (the
 * picker, the live screens, transcripts, steering: command.ts) is part of what loads on first use
 * (adapter/later.ts), here at the first /subagents, which `open` loads.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { OtherSessions, subagentsCommand, ViewDeps } from "./command.ts";

export const VIEW_COMMAND_DESCRIPTION =
	"Watch and steer this session's subagents (a live list, a child's transcript, a line to steer it); see and cancel other sessions' running ones";

/**
 * Register /subagents; `enter` hands each command's context to the adapter first (as every tool call does);
 * `open` loads the view (command.ts, with the part loaded on first use) at the first /subagents.
 */
export function registerSubagentsView(
	pi: ExtensionAPI,
	deps: ViewDeps,
	enter: (ctx: ExtensionContext) => void,
	open: () => Promise<typeof subagentsCommand>,
	elsewhere?: OtherSessions,
): void {
	pi.registerCommand("subagents", {
		description: VIEW_COMMAND_DESCRIPTION,
		handler: async (args, ctx) => (await open())(deps, enter, elsewhere)(args, ctx),
	});
}

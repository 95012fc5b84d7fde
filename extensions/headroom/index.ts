/**
 * pi-context-headroom's store command: `/headroom` shows the artifact store, `/headroom prune` prunes it.
 * Pruning also runs in the background shortly after a session starts, off the hot path, at most once per
 * process and once per six hours across processes (the bootstrap schedules it: ../shared/host/bootstrap.ts).
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { bootExtension } from "../shared/host/bootstrap.ts";
import { sessionCallUsage } from "../shared/host/model-usage.ts";
import { hasUI } from "../shared/host/pi-host.ts";
import { COMMAND_DESCRIPTION, formatCallUsage, formatPrune, formatPruneLimits, formatStatus, USAGE } from "./prompt.ts";

/** Session entry type recording what /headroom showed when there was no UI (never sent to the model). */
export const STATUS_ENTRY_TYPE = "headroom-status";

export default function headroom(pi: ExtensionAPI) {
	const host = bootExtension(pi, "headroom");
	const say = (ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info") => {
		if (hasUI(ctx)) {
			ctx.ui.notify(text, level); // the TUI, and rpc's UI bridge (an extension_ui_request event)
			return;
		}
		// Print and json modes: stdout is the answer or a protocol stream, and a custom message would reach
		// the model as a user message. So: stderr for the person, a session entry (never sent) for the record.
		process.stderr.write(`${text}\n`);
		pi.appendEntry(STATUS_ENTRY_TYPE, { text, level });
	};

	const prune = async (ctx: ExtensionContext) => {
		const { maxAgeDays, maxTotalBytes, minAgeHours } = host.config(ctx).store;
		const result = await host.store().prune({ maxAgeDays, maxTotalBytes, minAgeHours });
		return formatPrune(result.removed, result.freedBytes, formatPruneLimits(maxAgeDays, maxTotalBytes, minAgeHours));
	};

	pi.registerCommand("headroom", {
		description: COMMAND_DESCRIPTION,
		handler: async (args, ctx) => {
			const verb = args.trim();
			try {
				if (verb === "" || verb === "status") {
					const store = host.store();
					const status = formatStatus({ root: store.root, ...(await store.stats()) }, Date.now());
					const calls = formatCallUsage(sessionCallUsage(ctx.sessionManager.getEntries()));
					say(ctx, `${status}\n${calls}`);
				} else if (verb === "prune") {
					say(ctx, await prune(ctx));
				} else {
					say(ctx, USAGE, "warning");
				}
			} catch (error) {
				say(ctx, `headroom: ${error instanceof Error ? error.message : String(error)}`, "error");
			}
		},
	});
}

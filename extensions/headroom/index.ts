/**
 * pi-headroom's store command: `/headroom` shows the artifact store, `/headroom prune` prunes it.
 * Pruning also runs once per process in the background shortly after a session starts, off the hot path.
 */
import { type ExtensionAPI, type ExtensionContext, getAgentDir } from "@mariozechner/pi-coding-agent";
import { storeForAgentDir } from "../shared/artifact-store.ts";
import { loadConfig } from "../shared/config.ts";
import { COMMAND_DESCRIPTION, formatPrune, formatPruneLimits, formatStatus, USAGE } from "./prompt.ts";

/** Delay before the background prune, so it never competes with a session's first turn. */
const BACKGROUND_PRUNE_DELAY_MS = 10_000;

export default function headroom(pi: ExtensionAPI) {
	let pruneScheduled = false;

	const say = (ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info") => {
		if (ctx.hasUI) ctx.ui.notify(text, level);
		// Print, json and rpc modes have no UI: leave a visible entry that the model never sees.
		else pi.sendMessage({ customType: "headroom-status", content: text, display: true });
	};

	const prune = async (ctx: ExtensionContext) => {
		const { config } = loadConfig({ agentDir: getAgentDir(), cwd: ctx.cwd });
		const { maxAgeDays, maxTotalBytes, minAgeHours } = config.store;
		const result = await storeForAgentDir(getAgentDir()).prune({ maxAgeDays, maxTotalBytes, minAgeHours });
		return formatPrune(result.removed, result.freedBytes, formatPruneLimits(maxAgeDays, maxTotalBytes, minAgeHours));
	};

	pi.registerCommand("headroom", {
		description: COMMAND_DESCRIPTION,
		handler: async (args, ctx) => {
			const verb = args.trim();
			try {
				if (verb === "" || verb === "status") {
					const store = storeForAgentDir(getAgentDir());
					say(ctx, formatStatus({ root: store.root, ...(await store.stats()) }, Date.now()));
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

	pi.on("session_start", (_event, ctx) => {
		if (pruneScheduled) return;
		pruneScheduled = true;
		const timer = setTimeout(() => {
			prune(ctx).catch(() => {
				// A failed background prune only means the store stays as large as it is; the command reports errors.
			});
		}, BACKGROUND_PRUNE_DELAY_MS);
		timer.unref?.();
	});
}

/**
 * pi-context-headroom's command: `/headroom` shows the context ledger (what the context holds by source,
 * what this package kept out of it, this session's artifacts) and the artifact store; `/headroom prune`
 * prunes the store; `/headroom trust` (`untrust`, `forget`) records whether this project's own files of the package
 * apply (../shared/host/trust.ts). In the TUI the ledger is a panel with bar charts; print and rpc modes get plain text,
 * and a session entry (never sent to the model) whose `details.ledger` is the ledger as JSON.
 * Pruning also runs in the background shortly after a session starts, off the hot path, at most once per
 * process and once per six hours across processes (the bootstrap schedules it: ../shared/host/bootstrap.ts).
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { bootExtension } from "../shared/host/bootstrap.ts";
import { sessionCallUsage } from "../shared/host/model-usage.ts";
import { hasUI } from "../shared/host/pi-host.ts";
import {
	folderTrust,
	projectFilesPresent,
	projectRoot,
	trustCommand,
	trustedBy,
	untrustedHint,
} from "../shared/host/trust.ts";
import { currentLedger } from "./collect.ts";
import type { Ledger } from "./ledger.ts";
import { formatLedger } from "./ledger-format.ts";
import { LedgerPanel } from "./ledger-view.ts";
import {
	COMMAND_DESCRIPTION,
	formatCallUsage,
	formatProjectTrust,
	formatPrune,
	formatPruneLimits,
	formatStatus,
	USAGE,
} from "./prompt.ts";

/** Session entry type recording what /headroom showed when there was no UI (never sent to the model). */
export const STATUS_ENTRY_TYPE = "headroom-status";

export default function headroom(pi: ExtensionAPI) {
	const host = bootExtension(pi, "headroom");
	const say = (
		ctx: ExtensionContext,
		text: string,
		level: "info" | "warning" | "error" = "info",
		details?: { ledger: Ledger },
	) => {
		if (hasUI(ctx)) {
			ctx.ui.notify(text, level); // the TUI, and rpc's UI bridge (an extension_ui_request event)
			if (details) pi.appendEntry(STATUS_ENTRY_TYPE, { text, level, details }); // rpc clients read the JSON
			return;
		}
		// Print and json modes: stdout is the answer or a protocol stream, and a custom message would reach
		// the model as a user message. So: stderr for the person, a session entry (never sent) for the record.
		process.stderr.write(`${text}\n`);
		pi.appendEntry(STATUS_ENTRY_TYPE, details ? { text, level, details } : { text, level });
	};

	/** The ledger and the store: a panel in the TUI; plain text (and the JSON entry) where custom UI is absent. */
	const status = async (ctx: ExtensionContext) => {
		const store = host.store();
		const storeStatus = formatStatus({ root: store.root, ...(await store.stats()) }, Date.now());
		const calls = formatCallUsage(sessionCallUsage(ctx.sessionManager.getEntries()));
		const storeText = `${storeStatus}\n${calls}\n${projectTrustLine(ctx)}`;
		const budget = host.config(ctx).subagents.budget.perSession;
		const ledger = currentLedger(pi, ctx, budget);
		let shown = false;
		if (hasUI(ctx)) {
			// rpc mode answers custom() with undefined without calling the factory: then the text goes out instead.
			await ctx.ui.custom<void>((tui, theme, _keys, done) => {
				shown = true;
				const paint = (color: string, text: string) => theme.fg(color as never, text);
				const lines = () => [
					...formatLedger(currentLedger(pi, ctx, budget), Date.now(), { bars: "blocks", paint }),
					...storeText.split("\n"),
				];
				return new LedgerPanel(
					"headroom: context ledger",
					lines,
					() => tui.terminal.rows,
					paint,
					() => done(),
				);
			});
		}
		if (!shown) {
			const text = [...formatLedger(ledger, Date.now(), { bars: "ascii" }), storeText].join("\n");
			say(ctx, text, "info", { ledger });
		}
	};

	/** Whether this project's files apply, and how to change that. */
	const projectTrustLine = (ctx: ExtensionContext) => {
		const decision = folderTrust(host.agentDir(), ctx.cwd, ctx);
		const files = projectFilesPresent(ctx.cwd, projectRoot(ctx.cwd, decision.path));
		return formatProjectTrust(decision.trusted ? trustedBy(decision) : undefined, untrustedHint(decision), files);
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
					await status(ctx);
				} else if (verb === "prune") {
					say(ctx, await prune(ctx));
				} else if (verb === "trust" || verb === "untrust" || verb === "forget") {
					say(ctx, trustCommand(host.agentDir(), ctx.cwd, verb));
				} else {
					say(ctx, USAGE, "warning");
				}
			} catch (error) {
				say(ctx, `headroom: ${error instanceof Error ? error.message : String(error)}`, "error");
			}
		},
	});
}

/**
 * The agents of this extension instance: one catalog (its per-file cache) read with the configuration
 * as it is now, from the context's cwd and its trust decision. New warnings are told once, to the UI or stderr; they
 * never stop anything.
 */
import { type ExtensionContext, parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { sessionTrust, tellPerson } from "../../shared/host/bootstrap.ts";
import { type HeadroomConfig, unseenConfigWarnings } from "../../shared/host/config.ts";
import { projectRoot, untrustedHint } from "../../shared/host/trust.ts";
import { configWarning } from "../prompt/common.ts";
import { AgentCatalog, type AgentCatalogSnapshot } from "./agent-files.ts";

/** A reader of the agents on disk now (cheap: unchanged files are not re-read). */
export function agentLoader(settings: {
	config(): HeadroomConfig;
	agentDir(): string;
}): (ctx: ExtensionContext | undefined) => AgentCatalogSnapshot {
	let catalog: AgentCatalog | undefined;
	return (ctx) => {
		catalog ??= new AgentCatalog(parseFrontmatter);
		const agentDir = settings.agentDir();
		const cwd = ctx?.cwd ?? process.cwd();
		const trust = ctx ? sessionTrust(agentDir, cwd, ctx) : { trusted: false, reason: "undecided" as const };
		const snapshot = catalog.load({
			agentDir,
			cwd,
			projectTrusted: trust.trusted,
			untrustedHint: untrustedHint(trust),
			projectRoot: projectRoot(cwd, trust.path),
			claudeAgents: settings.config().subagents.claudeAgents,
		});
		for (const warning of unseenConfigWarnings(snapshot.warnings)) tellPerson(ctx, configWarning(warning));
		return snapshot;
	};
}

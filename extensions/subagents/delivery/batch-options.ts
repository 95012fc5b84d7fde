/**
 * Options every projected batch shares: the surface `subagents.<surface>` resolved from the configuration
 * (its caps and head share), the store, and the parent's usage reading from its context.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { Surface, UsageReading } from "../../shared/budget/batch.ts";
import { type HeadroomConfig, surfaceFor } from "../../shared/host/config.ts";
import type { ArtifactStore } from "../../shared/store/artifact-store.ts";
import type { BatchOptions } from "./batch.ts";

/** The parent's context reading and reserved output, for the allocator. */
export function usageOf(ctx: ExtensionContext | undefined): { usage?: UsageReading; reservedOutputTokens?: number } {
	let usage: UsageReading | undefined;
	try {
		usage = ctx?.getContextUsage() ?? undefined;
	} catch {
		usage = undefined;
	}
	return { usage, reservedOutputTokens: ctx?.model?.maxTokens };
}

export function batchOptions(
	deps: { config(): HeadroomConfig; store(): ArtifactStore },
	ctx: ExtensionContext | undefined,
	surface: Surface,
	extra: { leading?: string[] } = {},
): BatchOptions {
	const config = deps.config();
	const budget = surfaceFor(config, `subagents.${surface}`);
	return {
		surface,
		store: deps.store(),
		leading: extra.leading,
		headShare: budget.headShare,
		budget,
		headroomShare: config.budgets.headroomShare,
		...usageOf(ctx),
	};
}

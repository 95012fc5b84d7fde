/** Wording of the /headroom command (the artifact store's status and pruning). */
import type { CallUsage, SessionCallUsage } from "../shared/host/model-usage.ts";
import type { StoreStats } from "../shared/store/list.ts";
import { formatCount } from "../shared/text/format.ts";

/** What the store looks like, as the command reports it. */
export interface StoreStatus extends StoreStats {
	/** Absolute root of the store. */
	root: string;
}

export const COMMAND_DESCRIPTION =
	"Show the headroom artifact store (count, size, newest); `/headroom prune` prunes it now; `/headroom trust` lets this project's .pi/headroom.json and agent files apply";

export const USAGE = "usage: /headroom [status|prune|trust|untrust|forget]";

/**
 * Whether this project's own files of the package apply: `trusted` says by what when they do; otherwise `hint`
 * says why not and how to trust it. `files` are the project files found (none: nothing to trust).
 */
export function formatProjectTrust(trusted: string | undefined, hint: string, files: readonly string[]): string {
	if (trusted) return `project files: ${trusted}${files.length > 0 ? `: ${files.join(", ")}` : ""}`;
	if (files.length === 0) return "project files: none here";
	return `project files: ignored: ${files.join(", ")}: ${hint}`;
}

/** Bytes as a short human figure: 1,234 B, 12.1 KiB, 3.4 MiB, 1.0 GiB. */
export function humanBytes(bytes: number): string {
	if (bytes < 1024) return `${formatCount(bytes)} B`;
	const units = ["KiB", "MiB", "GiB", "TiB"];
	let value = bytes / 1024;
	let unit = 0;
	while (value >= 1024 && unit < units.length - 1) {
		value /= 1024;
		unit++;
	}
	return `${value.toFixed(1)} ${units[unit]}`;
}

export function formatStatus(status: StoreStatus, now: number): string {
	const lines = [`headroom store: ${status.root}`];
	lines.push(`${formatCount(status.count)} artifacts, ${humanBytes(status.bytes)}`);
	for (const [kind, k] of Object.entries(status.byKind).sort(([a], [b]) => a.localeCompare(b))) {
		if (k.count > 0) lines.push(`  ${kind}: ${formatCount(k.count)} (${humanBytes(k.bytes)})`);
	}
	if (status.newest) {
		const ageMinutes = Math.max(0, Math.round((now - status.newest.mtimeMs) / 60_000));
		lines.push(`newest: ${status.newest.path} (${ageMinutes} min ago)`);
	}
	for (const problem of status.problems ?? []) lines.push(`skipped (unsafe): ${problem}`);
	return lines.join("\n");
}

export function formatPrune(removed: number, freedBytes: number, limits: string): string {
	return `pruned ${formatCount(removed)} artifacts, freed ${humanBytes(freedBytes)} (${limits})`;
}

export function formatPruneLimits(maxAgeDays: number, maxTotalBytes: number, minAgeHours: number): string {
	return `older than ${maxAgeDays} days, or oldest first above ${humanBytes(maxTotalBytes)}; never younger than ${minAgeHours} h`;
}

function usageLine(label: string, u: CallUsage): string {
	const tokens = `${formatCount(u.input + u.cacheRead)} in / ${formatCount(u.output)} out tokens`;
	const calls = `${formatCount(u.calls)} call${u.calls === 1 ? "" : "s"}`;
	return `  ${label}: ${calls}, ${tokens}, $${u.costUsd.toFixed(4)}`;
}

/** The package's own model calls in this session (handoffs, tool-output summaries). */
export function formatCallUsage(usage: SessionCallUsage): string {
	return [
		"headroom model calls in this session:",
		usageLine("handoff compactions", usage.handoff),
		usageLine("tool-output summaries", usage.toolSummaries),
	].join("\n");
}

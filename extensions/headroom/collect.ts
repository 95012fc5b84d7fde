/**
 * The ledger's inputs, read from Pi: the current context's messages and the branch's entries, the
 * system prompt and the active tools' schemas, Pi's usage reading, and one lstat per artifact the
 * session points to (never following a symlink; a missing file is reported as gone). Every read is
 * guarded, so a Pi line without one of them still gets a ledger.
 */
import { lstatSync } from "node:fs";
import { buildSessionContext, type ExtensionAPI, type ExtensionContext } from "@mariozechner/pi-coding-agent";
import { type ArtifactFact, buildLedger, type Ledger, type LedgerInput, sessionArtifactPaths } from "./ledger.ts";

function guarded<T>(read: () => T, fallback: T): T {
	try {
		return read() ?? fallback;
	} catch {
		return fallback;
	}
}

/** Facts of the given files: size and mtime of regular files, nothing for anything else. */
export function statArtifacts(paths: readonly string[]): Map<string, ArtifactFact> {
	const facts = new Map<string, ArtifactFact>();
	for (const path of paths) {
		const st = guarded(() => lstatSync(path, { throwIfNoEntry: false }), undefined);
		facts.set(path, st?.isFile() ? { path, bytes: st.size, mtimeMs: st.mtimeMs } : { path });
	}
	return facts;
}

export function ledgerInput(
	pi: ExtensionAPI,
	ctx: ExtensionContext,
	sessionBudget?: LedgerInput["sessionBudget"],
): LedgerInput {
	const sm = ctx.sessionManager;
	const entries = guarded(() => sm.getBranch() as unknown[], [] as unknown[]);
	const messages = guarded(
		() => buildSessionContext(sm.getEntries(), sm.getLeafId()).messages as unknown[],
		[] as unknown[],
	);
	const active = new Set(guarded(() => pi.getActiveTools(), [] as string[]));
	const tools = guarded(() => pi.getAllTools(), []).filter((t) => active.has(t.name));
	const usage = guarded(() => ctx.getContextUsage(), undefined);
	return {
		entries,
		messages,
		systemPrompt: guarded(() => ctx.getSystemPrompt(), ""),
		tools,
		usage: usage ? { tokens: usage.tokens, contextWindow: usage.contextWindow } : undefined,
		artifacts: statArtifacts(sessionArtifactPaths(entries)),
		sessionBudget,
	};
}

export function currentLedger(
	pi: ExtensionAPI,
	ctx: ExtensionContext,
	sessionBudget?: LedgerInput["sessionBudget"],
): Ledger {
	return buildLedger(ledgerInput(pi, ctx, sessionBudget));
}

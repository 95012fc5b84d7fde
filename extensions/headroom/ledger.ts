/**
 * The context ledger: what the current context holds, by source, and what this package kept out of it
 * this session. Pure over plain data (the session's messages and entries as Pi stores them, Pi's usage
 * reading, artifact file facts), so it is unit-tested and benchmarked without Pi.
 *
 * Composition: each message of the current context is estimated (shared/text/tokens) and filed under one
 * source; the system prompt and the active tools' schemas are one more. When Pi has a usage reading, the
 * sources are scaled to it (Pi's number is the truth for the total; ours says how it splits).
 * Kept out: results our extensions shortened carry `details.headroom.artifacts` (and subagent batches
 * their `items` with full and shown bytes); handoff compactions carry `details.kind = "headroom-handoff"`;
 * context-trim records each change of its cut in a custom session entry (ContextTrimRecord).
 */

import { type Spend, sessionSpendOf } from "../shared/budget/spend.ts";
import { type ContextTrimRecord, contextTrimRecordOf, headroomOf } from "../shared/host/details.ts";
import { estimateTokens, estimateTokensFromBytes, utf8Length } from "../shared/text/tokens.ts";

/** Where a part of the context comes from. */
export type LedgerSource = "system" | "conversation" | "toolOutputs" | "subagentResults" | "handoffs";

export const SOURCE_LABELS: Record<LedgerSource, string> = {
	system: "system prompt + tool schemas",
	conversation: "conversation",
	toolOutputs: "tool outputs",
	subagentResults: "subagent results",
	handoffs: "handoff summaries",
};

export const SOURCES: readonly LedgerSource[] = [
	"system",
	"conversation",
	"toolOutputs",
	"subagentResults",
	"handoffs",
];

/** Tool names whose results are a child's output. */
const SUBAGENT_TOOL = /^subagent_/;
/** customType of delivered subagent results (the subagents extension's message). */
const SUBAGENT_MESSAGE = "subagent-result";

/** One artifact this session points to, as read from disk. */
export interface ArtifactFact {
	/** Absolute path. */
	path: string;
	/** Bytes on disk (undefined when it is gone). */
	bytes?: number;
	/** Last change in epoch ms (undefined when it is gone). */
	mtimeMs?: number;
}

/** What the ledger is computed from. */
export interface LedgerInput {
	/** The current context's messages (Pi's buildSessionContext, after compaction). */
	messages: readonly unknown[];
	/** Every entry of the current branch (for what was kept out, compactions included). */
	entries: readonly unknown[];
	/** The effective system prompt. */
	systemPrompt: string;
	/** The active tools with their schemas. */
	tools: ReadonlyArray<{ name: string; description?: string; parameters?: unknown }>;
	/** Pi's usage reading (`ctx.getContextUsage()`), if any. */
	usage?: { tokens: number | null; contextWindow: number };
	/** Facts of the artifacts found in `entries`, by path (stat them once, then pass them in). */
	artifacts: ReadonlyMap<string, ArtifactFact>;
	/** What this session's children may spend together (subagents.budget.perSession), if bounded. */
	sessionBudget?: { tokens?: number; cost?: number };
}

/** What this session's children spent (their latest records in the session), against the session's budget. */
export interface ChildSpend extends Spend {
	/** Children with a record in this session. */
	children: number;
	/** subagents.budget.perSession, when bounded. */
	budget?: { tokens?: number; cost?: number };
}

/** One source of the composition. */
export interface SourceFigure {
	source: LedgerSource;
	label: string;
	/** Our estimate from the text, in tokens. */
	estimatedTokens: number;
	/** The estimate scaled to Pi's reading (equal to the estimate without one). */
	tokens: number;
	/** Messages filed here (1 for the system prompt). */
	messages: number;
}

/** What one extension kept out of the context this session. */
export interface KeptOut {
	extension: "tool-artifacts" | "subagents" | "handoff" | "context-trim";
	/** Results shortened (stubs, projected results), compactions done, or trims recorded (changes of the cut). */
	count: number;
	/** Bytes of the full texts stored as artifacts (undefined for handoffs: they are counted in tokens). */
	fullBytes?: number;
	/** Bytes the context got instead. */
	shownBytes: number;
	/** Tokens of the full texts (estimated from bytes; for handoffs, Pi's count before compacting). */
	fullTokens: number;
	/** Tokens the context got instead (estimated). */
	shownTokens: number;
	/** fullTokens − shownTokens, never negative. */
	keptOutTokens: number;
	/**
	 * context-trim only: the latest recorded trim. Each request is trimmed on its own, so its figures are
	 * per request (fullTokens/shownTokens are that request's before and after), not a session total.
	 */
	latestTrim?: ContextTrimRecord;
}

/** The ledger as the command shows it and rpc clients read it (`details.ledger`). */
export interface Ledger {
	/** Pi's reading: tokens in context (null when unknown, e.g. right after a compaction). */
	usedTokens: number | null;
	/** The model's context window (tokens), if known. */
	contextWindow?: number;
	/** How the composition was scaled: to Pi's reading, or our estimate alone. */
	basis: "pi-usage" | "estimate";
	sources: SourceFigure[];
	keptOut: KeptOut[];
	/** This session's artifacts, newest first. */
	artifacts: Array<{ path: string; kind: string; bytes?: number; mtimeMs?: number; readCall: string }>;
	/** What this session's subagents spent (tokens, cost where Pi knows the price). */
	subagentSpend: ChildSpend;
}

type Msg = { role?: string; content?: unknown; toolName?: string; customType?: string; summary?: string };
type Entry = {
	type?: string;
	message?: Msg;
	details?: unknown;
	customType?: string;
	data?: unknown;
	summary?: string;
	tokensBefore?: number;
};

/** Everything of a message's content that takes room (strings, text parts, thinking, tool calls as JSON). */
function sizedText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	let out = "";
	for (const part of content as Array<Record<string, unknown>>) {
		if (!part || typeof part !== "object") continue;
		if (typeof part.text === "string") out += part.text;
		else if (typeof part.thinking === "string") out += part.thinking;
		else if (part.type === "toolCall") {
			out += String(part.name ?? "");
			try {
				out += JSON.stringify(part.arguments ?? {});
			} catch {
				// unserializable arguments count as nothing
			}
		}
	}
	return out;
}

/** Which source a context message belongs to. */
export function sourceOf(message: unknown): LedgerSource {
	const m = (message ?? {}) as Msg;
	switch (m.role) {
		case "toolResult":
			return SUBAGENT_TOOL.test(String(m.toolName ?? "")) ? "subagentResults" : "toolOutputs";
		case "bashExecution":
			return "toolOutputs";
		case "custom":
			return m.customType === SUBAGENT_MESSAGE ? "subagentResults" : "conversation";
		case "compactionSummary":
		case "branchSummary":
			return "handoffs";
		default:
			return "conversation";
	}
}

function messageText(message: unknown): string {
	const m = (message ?? {}) as Msg & { command?: string; output?: string };
	if (m.role === "compactionSummary" || m.role === "branchSummary") return String(m.summary ?? "");
	if (m.role === "bashExecution") return `${m.command ?? ""}\n${m.output ?? ""}`;
	return sizedText(m.content);
}

/** The composition of the current context, by source. */
export function composition(input: Pick<LedgerInput, "messages" | "systemPrompt" | "tools" | "usage">): {
	sources: SourceFigure[];
	basis: Ledger["basis"];
} {
	const tokens = new Map<LedgerSource, number>(SOURCES.map((s) => [s, 0]));
	const counts = new Map<LedgerSource, number>(SOURCES.map((s) => [s, 0]));
	let schemas = "";
	for (const tool of input.tools) {
		try {
			schemas += `${tool.name}\n${tool.description ?? ""}\n${JSON.stringify(tool.parameters ?? {})}\n`;
		} catch {
			schemas += `${tool.name}\n${tool.description ?? ""}\n`;
		}
	}
	tokens.set("system", estimateTokens(input.systemPrompt) + estimateTokens(schemas));
	counts.set("system", 1);
	for (const message of input.messages) {
		const source = sourceOf(message);
		tokens.set(source, (tokens.get(source) ?? 0) + estimateTokens(messageText(message)));
		counts.set(source, (counts.get(source) ?? 0) + 1);
	}
	const estimate = [...tokens.values()].reduce((a, b) => a + b, 0);
	const reading = input.usage?.tokens;
	const scale = typeof reading === "number" && reading > 0 && estimate > 0 ? reading / estimate : 1;
	return {
		basis: scale === 1 && !(typeof reading === "number" && reading > 0) ? "estimate" : "pi-usage",
		sources: SOURCES.map((source) => ({
			source,
			label: SOURCE_LABELS[source],
			estimatedTokens: tokens.get(source) ?? 0,
			tokens: Math.round((tokens.get(source) ?? 0) * scale),
			messages: counts.get(source) ?? 0,
		})),
	};
}

function artifactsOf(details: unknown): string[] {
	const h = headroomOf(details);
	return Array.isArray(h?.artifacts) ? h.artifacts.filter((p): p is string => typeof p === "string") : [];
}

type Item = { fullBytes?: number; shownBytes?: number; artifactPath?: string };

function itemsOf(details: unknown): Item[] {
	const items = (details as { items?: unknown } | undefined)?.items;
	return Array.isArray(items) ? (items.filter((i) => i && typeof i === "object") as Item[]) : [];
}

/** The artifact kind from its folder name (…/<kind>/<sha>.txt). */
export function kindOf(path: string): string {
	const parts = path.split("/");
	const folder = parts.length >= 2 ? parts[parts.length - 2] : "";
	// Handoff trajectories live in `<session>.handoffs/` beside the session file, or under the store's handoffs/<id>/.
	if (folder.endsWith(".handoffs") || parts.includes("handoffs")) return "handoffs";
	return folder;
}

/** The read call that shows an artifact from its start. */
export function readCall(path: string): string {
	return `read(path=${JSON.stringify(path)})`;
}

/** Every artifact path the branch's entries point to (results, stubs, subagent batches, handoff trajectories). */
export function sessionArtifactPaths(entries: readonly unknown[]): string[] {
	const paths = new Set<string>();
	for (const raw of entries) {
		const e = (raw ?? {}) as Entry;
		const details = e.type === "message" ? (e.message as { details?: unknown } | undefined)?.details : e.details;
		for (const p of artifactsOf(details)) paths.add(p);
		for (const item of itemsOf(details)) if (typeof item.artifactPath === "string") paths.add(item.artifactPath);
		const handoff = details as { kind?: string; trajectories?: Array<{ path?: unknown }> } | undefined;
		if (handoff?.kind === "headroom-handoff" && Array.isArray(handoff.trajectories)) {
			for (const t of handoff.trajectories) if (typeof t?.path === "string") paths.add(t.path);
		}
	}
	return [...paths];
}

/** What each extension kept out of the context this session. */
export function keptOut(entries: readonly unknown[], artifacts: ReadonlyMap<string, ArtifactFact>): KeptOut[] {
	const zero = { count: 0, fullBytes: 0, shownBytes: 0, fullTokens: 0, shownTokens: 0, keptOutTokens: 0 };
	const tool: KeptOut = { extension: "tool-artifacts", ...zero };
	const sub: KeptOut = { extension: "subagents", ...zero };
	const hand: KeptOut = { extension: "handoff", ...zero, fullBytes: undefined };
	const trim: KeptOut = { extension: "context-trim", ...zero, fullBytes: undefined };
	for (const raw of entries) {
		const e = (raw ?? {}) as Entry;
		const record = contextTrimRecordOf(raw);
		if (record) {
			trim.count++;
			trim.latestTrim = record;
			continue;
		}
		if (e.type === "message") {
			const m = (e.message ?? {}) as Msg & { details?: unknown };
			const items = itemsOf(m.details).filter((i) => typeof i.fullBytes === "number");
			if (items.length > 0 && (m.role === "custom" || SUBAGENT_TOOL.test(String(m.toolName ?? "")))) {
				for (const i of items) {
					sub.count++;
					sub.fullBytes = (sub.fullBytes ?? 0) + (i.fullBytes ?? 0);
					sub.shownBytes += i.shownBytes ?? i.fullBytes ?? 0;
				}
				continue;
			}
			const stored = artifactsOf(m.details);
			if (m.role === "toolResult" && stored.length > 0) {
				tool.count++;
				tool.fullBytes = (tool.fullBytes ?? 0) + stored.reduce((sum, p) => sum + (artifacts.get(p)?.bytes ?? 0), 0);
				tool.shownBytes += utf8Length(sizedText(m.content));
			}
		} else if (e.type === "compaction") {
			const d = e.details as { kind?: string } | undefined;
			if (d?.kind !== "headroom-handoff") continue;
			hand.count++;
			// What the compacted history held (Pi's tokensBefore) against the handoff that replaced it.
			const summary = String(e.summary ?? "");
			hand.fullTokens += Math.max(0, e.tokensBefore ?? 0);
			hand.shownBytes += utf8Length(summary);
			hand.shownTokens += estimateTokens(summary);
		}
	}
	for (const k of [tool, sub]) {
		k.fullTokens = estimateTokensFromBytes(k.fullBytes ?? 0);
		k.shownTokens = estimateTokensFromBytes(k.shownBytes);
	}
	if (trim.latestTrim) {
		trim.fullTokens = trim.latestTrim.tokensBefore;
		trim.shownTokens = trim.latestTrim.tokensAfter;
		trim.shownBytes = trim.latestTrim.shortenedToBytes;
	}
	for (const k of [tool, sub, hand, trim]) k.keptOutTokens = Math.max(0, k.fullTokens - k.shownTokens);
	return [tool, sub, hand, trim];
}

/** What the session's children spent, from the subagents extension's records (shared/budget/spend.ts). */
export function childSpend(entries: readonly unknown[], budget?: { tokens?: number; cost?: number }): ChildSpend {
	const { children, spend } = sessionSpendOf(entries);
	const bounded = budget && (budget.tokens !== undefined || budget.cost !== undefined);
	return { children, ...spend, ...(bounded ? { budget: { ...budget } } : {}) };
}

/** The whole ledger. */
export function buildLedger(input: LedgerInput): Ledger {
	const { sources, basis } = composition(input);
	const paths = sessionArtifactPaths(input.entries);
	const artifacts = paths
		.map((path) => {
			const fact = input.artifacts.get(path);
			return { path, kind: kindOf(path), bytes: fact?.bytes, mtimeMs: fact?.mtimeMs, readCall: readCall(path) };
		})
		.sort((a, b) => (b.mtimeMs ?? -1) - (a.mtimeMs ?? -1) || a.path.localeCompare(b.path));
	return {
		usedTokens: input.usage?.tokens ?? null,
		contextWindow: input.usage?.contextWindow,
		basis,
		sources,
		keptOut: keptOut(input.entries, input.artifacts),
		artifacts,
		subagentSpend: childSpend(input.entries, input.sessionBudget),
	};
}

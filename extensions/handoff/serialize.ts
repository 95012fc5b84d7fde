/**
 * Turns a Pi history into the text the handoff calls read. Unlike Pi's own serializer (which keeps
 * the first 2,000 characters of a tool result), every long piece is cut head AND tail through the
 * shared projection primitive, so the errors and stack traces at the end of an output survive.
 * Pure: plain data in, plain data out.
 */
import { type Projection, type ProjectionLimits, projectText } from "../shared/projection/projection.ts";
import { SURFACES } from "../shared/surfaces.ts";
import { utf8Length } from "../shared/text/tokens.ts";
import { NO_TEXT, TRANSCRIPT_LABELS } from "./prompt.ts";

/** A Pi message as the session stores it (AgentMessage); only the fields read here are typed. */
export interface HistoryMessage {
	role: string;
	content?: unknown;
	toolName?: string;
	isError?: boolean;
	customType?: string;
	command?: string;
	output?: string;
	exitCode?: number;
	excludeFromContext?: boolean;
	summary?: string;
	model?: string;
	stopReason?: string;
	usage?: unknown;
	timestamp?: number;
}

/** A session entry as getBranch() returns it; only the fields read here are typed. */
export interface BranchEntry {
	type: string;
	id: string;
	message?: HistoryMessage;
	customType?: string;
	content?: unknown;
	summary?: string;
	firstKeptEntryId?: string;
	details?: unknown;
	timestamp?: string | number;
}

/** Share of a tool result's budget given to its head: outputs end in errors, so the tail gets more than usual. */
export const TOOL_RESULT_HEAD_SHARE = SURFACES["handoff.toolResult"].headShare;
/** Share of a current-state excerpt given to its head: the state is what the output ended with. */
export const STATE_HEAD_SHARE = SURFACES["handoff.currentState"].headShare;
/** How many of the latest tool results the current state shows. */
export const STATE_TOOL_RESULTS = 3;

/** Plain text of a message content (string or parts); images and unknown parts become a marker. */
export function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	const out: string[] = [];
	for (const part of content) {
		if (!part || typeof part !== "object") continue;
		const p = part as { type?: string; text?: unknown };
		if (p.type === "text" && typeof p.text === "string") out.push(p.text);
		else if (p.type === "image") out.push("[image]");
	}
	return out.join("\n");
}

function partsOf(content: unknown, type: string): Array<Record<string, unknown>> {
	if (!Array.isArray(content)) return [];
	return content.filter((p) => p && typeof p === "object" && (p as { type?: string }).type === type);
}

/**
 * Cuts one text head+tail (verbatim when it fits). The adapter passes one that stores the full text
 * as an artifact so the footer names a file the next agent can read; the default stores nothing.
 */
export type Projector = (text: string, limits: ProjectionLimits) => Projection;

/** A projector with no store: the footer says plainly that the full text was not saved. */
export const pureProjector: Projector = (text, limits) => projectText(text, limits, undefined);

/**
 * One message as a transcript block, long parts cut head+tail; "" for messages the model never saw.
 * `pieceLimits.headShare` (the configured projection.headShare) applies to every piece except tool and
 * shell outputs, which always keep TOOL_RESULT_HEAD_SHARE: their errors come at the end.
 */
export function messageBlock(
	message: HistoryMessage,
	pieceLimits: ProjectionLimits,
	project: Projector = pureProjector,
): string {
	const L = TRANSCRIPT_LABELS;
	const cut = (text: string, limits: ProjectionLimits) => project(text, limits).text;
	switch (message.role) {
		case "user":
			return `${L.user}: ${contentText(message.content) || NO_TEXT}`;
		case "assistant": {
			const lines: string[] = [];
			const thinking = partsOf(message.content, "thinking")
				.map((p) => String(p.thinking ?? ""))
				.filter(Boolean)
				.join("\n");
			if (thinking) lines.push(`${L.thinking}: ${cut(thinking, pieceLimits)}`);
			const text = contentText(message.content);
			if (text) lines.push(`${L.assistant}: ${cut(text, pieceLimits)}`);
			const calls = partsOf(message.content, "toolCall").map(
				(c) => `${String(c.name ?? "?")}(${cut(JSON.stringify(c.arguments ?? {}), pieceLimits)})`,
			);
			if (calls.length > 0) lines.push(`${L.toolCalls}: ${calls.join("; ")}`);
			if (lines.length === 0) lines.push(`${L.assistant}: ${NO_TEXT}`);
			return lines.join("\n");
		}
		case "toolResult": {
			const label = L.toolResult(message.toolName ?? "tool", Boolean(message.isError));
			const limits = { ...pieceLimits, headShare: TOOL_RESULT_HEAD_SHARE };
			return `${label}: ${cut(contentText(message.content) || NO_TEXT, limits)}`;
		}
		case "bashExecution": {
			if (message.excludeFromContext) return "";
			const exit = message.exitCode === undefined ? "" : ` (exit ${message.exitCode})`;
			const limits = { ...pieceLimits, headShare: TOOL_RESULT_HEAD_SHARE };
			return `${L.userShell}: ${message.command ?? ""}${exit}\n${cut(message.output ?? "", limits)}`;
		}
		case "custom":
			return `${L.note(message.customType ?? "extension")}: ${cut(contentText(message.content) || NO_TEXT, pieceLimits)}`;
		case "compactionSummary":
		case "branchSummary":
			return `${L.earlierSummary}: ${message.summary ?? ""}`;
		default:
			return "";
	}
}

/** The serialized transcript and how it was shortened. */
export interface SerializedHistory {
	/** What the handoff calls read (within maxBytes). */
	text: string;
	/** One block per input message, aligned with it ("" for messages the model never sees), for trajectories. */
	blocks: string[];
	/** UTF-8 bytes of the joined blocks before the whole-transcript cut. */
	fullBytes: number;
	/** Bytes the whole-transcript cut left out (0 when it fit). */
	omittedBytes: number;
}

/** Separator between transcript blocks. */
export const BLOCK_SEPARATOR = "\n\n";

/**
 * Serialize `messages`, each long part cut to `pieceLimits`, then cut the whole transcript head+tail
 * to `maxBytes` (with `pieceLimits.headShare`) so it fits the summarizing model's window. Nothing is
 * dropped without a marker.
 */
export function serializeHistory(
	messages: HistoryMessage[],
	opts: { pieceLimits: ProjectionLimits; maxBytes: number; project?: Projector },
): SerializedHistory {
	const project = opts.project ?? pureProjector;
	const blocks = messages.map((m) => messageBlock(m, opts.pieceLimits, project));
	const joined = blocks.filter((b) => b.length > 0).join(BLOCK_SEPARATOR);
	const fullBytes = utf8Length(joined);
	if (fullBytes <= opts.maxBytes) return { text: joined, blocks, fullBytes, omittedBytes: 0 };
	// Lines never bind here (a line is at least one byte), the byte budget does.
	const projection = project(joined, {
		maxBytes: opts.maxBytes,
		maxLines: opts.maxBytes,
		headShare: opts.pieceLimits.headShare,
	});
	return { text: projection.text, blocks, fullBytes, omittedBytes: projection.omittedBytes };
}

/**
 * Pi's analogue of a terminal screen: the end of the latest tool outputs and of the last assistant
 * message, each cut tail-heavy to `limits`.
 */
export function currentState(
	messages: HistoryMessage[],
	limits: ProjectionLimits,
	project: Projector = pureProjector,
): string {
	const cut = (text: string, l: ProjectionLimits) => project(text, l).text;
	const stateLimits = { ...limits, headShare: limits.headShare ?? STATE_HEAD_SHARE };
	const results: string[] = [];
	let assistant: string | undefined;
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i];
		if (m.role === "toolResult" && results.length < STATE_TOOL_RESULTS) {
			const label = TRANSCRIPT_LABELS.toolResult(m.toolName ?? "tool", Boolean(m.isError));
			results.unshift(`${label}: ${cut(contentText(m.content) || NO_TEXT, stateLimits)}`);
		} else if (m.role === "assistant" && assistant === undefined) {
			const text = contentText(m.content);
			if (text) assistant = `${TRANSCRIPT_LABELS.assistant}: ${cut(text, stateLimits)}`;
		}
		if (assistant !== undefined && results.length >= STATE_TOOL_RESULTS) break;
	}
	const parts = [...results, ...(assistant ? [assistant] : [])];
	return parts.length > 0 ? parts.join(BLOCK_SEPARATOR) : NO_TEXT;
}

/** The original task as the prompts and the handoff show it. */
export interface BoundedTask {
	/** Verbatim when it fits, else head + omission marker + tail + footer naming the stored full text. */
	text: string;
	/** UTF-8 bytes left out (0 when verbatim). */
	omittedBytes: number;
	/** Where the full task was stored, when it was cut and the store succeeded. */
	artifactPath?: string;
}

/**
 * The original task within `maxBytes`, cut head+tail through the projection (which stores the full
 * text when a store-backed projector is passed), so a huge first message cannot overflow the window.
 */
export function boundTask(
	task: string,
	maxBytes: number,
	headShare: number | undefined,
	project: Projector = pureProjector,
): BoundedTask {
	// Lines never bind (a line is at least one byte): the byte budget does.
	const p = project(task, { maxBytes, maxLines: maxBytes, headShare });
	const stored = p.artifact?.ok ? { artifactPath: p.artifact.path } : {};
	return { text: p.text, omittedBytes: p.omittedBytes, ...stored };
}

/** Text of every user-role message of the branch, in order (the task is the first). */
export function userTexts(entries: BranchEntry[]): string[] {
	const out: string[] = [];
	for (const e of entries) {
		if (e.type === "message" && e.message?.role === "user") out.push(contentText(e.message.content) || NO_TEXT);
	}
	return out;
}

/** Later user messages kept verbatim within a byte budget: the newest that fit, shown oldest first. */
export function fitUserMessages(later: string[], budgetBytes: number): { kept: string[]; omitted: number } {
	const kept: string[] = [];
	let used = 0;
	let i = later.length - 1;
	for (; i >= 0; i--) {
		const size = utf8Length(later[i]);
		if (used + size > budgetBytes) break;
		used += size;
		kept.unshift(later[i]);
	}
	return { kept, omitted: i + 1 };
}

/** The model-visible messages of a branch (as Pi builds its context), with each message's entry id. */
export interface BranchContext {
	messages: HistoryMessage[];
	/** Entry id of each message, aligned with `messages`. */
	entryIds: string[];
	/** Summary of the latest compaction on the branch, if any. */
	previousSummary?: string;
}

function entryMessage(e: BranchEntry): HistoryMessage | undefined {
	if (e.type === "message" && e.message) return e.message;
	if (e.type === "custom_message") return { role: "custom", customType: e.customType, content: e.content };
	if (e.type === "branch_summary") return { role: "branchSummary", summary: e.summary };
	return undefined;
}

/** Rebuild the context Pi sends from branch entries: after the latest compaction, from its kept entry on. */
export function branchContext(entries: BranchEntry[]): BranchContext {
	let compactionIndex = -1;
	for (let i = entries.length - 1; i >= 0; i--) {
		if (entries[i].type === "compaction") {
			compactionIndex = i;
			break;
		}
	}
	const messages: HistoryMessage[] = [];
	const entryIds: string[] = [];
	const push = (e: BranchEntry) => {
		const m = entryMessage(e);
		if (m) {
			messages.push(m);
			entryIds.push(e.id);
		}
	};
	if (compactionIndex < 0) {
		entries.forEach(push);
		return { messages, entryIds };
	}
	const compaction = entries[compactionIndex];
	const keptStart = entries.findIndex((e, i) => i < compactionIndex && e.id === compaction.firstKeptEntryId);
	if (keptStart >= 0) entries.slice(keptStart, compactionIndex).forEach(push);
	entries.slice(compactionIndex + 1).forEach(push);
	return { messages, entryIds, previousSummary: compaction.summary };
}

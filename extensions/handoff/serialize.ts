/**
 * Turns a Pi history into the text the handoff calls read. Unlike Pi's own serializer (which keeps
 * the first 2,000 characters of a tool result), every long piece is cut head AND tail through the
 * shared projection primitive, so the errors and stack traces at the end of an output survive; a log
 * (a command's output, a user's shell command, any tool's error) leads with its notable lines, so a
 * failure in the middle of a long output survives too. Pure: plain data in, plain data out.
 */

import { projectLog } from "../shared/projection/log.ts";
import {
	type ArtifactSink,
	MIN_WINDOW_BYTES,
	type Projection,
	type ProjectOptions,
	project,
	type SurfaceLimits,
} from "../shared/projection/projection.ts";
import { resolveSurface, SURFACES, type SurfaceName } from "../shared/surfaces.ts";
import { contentText } from "../shared/text/content.ts";
import { utf8Length } from "../shared/text/tokens.ts";
import { isLogOutput, type OutputClass } from "../shared/text/tool-kind.ts";
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

/**
 * Share of a tool result's budget given to its head, as the table has it (a `handoff.toolResult` override
 * reaches the cut through `PieceLimits.surfaces`): outputs end in errors, so the tail gets more than usual.
 */
export const TOOL_RESULT_HEAD_SHARE = SURFACES["handoff.toolResult"].headShare;
/** How many of the latest tool results the current state shows. */
export const STATE_TOOL_RESULTS = 3;

function partsOf(content: unknown, type: string): Array<Record<string, unknown>> {
	if (!Array.isArray(content)) return [];
	return content.filter((p) => p && typeof p === "object" && (p as { type?: string }).type === type);
}

/**
 * Limits of the pieces of one handoff, narrower than their surfaces' (handoff.piece, handoff.toolResult)
 * when given; `headShare` is the configured projection.headShare.
 */
export interface PieceLimits {
	/** UTF-8 bytes of one piece. */
	maxBytes?: number;
	/** Lines of one piece. */
	maxLines?: number;
	/** Head share of every piece except tool and shell outputs. */
	headShare?: number;
	/** The surfaces as configured (surfaceFor); absent: the table's handoff.toolResult and handoff.piece. */
	surfaces?: Partial<Pick<HandoffSurfaces, "toolResult" | "piece">>;
	/** Tool name → output kind (toolArtifacts.toolClasses): which tools' outputs are logs (isLogOutput). */
	toolClasses?: Readonly<Record<string, OutputClass>>;
}

/** The handoff's surfaces resolved from the configuration (each absent: the table's entry). */
export interface HandoffSurfaces {
	/** handoff.toolResult: one tool or shell output in the transcript. */
	toolResult: SurfaceLimits;
	/** handoff.piece: any other long piece of the transcript. */
	piece: SurfaceLimits;
	/** handoff.currentState: each excerpt of the current state. */
	currentState: SurfaceLimits;
	/** handoff.task: the original task. */
	task: SurfaceLimits;
	/** handoff.userMessages: the later user messages, together. */
	userMessages: SurfaceLimits;
	/** handoff.transcript: the whole transcript (its bytes decided per call). */
	transcript: SurfaceLimits;
}

/**
 * One message as a transcript block, long parts cut head+tail; "" for messages the model never saw.
 * `pieceLimits.headShare` (the configured projection.headShare) applies to every piece except tool and
 * shell outputs, which always keep TOOL_RESULT_HEAD_SHARE: their errors come at the end. With a `sink`
 * the full texts are stored, so footers name a file the next agent can read; without, they say not saved.
 */
export function messageBlock(message: HistoryMessage, pieceLimits: PieceLimits = {}, sink?: ArtifactSink): string {
	const L = TRANSCRIPT_LABELS;
	const own = pieceLimits.surfaces ?? {};
	const cut = (text: string) =>
		project(text, own.piece ?? "handoff.piece", {
			maxBytes: pieceLimits.maxBytes,
			maxLines: pieceLimits.maxLines,
			headShare: pieceLimits.headShare ?? own.piece?.headShare,
			sink,
		}).text;
	/** A tool or shell output: tail-heavy, and a log leads with its notable lines. */
	const cutOutput = (text: string, log: boolean) =>
		shortenOutput(text, own.toolResult ?? "handoff.toolResult", log, {
			maxBytes: pieceLimits.maxBytes,
			maxLines: pieceLimits.maxLines,
			sink,
		}).text;
	switch (message.role) {
		case "user":
			return `${L.user}: ${contentText(message.content) || NO_TEXT}`;
		case "assistant": {
			const lines: string[] = [];
			const thinking = partsOf(message.content, "thinking")
				.map((p) => String(p.thinking ?? ""))
				.filter(Boolean)
				.join("\n");
			if (thinking) lines.push(`${L.thinking}: ${cut(thinking)}`);
			const text = contentText(message.content);
			if (text) lines.push(`${L.assistant}: ${cut(text)}`);
			const calls = partsOf(message.content, "toolCall").map(
				(c) => `${String(c.name ?? "?")}(${cut(JSON.stringify(c.arguments ?? {}))})`,
			);
			if (calls.length > 0) lines.push(`${L.toolCalls}: ${calls.join("; ")}`);
			if (lines.length === 0) lines.push(`${L.assistant}: ${NO_TEXT}`);
			return lines.join("\n");
		}
		case "toolResult": {
			const label = L.toolResult(message.toolName ?? "tool", Boolean(message.isError));
			const log = isLogResult(message, pieceLimits.toolClasses);
			return `${label}: ${cutOutput(contentText(message.content) || NO_TEXT, log)}`;
		}
		case "bashExecution": {
			if (message.excludeFromContext) return "";
			const exit = message.exitCode === undefined ? "" : ` (exit ${message.exitCode})`;
			return `${L.userShell}: ${message.command ?? ""}${exit}\n${cutOutput(message.output ?? "", true)}`;
		}
		case "custom":
			return `${L.note(message.customType ?? "extension")}: ${cut(contentText(message.content) || NO_TEXT)}`;
		case "compactionSummary":
		case "branchSummary":
			return `${L.earlierSummary}: ${message.summary ?? ""}`;
		default:
			return "";
	}
}

/** Whether a tool result is a log (a command's output or any tool's error): see isLogOutput. */
export function isLogResult(message: HistoryMessage, toolClasses?: PieceLimits["toolClasses"]): boolean {
	return isLogOutput({ toolName: message.toolName ?? "tool", isError: message.isError, overrides: toolClasses });
}

/** A tool or shell output through the projection: a log with its notable lines first, any other text head + tail. */
function shortenOutput(
	text: string,
	surface: SurfaceName | SurfaceLimits,
	log: boolean,
	options: ProjectOptions & { sink?: ArtifactSink },
): Projection {
	return log ? projectLog(text, surface, options) : project(text, surface, options);
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
	opts: { pieceLimits: PieceLimits; maxBytes: number; sink?: ArtifactSink; surface?: SurfaceLimits },
): SerializedHistory {
	const blocks = messages.map((m) => messageBlock(m, opts.pieceLimits, opts.sink));
	const joined = blocks.filter((b) => b.length > 0).join(BLOCK_SEPARATOR);
	const fullBytes = utf8Length(joined);
	if (fullBytes <= opts.maxBytes) return { text: joined, blocks, fullBytes, omittedBytes: 0 };
	// Lines never bind here (the surface gives a line per byte), the byte budget does.
	const projection = project(joined, opts.surface ?? "handoff.transcript", {
		maxBytes: opts.maxBytes,
		headShare: opts.pieceLimits.headShare ?? opts.surface?.headShare,
		sink: opts.sink,
	});
	return { text: projection.text, blocks, fullBytes, omittedBytes: projection.omittedBytes };
}

/**
 * Pi's analogue of a terminal screen: the end of the latest tool outputs (a log's notable lines first) and of
 * the last assistant message, each cut tail-heavy to `limits` within `surface` (default: the table's
 * handoff.currentState).
 */
export function currentState(
	messages: HistoryMessage[],
	limits: PieceLimits = {},
	sink?: ArtifactSink,
	surface: SurfaceLimits | "handoff.currentState" = "handoff.currentState",
): string {
	const { maxBytes, maxLines, headShare } = limits;
	const cut = (text: string, log = false) =>
		shortenOutput(text, surface, log, { maxBytes, maxLines, headShare, sink }).text;
	const results: string[] = [];
	let assistant: string | undefined;
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i];
		if (m.role === "toolResult" && results.length < STATE_TOOL_RESULTS) {
			const label = TRANSCRIPT_LABELS.toolResult(m.toolName ?? "tool", Boolean(m.isError));
			results.unshift(`${label}: ${cut(contentText(m.content) || NO_TEXT, isLogResult(m, limits.toolClasses))}`);
		} else if (m.role === "assistant" && assistant === undefined) {
			const text = contentText(m.content);
			if (text) assistant = `${TRANSCRIPT_LABELS.assistant}: ${cut(text)}`;
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
 * The original task within `budget` (a byte count, or the handoff.task surface as configured), cut
 * head+tail through the projection (which stores the full text when a sink is passed), so a huge first
 * message cannot overflow the window.
 */
export function boundTask(
	task: string,
	budget: number | SurfaceLimits,
	headShare: number | undefined,
	sink?: ArtifactSink,
): BoundedTask {
	// A byte count is the surface's budget; lines never bind then (a line is at least one byte).
	const surface =
		typeof budget === "number" ? resolveSurface("handoff.task", { maxBytes: budget, maxLines: budget }) : budget;
	const p = project(task, surface, { headShare: headShare ?? surface.headShare, sink });
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

/**
 * Later user messages within a budget (bytes, or the handoff.userMessages surface as configured), shown
 * oldest first: the newest verbatim while they fit; the first that does not fit keeps head + tail in what
 * is left (when that is at least the minimum window, its full text stored through `sink`); the older ones
 * are counted as omitted.
 */
export function fitUserMessages(
	later: string[],
	budget: number | SurfaceLimits,
	sink?: ArtifactSink,
): { kept: string[]; omitted: number } {
	const kept: string[] = [];
	const surface =
		typeof budget === "number"
			? resolveSurface("handoff.userMessages", { maxBytes: budget, maxLines: budget })
			: budget;
	const budgetBytes = surface.maxBytes;
	let used = 0;
	let i = later.length - 1;
	for (; i >= 0; i--) {
		const size = utf8Length(later[i]);
		if (used + size <= budgetBytes) {
			used += size;
			kept.unshift(later[i]);
			continue;
		}
		const room = budgetBytes - used;
		const shown =
			room >= MIN_WINDOW_BYTES
				? project(later[i], surface, { maxBytes: room, headShare: surface.headShare, sink }).text
				: undefined;
		// (A footer naming a very long store path could outgrow a small room: then the message is counted.)
		if (shown !== undefined && utf8Length(shown) <= room) {
			kept.unshift(shown);
			i--;
		}
		break;
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

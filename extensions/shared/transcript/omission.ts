/**
 * The omission index of a trimmed view: exactly what it leaves out (messages, tools with brief
 * arguments, files touched) and which kept texts it shows only as head+tail, and the memo that
 * reuses the index while the cut holds (the hook builds a view on every call).
 */

import { project } from "../projection/projection.ts";
import { SURFACES } from "../surfaces.ts";
import { type RetentionPlan, type TokenSizer, type TranscriptMessage, toolCallsOf } from "./plan.ts";

/** Distinct brief arguments remembered per tool. */
const BRIEFS_PER_TOOL = SURFACES["transcript.briefsPerTool"].maxLines;
/** Argument names that carry a file path. */
const PATH_KEYS = ["path", "file_path", "filePath", "file"];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/** One tool's share of the omitted calls. */
export interface ToolTally {
	/** Tool name as called. */
	name: string;
	/** Calls left out. */
	count: number;
	/** Up to three distinct brief arguments (a command's first line, a pattern…), first seen first. */
	briefs: string[];
}

/** One text kept only as head+tail. */
export interface ShortenedNote {
	/** Role of the message that held it. */
	role: string;
	/** Tool name, for tool results and tool-call arguments. */
	toolName?: string;
	/** UTF-8 bytes of the full text. */
	originalBytes: number;
	/** UTF-8 bytes of what is shown. */
	keptBytes: number;
}

/** Exactly what a trimmed view leaves out or shortens. */
export interface OmissionIndex {
	/** Messages left out. */
	messages: number;
	/** Of those, messages the user wrote. */
	userMessages: number;
	/** Of those, assistant replies. */
	assistantMessages: number;
	/** Estimated tokens left out. */
	tokens: number;
	/** Tool calls left out by tool, most frequent first (ties keep first-seen order). */
	tools: ToolTally[];
	/** Paths named by the left-out tool calls, first seen first, without repeats. */
	files: string[];
	/** Texts of kept messages shown only as head+tail. */
	shortened: ShortenedNote[];
}

/** First line of a value, clipped to its surface (transcript.briefArgs). */
function brief(value: unknown): string | undefined {
	if (typeof value !== "string" && typeof value !== "number") return undefined;
	const line = String(value).trim().split("\n", 1)[0] ?? "";
	if (line.length === 0) return undefined;
	return project(line, "transcript.briefArgs").text;
}

/** Index what `omitted` segments hold: message counts, tools with brief arguments, files touched. */
export function indexOmitted(
	messages: readonly TranscriptMessage[],
	plan: RetentionPlan,
	shortened: ShortenedNote[] = [],
): OmissionIndex {
	const index: OmissionIndex = {
		messages: 0,
		userMessages: 0,
		assistantMessages: 0,
		tokens: 0,
		tools: [],
		files: [],
		shortened,
	};
	const tallies = new Map<string, ToolTally>();
	const files = new Set<string>();
	for (const s of plan.omitted) {
		const segment = plan.segments[s];
		index.tokens += segment.tokens;
		for (let i = segment.start; i < segment.end; i++) {
			const message = messages[i];
			index.messages++;
			if (message.role === "user") index.userMessages++;
			else if (message.role === "assistant") index.assistantMessages++;
			for (const call of toolCallsOf(message)) {
				let tally = tallies.get(call.name);
				if (!tally) {
					tally = { name: call.name, count: 0, briefs: [] };
					tallies.set(call.name, tally);
				}
				tally.count++;
				const args = isObject(call.arguments) ? call.arguments : {};
				const pathKey = PATH_KEYS.find((k) => typeof args[k] === "string");
				if (pathKey) files.add(String(args[pathKey]));
				const first = pathKey ? undefined : brief(Object.values(args).find((v) => brief(v) !== undefined));
				if (first && tally.briefs.length < BRIEFS_PER_TOOL && !tally.briefs.includes(first)) tally.briefs.push(first);
			}
		}
	}
	index.tools = [...tallies.values()].sort((a, b) => b.count - a.count);
	index.files = [...files];
	return index;
}

/** True when two lists of shortened-text notes say the same. */
function sameNotes(a: readonly ShortenedNote[], b: readonly ShortenedNote[]): boolean {
	if (a.length !== b.length) return false;
	for (let k = 0; k < a.length; k++) {
		const x = a[k];
		const y = b[k];
		if (x.role !== y.role || x.toolName !== y.toolName || x.originalBytes !== y.originalBytes) return false;
		if (x.keptBytes !== y.keptBytes) return false;
	}
	return true;
}

/**
 * Remembers the last omission index. It is reused only when the sizer's previous pass built it,
 * the left-out range is the same, and no message up to the range's end changed since — the
 * common case of a stable cut, where re-indexing hundreds of messages would be the hook's main cost.
 * When the shortened texts say the same too, the very same object comes back, so what is rendered
 * from it (context-trim's marker) can be remembered by identity.
 */
export class OmissionMemo {
	private pass = -1;
	/** Start and end of each left-out segment the index was built for, in turn. */
	private ranges: number[] = [];
	private index: OmissionIndex | undefined;

	constructor(private readonly sizer: TokenSizer) {}

	get(messages: readonly TranscriptMessage[], plan: RetentionPlan, shortened: ShortenedNote[]): OmissionIndex {
		const end = plan.omitted.length > 0 ? plan.segments[plan.omitted[plan.omitted.length - 1]].end : 0;
		const sameRanges = this.sameRanges(plan);
		const fresh = this.pass === this.sizer.passes - 1 && this.sizer.firstChange >= end && sameRanges;
		if (!fresh || !this.index) this.index = indexOmitted(messages, plan, shortened);
		else if (!sameNotes(this.index.shortened, shortened)) this.index = { ...this.index, shortened };
		this.pass = this.sizer.passes;
		if (!sameRanges) {
			this.ranges = [];
			for (const s of plan.omitted) this.ranges.push(plan.segments[s].start, plan.segments[s].end);
		}
		return this.index;
	}

	private sameRanges(plan: RetentionPlan): boolean {
		if (this.ranges.length !== plan.omitted.length * 2) return false;
		for (let k = 0; k < plan.omitted.length; k++) {
			const segment = plan.segments[plan.omitted[k]];
			if (this.ranges[2 * k] !== segment.start || this.ranges[2 * k + 1] !== segment.end) return false;
		}
		return true;
	}
}

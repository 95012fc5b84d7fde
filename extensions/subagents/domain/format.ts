/**
 * Plain formatting of children for rows and notes: a status glyph per state, durations, counts, the one-line
 * brief of a tool call's arguments, and the text read out of a run's assistant messages. No Pi imports, no I/O.
 */
import { project } from "../../shared/projection/projection.ts";
import { SURFACES } from "../../shared/surfaces.ts";
import type { ChildState } from "./records.ts";

/** Longest one-line brief of a tool call's arguments, in UTF-8 bytes (mark included). */
export const TOOL_ARGS_BRIEF_BYTES = SURFACES["subagents.toolArgs"].maxBytes;

/** A status glyph per state (one character, for compact rows). */
export function statusGlyph(state: ChildState): string {
	switch (state) {
		case "waiting":
			return "⧗";
		case "queued":
			return "◷";
		case "starting":
		case "running":
			return "●";
		case "completed":
			return "✓";
		case "incomplete":
			return "◐";
		case "failed":
			return "✗";
		case "cancelled":
			return "■";
		case "skipped":
			return "⊘";
		case "interrupted":
			return "↯";
		case "budget":
			return "⊖";
	}
}

/** "850 ms", "12.3 s", "4m 05s". */
export function formatDuration(ms: number): string {
	if (!Number.isFinite(ms) || ms < 0) return "0 ms";
	if (ms < 1000) return `${Math.round(ms)} ms`;
	if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
	const minutes = Math.floor(ms / 60_000);
	const seconds = Math.floor((ms % 60_000) / 1000);
	return `${minutes}m ${String(seconds).padStart(2, "0")}s`;
}

export { formatCount, plural } from "../../shared/text/format.ts";

/** Text of an assistant message's text parts (thinking and tool calls excluded). */
export function assistantText(message: unknown): string {
	if (!message || typeof message !== "object") return "";
	const m = message as { role?: string; content?: unknown };
	if (m.role !== "assistant" || !Array.isArray(m.content)) return "";
	return m.content
		.filter((p): p is { type: "text"; text: string } => !!p && p.type === "text" && typeof p.text === "string")
		.map((p) => p.text)
		.join("");
}

/** The last assistant message of a run and why it stopped. */
export function lastAssistant(messages: unknown[]): { text: string; stopReason?: string; errorMessage?: string } {
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i] as { role?: string; stopReason?: string; errorMessage?: string };
		if (m?.role === "assistant")
			return { text: assistantText(m), stopReason: m.stopReason, errorMessage: m.errorMessage };
	}
	return { text: "" };
}

/** One-line compaction of tool arguments for notes, clipped by the shared UTF-8-safe primitive. */
export function compactArgs(args: unknown, maxBytes = TOOL_ARGS_BRIEF_BYTES): string {
	let text: string;
	try {
		text = typeof args === "string" ? args : JSON.stringify(args ?? {});
	} catch {
		text = String(args);
	}
	return project(String(text).replace(/\s+/g, " "), "subagents.toolArgs", { maxBytes }).text;
}

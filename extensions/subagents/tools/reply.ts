/**
 * What a subagent tool returns: its text and details, and a child's row in them. Shared by the tool modules.
 */
import type { ChildRecord } from "../domain.ts";
import type { ChildRow } from "../view/render.ts";

export type ToolReturn = { content: Array<{ type: "text"; text: string }>; details: Record<string, unknown> };
export type OnUpdate = ((partial: ToolReturn) => void) | undefined;

export const reply = (text: string, details: Record<string, unknown> = {}): ToolReturn => ({
	content: [{ type: "text", text }],
	details,
});

export function row(c: ChildRecord, note?: string): ChildRow {
	return { id: c.id, name: c.name, state: c.state, note, ...(c.agent ? { agent: c.agent } : {}) };
}

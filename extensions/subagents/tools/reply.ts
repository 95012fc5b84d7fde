/**
 * What a subagent tool returns: its text and details, and a child's row in them; and the check every tool
 * that names children makes first. Shared by the tool modules.
 */
import { questionBrief } from "../ask/question.ts";
import type { SubagentManager } from "../children/manager.ts";
import { type ChildRecord, type ChildRow, partitionIds } from "../domain/records.ts";
import { unknownIdsError } from "../prompt/common.ts";
import { waitingFor } from "../prompt/pipeline.ts";

export type ToolReturn = { content: Array<{ type: "text"; text: string }>; details: Record<string, unknown> };
export type OnUpdate = ((partial: ToolReturn) => void) | undefined;

export const reply = (text: string, details: Record<string, unknown> = {}): ToolReturn => ({
	content: [{ type: "text", text }],
	details,
});

export function row(c: ChildRecord, note?: string): ChildRow {
	const waits = c.state === "waiting" ? waitingFor(c.after ?? []) : undefined;
	return {
		id: c.id,
		name: c.name,
		state: c.state,
		note: note ?? waits,
		...(c.agent ? { agent: c.agent } : {}),
		...(c.question ? { question: questionBrief(c.question.text) } : {}),
	};
}

/** The requested ids the manager knows; an unknown one is refused with the list of valid ids. */
export function requireIds(manager: SubagentManager, requested: string[]): string[] {
	const known = manager.ids();
	const { known: good, unknown } = partitionIds(requested, known);
	if (unknown.length > 0) throw new Error(unknownIdsError(unknown, known));
	return good;
}

/**
 * The roster a compaction gets: the children still running or queued and the results not yet received,
 * stated by code (never left to the summarizing model), bounded by the `subagents.roster` surface: the
 * header, then one line a child, then "… and N more". Pure: the adapter sends it after Pi's session_compact.
 */
import { project } from "../../shared/projection/projection.ts";
import { questionBrief } from "../ask/question.ts";
import { type ChildRecord, isSettled } from "../domain/records.ts";
import { askingNote } from "../prompt/ask.ts";
import { rosterHeader, rosterLine } from "../prompt/common.ts";

/** What the roster needs of the manager's read model. */
export interface RosterSource {
	list(): ChildRecord[];
	/** True when the child's latest result was not received yet. */
	owed(id: string): boolean;
}

/** The roster text and the ids it names, or undefined when no child is running, queued or owed. */
export function rosterText(source: RosterSource, now: number): { text: string; ids: string[] } | undefined {
	const listed = source.list().filter((c) => !isSettled(c.state) || source.owed(c.id) || c.question);
	if (listed.length === 0) return undefined;
	const running = listed.filter((c) => c.state === "running" || c.state === "starting").length;
	const queued = listed.filter((c) => c.state === "queued").length;
	const owed = listed.filter((c) => source.owed(c.id)).length;
	const lines = listed.map((c) => {
		const brief = project(c.prompt.replace(/\s+/g, " ").trim(), "subagents.rosterTask").text;
		const line = rosterLine(c, now, brief, source.owed(c.id));
		// An open question survives the compaction here: the child still waits for the answer.
		return c.question ? `${line}; ${askingNote(questionBrief(c.question.text))}` : line;
	});
	const text = project([rosterHeader(running, queued, owed), ...lines], "subagents.roster").text;
	return { text, ids: listed.map((c) => c.id) };
}

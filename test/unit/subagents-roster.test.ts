/**
 * The roster a compaction gets: every child still running or queued and every result not yet received, with
 * id, name, agent, state, elapsed time and a brief of its task; nothing when nothing is owed; always within
 * the `subagents.roster` surface, the header kept and the rest counted.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { rosterText } from "../../extensions/subagents/delivery/roster.ts";
import type { ChildRecord } from "../../extensions/subagents/domain/records.ts";
import { childRecord } from "./subagents-fakes.ts";

const source = (children: ChildRecord[], owed: string[] = []) => ({
	list: () => children,
	owed: (id: string) => owed.includes(id),
});

describe("the roster after a compaction", () => {
	it("names running, queued and owed children with state, elapsed time and task; leaves out what was received", () => {
		const children = [
			childRecord({ id: "sa-1", name: "scan", agent: "scout", prompt: "Scan the\nparser module", startedAt: 1_000 }),
			childRecord({ id: "sa-2", name: "later", state: "queued", queuedAt: 4_000, prompt: "wait" }),
			childRecord({ id: "sa-3", name: "done", state: "completed", endedAt: 5_000, prompt: "x" }),
			childRecord({ id: "sa-4", name: "seen", state: "completed", endedAt: 5_000, prompt: "y" }),
		];
		const roster = rosterText(source(children, ["sa-3"]), 13_500);
		expect(roster?.ids).toEqual(["sa-1", "sa-2", "sa-3"]);
		expect(roster?.text.split("\n")).toEqual([
			expect.stringMatching(
				/^\[Subagents after the compaction — .*: 1 running, 1 queued, 1 result not yet received\. /,
			),
			'- sa-1 "scan" as scout: running for 12.5 s — task: Scan the parser module',
			'- sa-2 "later": queued for 9.5 s — task: wait',
			'- sa-3 "done": completed 8.5 s ago, result not yet received — task: x',
		]);
		expect(rosterText(source([children[3]]), 0)).toBeUndefined();
		expect(rosterText(source([]), 0)).toBeUndefined();
	});

	it("stays within its surface however many children and however long their tasks; the header always shows", () => {
		const { maxBytes, maxLines } = SURFACES["subagents.roster"];
		fc.assert(
			fc.property(fc.array(fc.string({ maxLength: 400 }), { minLength: 1, maxLength: 60 }), (prompts) => {
				const children = prompts.map((prompt, i) => childRecord({ id: `sa-${i + 1}`, name: `c${i + 1}`, prompt }));
				const text = rosterText(source(children), 5_000)!.text;
				expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(maxBytes);
				expect(text.split("\n").length).toBeLessThanOrEqual(maxLines);
				expect(text.startsWith("[Subagents after the compaction")).toBe(true);
				if (children.length > maxLines - 1) expect(text).toMatch(/… and \d+ more$/);
			}),
		);
	});
});

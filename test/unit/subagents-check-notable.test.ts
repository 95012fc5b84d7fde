/**
 * subagent_check's preview of a running child's output leads with its notable lines: a real Chromium test run whose
 * CHECK failure sits in its middle keeps it in the 2 KiB preview (numbered against the stored output); a settled
 * child's final report is prose and keeps its plain recent end.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { project } from "../../extensions/shared/projection/projection.ts";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { checkTool } from "../../extensions/subagents/tools.ts";
import { CHROME_CHECK, corpusLog, lineRefsIn, linesOf, shownCritical } from "../fixtures/notable-uses.ts";
import { spawnChild, until, useFakeWorlds } from "./subagents-fakes.ts";

const world = useFakeWorlds();
const CHROME = corpusLog(CHROME_CHECK.id);
const LAST_LINE = linesOf(CHROME.text.trimEnd()).at(-1) as string;

/** The preview part of subagent_check's text. */
function previewOf(text: string): string {
	const at = text.indexOf("recent output:\n");
	expect(at).toBeGreaterThanOrEqual(0);
	return text.slice(at + "recent output:\n".length);
}

describe("subagent_check's preview", () => {
	it("a running child's long output keeps a failure from its middle, numbered against the stored output", async () => {
		// Its recent end alone (the check surface's head share is 0) would not show the failure.
		expect(shownCritical(project(CHROME.text, "subagents.check").text, CHROME, CHROME_CHECK.middle)).toEqual([]);
		const w = world();
		const child = spawnChild(w, { prompt: "run the browser tests and report" });
		await until(() => w.backend.started(child.id));
		const record = w.manager.get(child.id);
		if (!record) throw new Error("child not found");
		record.partialText = CHROME.text;
		const reply = await checkTool(w.env, { id: child.id }, w.ctx);
		const preview = previewOf(reply.content[0].text);
		expect(shownCritical(preview, CHROME, CHROME_CHECK.middle)).toEqual([...CHROME_CHECK.middle]);
		expect(preview).toContain(LAST_LINE); // still its recent end
		expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(SURFACES["subagents.check"].maxBytes);
		expect(linesOf(preview).length).toBeLessThanOrEqual(SURFACES["subagents.check"].maxLines);
		const refs = lineRefsIn(preview);
		expect(refs.map((r) => r.line)).toEqual(expect.arrayContaining([...CHROME_CHECK.middle]));
		const path = /read\(path="([^"]+)"/.exec(preview)?.[1] as string;
		const stored = linesOf(readFileSync(path, "utf8"));
		for (const ref of refs) expect(stored[ref.line - 1]).toContain(ref.text);
	});

	it("a settled child's final report is prose: its plain recent end, as before", async () => {
		const w = world();
		const child = spawnChild(w, { prompt: "run the browser tests and report" });
		await until(() => w.backend.started(child.id));
		w.backend.finish(child.id, CHROME.text);
		await w.manager.waitFor([child.id], { mode: "all" });
		const reply = await checkTool(w.env, { id: child.id }, w.ctx);
		const preview = previewOf(reply.content[0].text);
		expect(shownCritical(preview, CHROME, CHROME_CHECK.middle)).toEqual([]);
		expect(lineRefsIn(preview)).toEqual([]);
		expect(preview).toContain(LAST_LINE);
	});
});

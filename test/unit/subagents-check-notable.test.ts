/**
 * subagent_check's preview of a running child's output leads with its notable lines: a real `go test -v` run whose
 * failures sit in the middle keeps them in the 2 KiB preview (numbered against the stored artifact); a settled
 * child's final report is prose and keeps its plain recent end.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { project } from "../../extensions/shared/projection/projection.ts";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { checkTool } from "../../extensions/subagents/tools.ts";
import { GO_TEST_VERBOSE, lineRefsIn, linesOf, realLog, shownLinesAmong } from "../fixtures/real-logs-in-use/index.ts";
import { spawnChild, until, useFakeWorlds } from "./subagents-fakes.ts";

const world = useFakeWorlds();
const LOG = realLog(GO_TEST_VERBOSE);
/** Lines 89–104: TestNestedParallelFailures and its subtests, TestParallelThe*, package parallelfails. */
const MIDDLE = { from: 89, to: 104 };

/** The preview part of subagent_check's text. */
function previewOf(text: string): string {
	const at = text.indexOf("recent output:\n");
	expect(at).toBeGreaterThanOrEqual(0);
	return text.slice(at + "recent output:\n".length);
}

describe("subagent_check's preview", () => {
	it("a running child's long output keeps a failure from its middle, numbered against the stored output", async () => {
		// Its recent end alone (the check surface's head share is 0) would not show the middle.
		expect(shownLinesAmong(project(LOG, "subagents.check").text, LOG, MIDDLE)).toEqual([]);
		const w = world();
		const child = spawnChild(w, { prompt: "run the go tests and report" });
		await until(() => w.backend.started(child.id));
		const record = w.manager.get(child.id);
		if (!record) throw new Error("child not found");
		record.partialText = LOG;
		const reply = await checkTool(w.env, { id: child.id }, w.ctx);
		const preview = previewOf(reply.content[0].text);
		expect(shownLinesAmong(preview, LOG, MIDDLE).length).toBeGreaterThan(0);
		expect(preview).toContain(linesOf(LOG)[linesOf(LOG).length - 1]); // still its recent end
		expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(SURFACES["subagents.check"].maxBytes);
		const refs = lineRefsIn(preview);
		expect(refs.length).toBeGreaterThan(0);
		const path = /read\(path="([^"]+)"/.exec(preview)?.[1] as string;
		const stored = linesOf(readFileSync(path, "utf8"));
		for (const ref of refs) expect(stored[ref.line - 1]).toContain(ref.text);
	});

	it("a settled child's final report is prose: its plain recent end, as before", async () => {
		const w = world();
		const child = spawnChild(w, { prompt: "run the go tests and report" });
		await until(() => w.backend.started(child.id));
		w.backend.finish(child.id, LOG);
		await w.manager.waitFor([child.id], { mode: "all" });
		const reply = await checkTool(w.env, { id: child.id }, w.ctx);
		const preview = previewOf(reply.content[0].text);
		expect(shownLinesAmong(preview, LOG, MIDDLE)).toEqual([]);
		expect(lineRefsIn(preview)).toEqual([]);
		expect(preview).toContain(linesOf(LOG)[linesOf(LOG).length - 1]);
	});
});

/**
 * subagent_check's preview of a running child's output leads with its notable lines: a real Chromium test run whose
 * CHECK failure sits in its middle keeps it in the 2 KiB preview (numbered against the stored output); a settled
 * child's final report is prose and keeps its plain recent end. A fork's view of the parent's history shortens a
 * log as the parent's own trimmed view does, the configured tool kinds included.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { trimMessages } from "../../extensions/context-trim/trim.ts";
import { DEFAULT_CONFIG, type HeadroomConfig } from "../../extensions/shared/host/config.ts";
import { project } from "../../extensions/shared/projection/projection.ts";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { messageBudget, TokenSizer, type TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";
import { storedShortening } from "../../extensions/shared/transcript/view.ts";
import { checkTool } from "../../extensions/subagents/tools/check.ts";
import { parentMessages, spawnTool } from "../../extensions/subagents/tools/spawn.ts";
import { CHROME_CHECK, corpusLog, lineRefsIn, linesOf, shownCritical } from "../fixtures/notable-uses.ts";
import { parentSession, spawnChild, tempRoot, until, useFakeWorlds } from "./subagents-fakes.ts";

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
		const reply = await checkTool(w.services, { id: child.id }, w.ctx);
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
		const reply = await checkTool(w.services, { id: child.id }, w.ctx);
		const preview = previewOf(reply.content[0].text);
		expect(shownCritical(preview, CHROME, CHROME_CHECK.middle)).toEqual([]);
		expect(lineRefsIn(preview)).toEqual([]);
		expect(preview).toContain(LAST_LINE);
	});
});

describe("a fork's view of the parent's history", () => {
	it("shortens a configured command tool's log with its notable lines, as the parent's own view does", async () => {
		const root = tempRoot("subagents-fork-notable-");
		const config = structuredClone(DEFAULT_CONFIG) as HeadroomConfig;
		config.toolArtifacts.toolClasses = { test_runner: "command" };
		const sm = parentSession(root, {
			task: "PARENT-TASK run the browser tests",
			tool: "test_runner",
			args: { suite: "browser" },
			output: CHROME.text,
			answer: "A CHECK failed.",
		});
		const model = { provider: "mock", id: "mock-model", contextWindow: 16_000, maxTokens: 2_000 };
		const w = world({ root, models: [model], sessionManager: sm, config });
		await spawnTool(w.services, { prompt: "CHILD-TASK find the failure", context: "fork" }, w.ctx);
		await until(() => w.backend.prompts.length === 1);
		const first = w.backend.prompts[0].text;
		expect(shownCritical(first, CHROME, CHROME_CHECK.middle)).toEqual([...CHROME_CHECK.middle]);
		// The parent's own trimmed view of the same history shows the very same text.
		const view = trimMessages(parentMessages(w.ctx) as TranscriptMessage[], {
			budgetTokens: messageBudget({
				contextWindow: model.contextWindow,
				maxTokens: model.maxTokens,
				reserveTokens: DEFAULT_CONFIG.contextTrim.reserveTokens,
				safetyMarginTokens: DEFAULT_CONFIG.contextTrim.safetyMarginTokens,
				overheadTokens: 0,
			}),
			cutStepTokens: 1,
			sizer: new TokenSizer(),
			shorten: storedShortening(w.services.store(), undefined, undefined, config.toolArtifacts.toolClasses),
		});
		const shown = view.messages
			.filter((m) => m.role === "toolResult")
			.map((m) => (m.content as Array<{ text: string }>).map((c) => c.text).join(""))
			.join("");
		expect(shownCritical(shown, CHROME, CHROME_CHECK.middle)).toEqual([...CHROME_CHECK.middle]);
		expect(first).toContain(shown);
	});
});

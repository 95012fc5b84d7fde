/**
 * context-trim shortens an oversized log with its notable lines first: a real Chromium test run whose CHECK failure
 * sits in the middle keeps it in the trimmed view (numbered against the stored artifact); a file read of the
 * same text and a real log with nothing notable are cut head + tail exactly as before.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { trimMessages } from "../../extensions/context-trim/trim.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { fingerprintReady } from "../../extensions/shared/text/fingerprint.ts";
import { scanNotable } from "../../extensions/shared/text/notable.ts";
import type { OutputClass } from "../../extensions/shared/text/tool-kind.ts";
import { TokenSizer, type TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";
import {
	ShortenedTexts,
	type ShortenOptions,
	shortenText,
	storedShortening,
} from "../../extensions/shared/transcript/view.ts";
import {
	CHROME_CHECK,
	corpusLog,
	lineRefsIn,
	linesOf,
	nothingNotable,
	shownCritical,
} from "../fixtures/notable-uses.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { HistoryBuilder } from "./transcript-history.ts";

beforeAll(async () => {
	await fingerprintReady();
});

const CHROME = corpusLog(CHROME_CHECK.id);

/** A session that ran one tool over `text`, then answered; trimmed to a budget the text cannot fit. */
function trimmedResult(
	tool: string,
	options: { shorten?: ShortenOptions; isError?: boolean; text?: string } = {},
): string {
	const text = options.text ?? CHROME.text;
	const b = new HistoryBuilder().user("TASK: find out why the browser tests fail");
	b.assistant("Running them.", [
		{ name: tool, arguments: { command: "cat test-run.log" }, result: text, isError: options.isError },
	]);
	b.assistant("A CHECK failed; looking closer.");
	const result = trimMessages(b.messages, {
		budgetTokens: 6000,
		cutStepTokens: 1,
		sizer: new TokenSizer(),
		shorten: options.shorten ?? {},
	});
	expect(result.trimmed).toBe(true);
	const shown = toolResultText(result.messages);
	expect(shown.length).toBeLessThan(text.length / 2); // shortened, not kept whole
	return shown;
}

/** The text of the (one) tool result a view shows. */
function toolResultText(messages: TranscriptMessage[]): string {
	const shown = messages.find((m) => m.role === "toolResult");
	if (!shown || !Array.isArray(shown.content)) throw new Error("no tool result in the view");
	return (shown.content as Array<{ text: string }>).map((c) => c.text).join("");
}

describe("context-trim's shortened oversized texts", () => {
	it("a bash result keeps the failures from the middle of a long real log; a file read of it does not", () => {
		expect(shownCritical(trimmedResult("bash"), CHROME, CHROME_CHECK.middle)).toEqual([...CHROME_CHECK.middle]);
		expect(shownCritical(trimmedResult("read"), CHROME, CHROME_CHECK.middle)).toEqual([]);
	});

	it("with the store, the notable lines' numbers open the same lines in the artifact the footer names", () => {
		const store = new ArtifactStore({ agentDir: makeTestDir("trim-notable") });
		const text = trimmedResult("bash", { shorten: storedShortening(store) });
		const refs = lineRefsIn(text);
		expect(refs.map((r) => r.line)).toEqual(expect.arrayContaining([...CHROME_CHECK.middle]));
		const path = /read\(path="([^"]+)"/.exec(text)?.[1] as string;
		expect(readFileSync(path, "utf8")).toBe(CHROME.text);
		const stored = linesOf(CHROME.text);
		for (const ref of refs) expect(stored[ref.line - 1]).toContain(ref.text);
	});

	it("without a store: the notable lines, no line numbers to read", () => {
		const text = trimmedResult("bash");
		expect(shownCritical(text, CHROME, CHROME_CHECK.middle).length).toBeGreaterThan(0);
		expect(lineRefsIn(text)).toEqual([]);
	});

	it("any tool's error is a log, and so is a tool the configuration calls a command", () => {
		expect(shownCritical(trimmedResult("read", { isError: true }), CHROME, CHROME_CHECK.middle).length).toBeGreaterThan(
			0,
		);
		expect(shownCritical(trimmedResult("test_runner"), CHROME, CHROME_CHECK.middle)).toEqual([]);
		const toolClasses: Record<string, OutputClass> = { test_runner: "command" };
		const configured = trimmedResult("test_runner", { shorten: { toolClasses } });
		expect(shownCritical(configured, CHROME, CHROME_CHECK.middle).length).toBeGreaterThan(0);
	});

	it("a real log with nothing notable is shortened exactly as before", () => {
		const passing = nothingNotable();
		expect(scanNotable(passing).lines).toEqual([]); // the case this log stands for
		for (const budget of [1500, 4000, 9000]) {
			expect(shortenText(passing, budget, {}, true)).toBe(shortenText(passing, budget, {}, false));
		}
		const bash = trimmedResult("bash", { text: passing });
		expect(bash).toBe(trimmedResult("read", { text: passing }));
	});

	it("the memo keeps a log's view apart from the same text's plain view", () => {
		const memo = new ShortenedTexts();
		const log = shortenText(CHROME.text, 4000, { memo }, true);
		const plain = shortenText(CHROME.text, 4000, { memo }, false);
		expect(log).not.toBe(plain);
		expect(shortenText(CHROME.text, 4000, { memo }, true)).toBe(log);
		expect(shortenText(CHROME.text, 4000, { memo }, false)).toBe(plain);
	});
});

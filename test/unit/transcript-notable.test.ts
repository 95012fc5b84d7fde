/**
 * context-trim shortens an oversized log with its notable lines first: a real `go test -json` run whose failures
 * sit in the middle keeps them in the trimmed view (numbered against the stored artifact), a file read of the
 * same text and a log with nothing notable are cut head + tail exactly as before.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { trimMessages } from "../../extensions/context-trim/trim.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { fingerprintReady } from "../../extensions/shared/text/fingerprint.ts";
import { scanNotable } from "../../extensions/shared/text/notable.ts";
import { TokenSizer, type TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";
import { ShortenedTexts, shortenText, storedShortening } from "../../extensions/shared/transcript/view.ts";
import {
	GO_TEST_JSON,
	GO_TEST_VERBOSE,
	lineRefsIn,
	linesOf,
	realLog,
	shownLinesAmong,
} from "../fixtures/real-logs-in-use/index.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { HistoryBuilder } from "./transcript-history.ts";

beforeAll(async () => {
	await fingerprintReady();
});

const JSON_LOG = realLog(GO_TEST_JSON);
const MIDDLE = { from: 161, to: 188 };

/** A session that ran one tool over the real log, then answered; trimmed to a budget the log cannot fit. */
function trimmedResult(tool: string, options: { store?: ArtifactStore; isError?: boolean } = {}): string {
	const b = new HistoryBuilder().user("TASK: find out why the go tests fail");
	b.assistant("Running them.", [
		{ name: tool, arguments: { command: "go test -json ./..." }, result: JSON_LOG, isError: options.isError },
	]);
	b.assistant("Some tests failed; looking closer.");
	const result = trimMessages(b.messages, {
		budgetTokens: 6000,
		cutStepTokens: 1,
		sizer: new TokenSizer(),
		shorten: options.store ? storedShortening(options.store) : {},
	});
	expect(result.trimmed).toBe(true);
	const text = toolResultText(result.messages);
	expect(text.length).toBeLessThan(JSON_LOG.length / 2); // shortened, not kept whole
	return text;
}

describe("context-trim's shortened oversized texts", () => {
	it("a bash result keeps a failure from the middle of a long real log", () => {
		const text = trimmedResult("bash");
		expect(shownLinesAmong(text, JSON_LOG, MIDDLE).length).toBeGreaterThan(0);
	});

	it("with the store, the notable lines' numbers open the same lines in the artifact the footer names", () => {
		const store = new ArtifactStore({ agentDir: makeTestDir("trim-notable") });
		const text = trimmedResult("bash", { store });
		const refs = lineRefsIn(text);
		expect(refs.length).toBeGreaterThan(0);
		const path = /read\(path="([^"]+)"/.exec(text)?.[1] as string;
		expect(readFileSync(path, "utf8")).toBe(JSON_LOG);
		const stored = linesOf(JSON_LOG);
		for (const ref of refs) expect(stored[ref.line - 1]).toContain(ref.text);
	});

	it("without a store: notable lines, no line numbers to read", () => {
		const text = trimmedResult("bash");
		expect(shownLinesAmong(text, JSON_LOG, MIDDLE).length).toBeGreaterThan(0);
		expect(lineRefsIn(text)).toEqual([]);
	});

	it("a file read of the same text is not a log: head and tail only; a tool's error is one", () => {
		expect(shownLinesAmong(trimmedResult("read"), JSON_LOG, MIDDLE)).toEqual([]);
		expect(shownLinesAmong(trimmedResult("read", { isError: true }), JSON_LOG, MIDDLE).length).toBeGreaterThan(0);
	});

	it("a configured tool kind makes a tool's output a log (toolArtifacts.toolClasses)", () => {
		const b = new HistoryBuilder().user("TASK");
		b.assistant("Running.", [{ name: "go_runner", arguments: {}, result: JSON_LOG }]);
		b.assistant("Done.");
		const result = trimMessages(b.messages, {
			budgetTokens: 6000,
			cutStepTokens: 1,
			sizer: new TokenSizer(),
			shorten: { toolClasses: { go_runner: "command" } },
		});
		const out = toolResultText(result.messages);
		expect(shownLinesAmong(out, JSON_LOG, MIDDLE).length).toBeGreaterThan(0);
	});

	it("a log with nothing notable is shortened exactly as before", () => {
		const passing = passingLog();
		for (const budget of [1500, 4000, 9000]) {
			expect(shortenText(passing, budget, {}, true)).toBe(shortenText(passing, budget, {}, false));
		}
	});

	it("the memo keeps a log's view apart from the same text's plain view", () => {
		const memo = new ShortenedTexts();
		const log = shortenText(JSON_LOG, 4000, { memo }, true);
		const plain = shortenText(JSON_LOG, 4000, { memo }, false);
		expect(log).not.toBe(plain);
		expect(shortenText(JSON_LOG, 4000, { memo }, true)).toBe(log);
	});
});

/** The text of the (one) tool result a view shows. */
function toolResultText(messages: TranscriptMessage[]): string {
	const shown = messages.find((m) => m.role === "toolResult");
	if (!shown || !Array.isArray(shown.content)) throw new Error("no tool result in the view");
	return (shown.content as Array<{ text: string }>).map((c) => c.text).join("");
}

/** A long run in which everything passed: the -v run's passing package, repeated as a CI loop would print it. */
function passingLog(): string {
	const good = linesOf(realLog(GO_TEST_VERBOSE)).slice(5, 55).join("\n"); // package `good` (lines 6–55)
	expect(good).not.toMatch(/FAIL/);
	const log = Array.from({ length: 40 }, () => good).join("\n");
	expect(scanNotable(log).lines).toEqual([]); // nothing notable: the case this log stands for
	return log;
}

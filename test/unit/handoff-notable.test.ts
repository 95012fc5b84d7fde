/**
 * The handoff shortens a log with its notable lines first: a real Chromium test run and a real `go test -json` run,
 * whose failures sit far from the head and the tail, keep them in the summary model's input (the serialized transcript)
 * and in the current state, with line numbers only where a stored artifact holds the text; any other output, and
 * a log with nothing notable, is cut head + tail exactly as before.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { summaryCall } from "../../extensions/handoff/handoff.ts";
import { TRANSCRIPT_LABELS } from "../../extensions/handoff/prompt.ts";
import {
	currentState,
	type HistoryMessage,
	messageBlock,
	serializeHistory,
} from "../../extensions/handoff/serialize.ts";
import { project } from "../../extensions/shared/projection/projection.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { scanNotable } from "../../extensions/shared/text/notable.ts";
import { utf8Length } from "../../extensions/shared/text/tokens.ts";
import {
	CHROME_CHECK,
	corpusLog,
	GO_TEST_JSON,
	lineRefsIn,
	linesOf,
	nothingNotable,
	shownCritical,
} from "../fixtures/notable-uses.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const GO = corpusLog(GO_TEST_JSON.id);
const CHROME = corpusLog(CHROME_CHECK.id);

function toolResult(text: string, toolName = "bash", isError = false): HistoryMessage {
	return { role: "toolResult", toolName, isError, content: [{ type: "text", text }] };
}

function storeSink() {
	return new ArtifactStore({ agentDir: makeTestDir("handoff-notable") }).sink("transcripts");
}

/** A block without its label: what the surface bounds. */
function bodyOf(block: string, label: string): string {
	expect(block.startsWith(`${label}: `)).toBe(true);
	return block.slice(label.length + 2);
}

describe("the handoff's serialization of a tool result", () => {
	it("a bash result keeps the failures from the middle of a long real log; head + tail alone would not", () => {
		// Without the scan the middle failures are gone (the test would prove nothing otherwise).
		expect(shownCritical(project(CHROME.text, "handoff.toolResult").text, CHROME, CHROME_CHECK.middle)).toEqual([]);
		expect(shownCritical(project(GO.text, "handoff.toolResult").text, GO, GO_TEST_JSON.middle)).toEqual([]);
		const block = messageBlock(toolResult(CHROME.text), {}, storeSink());
		expect(shownCritical(block, CHROME, CHROME_CHECK.middle)).toEqual([...CHROME_CHECK.middle]);
		// The go run's first middle failure (its earliest, ranked first among equals) makes it into 8 KiB too.
		expect(shownCritical(messageBlock(toolResult(GO.text)), GO, GO_TEST_JSON.middle)).toContain(161);
		// Still within the surface.
		const body = bodyOf(block, TRANSCRIPT_LABELS.toolResult("bash", false));
		expect(utf8Length(body)).toBeLessThanOrEqual(SURFACES["handoff.toolResult"].maxBytes);
		expect(linesOf(body).length).toBeLessThanOrEqual(SURFACES["handoff.toolResult"].maxLines);
	});

	it("its line numbers open the same lines in the stored artifact the footer names", () => {
		const block = messageBlock(toolResult(CHROME.text), {}, storeSink());
		const refs = lineRefsIn(block);
		expect(refs.map((r) => r.line)).toEqual(expect.arrayContaining([...CHROME_CHECK.middle]));
		const path = /read\(path="([^"]+)"/.exec(block)?.[1] as string;
		const stored = readFileSync(path, "utf8");
		expect(stored).toBe(CHROME.text);
		for (const ref of refs) expect(linesOf(stored)[ref.line - 1]).toContain(ref.text);
	});

	it("without a store it shows the notable lines but no line numbers to read", () => {
		const block = messageBlock(toolResult(GO.text));
		expect(shownCritical(block, GO, GO_TEST_JSON.middle).length).toBeGreaterThan(0);
		expect(lineRefsIn(block)).toEqual([]);
		expect(block).toMatch(/NOT saved/);
	});

	it("a user's shell command and any tool's error are logs too", () => {
		const shell = messageBlock({ role: "bashExecution", command: "go test -json ./...", exitCode: 1, output: GO.text });
		expect(shownCritical(shell, GO, GO_TEST_JSON.middle).length).toBeGreaterThan(0);
		const error = messageBlock(toolResult(GO.text, "mcp_remote", true));
		expect(shownCritical(error, GO, GO_TEST_JSON.middle).length).toBeGreaterThan(0);
	});

	it("a file read or a search is not a log: head + tail exactly as before", () => {
		for (const tool of ["read", "grep"]) {
			const block = messageBlock(toolResult(GO.text, tool));
			expect(block).toBe(
				`${TRANSCRIPT_LABELS.toolResult(tool, false)}: ${project(GO.text, "handoff.toolResult").text}`,
			);
		}
	});

	it("a real log with nothing notable is shortened exactly as before", () => {
		const passing = nothingNotable();
		expect(scanNotable(passing).lines).toEqual([]); // the case this log stands for
		const sink = storeSink();
		const block = messageBlock(toolResult(passing), {}, sink);
		const label = TRANSCRIPT_LABELS.toolResult("bash", false);
		expect(block).toBe(`${label}: ${project(passing, "handoff.toolResult", { sink }).text}`);
	});

	it("the summary model's request carries the failing lines", () => {
		const messages: HistoryMessage[] = [
			{ role: "user", content: "run the tests" },
			{
				role: "assistant",
				content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "cat test-run.log" } }],
			},
			toolResult(CHROME.text, "bash", true),
			{ role: "assistant", content: [{ type: "text", text: "Some tests failed." }] },
		];
		const history = serializeHistory(messages, { pieceLimits: {}, maxBytes: 200_000, sink: storeSink() });
		const call = summaryCall({
			task: "run the tests",
			laterUserMessages: [],
			omittedUserMessages: 0,
			conversation: history.text,
			currentState: "",
			sessionFile: undefined,
			trajectoryDir: "",
		});
		const input = call.messages.map((m) => m.text).join("\n");
		expect(shownCritical(input, CHROME, CHROME_CHECK.middle)).toEqual([...CHROME_CHECK.middle]);
	});
});

describe("the handoff's current state", () => {
	it("the latest bash result keeps the failure from its middle, within the state's surface", () => {
		expect(shownCritical(project(CHROME.text, "handoff.currentState").text, CHROME, CHROME_CHECK.middle)).toEqual([]);
		const messages: HistoryMessage[] = [
			toolResult(CHROME.text),
			{ role: "assistant", content: [{ type: "text", text: "The browser test hit a CHECK failure." }] },
		];
		const state = currentState(messages, {}, storeSink());
		expect(shownCritical(state, CHROME, CHROME_CHECK.middle)).toEqual([...CHROME_CHECK.middle]);
		expect(state).toContain("The browser test hit a CHECK failure.");
		const result = bodyOf(state.split("\n\n[Assistant]")[0], TRANSCRIPT_LABELS.toolResult("bash", false));
		expect(utf8Length(result)).toBeLessThanOrEqual(SURFACES["handoff.currentState"].maxBytes);
		expect(linesOf(result).length).toBeLessThanOrEqual(SURFACES["handoff.currentState"].maxLines);
	});

	it("the last assistant message is prose: its end only, as before", () => {
		const messages: HistoryMessage[] = [{ role: "assistant", content: [{ type: "text", text: CHROME.text }] }];
		expect(currentState(messages)).toBe(
			`${TRANSCRIPT_LABELS.assistant}: ${project(CHROME.text, "handoff.currentState").text}`,
		);
	});
});

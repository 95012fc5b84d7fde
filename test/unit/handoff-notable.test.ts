/**
 * The handoff shortens a log with its notable lines first: a real `go test` run whose failures sit in the middle
 * of a long output keeps them in the summary model's input (the serialized transcript) and in the current
 * state, with line numbers only where a stored artifact holds the text; any other output, and a log with nothing
 * notable, is cut head + tail exactly as before.
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
	GO_TEST_JSON,
	GO_TEST_VERBOSE,
	lineRefsIn,
	linesOf,
	realLog,
	shownLinesAmong,
} from "../fixtures/real-logs-in-use/index.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const JSON_LOG = realLog(GO_TEST_JSON);
const VERBOSE_LOG = realLog(GO_TEST_VERBOSE);
/** Lines 161–188 of the -json run: TestNestedParallelFailures, TestParallelThe*, package parallelfails. */
const JSON_MIDDLE_FAILURES = { from: 161, to: 188 };
/** Lines 89–104 of the -v run: the same failures. */
const VERBOSE_MIDDLE_FAILURES = { from: 89, to: 104 };

function bashResult(text: string, toolName = "bash", isError = false): HistoryMessage {
	return { role: "toolResult", toolName, isError, content: [{ type: "text", text }] };
}

function storeSink() {
	const store = new ArtifactStore({ agentDir: makeTestDir("handoff-notable") });
	return store.sink("transcripts");
}

describe("the handoff's serialization of a tool result", () => {
	it("a bash result keeps a failure from the middle of a long real log; head + tail alone would not", () => {
		const block = messageBlock(bashResult(JSON_LOG), {}, storeSink());
		const plain = project(JSON_LOG, "handoff.toolResult").text;
		// Without the scan the middle failures are gone (the test would prove nothing otherwise).
		expect(shownLinesAmong(plain, JSON_LOG, JSON_MIDDLE_FAILURES)).toEqual([]);
		const shown = shownLinesAmong(block, JSON_LOG, JSON_MIDDLE_FAILURES);
		expect(shown.length).toBeGreaterThan(0);
		// …and what it shows of the middle is the failures: a failing test's output or its fail event.
		expect(shown.some((n) => /--- FAIL: |"Action":"fail"/.test(linesOf(JSON_LOG)[n - 1]))).toBe(true);
		// Still within the surface (label aside).
		const body = block.slice(`${TRANSCRIPT_LABELS.toolResult("bash", false)}: `.length);
		expect(utf8Length(body)).toBeLessThanOrEqual(SURFACES["handoff.toolResult"].maxBytes);
		expect(body.split("\n").length).toBeLessThanOrEqual(SURFACES["handoff.toolResult"].maxLines);
	});

	it("its line numbers open the same lines in the stored artifact the footer names", () => {
		const block = messageBlock(bashResult(JSON_LOG), {}, storeSink());
		const refs = lineRefsIn(block);
		expect(refs.length).toBeGreaterThan(0);
		const path = /read\(path="([^"]+)"/.exec(block)?.[1] as string;
		const stored = linesOf(readFileSync(path, "utf8"));
		for (const ref of refs) expect(stored[ref.line - 1]).toContain(ref.text);
	});

	it("without a store it shows the notable lines but no line numbers to read", () => {
		const block = messageBlock(bashResult(JSON_LOG));
		expect(shownLinesAmong(block, JSON_LOG, JSON_MIDDLE_FAILURES).length).toBeGreaterThan(0);
		expect(lineRefsIn(block)).toEqual([]);
		expect(block).toMatch(/NOT saved/);
	});

	it("a user's shell command and any tool's error are logs too", () => {
		const shell = messageBlock({
			role: "bashExecution",
			command: "go test -json ./...",
			exitCode: 1,
			output: JSON_LOG,
		});
		expect(shownLinesAmong(shell, JSON_LOG, JSON_MIDDLE_FAILURES).length).toBeGreaterThan(0);
		const error = messageBlock(bashResult(JSON_LOG, "mcp_remote", true));
		expect(shownLinesAmong(error, JSON_LOG, JSON_MIDDLE_FAILURES).length).toBeGreaterThan(0);
	});

	it("a file read or a search is not a log: head + tail exactly as before", () => {
		for (const tool of ["read", "grep"]) {
			const block = messageBlock(bashResult(JSON_LOG, tool));
			const label = TRANSCRIPT_LABELS.toolResult(tool, false);
			expect(block).toBe(`${label}: ${project(JSON_LOG, "handoff.toolResult").text}`);
		}
	});

	it("a log with nothing notable is shortened exactly as before", () => {
		const passing = passingLog();
		const block = messageBlock(bashResult(passing));
		expect(block).toBe(
			`${TRANSCRIPT_LABELS.toolResult("bash", false)}: ${project(passing, "handoff.toolResult").text}`,
		);
	});

	it("the summary model's request carries the failing lines", () => {
		const messages: HistoryMessage[] = [
			{ role: "user", content: "run the tests" },
			{ role: "assistant", content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "go test" } }] },
			bashResult(JSON_LOG, "bash", true),
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
		expect(shownLinesAmong(input, JSON_LOG, JSON_MIDDLE_FAILURES).length).toBeGreaterThan(0);
	});
});

describe("the handoff's current state", () => {
	it("the latest bash result keeps a failure from its middle within the state's surface", () => {
		const messages: HistoryMessage[] = [
			bashResult(VERBOSE_LOG),
			{ role: "assistant", content: [{ type: "text", text: "The parallel tests failed." }] },
		];
		const plain = project(VERBOSE_LOG, "handoff.currentState").text;
		expect(shownLinesAmong(plain, VERBOSE_LOG, VERBOSE_MIDDLE_FAILURES)).toEqual([]);
		const state = currentState(messages, {}, storeSink());
		expect(state).toContain("--- FAIL: TestNestedParallelFailures (0.00s)");
		expect(state).toContain("The parallel tests failed.");
		const result = state.split("\n\n[Assistant]")[0].slice(`${TRANSCRIPT_LABELS.toolResult("bash", false)}: `.length);
		expect(utf8Length(result)).toBeLessThanOrEqual(SURFACES["handoff.currentState"].maxBytes);
		expect(result.split("\n").length).toBeLessThanOrEqual(SURFACES["handoff.currentState"].maxLines);
	});

	it("the last assistant message is prose: its end only, as before", () => {
		const messages: HistoryMessage[] = [{ role: "assistant", content: [{ type: "text", text: VERBOSE_LOG }] }];
		expect(currentState(messages)).toBe(
			`${TRANSCRIPT_LABELS.assistant}: ${project(VERBOSE_LOG, "handoff.currentState").text}`,
		);
	});
});

/** A long run in which everything passed: the -v run's passing package, repeated as a CI loop would print it. */
function passingLog(): string {
	const lines = linesOf(VERBOSE_LOG);
	const good = lines.slice(5, 55).join("\n"); // package `good` (lines 6–55): RUN, PASS, SKIP, its ok line
	expect(good).not.toMatch(/FAIL/);
	const log = Array.from({ length: 40 }, () => good).join("\n");
	expect(scanNotable(log).lines).toEqual([]); // nothing notable: the case this log stands for
	return log;
}

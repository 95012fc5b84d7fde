import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TRANSCRIPT_LABELS } from "../../extensions/handoff/prompt.ts";
import {
	type BranchEntry,
	boundTask,
	branchContext,
	currentState,
	fitUserMessages,
	type HistoryMessage,
	messageBlock,
	serializeHistory,
	TOOL_RESULT_HEAD_SHARE,
	userTexts,
} from "../../extensions/handoff/serialize.ts";
import { projectLog } from "../../extensions/shared/projection/log.ts";
import { MIN_WINDOW_BYTES, project } from "../../extensions/shared/projection/projection.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { utf8Length } from "../../extensions/shared/text/tokens.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const PIECE = { maxBytes: 2048, maxLines: 60 };

function longOutput(lines: number, last: string): string {
	return `${Array.from({ length: lines }, (_, i) => `line ${i + 1}`).join("\n")}\n${last}`;
}

const history: HistoryMessage[] = [
	{ role: "user", content: "TASK: build it" },
	{
		role: "assistant",
		content: [
			{ type: "thinking", thinking: "think first" },
			{ type: "text", text: "Running make." },
			{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "make" } },
		],
		model: "m",
		usage: { input: 5, output: 2, cacheRead: 0, cost: { total: 0 } },
	},
	{
		role: "toolResult",
		toolName: "bash",
		isError: true,
		content: [{ type: "text", text: longOutput(3000, "Error: STACK-TRACE-AT-END") }],
	},
];

describe("messageBlock / serializeHistory", () => {
	it("keeps the head and the tail of a long tool result (the error at the end survives)", () => {
		const block = messageBlock(history[2], PIECE);
		expect(block.startsWith(TRANSCRIPT_LABELS.toolResult("bash", true))).toBe(true);
		expect(block).toContain("line 1\n");
		expect(block).toContain("STACK-TRACE-AT-END");
		expect(block).not.toContain("line 1500\n");
		expect(utf8Length(block)).toBeLessThan(PIECE.maxBytes + 100);
	});

	it("labels every role and shows thinking, text and tool calls", () => {
		const out = serializeHistory(history, { pieceLimits: PIECE, maxBytes: 1_000_000 });
		expect(out.omittedBytes).toBe(0);
		expect(out.blocks).toHaveLength(history.length);
		expect(out.text).toContain(`${TRANSCRIPT_LABELS.user}: TASK: build it`);
		expect(out.text).toContain(`${TRANSCRIPT_LABELS.thinking}: think first`);
		expect(out.text).toContain(`${TRANSCRIPT_LABELS.toolCalls}: bash({"command":"make"})`);
	});

	it("shortens the whole transcript head+tail to fit, never silently", () => {
		const many: HistoryMessage[] = Array.from({ length: 200 }, (_, i) => ({
			role: i % 2 ? "assistant" : "user",
			content: `message ${i} ${"x".repeat(200)}`,
		}));
		const out = serializeHistory(many, { pieceLimits: PIECE, maxBytes: 8000 });
		expect(utf8Length(out.text)).toBeLessThanOrEqual(8000);
		expect(out.omittedBytes).toBeGreaterThan(0);
		expect(out.text).toContain("message 0 ");
		expect(out.text).toContain("message 199 ");
		expect(out.text).toMatch(/omitted/);
	});

	it("property: output fits maxBytes and keeps the first and last message when shortened", () => {
		fc.assert(
			fc.property(
				fc.array(fc.string({ minLength: 1, maxLength: 300 }), { minLength: 2, maxLength: 60 }),
				fc.integer({ min: 2048, max: 20_000 }),
				(texts, maxBytes) => {
					const msgs = texts.map((t, i) => ({ role: "user", content: `<${i}>${t}` }));
					const out = serializeHistory(msgs, { pieceLimits: PIECE, maxBytes });
					expect(utf8Length(out.text)).toBeLessThanOrEqual(Math.max(maxBytes, utf8Length(out.blocks.join("\n\n"))));
					if (out.omittedBytes === 0) expect(out.text).toBe(out.blocks.join("\n\n"));
					else expect(utf8Length(out.text)).toBeLessThanOrEqual(maxBytes);
					expect(out.text.startsWith(`${TRANSCRIPT_LABELS.user}: <0>`)).toBe(true);
				},
			),
		);
	});

	it("skips messages the model never saw and handles unknown shapes safely", () => {
		expect(messageBlock({ role: "bashExecution", command: "ls", output: "x", excludeFromContext: true }, PIECE)).toBe(
			"",
		);
		expect(messageBlock({ role: "weird" }, PIECE)).toBe("");
		expect(messageBlock({ role: "user", content: [{ type: "image" }] }, PIECE)).toContain("[image]");
		expect(messageBlock({ role: "assistant", content: [] }, PIECE)).toContain("(no text)");
	});
});

describe("currentState", () => {
	it("shows the end of the latest tool outputs and of the last assistant message", () => {
		const msgs: HistoryMessage[] = [
			...history,
			{ role: "assistant", content: [{ type: "text", text: longOutput(500, "LAST-ASSISTANT-END") }] },
		];
		const state = currentState(msgs, { maxBytes: 1024, maxLines: 30 });
		expect(state).toContain("STACK-TRACE-AT-END");
		expect(state).toContain("LAST-ASSISTANT-END");
		expect(state).toContain(TRANSCRIPT_LABELS.assistant);
	});

	it("says so when there is nothing", () => {
		expect(currentState([], { maxBytes: 1024, maxLines: 30 })).toBe("(no text)");
	});
});

describe("user messages", () => {
	it("keeps the newest later messages that fit, oldest first", () => {
		fc.assert(
			fc.property(fc.array(fc.string({ maxLength: 50 })), fc.nat(400), (later, budget) => {
				const { kept, omitted } = fitUserMessages(later, budget);
				expect(kept.length + omitted).toBe(later.length);
				expect(kept).toEqual(later.slice(omitted));
				expect(kept.reduce((n, t) => n + utf8Length(t), 0)).toBeLessThanOrEqual(budget);
			}),
		);
	});

	it("an over-budget message keeps its head and tail through the projection instead of being dropped", () => {
		fc.assert(
			fc.property(
				fc.array(fc.string({ maxLength: 300 }), { maxLength: 6 }),
				fc.integer({ min: 10_000, max: 200_000 }), // always over the budget
				fc.integer({ min: MIN_WINDOW_BYTES + 10, max: 8_000 }), // room for the newest and a window
				(older, hugeBytes, budget) => {
					const huge = `HUGE-HEAD\n${"x".repeat(hugeBytes)}\nHUGE-TAIL`;
					const later = [...older, huge, "the newest"];
					const { kept, omitted } = fitUserMessages(later, budget);
					expect(kept.reduce((n, t) => n + utf8Length(t), 0)).toBeLessThanOrEqual(budget);
					expect(kept.at(-1)).toBe("the newest");
					// The huge one is there, cut head + tail with the marker, and everything older is counted.
					const cut = kept.at(-2) ?? "";
					expect(cut.startsWith("HUGE-HEAD")).toBe(true);
					expect(cut).toContain("HUGE-TAIL");
					expect(cut).toMatch(/omitted/);
					expect(omitted).toBe(older.length);
					expect(kept.length + omitted).toBe(later.length);
				},
			),
			{ numRuns: 40 },
		);
	});

	it("finds user texts in branch entries", () => {
		const entries: BranchEntry[] = [
			{ type: "message", id: "1", message: { role: "user", content: "first" } },
			{ type: "custom", id: "2" },
			{ type: "message", id: "3", message: { role: "user", content: [{ type: "text", text: "second" }] } },
		];
		expect(userTexts(entries)).toEqual(["first", "second"]);
	});
});

describe("branchContext", () => {
	it("follows the latest compaction: its summary, the kept entries, then what came after", () => {
		const entries: BranchEntry[] = [
			{ type: "message", id: "a", message: { role: "user", content: "old" } },
			{ type: "message", id: "b", message: { role: "assistant", content: "kept" } },
			{ type: "compaction", id: "c", summary: "SUM", firstKeptEntryId: "b" },
			{ type: "custom_message", id: "d", customType: "x", content: "note" },
			{ type: "message", id: "e", message: { role: "user", content: "new" } },
		];
		const ctx = branchContext(entries);
		expect(ctx.previousSummary).toBe("SUM");
		expect(ctx.entryIds).toEqual(["b", "d", "e"]);
		expect(ctx.messages.map((m) => m.role)).toEqual(["assistant", "custom", "user"]);
	});

	it("without a compaction returns every message", () => {
		const entries: BranchEntry[] = [
			{ type: "message", id: "a", message: { role: "user", content: "x" } },
			{ type: "model_change", id: "m" },
		];
		expect(branchContext(entries).entryIds).toEqual(["a"]);
	});
});

describe("head share from the configuration", () => {
	it("generic pieces and the whole-transcript cut use projection.headShare; tool outputs keep their tail-heavy share", () => {
		fc.assert(
			fc.property(fc.double({ min: 0.05, max: 0.95, noNaN: true }), (headShare) => {
				const assistant = longOutput(2000, "ASSISTANT-END");
				const bash = longOutput(2000, "BASH-END");
				const msgs: HistoryMessage[] = [
					{ role: "assistant", content: [{ type: "text", text: assistant }] },
					history[2],
					{ role: "bashExecution", command: "make", output: bash },
				];
				const pieceLimits = { ...PIECE, headShare };
				const out = serializeHistory(msgs, { pieceLimits, maxBytes: 1100 });
				expect(out.omittedBytes).toBeGreaterThan(0);
				// Each block holds exactly the projection cut at the share its kind must use.
				// (A tool or shell output is a log: projectLog, which is project() with the notable lines first.)
				const cut = (text: string, share: number, surface: "handoff.piece" | "handoff.toolResult") =>
					(surface === "handoff.toolResult" ? projectLog : project)(text, surface, { ...PIECE, headShare: share }).text;
				expect(out.blocks[0]).toContain(cut(assistant, headShare, "handoff.piece"));
				const toolText = (history[2].content as Array<{ text: string }>)[0].text;
				expect(out.blocks[1]).toContain(cut(toolText, TOOL_RESULT_HEAD_SHARE, "handoff.toolResult"));
				expect(out.blocks[2]).toContain(cut(bash, TOOL_RESULT_HEAD_SHARE, "handoff.toolResult"));
				if (Math.abs(headShare - TOOL_RESULT_HEAD_SHARE) > 0.05) {
					expect(out.blocks[1]).not.toContain(cut(toolText, headShare, "handoff.toolResult"));
				}
				// The whole-transcript cut uses the configured share too.
				const joined = out.blocks.filter((b) => b.length > 0).join("\n\n");
				expect(out.text).toBe(project(joined, "handoff.transcript", { maxBytes: 1100, headShare }).text);
			}),
			{ numRuns: 20 },
		);
	});
});

describe("boundTask", () => {
	const taskOf = (bytes: number) => `HEAD-OF-TASK\n${"do this and that\n".repeat(Math.ceil(bytes / 17))}TAIL-OF-TASK`;

	it("property: verbatim when it fits; otherwise head+tail within the budget, never a silent cut", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 0, max: 60_000 }),
				fc.integer({ min: MIN_WINDOW_BYTES, max: 20_000 }),
				(size, budget) => {
					const task = taskOf(size);
					const out = boundTask(task, budget, 0.75);
					if (utf8Length(task) <= budget) {
						expect(out).toEqual({ text: task, omittedBytes: 0 });
					} else {
						expect(utf8Length(out.text)).toBeLessThanOrEqual(budget);
						expect(out.omittedBytes).toBeGreaterThan(0);
						expect(out.text.startsWith("HEAD-OF-TASK")).toBe(true);
						expect(out.text).toContain("TAIL-OF-TASK");
						expect(out.text).toMatch(/omitted/);
					}
				},
			),
			{ numRuns: 50 },
		);
	});

	it("a multi-MB first message becomes a bounded view whose footer names an artifact holding it exactly", () => {
		const agentDir = makeTestDir("task-bound");
		const store = new ArtifactStore({ agentDir });
		const task = taskOf(3 * 1024 * 1024);
		const out = boundTask(task, 16_384, 0.75, store.sink("transcripts"));
		expect(utf8Length(out.text)).toBeLessThanOrEqual(16_384);
		expect(out.omittedBytes).toBeGreaterThan(3_000_000);
		const path = out.artifactPath as string;
		expect(path.startsWith(join(agentDir, "cache", "headroom", "transcripts"))).toBe(true);
		expect(out.text).toContain(path);
		expect(readFileSync(path, "utf8")).toBe(task);
	});
});

import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { fingerprintReady } from "../../extensions/shared/text/fingerprint.ts";
import { indexOmitted } from "../../extensions/shared/transcript/omission.ts";
import {
	estimateMessageTokens,
	headSegments,
	messageTokensUpperBound,
	planRetention,
	segmentMessages,
	surelyWithinBudget,
	TokenSizer,
	type TranscriptMessage,
	toolCallsOf,
	usageBasedTokens,
} from "../../extensions/shared/transcript/plan.ts";
import { buildView, viewItems } from "../../extensions/shared/transcript/view.ts";
import { buildHistory, filler, HistoryBuilder, historyArb } from "./transcript-history.ts";

// The sizer keys its cache by the xxHash fingerprint: start it so the cached path is the one tested.
beforeAll(async () => {
	await fingerprintReady();
});

const total = (messages: TranscriptMessage[]) => messages.reduce((sum, m) => sum + estimateMessageTokens(m), 0);

describe("segmentMessages", () => {
	it("keeps an assistant message with all its tool results, and a user message alone", () => {
		const b = new HistoryBuilder()
			.user("task")
			.assistant("plan", [
				{ name: "bash", arguments: { command: "ls" }, result: "a\nb" },
				{ name: "read", arguments: { path: "a" }, result: "x" },
			])
			.assistant("done");
		const segments = segmentMessages(b.messages);
		expect(segments.map((s) => [s.kind, s.start, s.end])).toEqual([
			["user", 0, 1],
			["turn", 1, 4],
			["turn", 4, 5],
		]);
		expect(segments.reduce((n, s) => n + s.tokens, 0)).toBe(total(b.messages));
	});

	it("extends a turn over a message interleaved before its last result", () => {
		const b = new HistoryBuilder().user("task").assistant("", [
			{ name: "bash", arguments: { command: "a" }, result: "1" },
			{ name: "bash", arguments: { command: "b" }, result: "2" },
		]);
		// move the second result behind a steering note, as a queued message could land
		const [u, a, r1, r2] = b.messages;
		const steer: TranscriptMessage = { role: "custom", customType: "steer", content: "hurry", timestamp: 5 };
		const messages = [u, a, r1, steer, r2];
		expect(segmentMessages(messages).map((s) => [s.kind, s.start, s.end])).toEqual([
			["user", 0, 1],
			["turn", 1, 5],
		]);
	});

	it("lets an orphaned tool result stand alone and counts a compaction summary as its own kind", () => {
		const orphan: TranscriptMessage = {
			role: "toolResult",
			toolCallId: "gone",
			toolName: "bash",
			content: [{ type: "text", text: "x" }],
			isError: false,
			timestamp: 1,
		};
		const b = new HistoryBuilder().compactionSummary("earlier work");
		const segments = segmentMessages([...b.messages, orphan, ...new HistoryBuilder().user("go").messages]);
		expect(segments.map((s) => s.kind)).toEqual(["summary", "other", "user"]);
		expect(headSegments(segments)).toEqual([0, 2]);
	});
});

describe("TokenSizer", () => {
	it("returns the uncached estimate, also for a deep copy of the same message", () => {
		const messages = buildHistory([{ kind: "assistant", chars: 300, calls: [{ tool: 0, resultChars: 5000 }] }]);
		const sizer = new TokenSizer();
		const first = messages.map((m) => sizer.tokens(m));
		const again = structuredClone(messages).map((m) => sizer.tokens(m));
		expect(again).toEqual(first);
		expect(first).toEqual(messages.map(estimateMessageTokens));
	});
});

describe("usageBasedTokens", () => {
	it("adds the estimate of the messages after the last reported usage, skipping aborted replies", () => {
		const b = new HistoryBuilder().user("task").assistant("a", [], { input: 1000, output: 200 }).user("more");
		const after = estimateMessageTokens(b.messages[2]);
		expect(usageBasedTokens(b.messages)).toBe(1200 + after);
		const aborted = { ...b.messages[1], stopReason: "aborted" };
		expect(usageBasedTokens([b.messages[0], aborted, b.messages[2]])).toBeUndefined();
	});
});

describe("planRetention", () => {
	it("leaves a list within budget untouched", () => {
		const messages = buildHistory([{ kind: "assistant", chars: 100, calls: [] }]);
		const plan = planRetention(messages, { budgetTokens: total(messages) });
		expect(plan.trimmed).toBe(false);
		expect(plan.kept).toHaveLength(plan.segments.length);
	});

	it("trims when the measured size is over budget although the own estimate fits, and shrinks the budget by the ratio", () => {
		const steps = Array.from({ length: 20 }, () => ({ kind: "assistant" as const, chars: 400, calls: [] }));
		const messages = buildHistory(steps);
		const own = total(messages);
		const plan = planRetention(messages, { budgetTokens: own, measuredTokens: own * 2 });
		expect(plan.trimmed).toBe(true);
		expect(plan.budgetTokens).toBe(Math.floor(own / 2));
	});

	it("keeps a compaction summary, the first user message and the first reply as head", () => {
		const steps = Array.from({ length: 30 }, (_, i) => ({
			kind: "assistant" as const,
			chars: 200,
			calls: [{ tool: i % 5, resultChars: 3000 }],
		}));
		const messages = buildHistory(steps, { summary: true });
		const plan = planRetention(messages, { budgetTokens: 8000, cutStepTokens: 1000 });
		expect(plan.trimmed).toBe(true);
		expect(plan.head).toEqual([0, 1, 2]);
		expect(plan.kept.slice(0, 3)).toEqual([0, 1, 2]);
		expect(plan.kept[plan.kept.length - 1]).toBe(plan.segments.length - 1);
	});
});

/** Pairing of calls and results in a message list: ids of calls without results and results without calls. */
function unpaired(messages: TranscriptMessage[]): { calls: string[]; results: string[] } {
	const calls = new Set<string>();
	const results = new Set<string>();
	for (const m of messages) {
		for (const c of toolCallsOf(m)) calls.add(c.id);
		if (m.role === "toolResult") results.add(String(m.toolCallId));
	}
	return { calls: [...calls].filter((id) => !results.has(id)), results: [...results].filter((id) => !calls.has(id)) };
}

function viewMessages(messages: TranscriptMessage[], budgetTokens: number, cutStepTokens = 2000) {
	const plan = planRetention(messages, { budgetTokens, cutStepTokens });
	const view = buildView(messages, plan);
	const items = viewItems(view);
	const out = items.flatMap((i) => (i.kind === "message" ? [i.message] : []));
	return { plan, view, items, out, markers: items.filter((i) => i.kind === "omission").length };
}

describe("retention properties", () => {
	const budgetArb = fc.integer({ min: 3000, max: 40_000 });

	it("never separates a tool call from its result, keeps the head, and marks iff trimmed", () => {
		fc.assert(
			fc.property(historyArb, budgetArb, ({ steps, summary }, budget) => {
				const messages = buildHistory(steps, { summary });
				const { plan, view, out, markers } = viewMessages(messages, budget);
				expect(unpaired(out)).toEqual({ calls: [], results: [] });
				expect(markers).toBe(view.trimmed ? 1 : 0);
				if (!plan.trimmed) {
					expect(out).toEqual(messages);
					return;
				}
				const timestamps = new Set(out.map((m) => m.timestamp));
				for (const s of plan.head) {
					const seg = plan.segments[s];
					for (let i = seg.start; i < seg.end; i++) expect(timestamps.has(messages[i].timestamp)).toBe(true);
				}
				expect(out[out.length - 1].timestamp).toBe(messages[messages.length - 1].timestamp);
			}),
			{ numRuns: 150 },
		);
	});

	it("fits the budget whenever no text had to be shortened", () => {
		fc.assert(
			fc.property(historyArb, budgetArb, ({ steps, summary }, budget) => {
				const messages = buildHistory(steps, { summary });
				const { plan, out } = viewMessages(messages, budget);
				fc.pre(plan.trimmed && plan.shorten.length === 0);
				// the marker is charged its reserve, which the renderer keeps within
				expect(total(out) + 1024).toBeLessThanOrEqual(budget);
			}),
			{ numRuns: 150 },
		);
	});

	it("fits the budget also when texts are shortened, once each shortened text can get a readable window", () => {
		// Below ~6k tokens the projection's minimum window (1 KiB per shortened text) can exceed a cap: not achievable.
		fc.assert(
			fc.property(historyArb, fc.integer({ min: 6000, max: 40_000 }), ({ steps, summary }, budget) => {
				const messages = buildHistory(steps, { summary });
				const { plan, out } = viewMessages(messages, budget);
				fc.pre(plan.shorten.length > 0);
				expect(total(out) + 1024).toBeLessThanOrEqual(budget);
			}),
			{ numRuns: 100 },
		);
	});

	it("indexes every left-out tool call by name and count", () => {
		fc.assert(
			fc.property(historyArb, budgetArb, ({ steps, summary }, budget) => {
				const messages = buildHistory(steps, { summary });
				const plan = planRetention(messages, { budgetTokens: budget });
				const index = indexOmitted(messages, plan);
				const expected = new Map<string, number>();
				for (const s of plan.omitted) {
					const seg = plan.segments[s];
					for (let i = seg.start; i < seg.end; i++) {
						for (const c of toolCallsOf(messages[i])) expected.set(c.name, (expected.get(c.name) ?? 0) + 1);
					}
				}
				expect(new Map(index.tools.map((t) => [t.name, t.count]))).toEqual(expected);
				expect(index.messages).toBe(
					plan.omitted.reduce((n, s) => n + plan.segments[s].end - plan.segments[s].start, 0),
				);
			}),
			{ numRuns: 100 },
		);
	});

	it("keeps the trimmed prefix while the history grows, and only moves the cut forward", () => {
		fc.assert(
			fc.property(historyArb, historyArb, budgetArb, (a, more, budget) => {
				const base = buildHistory(a.steps, { summary: a.summary });
				const grown = buildHistory([...a.steps, ...more.steps], { summary: a.summary });
				const before = viewMessages(base, budget);
				const after = viewMessages(grown, budget);
				fc.pre(before.plan.trimmed && after.plan.trimmed);
				expect(after.plan.cut).toBeGreaterThanOrEqual(before.plan.cut);
				const tailShortened = before.plan.shorten.some((g) => g.segments.includes(before.plan.segments.length - 1));
				if (after.plan.cut === before.plan.cut && !tailShortened) {
					// same cut: the earlier request is a prefix of the later one, marker and all
					const marker = (v: typeof before) => v.items.find((i) => i.kind === "omission");
					expect(after.out.slice(0, before.out.length)).toEqual(before.out);
					expect(marker(after)).toEqual(marker(before));
				}
			}),
			{ numRuns: 150 },
		);
	});
});

describe("oversized segments", () => {
	it("shows a tool result larger than the whole budget as head and tail with a marker", () => {
		const huge = `${filler("HEAD-OF-LOG", 40_000)}\nTAIL-OF-LOG the last line`;
		const b = new HistoryBuilder()
			.user("task")
			.assistant("plan", [{ name: "bash", arguments: { command: "cat big.log" }, result: huge }]);
		const { plan, out, markers } = viewMessages(b.messages, 4000);
		expect(plan.trimmed).toBe(true);
		expect(markers).toBe(1);
		const result = out.find((m) => m.role === "toolResult") as TranscriptMessage;
		const text = (result.content as Array<{ text: string }>)[0].text;
		expect(text.startsWith("HEAD-OF-LOG")).toBe(true);
		expect(text).toContain("TAIL-OF-LOG the last line");
		expect(text).toMatch(/omitted/);
		expect(text.length).toBeLessThan(huge.length / 4);
		expect(total(out)).toBeLessThanOrEqual(4000);
	});
});

describe("surelyWithinBudget", () => {
	/** Any text, lone surrogates and wide characters included. */
	const textArb = fc.oneof(
		fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 300 }),
		fc.string({ unit: fc.constantFrom("a", "Z", "7", " ", "\n", ".", "é", "中", "—", "😀"), maxLength: 300 }),
	);
	const partArb = fc.oneof(
		fc.record({ type: fc.constant("text"), text: textArb }),
		fc.record({ type: fc.constant("thinking"), thinking: textArb }),
		fc.record({ type: fc.constant("image"), data: fc.constant("AAAA") }),
		fc.record({
			type: fc.constant("toolCall"),
			id: textArb,
			name: textArb,
			arguments: fc.dictionary(textArb, fc.oneof(textArb, fc.integer())),
		}),
	);
	const messageArb: fc.Arbitrary<TranscriptMessage> = fc.oneof(
		fc.record({ role: fc.constantFrom("user", "assistant", "toolResult", "custom"), content: textArb }),
		fc.record({ role: fc.constantFrom("user", "assistant", "toolResult"), content: fc.array(partArb) }),
		fc.record({ role: fc.constant("bashExecution"), command: textArb, output: textArb }),
		fc.record({ role: fc.constantFrom("compactionSummary", "branchSummary"), summary: textArb }),
	);

	it("bounds every message's estimate from above (any shape, any text)", () => {
		fc.assert(
			fc.property(messageArb, (message) => {
				expect(messageTokensUpperBound(message)).toBeGreaterThanOrEqual(estimateMessageTokens(message));
			}),
			{ numRuns: 500 },
		);
	});

	it("is true only when planRetention leaves the history untouched", () => {
		fc.assert(
			fc.property(
				historyArb,
				fc.integer({ min: 0, max: 400_000 }),
				fc.option(fc.integer({ min: 0, max: 400_000 })),
				({ steps, summary }, budgetTokens, measured) => {
					const messages = buildHistory(steps, { summary });
					const options = { budgetTokens, measuredTokens: measured ?? undefined };
					if (surelyWithinBudget(messages, options)) expect(planRetention(messages, options).trimmed).toBe(false);
				},
			),
			{ numRuns: 200 },
		);
	});

	it("with a memo across a growing history, decides as without it", () => {
		fc.assert(
			fc.property(historyArb, fc.integer({ min: 0, max: 200_000 }), ({ steps, summary }, budgetTokens) => {
				const messages = buildHistory(steps, { summary });
				const memo = { count: 0, tokens: 0 };
				for (let n = 1; n <= messages.length; n += 3) {
					const list = structuredClone(messages.slice(0, n));
					expect(surelyWithinBudget(list, { budgetTokens }, memo)).toBe(surelyWithinBudget(list, { budgetTokens }));
				}
				// a list whose prefix changed (the oldest message dropped) is bounded afresh
				const shifted = messages.slice(1);
				expect(surelyWithinBudget(shifted, { budgetTokens }, memo)).toBe(surelyWithinBudget(shifted, { budgetTokens }));
			}),
			{ numRuns: 100 },
		);
	});

	it("skips a history far within its budget and not one near it", () => {
		const messages = buildHistory([{ kind: "assistant", chars: 1000, calls: [{ tool: 0, resultChars: 4000 }] }]);
		const tokens = total(messages);
		expect(surelyWithinBudget(messages, { budgetTokens: tokens * 10 })).toBe(true);
		expect(surelyWithinBudget(messages, { budgetTokens: tokens * 10, measuredTokens: tokens * 11 })).toBe(false);
		expect(surelyWithinBudget(messages, { budgetTokens: tokens })).toBe(false);
	});
});

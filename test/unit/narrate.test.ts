import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MARKER_CUSTOM_TYPE } from "../../extensions/context-trim/prompt.ts";
import { trimMessages } from "../../extensions/context-trim/trim.ts";
import { renderForkContext } from "../../extensions/shared/transcript/narrate.ts";
import { argumentsJson, type TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";
import { forkIntro, ownerFraming } from "../../extensions/shared/transcript/prompt.ts";
import { buildHistory, filler, HistoryBuilder, historyArb } from "./transcript-history.ts";

/** Hand-off wording that must never reach a child that was not forked. */
const HANDOFF_WORDS = /parent|handed|hand-off|continu|someone else/i;

/** Every user/assistant text, tool name, argument JSON and result text a trimmed view carries. */
function carried(messages: TranscriptMessage[]): string[] {
	const out: string[] = [];
	for (const m of messages) {
		if (m.role === "custom" && m.customType === MARKER_CUSTOM_TYPE) continue;
		if (typeof m.content === "string") out.push(m.content);
		else if (Array.isArray(m.content)) {
			for (const part of m.content as Array<Record<string, unknown>>) {
				if (part.type === "text") out.push(String(part.text));
				if (part.type === "toolCall") out.push(String(part.name), argumentsJson(part.arguments));
			}
		}
		if (typeof m.summary === "string") out.push(m.summary);
	}
	return out.filter((t) => t.length > 0);
}

describe("renderForkContext", () => {
	it("cuts an oversized text with the head share it is given (the configured one)", () => {
		const lines = Array.from({ length: 3000 }, (_, i) => `row ${i} ${"y".repeat(40)}`).join("\n");
		const history = new HistoryBuilder().user("TASK: look").assistant(lines).messages;
		const shown = (headShare?: number) => {
			const text = renderForkContext(history, { budgetTokens: 3000, task: "t", headShare });
			const at = text.indexOf("omitted — see the footer");
			expect(at).toBeGreaterThan(0);
			return text.slice(text.indexOf("row 0 "), at).length;
		};
		expect(shown(0.2)).toBeLessThan(shown() / 2);
		expect(shown(0.75)).toBe(shown());
	});

	const history = new HistoryBuilder()
		.user("Fix the flaky test in src/queue.ts")
		.assistant("I will run the tests first.", [
			{ name: "bash", arguments: { command: "npm test" }, result: "1 failing: queue drains twice" },
		])
		.assistant("", [{ name: "read", arguments: { path: "src/queue.ts" }, result: "ENOENT", isError: true }]).messages;

	it("narrates calls and results in the third person, never as the child's own tool calls", () => {
		const text = renderForkContext(history, {
			budgetTokens: 100_000,
			task: "finish the fix",
			sessionFile: "/s/p.jsonl",
		});
		expect(text).toContain('[parent called bash({"command":"npm test"})]');
		expect(text).toContain("[result: 1 failing: queue drains twice]");
		expect(text).toContain('[parent called read({"path":"src/queue.ts"})]');
		expect(text).toContain("[error result: ENOENT]");
		expect(text).toContain("[user said]\nFix the flaky test in src/queue.ts");
		expect(text).toContain("[parent said]\nI will run the tests first.");
		expect(text).not.toMatch(/"toolCall"|"role"/);
	});

	it("frames the child as the owner and ends with its task", () => {
		const text = renderForkContext(history, {
			budgetTokens: 100_000,
			task: "finish the fix",
			sessionFile: "/s/p.jsonl",
		});
		expect(text.startsWith(forkIntro("/s/p.jsonl"))).toBe(true);
		expect(text).toMatch(/this work is yours; continue it/i);
		expect(text).toContain("/s/p.jsonl");
		expect(text.endsWith("Your task now:\nfinish the fix")).toBe(true);
	});

	it("skips values that are not messages instead of throwing", () => {
		const text = renderForkContext([null, 3, "x", { nope: 1 }, ...history], { budgetTokens: 100_000, task: "t" });
		expect(text).toContain('[parent called bash({"command":"npm test"})]');
		expect(renderForkContext([], { budgetTokens: 0, task: "t" })).toContain("Your task now:\nt");
	});

	it("narrates the omission index where its budget forces one, leaving out no more than the parent's view", () => {
		const steps = Array.from({ length: 30 }, (_, i) => ({
			kind: "assistant" as const,
			chars: 100,
			calls: [{ tool: i % 5, resultChars: 2500 }],
		}));
		const messages = buildHistory(steps);
		const trimmed = trimMessages(messages, { budgetTokens: 7000, sessionFile: "/s/p.jsonl" });
		const text = renderForkContext(messages, { budgetTokens: 7000, task: "t", sessionFile: "/s/p.jsonl" });
		expect(trimmed.trimmed).toBe(true);
		const leftOut = (s: string) => Number(/Left out: ([\d,]+) messages/.exec(s)?.[1]?.replace(",", ""));
		expect(leftOut(text)).toBeGreaterThan(0);
		expect(leftOut(text)).toBeLessThanOrEqual(leftOut(String(trimmed.marker)));
		expect(text).toMatch(/Tool calls left out: \w+ ×\d+/);
		expect(text).toContain("session file /s/p.jsonl");
	});
});

describe("parity with the parent's trimmed view", () => {
	it("carries every text, tool name, argument and result the parent's own view carries", () => {
		fc.assert(
			fc.property(historyArb, fc.integer({ min: 3000, max: 60_000 }), ({ steps, summary }, budget) => {
				const messages = buildHistory(steps, { summary });
				const parent = trimMessages(messages, { budgetTokens: budget });
				const child = renderForkContext(messages, { budgetTokens: budget, task: "go on" });
				for (const text of carried(parent.messages)) expect(child).toContain(text);
			}),
			{ numRuns: 120 },
		);
	});

	it("carries at least the parent's view for any larger budget (when neither had to shorten a text)", () => {
		fc.assert(
			fc.property(
				historyArb,
				fc.integer({ min: 3000, max: 40_000 }),
				fc.integer({ min: 0, max: 20_000 }),
				({ steps, summary }, budget, extra) => {
					const messages = buildHistory(steps, { summary });
					const parent = trimMessages(messages, { budgetTokens: budget, cutStepTokens: 4096 });
					const child = renderForkContext(messages, { budgetTokens: budget + extra, task: "go on" });
					const childPlanShortens = trimMessages(messages, { budgetTokens: budget + extra, cutStepTokens: 1 }).plan
						.shorten.length;
					fc.pre(parent.plan.shorten.length === 0 && childPlanShortens === 0);
					for (const text of carried(parent.messages)) expect(child).toContain(text);
				},
			),
			{ numRuns: 120 },
		);
	});

	it("also for a tool result larger than the whole budget (both show the same head and tail)", () => {
		const huge = filler("giant output", 60_000);
		const b = new HistoryBuilder()
			.user("task")
			.assistant("plan", [{ name: "bash", arguments: { command: "cat all.log" }, result: huge }]);
		const parent = trimMessages(b.messages, { budgetTokens: 4000 });
		const child = renderForkContext(b.messages, { budgetTokens: 4000, task: "go on" });
		const shown = carried(parent.messages).find((t) => t.startsWith("giant output"));
		expect(shown).toBeDefined();
		expect(shown?.length).toBeLessThan(huge.length);
		expect(child).toContain(shown);
	});
});

describe("framing follows the session's shape", () => {
	it("gives a fresh child no hand-off wording and a forked child the owner hand-off", () => {
		expect(ownerFraming({ forked: false })).not.toMatch(HANDOFF_WORDS);
		expect(ownerFraming({ forked: false })).toMatch(/yours from the start/);
		expect(ownerFraming({ forked: true })).toMatch(/this work is yours; continue it/);
	});
});

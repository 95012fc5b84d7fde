import { readFileSync, rmSync, statSync } from "node:fs";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { MARKER_CUSTOM_TYPE, renderTrimMarker } from "../../extensions/context-trim/prompt.ts";
import { trimMessages } from "../../extensions/context-trim/trim.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { fingerprintReady } from "../../extensions/shared/text/fingerprint.ts";
import { estimateTokens } from "../../extensions/shared/text/tokens.ts";
import { type OmissionIndex, OmissionMemo } from "../../extensions/shared/transcript/omission.ts";
import {
	estimateMessageTokens,
	messageBudget,
	TokenSizer,
	type TranscriptMessage,
} from "../../extensions/shared/transcript/plan.ts";
import { shortenText, storedShortening } from "../../extensions/shared/transcript/view.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { buildHistory, filler, HistoryBuilder, historyArb } from "./transcript-history.ts";

// The sizer keys its cache by the xxHash fingerprint: start it so the cached path is the one tested.
beforeAll(async () => {
	await fingerprintReady();
});

function longSession(steps: number): HistoryBuilder {
	const b = new HistoryBuilder().user("TASK: make the parser accept trailing commas");
	b.assistant("PLAN: run the tests, read the parser, fix it.", [
		{ name: "bash", arguments: { command: "npm test" }, result: filler("first run", 1500) },
	]);
	for (let i = 0; i < steps; i++) {
		const call =
			i % 3 === 0
				? { name: "bash", arguments: { command: `npm test -- case-${i}` }, result: filler(`test ${i}`, 2500) }
				: { name: "read", arguments: { path: `src/parser-${i % 4}.ts` }, result: filler(`source ${i}`, 2500) };
		b.assistant(`step ${i}`, [call]);
	}
	return b;
}

const markers = (messages: TranscriptMessage[]) =>
	messages.filter((m) => m.role === "custom" && m.customType === MARKER_CUSTOM_TYPE);

describe("trimMessages", () => {
	it("returns the very same array when the history fits", () => {
		const b = longSession(2);
		const result = trimMessages(b.messages, { budgetTokens: 100_000 });
		expect(result.trimmed).toBe(false);
		expect(result.messages).toBe(b.messages);
	});

	it("keeps task, plan and recent work, and inserts one marker naming the left-out tools, files and session file", () => {
		const b = longSession(40);
		const result = trimMessages(b.messages, {
			budgetTokens: 8000,
			cutStepTokens: 1000,
			sessionFile: "/s/session.jsonl",
		});
		expect(result.trimmed).toBe(true);
		const out = result.messages;
		expect(out[0]).toBe(b.messages[0]);
		expect(out[1]).toBe(b.messages[1]);
		expect(out[2]).toBe(b.messages[2]);
		const [marker] = markers(out);
		expect(out[3]).toBe(marker);
		expect(out[out.length - 1]).toBe(b.messages[b.messages.length - 1]);
		const text = String(marker.content);
		expect(text).toBe(result.marker);
		expect(text).toMatch(/Left out: \d+ messages \(\d+ assistant replies\)/);
		expect(text).toMatch(/bash ×\d+ \(npm test -- case-0; /);
		expect(text).toMatch(/read ×\d+/);
		expect(text).toContain("src/parser-1.ts");
		expect(text).toContain("/s/session.jsonl");
		expect(b.messages).toHaveLength(1 + 2 + 40 * 2);
	});

	it("says plainly when there is no session file", () => {
		const result = trimMessages(longSession(40).messages, { budgetTokens: 8000 });
		expect(result.marker).toContain("not saved to a file");
	});

	it("gives the same answer with a shared sizer across deep copies (the hook's situation)", () => {
		const b = longSession(60);
		const sizer = new TokenSizer();
		const first = trimMessages(structuredClone(b.messages), { budgetTokens: 9000, sizer });
		const second = trimMessages(structuredClone(b.messages), { budgetTokens: 9000, sizer });
		const plain = trimMessages(b.messages, { budgetTokens: 9000 });
		expect(second.messages).toEqual(first.messages);
		expect(plain.messages).toEqual(first.messages);
	});

	it("gives the uncached answer with a long-lived sizer and memo over growing, shrinking and unrelated histories", () => {
		fc.assert(
			fc.property(
				fc.array(fc.tuple(historyArb, fc.integer({ min: 0, max: 80 })), { minLength: 2, maxLength: 6 }),
				fc.integer({ min: 4000, max: 30_000 }),
				(rounds, budget) => {
					const sizer = new TokenSizer();
					const memo = new OmissionMemo(sizer);
					for (const [round, [history, keep]] of rounds.entries()) {
						// a prefix of a history, as after appends (growing keep) or a switch of session (its own clock)
						const startAt = 1_700_000_000_000 + round * 1_000_000_000;
						const messages = buildHistory(history.steps, { summary: history.summary, startAt }).slice(0, keep + 1);
						const cached = trimMessages(structuredClone(messages), { budgetTokens: budget, sizer, memo });
						const plain = trimMessages(messages, { budgetTokens: budget });
						expect(cached.messages).toEqual(plain.messages);
					}
				},
			),
			{ numRuns: 60 },
		);
	});

	it("gives the uncached answer with a long-lived sizer and memo while one history grows", () => {
		fc.assert(
			fc.property(
				historyArb,
				fc.array(fc.nat(), { minLength: 2, maxLength: 8 }),
				fc.integer({ min: 4000, max: 30_000 }),
				(h, cuts, budget) => {
					const full = buildHistory(h.steps, { summary: h.summary });
					const sizer = new TokenSizer();
					const memo = new OmissionMemo(sizer);
					for (const keep of cuts.map((c) => c % (full.length + 1)).sort((a, b) => a - b)) {
						const messages = full.slice(0, keep);
						const cached = trimMessages(structuredClone(messages), { budgetTokens: budget, sizer, memo });
						expect(cached.messages).toEqual(trimMessages(messages, { budgetTokens: budget }).messages);
					}
				},
			),
			{ numRuns: 80 },
		);
	});

	it("keeps 50 growing calls on the same prefix except where the cut moves, in steps", () => {
		const b = longSession(30);
		let previous: TranscriptMessage[] | undefined;
		let kept = 0;
		let moves = 0;
		let trims = 0;
		for (let call = 0; call < 50; call++) {
			b.assistant(`more ${call}`, [
				{ name: "bash", arguments: { command: `step ${call}` }, result: filler(`s${call}`, 1200) },
			]);
			const { messages, trimmed } = trimMessages(b.messages, { budgetTokens: 12_000, cutStepTokens: 3000 });
			if (trimmed) trims++;
			if (previous) {
				const samePrefix = JSON.stringify(messages.slice(0, previous.length)) === JSON.stringify(previous);
				if (samePrefix) kept++;
				else moves++;
			}
			previous = messages;
		}
		expect(trims).toBe(50);
		expect(kept + moves).toBe(49);
		// each call adds ~350 tokens; a 3,000-token step moves the cut about every 8 calls
		expect(moves).toBeGreaterThan(0);
		expect(kept).toBeGreaterThanOrEqual(40);
	});
});

describe("renderTrimMarker", () => {
	const index: OmissionIndex = {
		messages: 300,
		userMessages: 2,
		assistantMessages: 150,
		tokens: 120_000,
		tools: Array.from({ length: 20 }, (_, i) => ({ name: `tool${i}`, count: 20 - i, briefs: [`arg ${i}`] })),
		files: Array.from({ length: 40 }, (_, i) => `src/some/long/directory/name/file-${i}.ts`),
		shortened: [{ role: "toolResult", toolName: "read", originalBytes: 200_000, keptBytes: 4000 }],
	};

	it("lists tools with counts and briefs, files, and shortened texts at full detail", () => {
		const text = renderTrimMarker(index, "/s/x.jsonl", 100_000);
		expect(text).toContain("tool0 ×20 (arg 0)");
		expect(text).toContain("tool11 ×9 (arg 11), 8 more tools");
		expect(text).toContain("src/some/long/directory/name/file-19.ts, and 20 more");
		expect(text).toContain("read result (200,000 → 4,000 bytes)");
	});

	it("steps detail down to fit its token reserve but always names the transcript", () => {
		const text = renderTrimMarker(index, "/s/x.jsonl", 200);
		expect(estimateTokens(text)).toBeLessThanOrEqual(200);
		expect(text).toContain("/s/x.jsonl");
		expect(text).toContain("Left out: 300 messages");
	});
});

describe("messageBudget", () => {
	it("subtracts the output reserve (pi-ai's cap on maxTokens), margin and overhead", () => {
		expect(
			messageBudget({ contextWindow: 200_000, maxTokens: 64_000, safetyMarginTokens: 2048, overheadTokens: 3000 }),
		).toBe(200_000 - 32_000 - 2048 - 3000);
		expect(
			messageBudget({
				contextWindow: 200_000,
				maxTokens: 64_000,
				reserveTokens: 8000,
				safetyMarginTokens: 2048,
				overheadTokens: 0,
			}),
		).toBe(200_000 - 8000 - 2048);
	});

	it("caps the margin for small windows and never goes below zero", () => {
		expect(messageBudget({ contextWindow: 10_000, maxTokens: 1000, safetyMarginTokens: 5000, overheadTokens: 0 })).toBe(
			10_000 - 1000 - 1000,
		);
		expect(messageBudget({ contextWindow: 1000, maxTokens: 4000, safetyMarginTokens: 0, overheadTokens: 0 })).toBe(0);
		expect(messageBudget({ contextWindow: Number.NaN, safetyMarginTokens: 0, overheadTokens: 0 })).toBe(0);
	});
});

describe("stored shortening", () => {
	it("stores the full text as a transcripts artifact once and points the footer at it", () => {
		const agentDir = makeTestDir("ct-store");
		const store = new ArtifactStore({ agentDir });
		const shorten = storedShortening(store);
		const text = filler("log", 50_000);
		const shown = shortenText(text, 4000, shorten);
		const path = /read\(path="([^"]+)"/.exec(shown)?.[1];
		expect(path).toBeDefined();
		expect(readFileSync(path as string, "utf8")).toBe(text);
		expect(statSync(path as string).mode & 0o777).toBe(0o600);
		expect(path).toContain("transcripts");
		expect(shortenText(text, 4000, shorten)).toBe(shown);
		expect(estimateMessageTokens({ role: "user", content: shown })).toBeLessThan(estimateTokens(text) / 5);
		rmSync(agentDir, { recursive: true, force: true });
	});
});

/**
 * context-trim on Pi 0.87+ (`context_with_system`): the transcript carries the prompt, its patches and the
 * tool declarations as system messages. They are counted against the window and always sent, each in its
 * place relative to the messages shown; the conversation between them is trimmed as on 0.73.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MARKER_CUSTOM_TYPE } from "../../extensions/context-trim/prompt.ts";
import { trimKey, trimMessages, trimRecord, trimTranscript } from "../../extensions/context-trim/trim.ts";
import { hostSeesSystemMessages } from "../../extensions/shared/host/pi-host.ts";
import { estimateTokens } from "../../extensions/shared/text/tokens.ts";
import {
	estimateMessageTokens,
	systemMessageTokens,
	type TranscriptMessage,
	toolDeclarationTokens,
} from "../../extensions/shared/transcript/size.ts";
import { buildHistory, filler, historyArb } from "./transcript-history.ts";

const tool = (name: string, chars = 600) => ({
	name,
	description: filler(`${name} description`, chars),
	parameters: { type: "object", properties: { path: { type: "string", description: filler(name, chars) } } },
});

const systemMessage = (fields: Record<string, unknown>): TranscriptMessage => ({
	role: "system",
	content: "",
	timestamp: 1,
	...fields,
});

const isMarker = (m: TranscriptMessage) => m.role === "custom" && m.customType === MARKER_CUSTOM_TYPE;

/**
 * A history with a leading system message and patches spliced in after the given conversation positions
 * (moved past tool results, as Pi records a change of the tool set before the next request).
 */
function withSystem(history: TranscriptMessage[], patchesAfter: number[]): TranscriptMessage[] {
	const out: TranscriptMessage[] = [
		systemMessage({ content: filler("PROMPT", 4000), toolsAdded: [tool("read"), tool("bash")] }),
	];
	history.forEach((m, i) => {
		out.push(m);
		if (history[i + 1]?.role === "toolResult") {
			if (patchesAfter.includes(i)) patchesAfter = [...patchesAfter, i + 1];
			return;
		}
		if (patchesAfter.includes(i))
			out.push(systemMessage({ sections: { tools: filler(`patch ${i}`, 300) }, toolsAdded: [tool(`t${i}`)] }));
	});
	return out;
}

describe("systemMessageTokens", () => {
	it("counts the text, every section and every declared tool's JSON", () => {
		const prompt = filler("prompt", 2000);
		const section = filler("section", 1000);
		const tools = [tool("a"), tool("b", 3000)];
		const m = systemMessage({ content: prompt, sections: { skills: section, gone: null }, toolsAdded: tools });
		const expected =
			estimateTokens(prompt) + estimateTokens(section) + tools.reduce((n, t) => n + toolDeclarationTokens(t), 0);
		expect(systemMessageTokens(m)).toBeGreaterThanOrEqual(expected);
		expect(systemMessageTokens(m)).toBeLessThan(expected + 40);
		// the plain message estimate would see none of the tools
		expect(systemMessageTokens(m)).toBeGreaterThan(
			estimateMessageTokens(m) + 2 * estimateTokens(JSON.stringify(tools[0])),
		);
		expect(toolDeclarationTokens(tools[1])).toBeGreaterThanOrEqual(estimateTokens(JSON.stringify(tools[1])));
	});
});

describe("trimTranscript", () => {
	const history = buildHistory(
		Array.from({ length: 40 }, (_, i) => ({
			kind: "assistant" as const,
			chars: 100,
			calls: [{ tool: i % 3, resultChars: 3000 }],
		})),
	);

	it("returns the very same array when the whole request fits", () => {
		const messages = withSystem(history.slice(0, 5), [2]);
		const result = trimTranscript(messages, { requestBudgetTokens: 1_000_000, systemTokens: systemMessageTokens });
		expect(result.trimmed).toBe(false);
		expect(result.messages).toBe(messages);
	});

	it("charges the system messages to the budget: the conversation gets what they leave", () => {
		const messages = withSystem(history, [3, 30]);
		const system = messages.filter((m) => m.role === "system");
		const systemTokens = system.reduce((n, m) => n + systemMessageTokens(m), 0);
		const budget = systemTokens + 8000;
		const result = trimTranscript(messages, {
			requestBudgetTokens: budget,
			cutStepTokens: 1000,
			systemTokens: systemMessageTokens,
		});
		expect(result.trimmed).toBe(true);
		expect(result.systemTokens).toBe(systemTokens);
		const sent = result.messages.reduce(
			(n, m) => n + (m.role === "system" ? systemMessageTokens(m) : estimateMessageTokens(m)),
			0,
		);
		expect(sent).toBeLessThanOrEqual(budget);
		// the same conversation as a plain trim to the remaining budget
		const plain = trimMessages(
			messages.filter((m) => m.role !== "system"),
			{ budgetTokens: 8000, cutStepTokens: 1000 },
		);
		expect(result.messages.filter((m) => m.role !== "system")).toEqual(plain.messages);
	});

	it("keeps the leading system message first and a left-out patch just before the marker, a kept one in place", () => {
		const messages = withSystem(history, [3, history.length - 3]);
		const [lead, early, late] = messages.filter((m) => m.role === "system");
		const result = trimTranscript(messages, {
			requestBudgetTokens: 20_000,
			cutStepTokens: 1000,
			systemTokens: systemMessageTokens,
		});
		expect(result.trimmed).toBe(true);
		const out = result.messages;
		expect(out[0]).toBe(lead);
		const marker = out.findIndex(isMarker);
		expect(out[marker - 1]).toBe(early);
		// the late patch stays after the message it followed
		const lateAt = out.indexOf(late);
		expect(lateAt).toBeGreaterThan(marker);
		expect(out[lateAt - 1]).toBe(messages[messages.indexOf(late) - 1]);
	});

	it("property: every system message is sent once, in order, the first one first; the rest is the plain trim", () => {
		fc.assert(
			fc.property(
				historyArb,
				fc.array(fc.nat(80), { maxLength: 4 }),
				fc.integer({ min: 500, max: 40_000 }),
				({ steps, summary }, after, budget) => {
					const plainHistory = buildHistory(steps, { summary });
					const messages = withSystem(plainHistory, after);
					const system = messages.filter((m) => m.role === "system");
					const result = trimTranscript(messages, {
						requestBudgetTokens: budget,
						cutStepTokens: 2000,
						systemTokens: systemMessageTokens,
					});
					const sentSystem = result.messages.filter((m) => m.role === "system");
					expect(sentSystem).toEqual(system);
					for (const [i, m] of sentSystem.entries()) expect(m).toBe(system[i]);
					expect(result.messages[0]).toBe(system[0]);
					const remaining = Math.max(0, budget - system.reduce((n, m) => n + systemMessageTokens(m), 0));
					const plain = trimMessages(plainHistory, { budgetTokens: remaining, cutStepTokens: 2000 });
					expect(result.messages.filter((m) => m.role !== "system")).toEqual(
						plain.trimmed ? plain.messages : plainHistory,
					);
					// a system message never sits between a tool call and its results
					result.messages.forEach((m, i) => {
						if (m.role === "system" && i > 0 && i + 1 < result.messages.length)
							expect(result.messages[i + 1].role === "toolResult" && result.messages[i - 1].role === "assistant").toBe(
								false,
							);
					});
				},
			),
			{ numRuns: 150 },
		);
	});

	it("property: the context phase's conversation, when it matches, gives the same trim; when not, it is ignored", () => {
		fc.assert(
			fc.property(
				historyArb,
				fc.array(fc.nat(80), { maxLength: 4 }),
				fc.integer({ min: 500, max: 40_000 }),
				fc.nat(),
				({ steps, summary }, after, budget, drop) => {
					const messages = withSystem(buildHistory(steps, { summary }), after);
					const options = { requestBudgetTokens: budget, cutStepTokens: 2000, systemTokens: systemMessageTokens };
					const expected = trimTranscript(messages, options).messages;
					const conversation = messages.filter((m) => m.role !== "system");
					expect(trimTranscript(messages, { ...options, conversation }).messages).toEqual(expected);
					// a list that is not this transcript's conversation (a copy, one message short) changes nothing
					const copy = structuredClone(conversation);
					expect(trimTranscript(messages, { ...options, conversation: copy }).messages).toEqual(expected);
					const short = conversation.filter((_, i) => i !== drop % conversation.length);
					expect(trimTranscript(messages, { ...options, conversation: short }).messages).toEqual(expected);
					// and the caller's list is never changed
					expect(conversation).toEqual(messages.filter((m) => m.role !== "system"));
				},
			),
			{ numRuns: 100 },
		);
	});
});

describe("trimRecord and trimKey", () => {
	const history = buildHistory(
		Array.from({ length: 40 }, (_, i) => ({
			kind: "assistant" as const,
			chars: 100,
			calls: [{ tool: i % 3, resultChars: i === 39 ? 120_000 : 3000 }],
		})),
	);
	const sent = (messages: TranscriptMessage[]) =>
		messages.reduce((n, m) => n + (m.role === "system" ? systemMessageTokens(m) : estimateMessageTokens(m)), 0);

	it("states what a trim left out and shortened, with before and after figures that add up", () => {
		const messages = withSystem(history, [5]);
		const result = trimTranscript(messages, {
			requestBudgetTokens: 20_000,
			cutStepTokens: 1000,
			systemTokens: systemMessageTokens,
		});
		expect(result.trimmed).toBe(true);
		const conversation = messages.filter((m) => m.role !== "system");
		const r = trimRecord(result, conversation, { systemTokens: result.systemTokens, budgetTokens: 20_000 });
		expect(r.messagesBefore).toBe(conversation.length);
		expect(r.messagesAfter).toBe(result.messages.filter((m) => m.role !== "system").length);
		expect(r.messagesBefore - r.messagesOmitted + 1).toBe(r.messagesAfter);
		expect(r.tokensBefore).toBe(sent(messages));
		expect(r.tokensAfter).toBe(sent(result.messages));
		expect(r.tokensAfter).toBeLessThanOrEqual(20_000);
		// the newest result (120,000 characters) was shown as head + tail
		expect(r.textsShortened).toBe(1);
		expect(r.shortenedFromBytes).toBeGreaterThan(119_000);
		expect(r.shortenedToBytes).toBeLessThan(r.shortenedFromBytes);
	});

	it("keys a trim by its cut: the same history gives the same key, a moved cut another, no trim none", () => {
		const plan = (m: TranscriptMessage[], budget: number) =>
			trimMessages(m, { budgetTokens: budget, cutStepTokens: 1000 });
		expect(trimKey(plan(history, 1_000_000))).toBe("");
		expect(trimKey(plan(history, 12_000))).toBe(trimKey(plan(structuredClone(history), 12_000)));
		expect(trimKey(plan(history, 12_000))).not.toBe(trimKey(plan(history, 30_000)));
	});
});

describe("hostSeesSystemMessages", () => {
	it("is true only on a host whose session manager has Pi 0.87's appendContextEdit", () => {
		expect(hostSeesSystemMessages({ sessionManager: { appendContextEdit: () => undefined } })).toBe(true);
		expect(hostSeesSystemMessages({ sessionManager: {} })).toBe(false);
		expect(hostSeesSystemMessages(undefined)).toBe(false);
	});
});

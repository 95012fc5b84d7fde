/**
 * The context ledger: every message lands in one source, the split is scaled to Pi's reading, what each
 * extension kept out is read from the details our results carry, and artifacts come newest first with
 * their read call.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildLedger, composition, keptOut, sessionArtifactPaths, sourceOf } from "../../extensions/headroom/ledger.ts";
import { bar, formatLedger } from "../../extensions/headroom/ledger-format.ts";

const text = (t: string) => [{ type: "text", text: t }];
const user = (t: string) => ({ role: "user", content: text(t) });
const assistant = (t: string) => ({ role: "assistant", content: text(t) });
const toolResult = (toolName: string, t: string, details?: unknown) => ({
	role: "toolResult",
	toolName,
	content: text(t),
	details,
});

describe("sourceOf", () => {
	it("files each kind of message under its source", () => {
		expect(sourceOf(user("hi"))).toBe("conversation");
		expect(sourceOf(assistant("ok"))).toBe("conversation");
		expect(sourceOf(toolResult("bash", "out"))).toBe("toolOutputs");
		expect(sourceOf({ role: "bashExecution", command: "ls", output: "a" })).toBe("toolOutputs");
		expect(sourceOf(toolResult("subagent_wait", "res"))).toBe("subagentResults");
		expect(sourceOf({ role: "custom", customType: "subagent-result", content: "r" })).toBe("subagentResults");
		expect(sourceOf({ role: "compactionSummary", summary: "s" })).toBe("handoffs");
		expect(sourceOf(null)).toBe("conversation");
	});
});

describe("composition", () => {
	it("the sources add up to Pi's reading when there is one, and to the estimate otherwise", () => {
		fc.assert(
			fc.property(
				fc.array(fc.tuple(fc.constantFrom("u", "a", "t", "s", "h"), fc.string({ maxLength: 200 })), { maxLength: 30 }),
				fc.option(fc.integer({ min: 1, max: 200_000 }), { nil: undefined }),
				(parts, reading) => {
					const messages = parts.map(([k, t]) =>
						k === "u"
							? user(t)
							: k === "a"
								? assistant(t)
								: k === "t"
									? toolResult("read", t)
									: k === "s"
										? toolResult("subagent_wait", t)
										: { role: "compactionSummary", summary: t },
					);
					const { sources, basis } = composition({
						messages,
						systemPrompt: "You are a helpful agent.",
						tools: [{ name: "read", description: "read a file", parameters: { type: "object" } }],
						usage: reading === undefined ? undefined : { tokens: reading, contextWindow: 256_000 },
					});
					const total = sources.reduce((s, x) => s + x.tokens, 0);
					const estimate = sources.reduce((s, x) => s + x.estimatedTokens, 0);
					if (reading === undefined) {
						expect(basis).toBe("estimate");
						expect(total).toBe(estimate);
					} else {
						expect(basis).toBe("pi-usage");
						expect(Math.abs(total - reading)).toBeLessThanOrEqual(sources.length);
					}
					expect(sources.reduce((s, x) => s + x.messages, 0)).toBe(messages.length + 1);
				},
			),
		);
	});
});

describe("kept out and artifacts", () => {
	const stub = "[Artifact 3f2a | bash | 1,000,000 bytes]\nsome lines\n[Full output stored: /s/tool-outputs/a.txt]";
	const entries = [
		{ type: "message", message: user("go") },
		{
			type: "message",
			message: toolResult("bash", stub, { headroom: { projected: true, artifacts: ["/s/tool-outputs/a.txt"] } }),
		},
		{
			type: "message",
			message: toolResult("subagent_wait", "projected", {
				headroom: { projected: true, artifacts: ["/s/subagent-results/b.txt"] },
				items: [{ id: "sa-1", fullBytes: 37_000, shownBytes: 15_000, artifactPath: "/s/subagent-results/b.txt" }],
			}),
		},
		{
			type: "message",
			message: {
				role: "custom",
				customType: "subagent-result",
				content: "r",
				details: { items: [{ fullBytes: 100, shownBytes: 100 }] },
			},
		},
		{
			type: "compaction",
			summary: "the handoff summary",
			tokensBefore: 40_000,
			details: { kind: "headroom-handoff", trajectories: [{ path: "/s/handoffs/x/t.json", label: "summary" }] },
		},
		{ type: "compaction", summary: "Pi's own", tokensBefore: 1000, details: {} },
	];
	const facts = new Map([
		["/s/tool-outputs/a.txt", { path: "/s/tool-outputs/a.txt", bytes: 1_000_000, mtimeMs: 1000 }],
		["/s/subagent-results/b.txt", { path: "/s/subagent-results/b.txt", bytes: 37_000, mtimeMs: 3000 }],
	]);

	it("counts stubs, projected results and handoffs, each from its own details", () => {
		const [tool, sub, hand] = keptOut(entries, facts);
		expect(tool).toMatchObject({
			extension: "tool-artifacts",
			count: 1,
			fullBytes: 1_000_000,
			shownBytes: stub.length,
		});
		expect(sub).toMatchObject({ extension: "subagents", count: 2, fullBytes: 37_100, shownBytes: 15_100 });
		expect(hand).toMatchObject({ extension: "handoff", count: 1, fullTokens: 40_000 });
		expect(tool.keptOutTokens).toBeGreaterThan(390_000);
		expect(hand.keptOutTokens).toBeGreaterThan(39_000);
	});

	it("lists the session's artifacts newest first, a gone one last, each with its read call", () => {
		expect(sessionArtifactPaths(entries).sort()).toEqual(
			["/s/handoffs/x/t.json", "/s/subagent-results/b.txt", "/s/tool-outputs/a.txt"].sort(),
		);
		const ledger = buildLedger({ messages: [], entries, systemPrompt: "", tools: [], artifacts: facts });
		expect(ledger.artifacts.map((a) => a.path)).toEqual([
			"/s/subagent-results/b.txt",
			"/s/tool-outputs/a.txt",
			"/s/handoffs/x/t.json",
		]);
		expect(ledger.artifacts[0].readCall).toBe('read(path="/s/subagent-results/b.txt")');
		const shown = formatLedger(ledger, 10_000, { bars: "ascii" }).join("\n");
		expect(shown).toContain("gone");
		expect(shown).toContain("subagent-results");
		expect(shown).toContain("1 handoff: 40,000 tokens of history");
	});
});

describe("context-trim in the ledger", () => {
	const record = (over: Record<string, number>) => ({
		type: "custom",
		customType: "context-trim",
		data: {
			kind: "headroom-context-trim",
			messagesBefore: 800,
			messagesAfter: 120,
			messagesOmitted: 681,
			tokensBefore: 180_000,
			tokensAfter: 90_500,
			tokensOmitted: 88_000,
			textsShortened: 0,
			shortenedFromBytes: 0,
			shortenedToBytes: 0,
			systemTokens: 9000,
			budgetTokens: 100_000,
			...over,
		},
	});

	it("shows the latest recorded trim's figures and how often the cut changed", () => {
		const entries = [
			record({ messagesBefore: 500, tokensBefore: 120_000 }),
			{ type: "custom", customType: "context-trim", data: { kind: "something-else" } },
			{ type: "custom", customType: "other", data: { kind: "headroom-context-trim" } },
			record({ textsShortened: 2, shortenedFromBytes: 200_000, shortenedToBytes: 8192 }),
		];
		const trim = keptOut(entries, new Map()).find((k) => k.extension === "context-trim");
		expect(trim).toMatchObject({ count: 2, fullTokens: 180_000, shownTokens: 90_500, keptOutTokens: 89_500 });
		const ledger = buildLedger({ messages: [], entries, systemPrompt: "", tools: [], artifacts: new Map() });
		const line = formatLedger(ledger, 0, { bars: "ascii" }).find((l) => l.trim().startsWith("context-trim")) ?? "";
		expect(line).toContain("latest trim: 800 → 120 messages, ≈ 180,000 → 90,500 tokens per request");
		expect(line).toContain("≈ 89,500 kept out, 681 messages left out");
		expect(line).toContain("2 texts as head+tail (195.3 KiB → 8.0 KiB)");
		expect(line).toContain("the cut changed 2 times");
	});

	it("says so when no request was trimmed, and tolerates broken figures", () => {
		const ledger = buildLedger({ messages: [], entries: [], systemPrompt: "", tools: [], artifacts: new Map() });
		expect(formatLedger(ledger, 0, { bars: "ascii" }).join("\n")).toContain(
			"context-trim    no request trimmed this session",
		);
		const broken = record({ tokensBefore: Number.NaN, tokensAfter: -5 });
		const trim = keptOut([broken], new Map()).find((k) => k.extension === "context-trim");
		expect(trim).toMatchObject({ count: 1, fullTokens: 0, shownTokens: 0, keptOutTokens: 0 });
	});
});

describe("bar", () => {
	it("is always `columns` wide and never empty for a non-zero share", () => {
		fc.assert(
			fc.property(fc.double({ min: -1, max: 2, noNaN: true }), fc.integer({ min: 1, max: 60 }), (share, columns) => {
				const b = bar(share, columns, "ascii");
				expect(b.length).toBe(columns);
				if (share > 0) expect(b.startsWith("#")).toBe(true);
				if (share <= 0) expect(b).not.toContain("#");
			}),
		);
	});
});

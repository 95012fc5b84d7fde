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

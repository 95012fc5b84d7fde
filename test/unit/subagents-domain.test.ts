import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	compactArgs,
	formatDuration,
	lastAssistant,
	plural,
	statusGlyph,
	TOOL_ARGS_BRIEF_BYTES,
} from "../../extensions/subagents/domain/format.ts";
import { DeliveryLedger } from "../../extensions/subagents/domain/ledger.ts";
import { MODEL_CHOICES_SHOWN, resolveModelSpec } from "../../extensions/subagents/domain/models.ts";
import {
	type ChildRecord,
	childrenToStart,
	deriveName,
	NAME_MAX_BYTES,
	partitionIds,
	queuePosition,
} from "../../extensions/subagents/domain/records.ts";
import { badModelError } from "../../extensions/subagents/prompt/spawn.ts";
import { childRecord } from "./subagents-fakes.ts";

const bytes = (text: string) => Buffer.byteLength(text, "utf8");
/** True when the text has no lone surrogate (a clip that split a pair would leave one). */
const wellFormed = (text: string) =>
	!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
/** Text rich in characters outside the BMP (surrogate pairs) and multi-byte ones. */
const wideText = fc
	.array(fc.constantFrom("a", " ", "é", "中", "😀", "𝄞", "\n", "{"), { maxLength: 120 })
	.map((parts) => parts.join(""));

const modelArb = fc.record({
	provider: fc.constantFrom("mock", "openai", "anthropic"),
	id: fc.constantFrom("m1", "m2", "mock-model", "big"),
});

function child(id: string, state: ChildRecord["state"], queuedAt: number): ChildRecord {
	return childRecord({ id, name: id, state, createdAt: queuedAt, queuedAt, startedAt: undefined });
}

const keyOf = (m: { provider: string; id: string }) => `${m.provider}/${m.id}`;

describe("resolveModelSpec", () => {
	/** A registry: every model, a subset with credentials, and the session's provider. */
	const poolsArb = fc.uniqueArray(modelArb, { selector: keyOf, minLength: 1 }).chain((all) =>
		fc.record({
			all: fc.constant(all),
			available: fc.subarray(all),
			preferProvider: fc.option(fc.constantFrom("mock", "openai", "anthropic"), { nil: undefined }),
		}),
	);

	it("resolves exact provider/id (usable first, else any known), a bare id only when one usable model has it", () => {
		fc.assert(
			fc.property(poolsArb, modelArb, (pools, wanted) => {
				const full = resolveModelSpec(`${wanted.provider}/${wanted.id}`, pools);
				const known = pools.all.some((m) => keyOf(m) === keyOf(wanted));
				const usableSameId = pools.available.filter((m) => m.id === wanted.id);
				expect(full.ok).toBe(known);
				if (full.ok) expect(keyOf(full.value)).toBe(keyOf(wanted));
				const bare = resolveModelSpec(wanted.id, pools);
				expect(bare.ok).toBe(usableSameId.length === 1);
				if (bare.ok) expect(bare.value).toEqual(usableSameId[0]);
				else if (usableSameId.length > 1) {
					// Ambiguous only among usable models: providers without credentials never count.
					expect(bare.failure.reason).toBe("ambiguous");
					expect([...bare.failure.choices].sort()).toEqual(usableSameId.map(keyOf).sort());
				} else {
					const knownSameId = pools.all.filter((m) => m.id === wanted.id);
					expect(bare.failure.reason).toBe(knownSameId.length > 0 ? "no-credentials" : "unknown");
					if (knownSameId.length > 0)
						expect(bare.failure.providers).toEqual([...new Set(knownSameId.map((m) => m.provider))].sort());
				}
			}),
		);
	});

	it("offers only usable models as choices, the session's provider first, each once", () => {
		fc.assert(
			fc.property(poolsArb, fc.constantFrom("nope", "zz/nope", "m1", "mock/zz"), (pools, spec) => {
				const out = resolveModelSpec(spec, pools);
				if (out.ok) return;
				const usable = new Set(pools.available.map(keyOf));
				expect(out.failure.choices.every((c) => usable.has(c))).toBe(true);
				expect(new Set(out.failure.choices).size).toBe(out.failure.choices.length);
				if (out.failure.reason !== "ambiguous") expect(out.failure.choices.length).toBe(usable.size);
				const firstOther = out.failure.choices.findIndex((c) => !c.startsWith(`${pools.preferProvider}/`));
				if (firstOther >= 0)
					expect(out.failure.choices.slice(firstOther).some((c) => c.startsWith(`${pools.preferProvider}/`))).toBe(
						false,
					);
			}),
		);
	});

	it("takes an id that itself contains a slash as a bare id when no provider/id matches", () => {
		const models = [{ provider: "router", id: "openai/gpt-x" }];
		const out = resolveModelSpec("openai/gpt-x", {
			available: models,
			all: [...models, { provider: "openai", id: "gpt-x" }],
		});
		expect(out).toEqual({ ok: true, value: models[0] });
	});
});

describe("model choices and plural", () => {
	it("an error names the choices in order up to the cap and counts the rest exactly", () => {
		const choice = fc.stringMatching(/^[a-z]{1,6}\/[a-z0-9]{1,10}$/);
		fc.assert(
			fc.property(fc.uniqueArray(choice, { minLength: 1, maxLength: 60 }), (choices) => {
				const text = badModelError("x", { reason: "unknown", choices });
				const listed = text.slice(text.indexOf(": ") + 2, -1);
				const more = /… and (\d+) more$/.exec(listed);
				const named = (more ? listed.slice(0, more.index).trim() : listed).split(", ");
				expect(named).toEqual(choices.slice(0, named.length));
				expect(named.length + Number(more?.[1] ?? 0)).toBe(choices.length);
				// All of them when they fit the cap's entries (the count would take the last one's place).
				expect(named.length).toBe(choices.length <= MODEL_CHOICES_SHOWN + 1 ? choices.length : MODEL_CHOICES_SHOWN);
			}),
		);
	});

	it("uses the singular for exactly one", () => {
		expect(plural(1, "turn")).toBe("1 turn");
		expect(plural(0, "turn")).toBe("0 turns");
		expect(plural(2, "turn")).toBe("2 turns");
		expect(plural(1200, "output token")).toBe("1,200 output tokens");
	});
});

describe("partitionIds", () => {
	it("keeps request order, drops duplicates, and splits known from unknown", () => {
		fc.assert(
			fc.property(fc.array(fc.constantFrom("sa-1", "sa-2", "sa-3", "sa-9", "x")), (requested) => {
				const known = ["sa-1", "sa-2", "sa-3"];
				const out = partitionIds(requested, known);
				expect([...out.known, ...out.unknown].sort()).toEqual([...new Set(requested)].sort());
				expect(out.known.every((id) => known.includes(id))).toBe(true);
				expect(out.unknown.some((id) => known.includes(id))).toBe(false);
				expect(out.known).toEqual([...new Set(requested)].filter((id) => known.includes(id)));
			}),
		);
	});
});

describe("queue rule", () => {
	it("starts the oldest queued children up to the free slots, and positions count from 1", () => {
		const states = fc.constantFrom<ChildRecord["state"]>("queued", "running", "starting", "completed", "failed");
		fc.assert(
			fc.property(fc.array(states, { maxLength: 12 }), fc.integer({ min: 1, max: 5 }), (list, max) => {
				const children = list.map((s, i) => child(`sa-${i + 1}`, s, 1000 - i)); // later ids queued earlier
				const start = childrenToStart(children, max);
				const active = list.filter((s) => s === "running" || s === "starting").length;
				const queued = children.filter((c) => c.state === "queued").sort((a, b) => a.queuedAt - b.queuedAt);
				expect(start.length).toBe(Math.min(queued.length, Math.max(0, max - active)));
				expect(start).toEqual(queued.slice(0, start.length));
				for (const [i, c] of queued.entries()) expect(queuePosition(children, c.id)).toBe(i + 1);
			}),
		);
	});
});

describe("DeliveryLedger", () => {
	it("hands each result out exactly once, whatever the interleaving of waits and automatic deliveries", () => {
		const op = fc.record({ key: fc.integer({ min: 0, max: 5 }), by: fc.constantFrom<"wait" | "auto">("wait", "auto") });
		fc.assert(
			fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
				const ledger = new DeliveryLedger();
				for (let i = 0; i < 6; i++)
					ledger.add({ key: `sa-${i}#1`, id: `sa-${i}`, run: 1, text: "t", state: "completed", settledAt: i });
				const winners = new Map<string, string>();
				for (const { key, by } of ops) {
					const k = `sa-${key}#1`;
					const won = ledger.claim(k, by);
					expect(won).toBe(!winners.has(k));
					if (won) winners.set(k, by);
				}
				expect(ledger.pending().map((r) => r.key)).toEqual(
					[0, 1, 2, 3, 4, 5].map((i) => `sa-${i}#1`).filter((k) => !winners.has(k)),
				);
				for (const [k, by] of winners) expect(ledger.get(k)!.delivery).toBe(by);
			}),
		);
	});

	it("add keeps the first record of a key; release re-offers; latest picks the highest run", () => {
		const ledger = new DeliveryLedger();
		ledger.add({ key: "sa-1#1", id: "sa-1", run: 1, text: "one", state: "completed", settledAt: 1 });
		ledger.add({ key: "sa-1#1", id: "sa-1", run: 1, text: "dup", state: "completed", settledAt: 2 });
		ledger.add({ key: "sa-1#2", id: "sa-1", run: 2, text: "two", state: "failed", settledAt: 3 });
		expect(ledger.get("sa-1#1")!.text).toBe("one");
		expect(ledger.latest("sa-1")!.text).toBe("two");
		expect(ledger.claim("sa-1#1", "auto")).toBe(true);
		ledger.release("sa-1#1");
		expect(ledger.claim("sa-1#1", "wait")).toBe(true);
	});
});

describe("small helpers", () => {
	it("names stay short and single-line", () => {
		fc.assert(
			fc.property(fc.string(), fc.option(fc.string(), { nil: undefined }), (prompt, given) => {
				const name = deriveName(prompt, given);
				expect(name.length).toBeLessThanOrEqual(40);
				expect(name).not.toMatch(/\n/);
			}),
		);
	});

	it("names and tool-argument briefs are clipped by UTF-8 bytes, never inside a surrogate pair", () => {
		fc.assert(
			fc.property(wideText, fc.option(wideText, { nil: undefined }), (prompt, given) => {
				const name = deriveName(prompt, given);
				expect(bytes(name)).toBeLessThanOrEqual(NAME_MAX_BYTES);
				expect(wellFormed(name)).toBe(true);
				const brief = compactArgs({ command: prompt });
				expect(bytes(brief)).toBeLessThanOrEqual(TOOL_ARGS_BRIEF_BYTES);
				expect(wellFormed(brief)).toBe(true);
				expect(brief).not.toMatch(/\s{2,}|\n/);
				const full = JSON.stringify({ command: prompt }).replace(/\s+/g, " ");
				if (bytes(full) <= TOOL_ARGS_BRIEF_BYTES) expect(brief).toBe(full);
				else expect(full.startsWith(brief.slice(0, -1))).toBe(true);
			}),
		);
		expect(compactArgs("😀".repeat(50), 9)).toBe("😀…");
	});

	it("formats durations and glyphs", () => {
		expect(formatDuration(850)).toBe("850 ms");
		expect(formatDuration(12_340)).toBe("12.3 s");
		expect(formatDuration(245_000)).toBe("4m 05s");
		expect(formatDuration(-1)).toBe("0 ms");
		expect(
			new Set(["queued", "running", "completed", "failed", "cancelled"].map((s) => statusGlyph(s as never))).size,
		).toBe(5);
	});

	it("reads the last assistant message's text and stop reason", () => {
		const msgs = [
			{ role: "assistant", content: [{ type: "text", text: "old" }] },
			{ role: "toolResult", content: [] },
			{
				role: "assistant",
				content: [
					{ type: "thinking", thinking: "hm" },
					{ type: "text", text: "new" },
				],
				stopReason: "stop",
			},
		];
		expect(lastAssistant(msgs)).toEqual({ text: "new", stopReason: "stop", errorMessage: undefined });
		expect(lastAssistant([])).toEqual({ text: "" });
	});
});

/**
 * An output_schema pattern is the model's text and TypeBox runs it on Pi's main thread: a catastrophic one
 * (`^(a+)+$` over a long string of a's and a "!") must not freeze the process. Patterns are tried off the
 * main thread with a deadline first; one that hangs makes the answer invalid, naming it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { structuredSteps } from "../../extensions/subagents/checkable/checkable.ts";
import { probePatterns, schemaPatterns, valueStrings } from "../../extensions/subagents/checkable/pattern-probe.ts";
import { checkAnswerBounded, compileOutputSchema } from "../../extensions/subagents/checkable/schema.ts";

const EVIL = "^(a+)+$";
const schemaOf = (raw: unknown) => {
	const compiled = compileOutputSchema(raw);
	if (!compiled.ok) throw new Error(compiled.error);
	return compiled.schema;
};

describe("output_schema patterns are matched with a time bound", () => {
	it("a catastrophic pattern is stopped at the deadline and named; the main thread stays free", async () => {
		const schema = schemaOf({ type: "object", properties: { id: { type: "string", pattern: EVIL } } });
		const answer = JSON.stringify({ id: `${"a".repeat(40)}!` });
		let ticks = 0;
		const ticker = setInterval(() => ticks++, 20);
		const started = Date.now();
		const checked = await checkAnswerBounded(schema, answer, 500);
		clearInterval(ticker);
		expect(Date.now() - started).toBeLessThan(5_000);
		expect(ticks).toBeGreaterThan(5); // the main thread kept running meanwhile
		expect(checked).toMatchObject({ ok: false, found: true });
		expect(checked.ok ? [] : checked.errors).toEqual([
			expect.stringMatching(/the pattern "\^\(a\+\)\+\$" did not finish matching within 500 ms/),
		]);
	});

	it("a structured child whose schema hangs gets an invalid verdict, not a frozen parent", async () => {
		const steps = structuredSteps(schemaOf({ type: "object", patternProperties: { [EVIL]: { type: "number" } } }));
		const bad = JSON.stringify({ [`${"a".repeat(40)}!`]: 1 });
		const reviewed = await steps.review!(bad, async () => ({ ok: true, text: bad }));
		expect(reviewed.verdict).toBe("output INVALID");
		expect(reviewed.text).toMatch(/did not finish matching/);
	}, 20_000);

	it("safe patterns validate as before", async () => {
		const schema = schemaOf({
			type: "object",
			properties: { id: { type: "string", pattern: "^[a-z]+-\\d+$" } },
			required: ["id"],
		});
		expect(await checkAnswerBounded(schema, '{"id":"abc-12"}')).toMatchObject({ ok: true, value: { id: "abc-12" } });
		expect(await checkAnswerBounded(schema, '{"id":"ABC"}')).toMatchObject({ ok: false, found: true });
	});

	it("collects every pattern and every string a validator could match", () => {
		expect(
			schemaPatterns({
				properties: { pattern: { type: "string", pattern: "x" } },
				patternProperties: { "^k": { pattern: "y" } },
				enum: [{ pattern: "data-not-a-pattern" }],
			}).sort(),
		).toEqual(["^k", "x", "y"]);
		fc.assert(
			fc.property(fc.jsonValue(), (v) => {
				const strings = new Set(valueStrings(v));
				const walk = (n: unknown): void => {
					if (typeof n === "string") expect(strings.has(n)).toBe(true);
					else if (Array.isArray(n)) n.forEach(walk);
					else if (n && typeof n === "object")
						for (const [k, x] of Object.entries(n)) {
							expect(strings.has(k)).toBe(true);
							walk(x);
						}
				};
				walk(v);
			}),
		);
	});

	it("no patterns or no strings: nothing to start", async () => {
		expect(await probePatterns([], ["a"])).toEqual({ ok: true });
		expect(await probePatterns([EVIL], [])).toEqual({ ok: true });
		expect(await probePatterns(["^a+$"], ["aaa"], 2_000)).toEqual({ ok: true });
	});
});

/**
 * Structured results: output schemas accepted or refused at spawn with a reason, the trailing JSON value
 * found in an answer (whole, fenced, or after prose), and TypeBox's verdict with bounded errors.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	checkAnswer,
	compileOutputSchema,
	extractTrailingJson,
	OUTPUT_SCHEMA_MAX_BYTES,
	type OutputSchema,
	SCHEMA_ERROR_MAX_BYTES,
	SCHEMA_ERRORS_SHOWN,
} from "../../extensions/subagents/checkable/schema.ts";

const REVIEW = {
	type: "object",
	properties: {
		verdict: { enum: ["pass", "fail"] },
		files: { type: "array", items: { type: "string" } },
		score: { type: "integer", minimum: 0, maximum: 10 },
	},
	required: ["verdict", "files"],
	additionalProperties: false,
};

function compiled(schema: unknown): OutputSchema {
	const c = compileOutputSchema(schema);
	if (!c.ok) throw new Error(c.error);
	return c.schema;
}

describe("compileOutputSchema", () => {
	it("accepts ordinary schemas, as objects or JSON text, with local $refs and recursion", () => {
		expect(compileOutputSchema(REVIEW).ok).toBe(true);
		expect(compileOutputSchema(JSON.stringify(REVIEW)).ok).toBe(true);
		const tree = compiled({
			$defs: { node: { type: "object", properties: { kids: { type: "array", items: { $ref: "#/$defs/node" } } } } },
			$ref: "#/$defs/node",
		});
		expect(tree.validator.Check({ kids: [{ kids: [] }] })).toBe(true);
		expect(tree.validator.Check({ kids: [1] })).toBe(false);
	});

	it("refuses broken or unsupported schemas with the reason", () => {
		const refused = (schema: unknown) => {
			const c = compileOutputSchema(schema);
			expect(c.ok).toBe(false);
			return c.ok ? "" : c.error;
		};
		expect(refused("{not json")).toMatch(/^it is a string that is not valid JSON/);
		expect(refused([1])).toMatch(/must be a JSON Schema object/);
		expect(refused({ type: "object", requried: ["a"] })).toMatch(
			/^unsupported keyword "requried"; supported: \$schema/,
		);
		expect(refused({ type: "object", properties: { a: { type: "string", nullable: true } } })).toMatch(
			/unsupported keyword "nullable" at \/properties\/a/,
		);
		expect(refused({ type: "strnig" })).toMatch(/^\/type: /);
		expect(refused({ anyOf: "x" })).toMatch(/^\/anyOf: must be array/);
		expect(refused({ $ref: "#/$defs/missing" })).toBe('$ref "#/$defs/missing" names no definition in $defs');
		expect(refused({ $ref: "https://example.invalid/schema.json" })).toMatch(/^\/\$ref: must match pattern/);
		expect(refused({ type: "string", pattern: "(" })).toMatch(/^TypeBox cannot compile it: .*Unterminated group/);
		const big = { type: "object", description: "x".repeat(OUTPUT_SCHEMA_MAX_BYTES) };
		expect(refused(big)).toMatch(/bytes as JSON; the limit is 16384/);
	});
});

describe("extractTrailingJson", () => {
	it("finds the JSON an answer ends with: whole, fenced after prose, or bare after prose", () => {
		expect(extractTrailingJson('  {"a":1}  ')).toEqual({ ok: true, value: { a: 1 }, raw: '{"a":1}' });
		const fenced = 'Looked at it.\n```json\n{"x": [1, 2]}\n```\n';
		expect(extractTrailingJson(fenced)).toEqual({ ok: true, value: { x: [1, 2] }, raw: '{"x": [1, 2]}' });
		const twoFences = '```ts\nconst a = 1;\n```\nand the result:\n```json\n{"ok": true}\n```';
		expect(extractTrailingJson(twoFences)).toEqual({ ok: true, value: { ok: true }, raw: '{"ok": true}' });
		const bare = 'Summary {not json here}\nDone:\n{\n  "verdict": "pass",\n  "files": ["a {b}"]\n}';
		expect(extractTrailingJson(bare)).toMatchObject({ ok: true, value: { verdict: "pass", files: ["a {b}"] } });
		expect(extractTrailingJson('{"a":1}\nand then more prose').ok).toBe(false);
		expect(extractTrailingJson("plain prose, no JSON").ok).toBe(false);
		expect(extractTrailingJson("").ok).toBe(false);
	});

	it("property: a fenced JSON value, or a bare object or array, after any prose is found exactly", () => {
		fc.assert(
			fc.property(
				fc.jsonValue(),
				fc.string().map((s) => s.replace(/[{[`]/g, "")),
				fc.boolean(),
				(value, prose, fence) => {
					// Bare after prose, only objects and arrays are recognisable (a scalar needs the fence).
					const json = JSON.stringify(fence ? value : { value }, null, 1);
					const answer = fence ? `${prose}\n\`\`\`json\n${json}\n\`\`\`\n` : `${prose}\n${json}\n`;
					const found = extractTrailingJson(answer);
					expect(found.ok).toBe(true);
					if (found.ok) expect(JSON.stringify(found.value)).toBe(JSON.stringify(JSON.parse(json)));
				},
			),
		);
	});
});

describe("checkAnswer", () => {
	const schema = compiled(REVIEW);

	it("a valid trailing JSON passes with its exact text; prose alone is 'not found'", () => {
		const answer = 'All good.\n```json\n{"verdict": "pass", "files": ["a.ts"]}\n```';
		expect(checkAnswer(schema, answer)).toEqual({
			ok: true,
			value: { verdict: "pass", files: ["a.ts"] },
			raw: '{"verdict": "pass", "files": ["a.ts"]}',
		});
		expect(checkAnswer(schema, "It passes, no files changed.")).toEqual({ ok: false, found: false, errors: [] });
	});

	it("an invalid value reports the validator's first errors, bounded", () => {
		const checked = checkAnswer(schema, '{"verdict": "maybe", "files": [1], "score": 11, "extra": true}');
		expect(checked.ok).toBe(false);
		if (checked.ok) return;
		expect(checked.found).toBe(true);
		expect(checked.errors.length).toBeLessThanOrEqual(SCHEMA_ERRORS_SHOWN);
		expect(checked.errors).toContain("(root): must not have additional properties");
		expect(checked.errors).toContain('/verdict: must be equal to one of the allowed values ["pass","fail"]');
		expect(checked.errors).toContain("/files/0: must be string");
		const long = compiled({ type: "object", properties: { ["k".repeat(400)]: { type: "string" } } });
		const bad = checkAnswer(long, JSON.stringify({ ["k".repeat(400)]: 1 }));
		expect(!bad.ok && Buffer.byteLength(bad.errors[0])).toBeLessThanOrEqual(SCHEMA_ERROR_MAX_BYTES);
	});
});

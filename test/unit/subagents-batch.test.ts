import { readFileSync, rmSync } from "node:fs";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { STATIC_CAPS } from "../../extensions/shared/budget/batch.ts";
import { MIN_WINDOW_BYTES } from "../../extensions/shared/projection/projection.ts";
import { storeForAgentDir } from "../../extensions/shared/store/artifact-store.ts";
import { type BatchInput, countLines, projectBatch } from "../../extensions/subagents/delivery/batch.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const agentDir = makeTestDir("subagents-batch");
const store = storeForAgentDir(agentDir);
afterAll(() => rmSync(agentDir, { recursive: true, force: true }));

const utf8 = (s: string) => Buffer.byteLength(s, "utf8");

function input(id: string, text: string): BatchInput {
	return {
		id,
		run: 1,
		header: `── ${id} completed ──`,
		text,
		noRoom: (stored, bytes) =>
			stored.ok ? `${id}: ${bytes} bytes at ${stored.path}` : `${id}: not saved (${stored.error})`,
	};
}

const lineArb = fc.string({ unit: fc.constantFrom("a", "b", "é", "😀", " ", "x"), maxLength: 120 });
const textArb = fc.array(lineArb, { minLength: 1, maxLength: 900 }).map((lines) => lines.join("\n"));

describe("projectBatch", () => {
	it("stays within the batch cap; every result is verbatim, projected with its artifact, or a one-line entry with a path", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(textArb, { minLength: 1, maxLength: 6 }),
				fc.constantFrom<"wait" | "autoDelivery">("wait", "autoDelivery"),
				fc.option(fc.integer({ min: 0, max: 128_000 }), { nil: undefined }),
				async (texts, surface, tokens) => {
					const usage = tokens === undefined ? undefined : { tokens, contextWindow: 128_000 };
					const out = await projectBatch(
						texts.map((t, i) => input(`sa-${i + 1}`, t)),
						{ surface, store, usage, reservedOutputTokens: 4096, leading: ["title line"] },
					);
					// With almost no headroom every result still gets its one line (never silence), even past the cap.
					if (!out.items.every((i) => i.oneLine)) expect(utf8(out.text)).toBeLessThanOrEqual(out.allocation.batchBytes);
					expect(out.allocation.source).toBe(usage ? "headroom" : "static");
					out.items.forEach((item, i) => {
						expect(item.fullBytes).toBe(utf8(texts[i]));
						expect(item.fullLines).toBe(texts[i].split("\n").length);
						if (!item.truncated) {
							expect(out.text).toContain(texts[i]);
							expect(item.artifactPath).toBeUndefined();
						} else {
							expect(readFileSync(item.artifactPath!, "utf8")).toBe(texts[i]);
							expect(out.artifacts).toContain(item.artifactPath);
							if (!item.oneLine) {
								expect(item.projectedBytes).toBeLessThanOrEqual(STATIC_CAPS[surface].perResultBytes);
								expect(item.projectedBytes).toBeGreaterThanOrEqual(Math.min(item.fullBytes, MIN_WINDOW_BYTES) - 8);
							}
						}
					});
				},
			),
			{ numRuns: 40 },
		);
	});

	it("check previews keep the recent end (head share 0) within 2 KiB / 20 lines", async () => {
		const text = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`).join("\n");
		const out = await projectBatch([input("sa-1", text)], { surface: "check", store, headShare: 0 });
		const body = out.text.slice(out.text.indexOf("\n") + 1);
		expect(utf8(body)).toBeLessThanOrEqual(2048);
		expect(countLines(body)).toBeLessThanOrEqual(20);
		expect(body).toContain("line 300");
		expect(body).not.toContain("line 1\n");
	});

	it("countLines counts like Pi's read (a trailing newline is one more line)", () => {
		fc.assert(
			fc.property(fc.string(), (s) => {
				expect(countLines(s)).toBe(s.split("\n").length);
			}),
		);
	});
});

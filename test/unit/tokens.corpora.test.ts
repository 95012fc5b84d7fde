import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GENERATED_CORPUS_FILES, generateAll } from "../fixtures/corpora/generate.ts";
import { loadCorpora } from "../fixtures/corpora/index.ts";

/** Minimum size of each calibration corpus in UTF-8 bytes. */
const MIN_CORPUS_BYTES = 50 * 1024;

describe("token-estimate corpora", () => {
	it("the committed files are exactly what the generator makes (regenerate with generate.ts --write)", () => {
		const fresh = generateAll();
		for (const [name, file] of Object.entries(GENERATED_CORPUS_FILES)) {
			const committed = readFileSync(new URL(`../fixtures/corpora/${file}`, import.meta.url), "utf8");
			expect(committed === fresh[name as keyof typeof fresh], `${file} differs from the generator`).toBe(true);
		}
	});

	it("has four corpora of at least 50 KiB each, with the script each one stands for", () => {
		const corpora = loadCorpora();
		expect(corpora.map((c) => c.name)).toEqual(["english", "typescript", "json", "chinese"]);
		for (const c of corpora) expect(Buffer.byteLength(c.text), c.name).toBeGreaterThanOrEqual(MIN_CORPUS_BYTES);
		const byName = Object.fromEntries(corpora.map((c) => [c.name, c.text]));
		expect(() => JSON.parse(byName.json)).not.toThrow();
		expect(byName.typescript).toMatch(/\bexport default function\b/);
		const han = byName.chinese.match(/[\u4e00-\u9fff]/g)?.length ?? 0;
		expect(han / byName.chinese.length).toBeGreaterThan(0.6);
		const ascii = byName.english.match(/[\x20-\x7e\n]/g)?.length ?? 0;
		expect(ascii / byName.english.length).toBeGreaterThan(0.99);
	});

	it("the prose corpora are varied, not one sentence repeated", () => {
		for (const c of loadCorpora().filter((x) => x.name === "english" || x.name === "chinese")) {
			const sentences = c.text.split(/[.?!。？！]\s*/).filter((s) => s.length > 5);
			const distinct = new Set(sentences).size;
			expect(distinct / sentences.length, c.name).toBeGreaterThan(0.95);
		}
	});
});

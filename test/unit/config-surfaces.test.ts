import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CONFIGURABLE_SURFACES, configuredSurface, DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { MIN_WINDOW_BYTES, MIN_WINDOW_LINES, project } from "../../extensions/shared/projection/projection.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { buildStub, stubSurface, type ToolResultFacts } from "../../extensions/tool-artifacts/artifacts.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { configLoader } from "./config-fixture.ts";
import { bytesOf, linesOf, textArb } from "./projection-arbitraries.ts";

const load = configLoader("config-surfaces");

const command = "toolArtifacts.stub.command";

describe("the surfaces section", () => {
	it("overrides a surface by name, field by field, and leaves the rest of the table alone", () => {
		const { config, warnings } = load({ surfaces: { [command]: { maxBytes: 8192, maxLines: 120, headShare: 0.3 } } });
		expect(warnings).toEqual([]);
		const tools = { ...config.toolArtifacts, surfaces: config.surfaces };
		expect(stubSurface("command", tools)).toMatchObject({ maxBytes: 8192, maxLines: 120, headShare: 0.3 });
		expect(stubSurface("search", tools)).toMatchObject({ maxBytes: 4096, maxLines: 100, headShare: 0.6 });
		expect(DEFAULT_CONFIG.surfaces).toEqual({});
	});

	it("wins over its alias key; the alias still applies where no entry names the surface", () => {
		const { config } = load({
			toolArtifacts: { stubMaxBytes: 6000, stubMaxLines: 50, summary: { maxInputChars: 9000 } },
			surfaces: { [command]: { maxLines: 200 }, "toolArtifacts.summaryInput": { maxBytes: 20_000 } },
		});
		const tools = { ...config.toolArtifacts, surfaces: config.surfaces };
		expect(stubSurface("command", tools)).toMatchObject({ maxBytes: 6000, maxLines: 200 });
		expect(stubSurface("file", tools)).toMatchObject({ maxBytes: 6000, maxLines: 50 });
		const summaryInput = configuredSurface("toolArtifacts.summaryInput", { maxBytes: 9000 }, config.surfaces);
		expect(summaryInput.maxBytes).toBe(20_000);
		expect(configuredSurface("toolArtifacts.summaryInput", { maxBytes: 9000 }, {}).maxBytes).toBe(9000);
	});

	it("warns naming the key and the file for an unknown or fixed surface name and for a bad value, and falls back", () => {
		const { config, warnings, file } = load({
			surfaces: {
				"toolArtifacts.stub.bogus": { maxBytes: 8192 },
				"subagents.name": { maxBytes: 4096 },
				[command]: { maxBytes: 10, maxLines: 120, headShare: 2, colour: "red" },
			},
			store: { maxAgeDays: 7 },
		});
		const text = warnings.join("\n");
		expect(text).toContain(`${file}: unknown key "surfaces.toolArtifacts.stub.bogus" ignored`);
		expect(text).toContain(`${file}: unknown key "surfaces.subagents.name" ignored`);
		expect(text).toContain("known surfaces: toolArtifacts.stub.command");
		expect(text).toContain(`${file}: "surfaces.${command}.maxBytes"`);
		expect(text).toContain(`${file}: "surfaces.${command}.headShare"`);
		expect(text).toContain(
			`${file}: unknown key "surfaces.${command}.colour" ignored (known keys: maxBytes, maxLines, headShare)`,
		);
		expect(warnings).toHaveLength(5);
		// Only the bad fields fall back: the good one and the rest of the file apply.
		expect(config.surfaces).toEqual({ [command]: { maxLines: 120 } });
		expect(config.store.maxAgeDays).toBe(7);
		expect(stubSurface("command", { ...config.toolArtifacts, surfaces: config.surfaces })).toMatchObject({
			maxBytes: SURFACES[command].maxBytes,
			maxLines: 120,
			headShare: SURFACES[command].headShare,
		});
	});

	it("accepts every configurable surface's own shipped limits, and nothing below the lower of its default and the window minimum", () => {
		for (const name of CONFIGURABLE_SURFACES) {
			const table = SURFACES[name] as { maxBytes: number; maxLines: number };
			const { config, warnings } = load({ surfaces: { [name]: { maxBytes: table.maxBytes } } });
			expect(warnings, name).toEqual([]);
			expect(configuredSurface(name, {}, config.surfaces).maxBytes, name).toBe(table.maxBytes);
			const below = Math.min(2 * MIN_WINDOW_BYTES, table.maxBytes) - 1;
			const rejected = load({ surfaces: { [name]: { maxBytes: below } } });
			expect(rejected.warnings.length, name).toBeGreaterThan(0);
			expect(configuredSurface(name, {}, rejected.config.surfaces).maxBytes, name).toBe(table.maxBytes);
		}
	});

	it("property: invalid overrides always fall back to the table, valid ones are kept", () => {
		const value = fc.oneof(
			fc.integer({ min: -10, max: 100_000 }),
			fc.double({ noNaN: false }),
			fc.string({ maxLength: 4 }),
			fc.constant(null),
		);
		fc.assert(
			fc.property(
				fc.constantFrom(...CONFIGURABLE_SURFACES),
				value,
				value,
				value,
				(name, maxBytes, maxLines, headShare) => {
					const written = { maxBytes, maxLines, headShare };
					const { config } = load({ surfaces: { [name]: written } });
					// What the file holds (JSON has no NaN, Infinity or -0).
					const read = JSON.parse(JSON.stringify(written)) as Record<string, unknown>;
					const s = configuredSurface(name, {}, config.surfaces);
					const table = SURFACES[name] as { maxBytes: number; maxLines: number; headShare?: number };
					const minBytes = Math.min(2 * MIN_WINDOW_BYTES, table.maxBytes);
					const minLines = Math.min(MIN_WINDOW_LINES, table.maxLines);
					const okBytes = Number.isSafeInteger(read.maxBytes) && (read.maxBytes as number) >= minBytes;
					const okLines = Number.isSafeInteger(read.maxLines) && (read.maxLines as number) >= minLines;
					const share = read.headShare;
					const okShare = typeof share === "number" && share >= 0 && share <= 1;
					expect(s.maxBytes).toBe(okBytes ? read.maxBytes : table.maxBytes);
					expect(s.maxLines).toBe(okLines ? read.maxLines : table.maxLines);
					expect(s.headShare).toBe(okShare ? share : table.headShare);
				},
			),
			{ numRuns: 60 },
		);
	});

	it("property: an overridden surface never yields an output above the overridden limits", () => {
		fc.assert(
			fc.property(
				fc.constantFrom(...CONFIGURABLE_SURFACES),
				fc.integer({ min: 2 * MIN_WINDOW_BYTES, max: 20_000 }),
				fc.integer({ min: MIN_WINDOW_LINES, max: 300 }),
				fc.double({ min: 0, max: 1, noNaN: true }),
				textArb,
				(name, maxBytes, maxLines, headShare, text) => {
					const s = configuredSurface(name, {}, { [name]: { maxBytes, maxLines, headShare } });
					const p = project(text, s, { headShare: s.headShare });
					expect(bytesOf(p.text)).toBeLessThanOrEqual(maxBytes);
					expect(linesOf(p.text)).toBeLessThanOrEqual(maxLines);
				},
			),
			{ numRuns: 200 },
		);
	});

	it("property: a real stub of an oversized command log stays within its overridden surface", async () => {
		const store = new ArtifactStore({ agentDir: join(makeTestDir("config-surfaces-store"), "store") });
		await fc.assert(
			fc.asyncProperty(
				fc.integer({ min: 2 * MIN_WINDOW_BYTES, max: 12_000 }),
				fc.integer({ min: 20, max: 300 }),
				fc.integer({ min: 200, max: 6000 }),
				async (maxBytes, maxLines, count) => {
					const text = Array.from({ length: count }, (_, i) => `step ${i + 1}: ${"x".repeat(i % 90)}`).join("\n");
					const fact: ToolResultFacts = {
						toolName: "bash",
						toolCallId: "call_s",
						input: { command: "make" },
						content: [{ type: "text", text }],
						details: undefined,
						isError: false,
					};
					const config = { ...DEFAULT_CONFIG.toolArtifacts, surfaces: { [command]: { maxBytes, maxLines } } };
					const built = await buildStub(fact, text, { store, config });
					expect(bytesOf(built.text)).toBeLessThanOrEqual(maxBytes);
					expect(linesOf(built.text)).toBeLessThanOrEqual(maxLines);
				},
			),
			{ numRuns: 25 },
		);
	});
});

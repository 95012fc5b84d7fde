// Every file a stub names is the stored full output, and every read call in it addresses that file's lines.
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { type BuiltStub, buildStub, type ToolResultFacts } from "../../extensions/tool-artifacts/artifacts.ts";
import { fileStore } from "./store-fixture.ts";

const { store } = fileStore("ta-paths");
const config = DEFAULT_CONFIG.toolArtifacts;
const outputsDir = store.dirFor("tool-outputs");
const storedFiles = () => {
	try {
		return readdirSync(outputsDir).length;
	} catch {
		return 0;
	}
};

const fact = (toolName: string, text: string, input: Record<string, unknown> = {}): ToolResultFacts => ({
	toolName,
	toolCallId: "call_p",
	input,
	content: [{ type: "text", text }],
	details: undefined,
	isError: false,
});

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const READ_CALL = /read\(path=("(?:[^"\\]|\\.)*"), offset=(\d+), limit=(\d+)\)/g;

/** The checks, for one stub of `full`; `shift` = file line number minus stored line number of numbered rows. */
function checkStub(built: BuiltStub, full: string, shift: number): void {
	if ("notStored" in built) throw new Error(built.notStored);
	const lines = full.split("\n");
	// Paths: every mention of the store is the stored full output.
	const mentions = built.text.match(new RegExp(`${escapeRegExp(store.root)}[^\\s"'\\]]*`, "g")) ?? [];
	expect(mentions.length).toBeGreaterThan(0);
	for (const m of mentions) expect(m).toBe(built.path);
	expect(readFileSync(built.path, "utf8")).toBe(full);
	// Numbered rows (file content) show the stored lines they name, in full or (a cut line) a prefix of it.
	for (const row of built.text.split("\n")) {
		const m = /^ *(\d+)\t(.*)$/.exec(row);
		if (!m) continue;
		const stored = lines[Number(m[1]) - shift - 1];
		expect(stored?.startsWith(m[2])).toBe(true);
	}
	// Read calls: into the stored output, within it, starting at the first line the stub does not show.
	const markerAt = built.text.indexOf("\n[… ");
	const shown = new Set(
		built.text
			.slice(0, markerAt === -1 ? built.text.length : markerAt)
			.split("\n")
			.map((row) => row.replace(/^ *\d+\t/, "")),
	);
	for (const call of built.text.matchAll(READ_CALL)) {
		expect(JSON.parse(call[1])).toBe(built.path);
		const offset = Number(call[2]);
		const limit = Number(call[3]);
		expect(offset).toBeGreaterThanOrEqual(1);
		expect(offset + limit - 1).toBeLessThanOrEqual(lines.length);
		if (offset > 1 && lines[offset - 2] !== "") expect(shown.has(lines[offset - 2])).toBe(true);
		for (let n = offset; n < offset + limit - 1; n++)
			if (lines[n - 1] !== "") expect(shown.has(lines[n - 1])).toBe(false);
	}
}

/** Unique, self-identifying lines of varied length. */
const linesArb = fc
	.array(fc.nat(240), { minLength: 150, maxLength: 900 })
	.map((lengths) => lengths.map((len, i) => `row${i + 1} ${"x".repeat(len)}`));

describe("stub paths and read offsets", () => {
	it("name only the stored output, and address its lines, for every kind and budget (property)", async () => {
		await fc.assert(
			fc.asyncProperty(
				linesArb,
				fc.constantFrom("read", "bash", "grep", "ls", "web_fetch", "mystery"),
				fc.integer({ min: 2048, max: 8192 }),
				async (rows, toolName, stubMaxBytes) => {
					const full = rows.join("\n").padEnd(12_500, "y");
					const before = storedFiles();
					const built = await buildStub(fact(toolName, full), full, { store, config: { ...config, stubMaxBytes } });
					if ("notStored" in built) throw new Error(built.notStored);
					expect(storedFiles() - before).toBeLessThanOrEqual(1);
					checkStub(built, full, 0);
				},
			),
			{ numRuns: 30, endOnFailure: true },
		);
	});

	it("a ranged read: numbered by file line, read calls by stored line, Pi's notice marked as the source file's", async () => {
		await fc.assert(
			fc.asyncProperty(linesArb, fc.integer({ min: 2, max: 5000 }), async (rows, offset) => {
				const last = offset + rows.length - 1;
				const notice = `[Showing lines ${offset}-${last} of ${last + 400}. Use offset=${last + 1} to continue.]`;
				const full = `${rows.join("\n")}\n\n${notice}`;
				const built = await buildStub(fact("read", full, { path: "src/big.ts", offset }), full, { store, config });
				if ("notStored" in built) throw new Error(built.notStored);
				checkStub(built, full, offset - 1);
				expect(built.text).toContain(`File line N is line N-${offset - 1} of the stored output.`);
				expect(built.text).toContain(`(not the stored output): ${notice}`);
			}),
			{ numRuns: 20, endOnFailure: true },
		);
	});

	it("a line too long for one read: the bash hint pages the stored output from that line's first byte", async () => {
		const rows = Array.from({ length: 30 }, (_, i) => `row${i + 1}`);
		rows[14] = `row15 ${"z".repeat(60_000)}`;
		const full = rows.join("\n");
		const built = await buildStub(fact("read", full), full, { store, config });
		if ("notStored" in built) throw new Error(built.notStored);
		checkStub(built, full, 0);
		const hint = /tail -c \+(\d+) '([^']+)' \| head -c (\d+)/.exec(built.text);
		expect(hint?.[2]).toBe(built.path);
		const fromByte = Number(hint?.[1]);
		expect(
			readFileSync(built.path)
				.subarray(fromByte - 1)
				.toString("utf8")
				.startsWith("row15 zzz"),
		).toBe(true);
	});

	it("a summary longer than the stub is cut in place, not stored as a second file", async () => {
		const full = Array.from({ length: 3000 }, (_, i) => `out ${i}`).join("\n");
		const summary = Array.from({ length: 400 }, (_, i) => `- point ${i}: something the model said`).join("\n");
		const before = storedFiles();
		const built = await buildStub(fact("bash", full), full, {
			store,
			config,
			summarize: async () => ({ ok: true, text: summary, model: "acme/acme-mini" }),
		});
		if ("notStored" in built) throw new Error(built.notStored);
		expect(built.summarized).toBe(true);
		expect(storedFiles() - before).toBe(1);
		expect(built.text).toContain("- point 0:");
		expect(built.text).toContain("- point 399:");
		expect(built.text).toMatch(/of the summary cut to fit/);
		expect(Buffer.byteLength(built.text)).toBeLessThanOrEqual(config.stubMaxBytes);
		checkStub(built, full, 0);
	});
});

import { join, sep } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { project, type WindowOption } from "../../extensions/shared/projection/projection.ts";
import { formatCount } from "../../extensions/shared/text/format.ts";
import {
	CLASS_HEAD_SHARE,
	classifyTool,
	looksLikeJson,
	nameTokens,
	OUTPUT_CLASSES,
} from "../../extensions/tool-artifacts/classify.ts";
import {
	entryKind,
	indexSearchResults,
	renderListingIndex,
	renderSearchIndex,
	splitReadNotice,
} from "../../extensions/tool-artifacts/excerpt.ts";
import { fileWindowContext, STUB_FOOTER_PATTERN } from "../../extensions/tool-artifacts/prompt.ts";
import { artifactId, isStub, parseStubHeader, renderStub, stubOverhead } from "../../extensions/tool-artifacts/stub.ts";
import { planTurnCap, TurnBatch, type TurnItem } from "../../extensions/tool-artifacts/turn.ts";

describe("classifyTool", () => {
	it.each([
		["bash", "command"],
		["run_command", "command"],
		["grep", "search"],
		["rg", "search"],
		["search_code", "search"],
		["ls", "listing"],
		["find", "listing"],
		["list_dir", "listing"],
		["read", "file"],
		["readFile", "file"],
		["web_fetch", "web"],
		["fetchUrl", "web"],
		["package_info", "structured"],
		["mystery", "unknown"],
	])("%s → %s", (name, kind) => {
		expect(classifyTool(name)).toBe(kind);
	});

	it("sniffs JSON only for names that say nothing", () => {
		expect(classifyTool("mystery", '{"a": [1, 2]}')).toBe("structured");
		expect(classifyTool("mystery", "{not json}")).toBe("unknown");
		expect(classifyTool("bash", '{"a": 1}')).toBe("command");
	});

	it("lets the configuration override a name", () => {
		expect(classifyTool("bash", "", { bash: "web" })).toBe("web");
		expect(classifyTool("mystery", "", { other: "web" })).toBe("unknown");
	});

	it("pins the issue's head shares: command 40/60, unknown 50/50; all shares in (0,1)", () => {
		expect(CLASS_HEAD_SHARE.command).toBe(0.4);
		expect(CLASS_HEAD_SHARE.unknown).toBe(0.5);
		for (const kind of OUTPUT_CLASSES) {
			expect(CLASS_HEAD_SHARE[kind]).toBeGreaterThan(0);
			expect(CLASS_HEAD_SHARE[kind]).toBeLessThan(1);
		}
	});

	it("always returns a known class and never throws (property)", () => {
		fc.assert(
			fc.property(fc.string(), fc.string(), (name, text) => {
				expect(OUTPUT_CLASSES).toContain(classifyTool(name, text));
			}),
		);
	});

	it("splits names into tokens", () => {
		expect(nameTokens("readFile")).toEqual(["read", "file"]);
		expect(nameTokens("mcp.web-fetch")).toEqual(["mcp", "web", "fetch"]);
		expect(looksLikeJson("[1,2]")).toBe(true);
		expect(looksLikeJson("[1,2")).toBe(false);
	});
});

const itemArb = fc.record({
	chars: fc.nat(200_000),
	fixed: fc.boolean(),
	forced: fc.boolean(),
	eligible: fc.boolean(),
});

describe("planTurnCap", () => {
	it("moves the largest first, only while over the cap, and fits when it can (property)", () => {
		fc.assert(
			fc.property(
				fc.array(itemArb, { maxLength: 8 }),
				fc.nat(300_000),
				fc.integer({ min: 100, max: 5000 }),
				(raw, cap, stub) => {
					const items: TurnItem[] = raw.map((r, i) => ({ id: `c${i}`, ...r }));
					const plan = planTurnCap(items, cap, stub);
					const movable = items.filter((i) => i.eligible && !i.fixed && !i.forced && i.chars > stub);
					const moved = new Set(plan.moved);
					for (const id of plan.moved) expect(movable.map((i) => i.id)).toContain(id);
					// Largest first: every moved item is at least as large as every movable one left alone.
					const movedSizes = items.filter((i) => moved.has(i.id)).map((i) => i.chars);
					const kept = movable.filter((i) => !moved.has(i.id)).map((i) => i.chars);
					if (movedSizes.length > 0 && kept.length > 0)
						expect(Math.min(...movedSizes)).toBeGreaterThanOrEqual(Math.max(...kept));
					// Fits, unless every movable item was moved.
					if (!plan.fits) expect(plan.moved.length).toBe(movable.length);
					// Minimal: without the last move the turn would not fit.
					if (plan.moved.length > 0) {
						const last = items.find((i) => i.id === plan.moved[plan.moved.length - 1])!;
						expect(plan.totalChars + last.chars - stub).toBeGreaterThan(cap);
					}
				},
			),
		);
	});

	it("three results over a 100,000 cap: only the largest moves when that suffices", () => {
		const items: TurnItem[] = [
			{ id: "a", chars: 40_000, fixed: false, forced: false, eligible: true },
			{ id: "b", chars: 70_000, fixed: false, forced: false, eligible: true },
			{ id: "c", chars: 20_000, fixed: false, forced: false, eligible: true },
		];
		expect(planTurnCap(items, 100_000, 4096).moved).toEqual(["b"]);
		expect(planTurnCap(items, 30_000, 4096).moved).toEqual(["b", "a"]);
	});
});

describe("TurnBatch", () => {
	it("holds every result of a parallel batch until the last arrives, then decides together", async () => {
		const batch = new TurnBatch(100_000, 4096);
		for (const id of ["a", "b", "c"]) batch.register(id);
		const decided: string[] = [];
		const pa = batch.arrive({ id: "a", chars: 40_000, forced: false, eligible: true }).then((m) => {
			decided.push("a");
			return m;
		});
		const pc = batch.arrive({ id: "c", chars: 20_000, forced: false, eligible: true });
		await Promise.resolve();
		expect(decided).toEqual([]);
		expect(batch.pendingIds()).toEqual(["b"]);
		const pb = batch.arrive({ id: "b", chars: 70_000, forced: false, eligible: true });
		expect(await Promise.all([pa, pb, pc])).toEqual([false, true, false]);
	});

	it("a call that ends without a result releases the batch", async () => {
		const batch = new TurnBatch(10_000, 1000);
		batch.register("a");
		batch.register("blocked");
		const pa = batch.arrive({ id: "a", chars: 50_000, forced: false, eligible: true });
		batch.ended("blocked", 30);
		expect(await pa).toBe(true);
	});

	it("sequential mode: earlier final sizes count, later results decide at once", async () => {
		const batch = new TurnBatch(10_000, 1000);
		batch.register("a");
		expect(await batch.arrive({ id: "a", chars: 8_000, forced: false, eligible: true })).toBe(false);
		batch.finalize("a", 8_000);
		batch.register("b");
		expect(await batch.arrive({ id: "b", chars: 5_000, forced: false, eligible: true })).toBe(true);
	});

	it("an abort releases waiting results", async () => {
		const batch = new TurnBatch(10, 1000);
		batch.register("a");
		batch.register("b");
		const controller = new AbortController();
		const pa = batch.arrive({ id: "a", chars: 5_000, forced: false, eligible: true }, controller.signal);
		controller.abort();
		expect(await pa).toBe(true);
	});
});

describe("stubs", () => {
	const parts = {
		id: "0123456789ab",
		tool: "bash",
		bytes: 1234,
		lines: 56,
		lastLineEmpty: false,
		path: join(sep, "fixture", "cache", "headroom", "tool-outputs", "abc.txt"),
		notes: ["Command exited with code 2"],
		label: "Excerpt:",
		body: "line one\nline two",
	};

	it("puts the header first and the footer last, with the id in both", () => {
		const stub = renderStub(parts);
		const lines = stub.split("\n");
		expect(lines[0]).toBe("[Artifact 0123456789ab | bash | 1,234 bytes, 56 lines]");
		expect(lines[lines.length - 1]).toBe(
			`[Full output stored: ${parts.path} — page it with read (offset/limit) or search it with recall_artifact("0123456789ab")]`,
		);
		expect(isStub(stub)).toBe(true);
		const overhead = stubOverhead(parts);
		expect(Buffer.byteLength(stub) - Buffer.byteLength(parts.body)).toBe(overhead.bytes);
	});

	it("recognises only stubs (property)", () => {
		fc.assert(
			fc.property(fc.string(), (text) => {
				expect(isStub(text)).toBe(false);
			}),
		);
		expect(isStub(`[Artifact 0123456789ab | bash | 1 bytes, 1 lines]\nbody`)).toBe(false);
		// A header with digits grouped wrongly, or the note in the wrong place, is not ours.
		const footer = renderStub(parts).split("\n").at(-1);
		for (const head of [
			"[Artifact 0123456789ab | bash | 1234,5 bytes, 56 lines]",
			"[Artifact 0123456789ab | bash | 1,234 bytes (the last one empty), 56 lines]",
		])
			expect(isStub(`${head}\nbody\n${footer}`)).toBe(false);
	});

	it("header counts carry separators like the projection's footer; a trailing newline is named (property)", () => {
		// seq 1 200000: 1,288,895 bytes; read counts 200,001 lines, the last one empty.
		const seq = renderStub({ ...parts, bytes: 1_288_895, lines: 200_001, lastLineEmpty: true }).split("\n")[0];
		expect(seq).toBe("[Artifact 0123456789ab | bash | 1,288,895 bytes, 200,001 lines (the last one empty)]");
		expect(renderStub({ ...parts, bytes: 1, lines: 1 }).split("\n")[0]).toBe(
			"[Artifact 0123456789ab | bash | 1 byte, 1 line]",
		);
		fc.assert(
			fc.property(
				fc.nat(2 ** 40),
				fc.integer({ min: 1, max: 2 ** 31 }),
				fc.boolean(),
				fc.stringMatching(/^[a-z_][a-z0-9_.-]{0,30}$/),
				(bytes, lines, lastLineEmpty, tool) => {
					const stub = renderStub({ ...parts, tool, bytes, lines, lastLineEmpty });
					const head = stub.split("\n")[0];
					expect(head).toContain(`${formatCount(bytes)} byte`);
					expect(parseStubHeader(head)).toEqual({ id: parts.id, tool, bytes, lines, lastLineEmpty });
					expect(isStub(stub)).toBe(true);
					expect(STUB_FOOTER_PATTERN.test(stub.split("\n").at(-1) ?? "")).toBe(true);
				},
			),
		);
		expect(parseStubHeader("[Artifact 0123456789ab | bash | 12 bytes, 3 lines] extra")).toBeUndefined();
	});

	it("ids are the sha256's first 12 hex characters", () => {
		expect(artifactId("a".repeat(64))).toBe("aaaaaaaaaaaa");
	});
});

describe("excerpt helpers", () => {
	it("indexes grep output by file with counts and line ranges", () => {
		const text = ["src/a.ts:10: x", "src/a.ts-11- ctx", "src/a.ts:30: y", "lib/b-c.ts:7: z", "noise"].join("\n");
		expect(indexSearchResults(text)).toEqual([
			{ file: "src/a.ts", matches: 2, firstLine: 10, lastLine: 30 },
			{ file: "lib/b-c.ts", matches: 1, firstLine: 7, lastLine: 7 },
		]);
		const lines = renderSearchIndex(indexSearchResults(text));
		expect(lines[0]).toContain("3 matching lines in 2 files");
		expect(lines[1]).toBe("  src/a.ts: 2 (lines 10-30)");
	});

	it("counts listing entries by kind", () => {
		expect(entryKind("src/")).toBe("directory");
		expect(entryKind("a/b.TS")).toBe(".ts");
		expect(entryKind("Makefile")).toBe("no extension");
		const lines = renderListingIndex("a.ts\nb.ts\nsrc/\nREADME");
		expect(lines[0]).toContain("4 entries");
		expect(lines[1]).toBe("  .ts: 2");
	});

	it("file window: the middle third, numbered from the read's offset, with what lies around it", () => {
		const window = (firstNumber: number, span: WindowOption["span"]): WindowOption => ({
			firstNumber,
			span,
			heading: fileWindowContext,
		});
		const text = Array.from({ length: 30 }, (_, i) => `L${i + 1}`).join("\n");
		const [context, ...shown] = project(text, "toolArtifacts.stub.file", { window: window(1, "middle") }).text.split(
			"\n",
		);
		expect(shown[0]).toBe("11\tL11");
		expect(shown[shown.length - 1]).toBe("20\tL20");
		expect(context).toContain("Showing file lines 11-20");
		expect(context).not.toContain("stored output");
		expect(context).toContain("lines 1-10");
		expect(context).toContain("lines 21-30");
		const read = splitReadNotice(`${text}\n\n[Showing lines 101-130 of 500. Use offset=131 to continue.]`);
		expect(read.body).toBe(text);
		expect(read.notice).toContain("Use offset=131");
		const ranged = project(read.body, "toolArtifacts.stub.file", { window: window(101, "all") }).text.split("\n");
		expect(ranged[1]).toBe("101\tL1");
		expect(ranged[0]).toContain("nothing comes before");
		// File line 101 is the stored output's line 1.
		expect(ranged[0]).toContain("File line N is line N-100 of the stored output.");
	});

	it("file window: a window too long for the stub is projected, its footer in the stored output's lines", () => {
		const text = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} ${"x".repeat(20)}`).join("\n");
		const artifact = { ok: true as const, path: "/store/a.txt", sha256: "a".repeat(64) };
		const p = project(text, "toolArtifacts.stub.file", {
			stored: artifact,
			source: { text, firstLine: 1 },
			window: { firstNumber: 1, span: "middle", heading: fileWindowContext },
		});
		expect(Buffer.byteLength(p.text)).toBeLessThanOrEqual(4096);
		expect(p.text.split("\n").length).toBeLessThanOrEqual(100);
		expect(p.text.split("\n")[0]).toContain("Showing file lines 1001-2000");
		expect(p.truncated).toBe(true);
		// The read call names the stored output's line of the first omitted window line (file line = output line here).
		const offset = p.readOffset ?? 0;
		expect(offset).toBeGreaterThan(1001);
		expect(offset).toBeLessThan(2000);
		expect(p.footer).toContain(`offset=${offset},`);
		expect(p.text).toContain(`${offset - 1}\tline ${offset - 1} `);
		expect(p.text).not.toContain(`${offset}\tline ${offset} `);
	});
});

import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { formatCount } from "../../extensions/shared/text/format.ts";
import {
	buildStub,
	isPassThrough,
	readsStoredArtifact,
	thresholdFor,
} from "../../extensions/tool-artifacts/artifacts.ts";
import { locateFullOutput, readFullOutput, wasTruncated } from "../../extensions/tool-artifacts/full-output.ts";
import { isStub, parseStubHeader } from "../../extensions/tool-artifacts/stub.ts";
import { type CompleteFn, chooseSummaryModel, summarize } from "../../extensions/tool-artifacts/summary.ts";
import { fileStore } from "./store-fixture.ts";
import { fact, numbered } from "./tool-artifacts-facts.ts";

const { dir, store } = fileStore("ta-unit");
const config = DEFAULT_CONFIG.toolArtifacts;

describe("buildStub (fallback excerpt)", () => {
	it("states the same totals as the excerpt's footer, in the same format; a trailing newline is named", async () => {
		const text = `${Array.from({ length: 20_000 }, (_, i) => String(i + 1)).join("\n")}\n`;
		const built = await buildStub(fact({ text }), text, { store, config });
		if ("notStored" in built) throw new Error(built.notStored);
		const head = built.text.split("\n")[0];
		expect(parseStubHeader(head)).toMatchObject({ bytes: Buffer.byteLength(text), lines: 20_001, lastLineEmpty: true });
		const bytes = formatCount(Buffer.byteLength(text));
		expect(head).toBe(`[Artifact ${built.id} | bash | ${bytes} bytes, 20,001 lines (the last one empty)]`);
		// The projection's footer in the body counts the same way (read's lines), with the same separators.
		expect(built.text).toContain(`[Full text: ${bytes} bytes, 20,001 lines.`);
		const bare = "x".repeat(20_000);
		const plain = await buildStub(fact({ text: bare }), bare, { store, config });
		if ("notStored" in plain) throw new Error(plain.notStored);
		expect(plain.text.split("\n")[0]).toBe(`[Artifact ${plain.id} | bash | 20,000 bytes, 1 line]`);
	});

	it("stores the exact output and returns a bounded stub: header first, footer last", async () => {
		const text = `${numbered(3000)}\nerror: build failed`;
		const built = await buildStub(fact({ text }), text, { store, config });
		if ("notStored" in built) throw new Error(built.notStored);
		expect(readFileSync(built.path, "utf8")).toBe(text);
		const lines = built.text.split("\n");
		expect(lines[0]).toBe(`[Artifact ${built.id} | bash | ${formatCount(Buffer.byteLength(text))} bytes, 3,001 lines]`);
		expect(lines[lines.length - 1]).toContain(`Full output stored: ${built.path}`);
		expect(lines[lines.length - 1]).toContain(`recall_artifact("${built.id}")`);
		expect(Buffer.byteLength(built.text)).toBeLessThanOrEqual(config.stubMaxBytes);
		expect(lines.length).toBeLessThanOrEqual(config.stubMaxLines);
		// Command output keeps the end: the error line is visible, and an omission marker says what is missing.
		expect(built.text).toContain("error: build failed");
		expect(built.text).toContain("line 1\n");
		expect(built.text).toMatch(/omitted/);
		expect(built.kind).toBe("command");
		expect(built.summarized).toBe(false);
		expect(isStub(built.text)).toBe(true);
		expect(isPassThrough(built.text, undefined)).toBe(true);
		expect(built.details.headroom).toEqual({ projected: true, artifacts: [built.path] });
		expect(store.resolve(built.id, "tool-outputs")).toMatchObject({ ok: true, path: built.path });
	});

	it("is deterministic for the same output", async () => {
		const text = numbered(4000, "row");
		const a = await buildStub(fact({ text, toolName: "mystery" }), text, { store, config });
		const b = await buildStub(fact({ text, toolName: "mystery" }), text, { store, config });
		if ("notStored" in a || "notStored" in b) throw new Error("store failed");
		expect(a.text).toBe(b.text);
	});

	it("stays within the stub budget for any output and budget (property)", async () => {
		const line = fc.string({ unit: "binary", maxLength: 300 });
		await fc.assert(
			fc.asyncProperty(
				fc.array(line, { minLength: 200, maxLength: 400 }).map((lines) => lines.join("\n").padEnd(12_500, "x")),
				fc.integer({ min: 2048, max: 8192 }),
				fc.constantFrom("bash", "grep", "ls", "read", "web_fetch", "mystery"),
				async (text, stubMaxBytes, toolName) => {
					const cfg = { ...config, stubMaxBytes };
					const built = await buildStub(fact({ text, toolName }), text, { store, config: cfg });
					if ("notStored" in built) throw new Error(built.notStored);
					expect(Buffer.byteLength(built.text)).toBeLessThanOrEqual(stubMaxBytes);
					expect(built.text.split("\n").length).toBeLessThanOrEqual(cfg.stubMaxLines);
					expect(built.text.split("\n")[0]).toMatch(/^\[Artifact [0-9a-f]{12} \|/);
					expect(readFileSync(built.path).equals(Buffer.from(text, "utf8"))).toBe(true);
				},
			),
			{ numRuns: 20, endOnFailure: true },
		);
	});

	it("file content shows the middle third verbatim with line numbers", async () => {
		const text = numbered(1500);
		const built = await buildStub(fact({ text, toolName: "read", input: { path: "big.ts" } }), text, {
			store,
			config,
		});
		if ("notStored" in built) throw new Error(built.notStored);
		expect(built.kind).toBe("file");
		expect(built.text).toContain("Showing file lines 501-1000");
		expect(built.text).toContain("501\tline 501");
	});

	it("search results lead with a per-file index", async () => {
		const text = Array.from({ length: 800 }, (_, i) => `src/f${i % 7}.ts:${i + 1}: const value${i} = compute();`).join(
			"\n",
		);
		const built = await buildStub(fact({ text, toolName: "grep" }), text, { store, config });
		if ("notStored" in built) throw new Error(built.notStored);
		expect(built.text).toContain("800 matching lines in 7 files");
	});

	it("bash: the artifact holds the complete output from Pi's temp file", async () => {
		const full = numbered(5000);
		const tempFile = join(dir, "pi-bash-0123456789abcdef.log");
		writeFileSync(tempFile, full);
		const shown = numbered(5000).split("\n").slice(-2000).join("\n");
		const text = `${shown}\n\n[Showing lines 3001-5000 of 5000. Full output: ${tempFile}]`;
		const built = await buildStub(fact({ text, details: { fullOutputPath: tempFile } }), text, { store, config });
		if ("notStored" in built) throw new Error(built.notStored);
		expect(readFileSync(built.path, "utf8")).toBe(full);
		expect(built.text.split("\n")[0]).toContain("5,000 lines]");
		// Pi 0.73 turns a non-zero exit into an error without details: the notice still finds the file.
		const errText = `${text}\n\nCommand exited with code 2`;
		const fromNotice = await buildStub(fact({ text: errText, isError: true }), errText, { store, config });
		if ("notStored" in fromNotice) throw new Error(fromNotice.notStored);
		expect(readFileSync(fromNotice.path, "utf8")).toBe(full);
		expect(fromNotice.text).toContain("\nCommand exited with code 2\n");
	});

	it("bash: when the full output is gone, the stub says so", async () => {
		const text = `${numbered(2000)}\n\n[Showing lines 1-2000 of 9000. Full output: ${join(dir, "pi-bash-ffffffffffffffff.log")}]`;
		const built = await buildStub(
			fact({
				text,
				details: { fullOutputPath: join(dir, "pi-bash-ffffffffffffffff.log"), truncation: { truncated: true } },
			}),
			text,
			{ store, config },
		);
		if ("notStored" in built) throw new Error(built.notStored);
		expect(built.text).toContain("the complete output no longer exists (its temp file was deleted)");
		expect(readFileSync(built.path, "utf8")).toBe(text);
	});
});

describe("full output file safety", () => {
	it("refuses symlinks, non-regular files and files that do not end with what was shown", async () => {
		const target = join(dir, "secret.txt");
		writeFileSync(target, "secret\nline 2000");
		const link = join(dir, "pi-bash-1111111111111111.log");
		symlinkSync(target, link);
		expect(await readFullOutput({ path: link, source: "details", shownTail: "line 2000" })).toEqual({
			ok: false,
			failure: { code: "symlink" },
		});
		expect(await readFullOutput({ path: dir, source: "details", shownTail: "" })).toEqual({
			ok: false,
			failure: { code: "not-a-file" },
		});
		const other = join(dir, "pi-bash-2222222222222222.log");
		writeFileSync(other, "something else entirely");
		expect(await readFullOutput({ path: other, source: "notice", shownTail: "line 2000" })).toEqual({
			ok: false,
			failure: { code: "mismatch" },
		});
		expect(
			await readFullOutput({ path: join(dir, "pi-bash-3333333333333333.log"), source: "details", shownTail: "" }),
		).toEqual({ ok: false, failure: { code: "deleted" } });
	});

	it("takes a path from the text only in Pi's notice form with Pi's temp-file name", () => {
		const foreign = join(sep, "fixture", "etc", "passwd");
		expect(locateFullOutput(`x\n\n[Showing lines 1-2 of 9. Full output: ${foreign}]`, undefined)).toBeUndefined();
		const temp = join(tmpdir(), "pi-bash-0123456789abcdef.log");
		const ok = locateFullOutput(`x\n\n[Showing lines 1-2 of 9. Full output: ${temp}]`, undefined);
		expect(ok).toEqual({ path: temp, source: "notice", shownTail: "x", totalLines: 9 });
		expect(wasTruncated("plain", undefined)).toBe(false);
		expect(wasTruncated("plain", { truncation: { truncated: true } })).toBe(true);
	});
});

describe("thresholds and pass-through", () => {
	it("per-tool overrides and off switches", () => {
		const cfg = { ...config, perTool: { read: 50_000, ls: false as const } };
		expect(thresholdFor("bash", cfg)).toBe(12_000);
		expect(thresholdFor("read", cfg)).toBe(50_000);
		expect(thresholdFor("ls", cfg)).toBe(false);
		expect(thresholdFor("constructor", cfg)).toBe(12_000);
	});

	it("a read of a stored artifact is left alone (paging an artifact must not make another)", () => {
		const fixture = join(sep, "fixture");
		const storeRoot = join(fixture, "agent", "cache", "headroom");
		const cwd = join(fixture, "w");
		const stored = join(storeRoot, "tool-outputs", "x.txt");
		expect(readsStoredArtifact("read", { path: stored }, cwd, storeRoot)).toBe(true);
		expect(readsStoredArtifact("read", { path: "../agent/cache/headroom/tool-outputs/x.txt" }, cwd, storeRoot)).toBe(
			true,
		);
		expect(
			readsStoredArtifact("read", { path: join(fixture, "agent", "cache", "headroom-other", "x.txt") }, cwd, storeRoot),
		).toBe(false);
		expect(readsStoredArtifact("read", { path: "src/x.ts" }, cwd, storeRoot)).toBe(false);
		expect(readsStoredArtifact("bash", { path: stored }, cwd, storeRoot)).toBe(false);
	});

	it("results our tools projected pass through", () => {
		expect(isPassThrough("x", { headroom: { projected: true } })).toBe(true);
		expect(isPassThrough("x", { headroom: { projected: false } })).toBe(false);
		expect(isPassThrough("x", null)).toBe(false);
	});
});

describe("summary model", () => {
	// A registry as a user's might look: real-looking ids, several providers, auth for some.
	const available = [
		{ provider: "openai", id: "gpt-5" },
		{ provider: "openai", id: "gpt-5-mini" },
		{ provider: "acme", id: "acme-large" },
		{ provider: "acme", id: "acme-mini-2" },
		{ provider: "acme", id: "acme-flash-preview" },
		{ provider: "solo", id: "solo-1" },
	];

	it("chooses configured, known cheap, cheap-looking, else the session's model", () => {
		expect(chooseSummaryModel({ configured: "acme/acme-large", available })).toEqual({
			model: { provider: "acme", id: "acme-large" },
			reason: "configured",
		});
		expect(chooseSummaryModel({ configured: "nope/x", available })).toHaveProperty("error");
		expect(chooseSummaryModel({ configured: "bad", available })).toHaveProperty("error");
		expect(chooseSummaryModel({ session: { provider: "openai", id: "gpt-5" }, available })).toEqual({
			model: { provider: "openai", id: "gpt-5-mini" },
			reason: "known-cheap",
		});
		expect(chooseSummaryModel({ session: { provider: "acme", id: "acme-large" }, available })).toEqual({
			model: { provider: "acme", id: "acme-mini-2" },
			reason: "cheap-name",
		});
		expect(chooseSummaryModel({ session: { provider: "solo", id: "solo-1" }, available })).toEqual({
			model: { provider: "solo", id: "solo-1" },
			reason: "session",
		});
	});

	it("ships no test-fixture model: a provider named like the e2e mock gets no special choice", () => {
		const mock = [
			{ provider: "mock", id: "mock-model" },
			{ provider: "mock", id: "mock-cheap" },
		];
		expect(chooseSummaryModel({ session: { provider: "mock", id: "mock-model" }, available: mock })).toEqual({
			model: { provider: "mock", id: "mock-model" },
			reason: "session",
		});
	});

	const model = { provider: "mock", id: "mock-cheap", maxTokens: 4096 } as Parameters<CompleteFn>[0];
	const reply = (over: Partial<AssistantMessage>): AssistantMessage =>
		({
			role: "assistant",
			content: [{ type: "text", text: "SUMMARY" }],
			stopReason: "stop",
			...over,
		}) as AssistantMessage;
	const request = { kind: "command" as const, tool: "bash", args: "{}", output: "out", cut: false };
	const base = { model, timeoutMs: 1000, temperature: 0.3, maxTokens: 2048 };

	it("passes temperature, max tokens and no retries; returns the text and the call's usage", async () => {
		let seen: Record<string, unknown> | undefined;
		const complete: CompleteFn = async (_m, _c, options) => {
			seen = options;
			return reply({
				usage: {
					input: 300,
					output: 20,
					cacheRead: 0,
					cacheWrite: 0,
					totalTokens: 320,
					cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.004 },
				},
			});
		};
		expect(await summarize(request, { ...base, complete })).toEqual({
			ok: true,
			text: "SUMMARY",
			model: "mock/mock-cheap",
			usage: { calls: 1, input: 300, output: 20, cacheRead: 0, cacheWrite: 0, costUsd: 0.004 },
		});
		expect(seen).toMatchObject({ temperature: 0.3, maxTokens: 2048, maxRetries: 0 });
	});

	it("error replies, throws, empty text, timeouts and aborts all come back as reasons", async () => {
		const err = await summarize(request, {
			...base,
			complete: async () => reply({ stopReason: "error", errorMessage: "500 boom" }),
		});
		expect(err).toEqual({ ok: false, reason: "model error: 500 boom" });
		const thrown = await summarize(request, {
			...base,
			complete: async () => {
				throw new Error("socket hang up");
			},
		});
		expect(thrown).toMatchObject({ ok: false, reason: expect.stringContaining("socket hang up") });
		const empty = await summarize(request, { ...base, complete: async () => reply({ content: [] }) });
		expect(empty).toEqual({ ok: false, reason: "the model's reply was empty or unreadable" });
		const never = await summarize(request, { ...base, timeoutMs: 50, complete: () => new Promise(() => {}) });
		expect(never).toEqual({ ok: false, reason: "no answer within 0.1 s" });
		const controller = new AbortController();
		const pending = summarize(request, {
			...base,
			signal: controller.signal,
			complete: (_m, _c, options) =>
				new Promise((resolve) =>
					(options!.signal as AbortSignal).addEventListener("abort", () => resolve(reply({ stopReason: "aborted" }))),
				),
		});
		controller.abort();
		expect(await pending).toEqual({ ok: false, reason: "aborted" });
	});

	it("a failed summary falls back to the excerpt and says why", async () => {
		const text = numbered(3000);
		const built = await buildStub(fact({ text }), text, {
			store,
			config,
			summarize: async () => ({ ok: false, reason: "no answer within 30 s" }),
		});
		if ("notStored" in built) throw new Error(built.notStored);
		expect(built.summarized).toBe(false);
		expect(built.text).toContain("[Summary unavailable (no answer within 30 s); excerpt of the output follows.]");
		expect(built.text).toMatch(/omitted/);
	});

	it("a summary goes after the verbatim excerpt, never instead of it; the model saw at most maxInputChars", async () => {
		const text = numbered(20_000);
		let seenOutput = "";
		const built = await buildStub(fact({ text }), text, {
			store,
			config,
			summarize: async (req) => {
				seenOutput = req.output;
				return { ok: true, text: "Built 3 targets; 0 errors.", model: "mock/mock-cheap" };
			},
		});
		if ("notStored" in built) throw new Error(built.notStored);
		expect(built.summarized).toBe(true);
		expect(built.text).toContain("Excerpt:\nline 1\n");
		expect(built.text).toContain("line 20000\n[Full text:");
		expect(built.text.indexOf("line 20000")).toBeLessThan(built.text.indexOf("Built 3 targets; 0 errors."));
		expect(built.text).toContain(
			"Summary (by mock/mock-cheap; verbatim text is in the artifact):\nBuilt 3 targets; 0 errors.",
		);
		expect(seenOutput.length).toBeLessThanOrEqual(config.summary.maxInputChars);
		expect(seenOutput).toContain("line 1\n");
		expect(seenOutput).toContain("line 20000");
	});

	it("the summary model sees the notable lines of the WHOLE output, a failure in the middle included", async () => {
		// A pytest run of 30,000 lines whose one failure sits in the middle, far from head and tail.
		const lines = Array.from({ length: 30_000 }, (_, i) => `tests/test_mod.py::test_case_${i} PASSED`);
		lines[14_999] = "FAILED tests/test_io.py::test_read_header - AssertionError: assert 3 == 4";
		lines.push("================== 1 failed, 29999 passed in 41.07s ==================");
		const text = lines.join("\n");
		let seen = { output: "", notable: false };
		const built = await buildStub(fact({ text }), text, {
			store,
			config,
			summarize: async (req) => {
				seen = { output: req.output, notable: req.notable === true };
				return { ok: true, text: "1 test failed: test_read_header.", model: "mock/mock-cheap" };
			},
		});
		if ("notStored" in built) throw new Error(built.notStored);
		expect(seen.notable).toBe(true);
		expect(seen.output).toContain("L15000: FAILED tests/test_io.py::test_read_header - AssertionError: assert 3 == 4");
		// The run's verdict is the input's last line: its tail shows it, the notable lines do not repeat it.
		expect(seen.output).toContain("\n================== 1 failed, 29999 passed in 41.07s ==================\n");
		expect(seen.output).not.toContain("L30001:");
		expect(seen.output).toContain("tests/test_mod.py::test_case_0 PASSED\n");
		expect(Buffer.byteLength(seen.output)).toBeLessThanOrEqual(config.summary.maxInputChars);
	});

	it("a command stub without a summary leads with the notable lines, within the stub's limits", async () => {
		const lines = Array.from({ length: 8000 }, (_, i) => `=== RUN   TestCase${i}\n--- PASS: TestCase${i} (0.00s)`);
		lines[4000] = "--- FAIL: TestParseHeader (0.01s)\n    header_test.go:41: got 3 fields, want 4";
		lines.push("FAIL", "FAIL\texample.com/parse\t0.412s");
		const text = lines.join("\n");
		const built = await buildStub(fact({ text }), text, { store, config });
		if ("notStored" in built) throw new Error(built.notStored);
		const all = text.split("\n");
		const n = all.indexOf("--- FAIL: TestParseHeader (0.01s)") + 1;
		expect(built.text).toContain(`L${n}: --- FAIL: TestParseHeader (0.01s)`);
		expect(built.text).toContain(`L${n + 1}:     header_test.go:41: got 3 fields, want 4`);
		// The verdict ends the log: the tail shows it, the notable lines do not repeat it.
		expect(built.text).toContain("\nFAIL\nFAIL\texample.com/parse\t0.412s\n");
		expect(built.text).not.toContain(`L${all.length}:`);
		expect(Buffer.byteLength(built.text)).toBeLessThanOrEqual(config.stubMaxBytes);
		expect(built.text.split("\n").length).toBeLessThanOrEqual(config.stubMaxLines);
		// The line number opens the failure in the stored artifact, as read(offset=n) counts.
		expect(readFileSync(built.path, "utf8").split("\n")[n - 1]).toBe("--- FAIL: TestParseHeader (0.01s)");
	});

	it("records the summary call's tokens and cost in details.headroom.usage; an excerpt records none", async () => {
		const text = numbered(5000);
		const usage = { calls: 1, input: 1200, output: 80, cacheRead: 0, cacheWrite: 0, costUsd: 0.0021 };
		const built = await buildStub(fact({ text }), text, {
			store,
			config,
			summarize: async () => ({ ok: true, text: "Short summary.", model: "mock/mock-cheap", usage }),
		});
		if ("notStored" in built) throw new Error(built.notStored);
		expect((built.details.headroom as { usage?: unknown }).usage).toEqual(usage);
		const plain = await buildStub(fact({ text }), text, { store, config });
		if ("notStored" in plain) throw new Error(plain.notStored);
		expect((plain.details.headroom as { usage?: unknown }).usage).toBeUndefined();
	});
});

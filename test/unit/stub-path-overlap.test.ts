/**
 * The stub path overlaps the store's fsync with the scan (issue 32, cost): `startPut` writes in the call and
 * syncs in the thread pool, with put's name, bytes, modes and failures; `buildStub` scans a command's log before
 * the artifact has its name, at the limits `logScanLines` says projectLog would scan with, so the excerpt is
 * exactly the one projectLog makes when it scans by itself.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { logScanLines, projectLog } from "../../extensions/shared/projection/log.ts";
import type { PutResult } from "../../extensions/shared/store/artifact-store.ts";
import { surface } from "../../extensions/shared/surfaces.ts";
import { scanNotable } from "../../extensions/shared/text/notable.ts";
import { buildStub, TOOL_OUTPUT_KIND } from "../../extensions/tool-artifacts/artifacts.ts";
import { buildExcerpt } from "../../extensions/tool-artifacts/excerpt.ts";
import { realLogLinesArb } from "../fixtures/real-log-arbitraries.ts";
import { loadRealLogs } from "../fixtures/real-logs.ts";
import { textArb } from "./projection-arbitraries.ts";
import { mustPut, useTempStore } from "./store-fixture.ts";

const tmp = useTempStore("stub-path-overlap");
const mode = (path: string) => statSync(path).mode & 0o777;
const LOGS = loadRealLogs();

/** Random logs made of real log lines (so the scan finds things), of any length. */
const logArb = realLogLinesArb(LOGS, { minLines: 1, maxLines: 400, maxParts: 6 });

describe("ArtifactStore.startPut", () => {
	it("stores what put stores: same bytes, name and modes; a second put of the text reuses it", async () => {
		await fc.assert(
			fc.asyncProperty(textArb, async (text) => {
				const started = tmp.store.startPut("tool-outputs", text);
				const r = mustPut(await started);
				const bytes = readFileSync(r.path);
				expect(bytes.equals(Buffer.from(text, "utf8"))).toBe(true);
				expect(r.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
				expect(r.bytes).toBe(bytes.length);
				expect(mode(r.path)).toBe(0o600);
				expect(mode(tmp.store.dirFor("tool-outputs"))).toBe(0o700);
				const again = mustPut(await tmp.store.put("tool-outputs", text));
				expect(again).toMatchObject({ path: r.path, sha256: r.sha256, reused: true });
			}),
			{ numRuns: 40 },
		);
		// No temp file is left behind.
		expect(readdirSync(tmp.store.dirFor("tool-outputs")).filter((n) => n.endsWith(".part"))).toEqual([]);
	});

	it("says how many bytes it wrote before it returns: the text's UTF-8 size, what the put reports", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.oneof(textArb, fc.string({ unit: fc.constantFrom("a", "\n", "é", "😀", "\uD800", "\uDC00") })),
				async (text) => {
					let written: number | undefined;
					const started = tmp.store.startPut("tool-outputs", text, (bytes) => {
						written = bytes;
					});
					expect(written).toBe(Buffer.byteLength(text, "utf8"));
					expect(mustPut(await started).bytes).toBe(written);
				},
			),
			{ numRuns: 60 },
		);
	});

	it("has written the bytes when it returns; only the sync and the name wait", async () => {
		const text = "x".repeat(3 * 1024 * 1024);
		const started = tmp.store.startPut("tool-outputs", text);
		// Synchronously after the call: the temp file already holds every byte.
		const dir = tmp.store.dirFor("tool-outputs");
		const temps = readdirSync(dir).filter((n) => n.endsWith(".part"));
		expect(temps).toHaveLength(1);
		expect(statSync(`${dir}/${temps[0]}`).size).toBe(text.length);
		const r = (await started) as PutResult;
		expect(r.ok).toBe(true);
		expect(readdirSync(dir)).toEqual([`${r.sha256}.txt`]);
	});
});

describe("the early scan of buildStub", () => {
	it("is the scan projectLog makes: a view with the scan at logScanLines equals the view without it", () => {
		const command = surface("toolArtifacts.stub.command");
		const stored = { ok: true, path: "/a/b/cache/headroom/tool-outputs/x.txt", sha256: "0".repeat(64) } as const;
		fc.assert(
			fc.property(
				logArb,
				fc.integer({ min: 200, max: 20_000 }),
				fc.integer({ min: 5, max: 200 }),
				(text, maxBytes, maxLines) => {
					const options = { maxBytes, maxLines, stored };
					const maxScan = logScanLines(text, command, options);
					const own = projectLog(text, command, options);
					if (maxScan === undefined) {
						expect(own.notable).toEqual([]);
						return;
					}
					const given = projectLog(text, command, { ...options, scan: scanNotable(text, { maxLines: maxScan }) });
					expect(given).toEqual(own);
					const excerpt = { kind: "command" as const, surface: command, text, args: {}, maxBytes, maxLines };
					expect(buildExcerpt({ ...excerpt, artifact: stored, scan: scanNotable(text, { maxLines: maxScan }) })).toBe(
						buildExcerpt({ ...excerpt, artifact: stored }),
					);
				},
			),
			{ numRuns: 60 },
		);
	});

	it("gives the stub of every real log its notable lines, stored under the output's SHA-256", async () => {
		const config = {
			...DEFAULT_CONFIG.toolArtifacts,
			summary: { ...DEFAULT_CONFIG.toolArtifacts.summary, enabled: false },
		};
		for (const log of LOGS.filter((l) => l.text.length > 20_000).slice(0, 8)) {
			const fact = {
				toolName: "bash",
				toolCallId: "call_1",
				input: { command: "cat build.log" },
				content: [{ type: "text", text: log.text }],
				details: undefined,
				isError: false,
			};
			const built = await buildStub(fact, log.text, { store: tmp.store, config });
			if ("notStored" in built) throw new Error(built.notStored);
			const sha = createHash("sha256").update(Buffer.from(log.text, "utf8")).digest("hex");
			expect(built.path).toBe(`${tmp.store.dirFor(TOOL_OUTPUT_KIND)}/${sha}.txt`);
			const first = scanNotable(log.text).lines.find((l) => l.kind !== "context");
			if (first) expect(built.text).toContain("Notable lines");
		}
	});
});

/**
 * A large full-output file is never held whole: LargeOutputReader feeds the artifact store chunk by chunk and
 * keeps only its first and last region; its view is a stand-in of exactly the file's UTF-8 bytes and lines
 * whose start and end are verbatim. Checked over generated files with small regions (property), and end to end
 * through buildStub on a file over LARGE_OUTPUT_BYTES.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { buildStub } from "../../extensions/tool-artifacts/artifacts.ts";
import {
	filler,
	LARGE_OUTPUT_BYTES,
	LargeOutputReader,
	openFullOutput,
} from "../../extensions/tool-artifacts/full-output.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const dir = makeTestDir("large-output");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = new ArtifactStore({ agentDir: join(dir, "agent") });

const line = fc
	.array(fc.constantFrom("a", "Z", " ", "é", "€", "😀", "\t", "error", "FAILED", "ok"), { maxLength: 30 })
	.map((parts) => parts.join(""));

describe("LargeOutputReader", () => {
	it("stores every byte and gives a view of the same bytes and lines, start and end verbatim (property)", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(line, { minLength: 1, maxLength: 400 }),
				fc.constantFrom("", "\n", "\n\n\n", "\r\n"),
				fc.integer({ min: 16, max: 600 }),
				async (lines, end, region) => {
					const text = lines.join("\n") + end;
					const path = join(dir, `pi-bash-${randomBytes(8).toString("hex")}.log`);
					writeFileSync(path, text);
					try {
						const opened = await openFullOutput({ path, source: "details", shownTail: text.slice(-40) });
						if (!opened.ok) throw new Error(JSON.stringify(opened.failure));
						const reader = new LargeOutputReader(opened.opened, region);
						const put = await store.putChunks("tool-outputs", reader.chunks(), reader.accept);
						await opened.opened.handle.close();
						if (!put.ok) throw new Error(put.error);
						expect(readFileSync(put.path).equals(Buffer.from(text, "utf8"))).toBe(true);
						const view = reader.view();
						expect(Buffer.byteLength(view, "utf8")).toBe(Buffer.byteLength(text, "utf8"));
						expect(view.split("\n").length).toBe(text.split("\n").length);
						// The whole lines within the first and the last region are the file's own.
						const raw = Buffer.from(text, "utf8");
						const head = Math.min(region, raw.length);
						const tail = Math.min(region, raw.length - head);
						if (tail === 0) expect(view).toBe(text);
						else {
							const firstLines = raw.subarray(0, head).toString("utf8").split("\n").slice(0, -1);
							expect(view.split("\n").slice(0, firstLines.length)).toEqual(firstLines);
							const lastLines = raw
								.subarray(raw.length - tail)
								.toString("utf8")
								.split("\n")
								.slice(1);
							if (lastLines.length > 0) expect(view.split("\n").slice(-lastLines.length)).toEqual(lastLines);
						}
					} finally {
						rmSync(path, { force: true });
					}
				},
			),
			{ numRuns: 60 },
		);
	});

	it("filler: exact UTF-8 bytes and newlines, no notable-line key", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 0, max: 5000 }),
				fc.integer({ min: 0, max: 300 }),
				fc.boolean(),
				fc.boolean(),
				(extra, k, endsNl, two) => {
					const bytes = k + extra;
					const f = filler(bytes, k, endsNl && k > 0, two);
					expect(Buffer.byteLength(f, "utf8")).toBe(bytes);
					expect(f.split("\n").length - 1).toBe(k);
					if (endsNl && k > 0) expect(f.endsWith("\n")).toBe(true);
					expect(/[a-z]/i.test(f)).toBe(false);
				},
			),
		);
	});
});

describe("a full output over LARGE_OUTPUT_BYTES through buildStub", () => {
	it("is stored whole in chunks; the stub's totals, notable line and read call are the file's own", async () => {
		const block = `${Array.from({ length: 1000 }, (_, i) => `step ${i}: compiling unit_${i}.c … ok`).join("\n")}\n`;
		const blocks = Math.ceil((LARGE_OUTPUT_BYTES + 1) / Buffer.byteLength(block));
		const middle = Math.floor(blocks / 2);
		const path = join(dir, "pi-bash-abcdefabcdefabcd.log");
		const parts: string[] = [];
		for (let i = 0; i < blocks; i++) parts.push(i === middle ? `${block}FATAL: linker failed in unit_x.o\n` : block);
		parts.push("make: *** [all] Error 2\n");
		const full = parts.join("");
		writeFileSync(path, full);
		parts.length = 0;
		const lines = full.split("\n").length;
		const failureLine = full.slice(0, full.indexOf("FATAL: linker")).split("\n").length;
		const shown = full.slice(-40_000).slice(full.slice(-40_000).indexOf("\n") + 1);
		const text = `${shown}\n\n[Showing lines ${lines - 900}-${lines} of ${lines} (50.0KB limit). Full output: ${path}]`;
		const built = await buildStub(
			{
				toolName: "bash",
				toolCallId: "c",
				input: { command: "make" },
				content: [{ type: "text", text }],
				details: { fullOutputPath: path, truncation: { truncated: true, totalBytes: full.length } },
				isError: false,
			},
			text,
			{ store, config: DEFAULT_CONFIG.toolArtifacts },
		);
		if ("notStored" in built) throw new Error(built.notStored);
		expect(readFileSync(built.path).equals(Buffer.from(full))).toBe(true);
		expect(built.text).not.toContain("no longer exists");
		expect(built.text.split("\n")[0]).toContain(`${lines.toLocaleString("en-US")} lines`);
		expect(built.text).toContain(`L${failureLine}: FATAL: linker failed in unit_x.o`);
		expect(built.text).toContain("make: *** [all] Error 2");
		expect(built.text).toMatch(/read with read\(path="[^"]+", offset=\d+, limit=\d+\)/);
		expect(built.text).not.toContain("\u00a0");
	}, 120_000);
});

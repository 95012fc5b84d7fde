/**
 * projectLog (extensions/shared/projection/log.ts): a long log's view leads with its notable lines, each with
 * the line number read(offset=) opens, within the same surface as project(); otherwise it is project()'s.
 */
import { describe, expect, it } from "vitest";
import { projectLog } from "../../extensions/shared/projection/log.ts";
import { project } from "../../extensions/shared/projection/projection.ts";
import { NOTABLE_HEADING, NOTABLE_HEADING_UNSAVED } from "../../extensions/shared/projection/prompt.ts";
import type { SinkResult } from "../../extensions/shared/projection/types.ts";
import { surface } from "../../extensions/shared/surfaces.ts";
import { utf8ByteLength } from "../../extensions/shared/text/utf8.ts";

const PATH = "/home/u/.pi/agent/cache/headroom/artifacts/ab.txt";
/** The full text is stored there: line numbers name lines of a file the model can open. */
const STORED = { ok: true, path: PATH, sha256: "0".repeat(64) } as const;

/** A go test run: 600 passing lines with a failure in the middle and the verdict at the end. */
function goRun(): string {
	const lines: string[] = [];
	for (let i = 1; i <= 600; i++) {
		lines.push(`=== RUN   TestCase${i}`, `--- PASS: TestCase${i} (0.00s)`);
		if (i === 300) lines.push("--- FAIL: TestParseHeader (0.01s)", "    header_test.go:41: got 3 fields, want 4");
	}
	lines.push("FAIL", "FAIL\texample.com/parse\t0.412s");
	return lines.join("\n");
}

describe("projectLog", () => {
	it("leads with the failure from the middle, its message and the verdict, within the command stub", () => {
		const text = goRun();
		const all = text.split("\n");
		const puts: string[] = [];
		const sink = {
			put(t: string): SinkResult {
				puts.push(t);
				return { ok: true, path: PATH, sha256: "0".repeat(64) };
			},
		};
		const view = projectLog(text, "toolArtifacts.stub.command", { sink });
		const failLine = all.indexOf("--- FAIL: TestParseHeader (0.01s)") + 1;
		expect(view.text.startsWith(`${NOTABLE_HEADING}\n`)).toBe(true);
		expect(view.text).toContain(`L${failLine}: --- FAIL: TestParseHeader (0.01s)\n`);
		expect(view.text).toContain(`L${failLine + 1}:     header_test.go:41: got 3 fields, want 4\n`);
		// The verdict ends the log: the tail shows it once, the notable lines do not repeat it.
		expect(view.text).toContain("\nFAIL\nFAIL\texample.com/parse\t0.412s\n[Full text:");
		expect(view.text).not.toContain(`L${all.length}:`);
		expect(view.notable.map((l) => l.line)).toContain(failLine);
		expect(puts).toEqual([text]);
		const s = surface("toolArtifacts.stub.command");
		expect(utf8ByteLength(view.text)).toBeLessThanOrEqual(s.maxBytes);
		expect(view.text.split("\n").length).toBeLessThanOrEqual(s.maxLines);
		// Head and tail follow, with the footer's read call, as project() lays them out.
		expect(view.text).toContain("=== RUN   TestCase1\n");
		expect(view.text).toMatch(/read\(path="[^"]+", offset=\d+, limit=\d+\)\]$/);
		// Before: the plain stub of the same log shows neither the failure nor its message.
		const before = project(text, "toolArtifacts.stub.command", { stored: { ok: true, path: PATH, sha256: "0" } });
		expect(before.text).not.toContain("TestParseHeader");
	});

	it("says the shorter heading when the full text was not saved", () => {
		const view = projectLog(goRun(), "toolArtifacts.stub.command");
		expect(view.text.startsWith(`${NOTABLE_HEADING_UNSAVED}\n`)).toBe(true);
		expect(view.text).toContain("NOT saved");
	});

	it("is exactly project() when the text fits or nothing is notable", () => {
		const short = "--- FAIL: TestX (0.00s)\nFAIL";
		expect(projectLog(short, "toolArtifacts.stub.command")).toEqual({
			...project(short, "toolArtifacts.stub.command"),
			notable: [],
			notableOmitted: 0,
		});
		const quiet = Array.from({ length: 500 }, (_, i) => `compiling module ${i}`).join("\n");
		expect(projectLog(quiet, "toolArtifacts.stub.command").text).toBe(
			project(quiet, "toolArtifacts.stub.command").text,
		);
	});

	it("folds repeats with their count and says how many more notable lines the section leaves out", () => {
		const lines: string[] = [];
		for (let i = 0; i < 400; i++)
			lines.push(`step ${i}`, i % 5 === 0 ? "--- FAIL: TestFlaky (0.00s)" : `--- FAIL: TestCase${i} (0.00s)`);
		const view = projectLog(lines.join("\n"), "toolArtifacts.stub.command", { stored: STORED });
		expect(view.text).toMatch(/^L2: --- FAIL: TestFlaky \(0.00s\) \(×80\)$/m);
		expect(view.notableOmitted).toBeGreaterThan(0);
		expect(view.text).toMatch(new RegExp(`… and ${view.notableOmitted} more notable lines`));
	});

	it("numbers lines of a window by the stored text's lines", () => {
		const view = projectLog(goRun(), "toolArtifacts.stub.command", {
			source: { text: `${"x\n".repeat(99)}${goRun()}`, firstLine: 100 },
			stored: STORED,
		});
		const failLine = goRun().split("\n").indexOf("--- FAIL: TestParseHeader (0.01s)") + 100;
		expect(view.text).toContain(`L${failLine}: --- FAIL: TestParseHeader`);
	});

	it("shows no line numbers when the full text is not stored: nothing could be opened at them", () => {
		const view = projectLog(goRun(), "toolArtifacts.stub.command");
		expect(view.notable.length).toBeGreaterThan(0);
		expect(view.text.startsWith(`${NOTABLE_HEADING_UNSAVED}\n`)).toBe(true);
		expect(view.text).toContain("--- FAIL: TestParseHeader");
		expect(view.text).not.toMatch(/^L\d+: /m);
		const stored = projectLog(goRun(), "toolArtifacts.stub.command", { stored: STORED });
		expect(stored.text).toMatch(/^L\d+: --- FAIL: TestParseHeader/m);
	});

	it("stores once through an async sink and resolves to the same layout", async () => {
		let calls = 0;
		const sink = {
			async putAsync(): Promise<SinkResult> {
				calls++;
				return { ok: true, path: PATH, sha256: "0".repeat(64) };
			},
		};
		const view = await projectLog(goRun(), "toolArtifacts.stub.command", { sink });
		expect(calls).toBe(1);
		expect(view.text.startsWith(`${NOTABLE_HEADING}\n`)).toBe(true);
		expect(view.artifact).toEqual({ ok: true, path: PATH, sha256: "0".repeat(64) });
	});
});

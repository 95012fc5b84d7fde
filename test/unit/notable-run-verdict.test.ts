/**
 * A run's passing verdict (`Finished: SUCCESS`) clears every step before it and none after it. The scan applies
 * it once at the end instead of marking every step so far at each such verdict (a log of many verdicts cost steps
 * × verdicts, issue 32 item 4); these cases pin what that must keep.
 */
import { describe, expect, it } from "vitest";
import { scanNotable } from "../../extensions/shared/text/notable.ts";

const shown = (text: string) =>
	scanNotable(text)
		.lines.filter((l) => l.kind !== "context")
		.map((l) => `${l.line}:${l.kind}:${l.text}`);

describe("a run's passing verdict", () => {
	it("clears the failures of the steps before it and keeps those after it", () => {
		const text = "=== RUN TestA\n--- FAIL: TestA (0.00s)\nFinished: SUCCESS\n--- FAIL: TestB (0.00s)\n";
		expect(shown(text)).toEqual(["3:summary:Finished: SUCCESS", "4:failure:--- FAIL: TestB (0.00s)"]);
		expect(scanNotable(text).failures).toBe(1);
	});

	it("overrides a failing step verdict before it, not one after it", () => {
		const text = [
			"--- FAIL: TestA (0.00s)",
			'The command "go test" exited with 1.',
			"--- FAIL: TestB (0.00s)",
			"Finished: SUCCESS",
			"--- FAIL: TestC (0.00s)",
			'The command "go test" exited with 1.',
		].join("\n");
		expect(shown(text)).toEqual([
			'2:summary:The command "go test" exited with 1.',
			"4:summary:Finished: SUCCESS",
			"5:failure:--- FAIL: TestC (0.00s)",
		]);
		expect(scanNotable(text).failures).toBe(1);
	});

	it("keeps a failure after thousands of them, and clears every one before the last", () => {
		const many = "--- FAIL: TestOld (0.00s)\nFinished: SUCCESS\n".repeat(5_000);
		const scan = scanNotable(`${many}--- FAIL: TestNew (0.00s)\n`);
		expect(scan.failures).toBe(1);
		expect(scan.lines.filter((l) => l.kind === "failure").map((l) => [l.line, l.text])).toEqual([
			[10_001, "--- FAIL: TestNew (0.00s)"],
		]);
	});
});

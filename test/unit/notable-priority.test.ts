/**
 * Priority under a cap (issue 32, how the stub spends its bytes): in a pool of weak evidence, each shape of
 * line (its start, digits aside) comes before any repeat of a shape, so a logger that prints the same kind of
 * line by the dozen does not crowd out the one line of another kind.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scanNotable } from "../../extensions/shared/text/notable.ts";

/** A Go test log (shape of a real held-out one): a logger's ERROR lines by the dozen around a failed test. */
function goLog(loggerLines: number, seed: number): { text: string; message: number } {
	const lines: string[] = [];
	const logger = (i: number) =>
		`ERROR balancer: dialer.go:190   at github.com/example/balancer.(*dialer).check${seed}_${i} (dialer.go:${100 + i})`;
	for (let i = 0; i < loggerLines; i++) lines.push(`=== RUN   TestStep${i}`, logger(i));
	lines.push("--- FAIL: TestParallelPreferChained (2.62s)", "\tbalancer_test.go:41:", "");
	const message = lines.push("\t\t\tError:\t\tShould be true");
	for (let i = loggerLines; i < loggerLines + 4; i++) lines.push(`=== RUN   TestStep${i}`, logger(i));
	lines.push("FAIL", "FAIL\tgithub.com/example/balancer\t7.831s");
	return { text: lines.join("\n"), message };
}

describe("priority under a cap: shapes before repeats", () => {
	it("keeps the one line of another kind among dozens of one logger's lines (property)", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 20, max: 80 }),
				fc.integer({ min: 0, max: 999 }),
				fc.integer({ min: 12, max: 40 }),
				(n, seed, cap) => {
					const { text, message } = goLog(n, seed);
					const scan = scanNotable(text, { maxLines: cap });
					const found = scan.lines.find((l) => l.line === message);
					expect(found, "the test's message is kept").toBeDefined();
					const loggers = scan.lines.filter((l) => l.text.startsWith("ERROR balancer:"));
					// Every logger line but the first of its shape ranks after the message.
					expect(loggers.filter((l) => l.rank < (found?.rank ?? 0)).length).toBeLessThanOrEqual(1);
				},
			),
			{ numRuns: 40 },
		);
	});

	it("ranks the message before the logger's repeats, where the scan as it was (steps: false) did not", () => {
		const { text, message } = goLog(60, 1);
		const before = scanNotable(text, { maxLines: 12, evaluation: { steps: false } });
		const now = scanNotable(text, { maxLines: 12 });
		// As it was, the logger's lines from both ends of the pool came first and the message was ranked after them.
		const rankOf = (s: typeof now) => s.lines.find((l) => l.line === message)?.rank ?? Number.POSITIVE_INFINITY;
		expect(rankOf(now)).toBeLessThan(rankOf(before));
	});
});

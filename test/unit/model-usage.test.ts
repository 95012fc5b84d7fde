import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatCallUsage } from "../../extensions/headroom/prompt.ts";
import {
	addUsage,
	NO_USAGE,
	readUsage,
	sessionCallUsage,
	toPiUsage,
	usageOfReply,
} from "../../extensions/shared/host/model-usage.ts";

const u = (calls: number, input: number, output: number, costUsd: number) => ({
	calls,
	input,
	output,
	cacheRead: 0,
	cacheWrite: 0,
	costUsd,
});

describe("usage of the package's model calls", () => {
	it("reads pi-ai's usage shape, with zeros for what is missing or malformed", () => {
		expect(usageOfReply({ input: 10, output: 2, cacheRead: 3, cacheWrite: 1, cost: { total: 0.5 } })).toEqual({
			calls: 1,
			input: 10,
			output: 2,
			cacheRead: 3,
			cacheWrite: 1,
			costUsd: 0.5,
		});
		expect(usageOfReply({ input: -1, output: Number.NaN })).toEqual({ ...NO_USAGE, calls: 1 });
		expect(readUsage({ calls: 1.5 })).toBeUndefined();
		expect(readUsage("x")).toBeUndefined();
	});

	it("adds up component-wise (property) and converts to Pi's Usage with the total cost kept", () => {
		const arb = fc.record({
			calls: fc.nat(100),
			input: fc.nat(1e6),
			output: fc.nat(1e6),
			cacheRead: fc.nat(1e6),
			cacheWrite: fc.nat(1e6),
			costUsd: fc.double({ min: 0, max: 10, noNaN: true }),
		});
		fc.assert(
			fc.property(arb, arb, (a, b) => {
				const s = addUsage(a, b);
				expect(s.calls).toBe(a.calls + b.calls);
				expect(s.input + s.output).toBe(a.input + b.input + a.output + b.output);
				const pi = toPiUsage(s);
				expect(pi.totalTokens).toBe(s.input + s.output + s.cacheRead + s.cacheWrite);
				expect(pi.cost.total).toBe(s.costUsd);
			}),
		);
	});

	it("totals a session's handoff compactions and summarized tool results, and ignores everything else", () => {
		const entries = [
			{ type: "compaction", details: { kind: "headroom-handoff", usage: u(3, 900, 120, 0.01) } },
			{ type: "compaction", details: { readFiles: [] } },
			{ type: "compaction", details: { kind: "headroom-handoff", usage: u(4, 100, 10, 0.02) } },
			{ type: "message", message: { role: "toolResult", details: { headroom: { usage: u(1, 50, 5, 0.001) } } } },
			{ type: "message", message: { role: "toolResult", details: { headroom: { projected: true } } } },
			{ type: "message", message: { role: "assistant", details: { headroom: { usage: u(9, 9, 9, 9) } } } },
		];
		const total = sessionCallUsage(entries);
		expect(total.handoff).toEqual(u(7, 1000, 130, 0.03));
		expect(total.toolSummaries).toEqual(u(1, 50, 5, 0.001));
		const text = formatCallUsage(total);
		expect(text).toContain("handoff compactions: 7 calls, 1,000 in / 130 out tokens, $0.0300");
		expect(text).toContain("tool-output summaries: 1 call, 50 in / 5 out tokens, $0.0010");
	});
});

/**
 * With the summary model on, buildStub passes over a log once, not three times (issue 32, cost): the scan of the
 * summary model's input is made while the store syncs and is the one the agreement check reads (both at the
 * default limits); the same pass (scanNotableAt) makes the excerpt's scan at the smaller limits its notable
 * section will have beside the summary. Reusing them changes neither the input, nor the check, nor the excerpt:
 * each is what a scan of its own gives (test/unit/notable-caps.property.test.ts).
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { projectLog } from "../../extensions/shared/projection/log.ts";
import * as notable from "../../extensions/shared/text/notable.ts";
import * as utf8 from "../../extensions/shared/text/utf8.ts";
import { agreementScan, buildStub, summaryInputPlan } from "../../extensions/tool-artifacts/artifacts.ts";
import type { SummaryRequest } from "../../extensions/tool-artifacts/summary.ts";
import { realLogLinesArb } from "../fixtures/real-log-arbitraries.ts";
import { loadRealLogs } from "../fixtures/real-logs.ts";
import { useTempStore } from "./store-fixture.ts";

vi.mock("../../extensions/shared/text/notable.ts", async (original) => {
	const real = await original<typeof import("../../extensions/shared/text/notable.ts")>();
	return { ...real, scanNotable: vi.fn(real.scanNotable), scanNotableAt: vi.fn(real.scanNotableAt) };
});

vi.mock("../../extensions/shared/text/utf8.ts", async (original) => {
	const real = await original<typeof import("../../extensions/shared/text/utf8.ts")>();
	return { ...real, lineStats: vi.fn(real.lineStats) };
});

const tmp = useTempStore("stub-path-scans");
const lineStats = vi.mocked(utf8.lineStats);
const LOGS = loadRealLogs();
const scans = vi.mocked(notable.scanNotable);
const passes = vi.mocked(notable.scanNotableAt);
const CONFIG = DEFAULT_CONFIG.toolArtifacts;
const stored = { ok: true, path: "/a/cache/headroom/tool-outputs/x.txt", sha256: "0".repeat(64) } as const;

/** Random logs made of real log lines, long enough to be cut for the summary model. */
const logArb = realLogLinesArb(LOGS, { minLines: 50, maxLines: 3000, maxParts: 5 });

describe("the summary model's input scan", () => {
	it("gives the input projectLog makes by itself, and is the scan the agreement check would make", () => {
		fc.assert(
			fc.property(logArb, (text) => {
				const plan = summaryInputPlan(text, "command", CONFIG);
				const own = projectLog(text, plan.surface, { ...plan.options, stored });
				expect(projectLog(text, plan.surface, { ...plan.options, stored, scan: plan.scan })).toEqual(own);
				if (plan.scan) expect(plan.maxLines).toBe(notable.DEFAULT_NOTABLE_LINES);
				expect(agreementScan(text, plan)).toEqual(notable.scanNotable(text));
			}),
			{ numRuns: 40 },
		);
	});

	it("is not reused by the agreement check when the input scans at other limits", () => {
		const text = LOGS.reduce((a, b) => (b.text.length > a.length ? b.text : a), "");
		// A shorter input (in lines) gives its notable section fewer lines than the check's default.
		const narrow = { ...CONFIG, surfaces: { "toolArtifacts.summaryInput": { maxLines: 80 } } };
		const plan = summaryInputPlan(text, "command", narrow);
		expect(plan.maxLines).toBeLessThan(notable.DEFAULT_NOTABLE_LINES);
		expect(agreementScan(text, plan)).toEqual(notable.scanNotable(text));
		expect(agreementScan(text, plan)).not.toBe(plan.scan);
	});
});

describe("buildStub with the summary model on", () => {
	it("passes over a long log once: the input (shared with the agreement check) and the excerpt", async () => {
		const log = LOGS.filter((l) => Buffer.byteLength(l.text) > 60_000 && /FAIL|Error/.test(l.text))[0];
		const requests: SummaryRequest[] = [];
		const fact = {
			toolName: "bash",
			toolCallId: "call_1",
			input: { command: "cat build.log" },
			content: [{ type: "text", text: log.text }],
			details: undefined,
			isError: false,
		};
		scans.mockClear();
		passes.mockClear();
		const built = await buildStub(fact, log.text, {
			store: tmp.store,
			config: CONFIG,
			summarize: async (request) => {
				requests.push(request);
				return { ok: true, text: "The command ran.", model: "acme/acme-mini" };
			},
		});
		if ("notStored" in built) throw new Error(built.notStored);
		expect(scans.mock.calls.filter(([text]) => text === log.text)).toHaveLength(0);
		const ofLog = passes.mock.calls.filter(([text]) => text === log.text);
		expect(ofLog).toHaveLength(1);
		// The input's limits and the excerpt's (its notable section beside the summary: fewer lines).
		expect(ofLog[0][1]).toHaveLength(2);
		expect(ofLog[0][1][0]).toBe(notable.DEFAULT_NOTABLE_LINES);
		expect(ofLog[0][1][1]).toBeLessThan(notable.DEFAULT_NOTABLE_LINES);
		// The input carried the notable lines, and the check found the failures the summary does not mention.
		expect(requests).toHaveLength(1);
		expect(requests[0].notable).toBe(true);
		expect(built.text).toContain("the summary and the verbatim lines disagree");
	});
});

describe("buildStub's line count", () => {
	it("comes from the scan: no line pass over the log of its own, with the summary model on or off", async () => {
		const log = LOGS.filter((l) => Buffer.byteLength(l.text) > 60_000 && /FAIL|Error/.test(l.text))[0];
		const fact = {
			toolName: "bash",
			toolCallId: "call_2",
			input: { command: "cat build.log" },
			content: [{ type: "text", text: log.text }],
			details: undefined,
			isError: false,
		};
		const off = { ...CONFIG, summary: { ...CONFIG.summary, enabled: false } };
		const summarize = async () => ({ ok: true as const, text: "The command ran.", model: "acme/acme-mini" });
		for (const deps of [{ config: off }, { config: CONFIG, summarize }]) {
			lineStats.mockClear();
			const built = await buildStub(fact, log.text, { store: tmp.store, ...deps });
			if ("notStored" in built) throw new Error(built.notStored);
			expect(lineStats.mock.calls.filter(([text]) => text === log.text)).toHaveLength(0);
			// The header states the log's lines as Pi's read counts them.
			expect(built.text.split("\n")[0]).toContain(` ${log.lines.toLocaleString("en-US")} lines`);
		}
	});
});

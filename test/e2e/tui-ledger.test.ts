/**
 * The context ledger in Pi's real TUI under tmux, on both Pi lines: a session with a handoff (a manual
 * /compact the handoff extension answers with summary → questions → answers), then a run with a huge bash
 * output (a tool-artifacts stub) and a subagent whose long result is projected. `/headroom` shows every
 * source with a bar and plausible figures, what each extension kept out, and the session's artifacts.
 */
import { describe, expect, it } from "vitest";
import { extensionPath, PI_LINES } from "../fixtures/pi-runner.ts";
import type { ChatRequest, ScriptedReply } from "../fixtures/scripted-server.ts";
import { handoffScript } from "./handoff-helpers.ts";
import { isChild, numberedAnswer } from "./subagents-support.ts";
import { keepCapture, STEP_MS, useTuiRuns } from "./tui-support.ts";

const LONG_ANSWER = numberedAnswer("R", 400, 36_000);
const PARENT_CHATTED = "PARENT-CHATTED about the plan";
const PARENT_WORKED = "PARENT-WORKED stub and result seen";

/** Figures of one source row: "  tool outputs   1,234  ███░░ 3.9%" (its share of what the context holds). */
function figure(screen: string, label: string): number {
	const m = new RegExp(`${label} +([\\d,]+) +[█░]+ +[\\d.]+%`).exec(screen);
	if (!m) throw new Error(`no ledger row for ${label} in:\n${screen}`);
	return Number(m[1].replaceAll(",", ""));
}

function agent(_n: number, req: ChatRequest): ScriptedReply {
	if (isChild(req)) return { text: LONG_ANSWER };
	const afterTools = req.body.messages.at(-1)?.role === "tool";
	const called = req.body.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.function.name));
	if (req.lastUser.includes("LEDGER-CHAT")) {
		if (!afterTools) return { toolCalls: [{ name: "bash", arguments: { command: "seq 1 800" } }] };
		return { text: PARENT_CHATTED };
	}
	if (req.lastUser.includes("LEDGER-WORK")) {
		if (!called.includes("bash") || (!afterTools && !called.includes("subagent_spawn"))) {
			if (!called.includes("bash")) return { toolCalls: [{ name: "bash", arguments: { command: "seq 1 60000" } }] };
		}
		if (!called.includes("subagent_spawn")) {
			return {
				toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "LEDGER-CHILD report", name: "reporter" } }],
			};
		}
		if (!called.includes("subagent_wait"))
			return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1"] } }] };
		return { text: PARENT_WORKED };
	}
	return { text: "ok" };
}

describe.each(PI_LINES)("/headroom ledger in the TUI on $label", ({ line }) => {
	const runs = useTuiRuns(line);

	it("shows each source, what was kept out and the artifacts after a handoff, a stub and a subagent result", async () => {
		const { tui } = await runs.start({
			script: handoffScript(agent),
			sandbox: {
				settings: { compaction: { enabled: true, keepRecentTokens: 200 } },
				headroomConfig: { toolArtifacts: { summary: { enabled: false } }, handoff: { probe: { enabled: false } } },
			},
			extensions: ["subagents", "tool-artifacts", "handoff", "headroom"].map(extensionPath),
			tag: "ledger",
		});
		await tui.submit("LEDGER-CHAT plan the work");
		await tui.waitFor("the first reply", (s) => s.includes(PARENT_CHATTED), { timeoutMs: STEP_MS });
		await tui.submit("/compact");
		await tui.waitFor("the handoff compaction", (s) => /Compacted from|\[compaction\]/.test(s), { timeoutMs: STEP_MS });
		await tui.submit("LEDGER-WORK run it");
		await tui.waitFor("the work reply", (s) => s.includes(PARENT_WORKED), { timeoutMs: STEP_MS });

		await tui.submit("/headroom");
		const ledger = await tui.waitFor(
			"the ledger panel",
			(s) => s.includes("headroom: context ledger") && s.includes("headroom store:"),
			{
				timeoutMs: STEP_MS,
			},
		);
		keepCapture(`headroom-ledger-${line}`, ledger);
		const used = Number((/context: ([\d,]+) of/.exec(ledger)?.[1] ?? "0").replaceAll(",", ""));
		expect(used).toBeGreaterThan(0);
		const sources = {
			system: figure(ledger, "system prompt \\+ tool schemas"),
			conversation: figure(ledger, "conversation"),
			tools: figure(ledger, "tool outputs"),
			subagents: figure(ledger, "subagent results"),
			handoffs: figure(ledger, "handoff summaries"),
		};
		// Every source is there, the tools' schemas and the projected 16 KiB result weigh most, the sum is Pi's reading.
		for (const [name, tokens] of Object.entries(sources)) expect(tokens, name).toBeGreaterThan(0);
		expect(sources.subagents).toBeGreaterThan(sources.handoffs);
		expect(sources.system).toBeGreaterThan(sources.conversation);
		const sum = Object.values(sources).reduce((a, b) => a + b, 0);
		expect(Math.abs(sum - used)).toBeLessThanOrEqual(5);
		expect(ledger).toMatch(/tool-artifacts +1 stub: [\d.]+ KiB stored as artifacts, [\d.]+ KiB shown/);
		expect(ledger).toMatch(/subagents +1 result: 3\d\.\d KiB stored as artifacts, 1\d\.\d KiB shown/);
		expect(ledger).toMatch(/handoff +1 handoff: [\d,]+ tokens of history → [\d,]+ tokens of summary/);
		expect(ledger).toMatch(/artifacts of this session: [2-9]/);
		// Read calls wrap at the terminal's width: joined again, each is whole.
		const joined = ledger.replace(/\n */g, "");
		expect(joined).toMatch(/read\(path="[^"]+\/tool-outputs\/[0-9a-f]{64}\.txt"\)/);
		expect(joined).toMatch(/read\(path="[^"]+\/subagent-results\/[0-9a-f]{64}\.txt"\)/);
		expect(ledger).toMatch(/ago +handoffs$/m);
		expect(ledger).not.toContain("[pi exited");
		tui.press("Escape");
		await tui.waitFor("the panel closed", (s) => !s.includes("headroom: context ledger"), { timeoutMs: STEP_MS });
	}, 240_000);
});

/**
 * The interactive terminal UI as a person sees it: the real pi CLI (both lines) under tmux with
 * this package's subagents, tool-artifacts and headroom extensions, the scripted model playing a
 * parent that spawns three children (one queued, one slow). Every assertion reads the captured
 * screen: tool rows with status glyphs, the widget and status line while children run and queue,
 * delivered results, the expanded projection, a tool-output stub and `/headroom`.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PI_LINES } from "../fixtures/pi-runner.ts";
import {
	PARENT_AFTER_BASH,
	PARENT_AFTER_DELIVERY,
	PARENT_AFTER_WAIT,
	PROMPT_BASH,
	PROMPT_SPAWN,
	SLOW_ANSWER,
	STEP_MS,
	TUI_HEADROOM_CONFIG,
	tmuxBinary,
	tuiScript,
	useTuiRuns,
} from "./tui-support.ts";

/** Long enough that the third child is seen queued, short enough for a quick test (milliseconds). */
const PACING = { longMs: 3_000, slowMs: 9_000 };

/** Lines of a capture, so assertions can name the row they mean. */
const rows = (screen: string) => screen.split("\n");
/** True when `reply` appears below `entry` on the screen (the parent answered that delivery). */
const repliedAfter = (screen: string, entry: string, reply: string) =>
	screen.includes(entry) && screen.lastIndexOf(reply) > screen.lastIndexOf(entry);
/** A widget row of a running child: glyph, id, name, " · " elapsed. */
const widgetRow = (id: string, name: string) => new RegExp(`● ${id} ${name} · \\d`);

/**
 * What must never be on screen: pi gone (a renderer that throws, or a line wider than the terminal,
 * makes pi-tui stop), escape-sequence debris, undecodable bytes.
 */
function expectClean(screen: string) {
	expect(screen).not.toContain("[pi exited");
	expect(screen).not.toMatch(/\[\d+(;\d+)*m/);
	expect(screen).not.toContain("\uFFFD");
}

describe.each(PI_LINES)("interactive TUI on $label", ({ line }) => {
	const runs = useTuiRuns(line);

	it("tmux is installed (the TUI tests fail loudly without it)", () => {
		expect(tmuxBinary()).toMatch(/tmux$/);
	});

	it("shows spawn rows, the running/queued widget, delivered results, the expanded projection, a stub and /headroom", async () => {
		const { sandbox, tui } = await runs.start({
			script: tuiScript(PACING),
			sandbox: { headroomConfig: TUI_HEADROOM_CONFIG },
			tag: "main",
			ready: { what: "the editor and footer", test: (s) => s.includes("mock-model") && s.includes("subagents") },
		});

		await tui.submit(PROMPT_SPAWN);
		// While the long child runs, two run and the third waits in the queue: widget and status line say so.
		const busy = await tui.waitFor(
			"the widget with two running children and one queued",
			(s) => /◷ sa-3 quick-note · waiting/.test(s) && widgetRow("sa-2", "slow-count").test(s),
			{ timeoutMs: STEP_MS },
		);
		expect(busy).toMatch(widgetRow("sa-1", "long-report"));
		expect(busy).toContain("● subagents: 2 running, 1 queued");
		// One spawn call row and one result row per child, each with its glyph; the queued one says so once.
		for (const name of ["long-report", "slow-count", "quick-note"]) expect(busy).toContain(`subagent_spawn ${name}`);
		expect(busy).toMatch(/● sa-1 long-report (starting|running)/);
		expect(rows(busy)).toContain(" ◷ sa-3 quick-note queued #1");
		expectClean(busy);

		// The wait returns the long child's projection: one compact row, sizes, a short artifact name.
		const afterWait = await tui.waitFor(
			"the parent's reply after subagent_wait",
			(s) => s.includes(PARENT_AFTER_WAIT),
			{
				timeoutMs: STEP_MS,
			},
		);
		expect(afterWait).toContain("subagent_wait sa-1");
		expect(afterWait).toMatch(
			/✓ sa-1 long-report completed 37,000 B → 1\d,\d{3} B …\/subagent-results\/[0-9a-f]{12}…\.txt/,
		);
		expect(afterWait).not.toContain("END-L"); // collapsed: the projected text itself is not shown

		// The slow child is still running after the parent's run: the widget shows only it.
		const slowRunning = await tui.waitFor(
			"the widget with only the slow child",
			(s) => widgetRow("sa-2", "slow-count").test(s) && s.includes("● subagents: 1 running") && !/· waiting/.test(s),
			{ timeoutMs: STEP_MS },
		);
		expect(slowRunning).not.toMatch(widgetRow("sa-1", "long-report"));
		expectClean(slowRunning);

		// Both remaining results arrive by automatic delivery, each as a visible entry; then the widget is gone.
		const delivered = await tui.waitFor(
			"both automatic deliveries and the parent's replies",
			(s) => repliedAfter(s, "✓ sa-2 slow-count completed 35 B", PARENT_AFTER_DELIVERY),
			{ timeoutMs: STEP_MS },
		);
		expect(delivered).toMatch(/✓ sa-3 quick-note completed 16 B/);
		expect(delivered).toMatch(/✓ sa-2 slow-count completed 35 B/);
		expect(delivered).toMatch(/subagent results? delivered \(ctrl\+o for the full text\)/);
		expect(delivered).not.toContain(SLOW_ANSWER); // collapsed: rows only
		expect(delivered).not.toContain("● subagents:");
		expect(delivered).not.toMatch(/· waiting|● sa-\d [a-z-]+ · \d/);
		expectClean(delivered);
		// Rows that stay true: every spawn row was redrawn with its child's final state.
		const history = tui.scrollback();
		for (const name of ["long-report", "slow-count", "quick-note"]) {
			expect(history).toMatch(new RegExp(`✓ sa-\\d ${name} completed`));
		}
		expect(history).not.toMatch(/(● sa-\d [a-z-]+ (starting|running)|◷ sa-3 quick-note queued)$/m);

		// Expanding tool output shows the full projected text: the tail of the long result (its middle stays
		// omitted, with the footer's read call) and the delivered results' text.
		tui.press("C-o");
		const expanded = await tui.waitFor(
			"the expanded projection's tail",
			(s) => s.includes("END-L") && s.includes(SLOW_ANSWER),
			{ timeoutMs: STEP_MS, whole: true },
		);
		expect(expanded).toMatch(/^ L0420 x+$/m);
		// The footer right after the tail: the middle is omitted and one read call away (1.x keeps no history above
		// the redrawn screen, so the head is not asserted here; subagents.test.ts checks the text itself).
		expect(expanded).toMatch(/Omitted: lines \d+–\d+/);
		expect(expanded).toMatch(/read\(path="[^"]+subagent-results\//);
		expect(expanded).toMatch(/\[(Subagent result|\d subagent results) — delivered automatically/);
		expectClean(tui.screen());
		tui.press("C-o");

		// A huge bash output becomes a tool-artifacts stub with the stored path and the recall hint.
		await tui.submit(PROMPT_BASH);
		const bash = await tui.waitFor("the bash stub and the parent's reply", (s) => s.includes(PARENT_AFTER_BASH), {
			timeoutMs: STEP_MS,
		});
		expect(bash).toContain("$ seq 1 50000");
		expect(bash).toMatch(/recall_artifact\("[0-9a-f]{12}"\)/);
		// Pi's own "showing 2000 of N lines" described the text the stub replaced; it must not linger under it.
		expect(bash).not.toContain("Truncated: showing");
		expect(bash.replace(/\s+/g, "")).toMatch(/\[Fulloutputstored:[^\]]+\/tool-outputs\/[0-9a-f]{64}\.txt/);
		expectClean(bash);

		// /headroom lists what this session stored.
		await tui.submit("/headroom");
		const store = await tui.waitFor("the /headroom status", (s) => s.includes("headroom store:"), {
			timeoutMs: STEP_MS,
		});
		expect(store).toMatch(/2 artifacts/);
		expect(store).toMatch(/subagent-results: 1 /);
		expect(store).toMatch(/tool-outputs: 1 /);
		// The ledger above it: each source with a bar, what was kept out, the session's artifacts.
		expect(store).toMatch(/context: [\d,]+ of [\d,]+ tokens/);
		expect(store).toMatch(/tool outputs +[\d,]+ +█/);
		expect(store).toMatch(/subagent results +[\d,]+ +█/);
		expect(store).toMatch(/tool-artifacts +1 stub: [\d.]+ KiB stored as artifacts/);
		expect(store).toMatch(/read\(path="[^"]*tool-outputs\//);
		expectClean(store);
		tui.press("Escape");
		await tui.waitFor("the ledger closed", (s) => !s.includes("headroom store:"), { timeoutMs: STEP_MS });
		// pi-tui writes this log (under HOME, the sandbox's) when a rendered line overflows the terminal.
		expect(existsSync(join(sandbox.env.HOME ?? sandbox.root, ".pi", "agent", "pi-crash.log"))).toBe(false);
	}, 240_000);
});

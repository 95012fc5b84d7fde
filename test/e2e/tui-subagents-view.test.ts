/**
 * Watching and steering children in Pi's real TUI under tmux, on both Pi lines: `/subagents` lists two
 * running children, Enter opens the newest, whose live view shows a marker from its own tool call while
 * it still runs; a typed line steers it (its next model request carries the text); Esc goes back. The
 * parent's requests never carry any of it. After the children finish, every spawn row shows its final
 * state, also after `pi -c` in a new process. Hostile names and output leave no fragment of an escape
 * sequence on screen (captured with and without tmux's `-e`).
 */
import { describe, expect, it } from "vitest";
import { PI_LINES } from "../fixtures/pi-runner.ts";
import type { ChatRequest, ScriptedReply } from "../fixtures/scripted-server.ts";
import { isChild } from "./subagents-support.ts";
import { keepCapture, STEP_MS, useTuiRuns } from "./tui-support.ts";

const PROMPT_SPAWN = "VIEW-SPAWN start two helpers";
const PROMPT_HOSTILE = "VIEW-HOSTILE start a hostile helper";
const PARENT_SPAWNED = "PARENT-SPAWNED both are running";
const PARENT_THANKS = "PARENT-THANKS for the results";
const STEER_TEXT = "STEER-PLEASE-FINISH-NOW";
/** Tool-call rounds before a child answers unasked (2 s each): alpha ends alone, beta waits to be steered. */
const ROUNDS: Record<string, number> = { alpha: 4, beta: 20, hostile: 0 };
const ESC = "\u001b";
const HOSTILE_NAME = `evil${ESC}[31mRED${ESC}[0mbell\u0007${ESC}]0;PWNED-TITLE\u0007`;
const HOSTILE_ANSWER = `${ESC}[2J${ESC}[H cleared?\tTAB ${ESC}]8;;http://x.invalid${ESC}\\link${ESC}]8;;${ESC}\\ ${ESC}P1$rDCS${ESC}\\ HOSTILE-END`;

/** Tool results in this request (a child's rounds so far). */
const rounds = (req: ChatRequest) => req.body.messages.filter((m) => m.role === "tool").length;

function script(req: ChatRequest): ScriptedReply {
	if (isChild(req)) {
		const name = /VIEW-CHILD (\S+)/.exec(req.firstUser)?.[1] ?? "";
		if (name === "hostile") return { text: HOSTILE_ANSWER };
		if (req.raw.includes(STEER_TEXT)) return { text: `${name.toUpperCase()}-DONE steered` };
		const k = rounds(req);
		if (k < (ROUNDS[name] ?? 0)) {
			return { toolCalls: [{ name: "bash", arguments: { command: `echo MARK-${name}-${k}; sleep 2` } }] };
		}
		return { text: `${name.toUpperCase()}-DONE` };
	}
	const afterTools = req.body.messages.at(-1)?.role === "tool";
	if (req.lastUser.includes("VIEW-SPAWN")) {
		if (!afterTools) {
			return {
				toolCalls: ["alpha", "beta"].map((name) => ({
					name: "subagent_spawn",
					arguments: { prompt: `VIEW-CHILD ${name}`, name },
				})),
			};
		}
		return { text: PARENT_SPAWNED };
	}
	if (req.lastUser.includes("VIEW-HOSTILE")) {
		if (!afterTools) {
			return {
				toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "VIEW-CHILD hostile", name: HOSTILE_NAME } }],
			};
		}
		return { text: "PARENT-HOSTILE-SPAWNED" };
	}
	return { text: PARENT_THANKS };
}

/** Debris an escape sequence leaves when only its ESC byte is dropped, or a payload that must not show. */
const DEBRIS = [/\[\d+(;\d+)*[mJHK]/, /\]0;/, /\]8;;/, /PWNED/, /P1\$r/, /\u0007/];

/** No debris on the plain capture; with `-e`, nothing but tmux's own SGR colour codes. */
function expectNoDebris(plain: string, withEscapes: string) {
	for (const d of DEBRIS) expect(plain).not.toMatch(d);
	const colourless = withEscapes.replace(/\u001b\[[0-9;:]*m/g, "");
	expect(colourless).not.toContain(ESC);
	for (const d of DEBRIS) expect(colourless).not.toMatch(d);
}

describe.each(PI_LINES)("/subagents in the TUI on $label", ({ line }) => {
	const runs = useTuiRuns(line);
	const sandbox = { headroomConfig: { toolArtifacts: { summary: { enabled: false } } } };

	it("lists running children, opens one live, steers it, goes back; rows end true, also after pi -c", async () => {
		const { server, tui } = await runs.start({ script, sandbox, tag: "view" });
		await tui.submit(PROMPT_SPAWN);
		await tui.waitFor("the parent's reply after spawning", (s) => s.includes(PARENT_SPAWNED), { timeoutMs: STEP_MS });

		// The picker: both children running, newest first, with their columns.
		await tui.submit("/subagents");
		const picker = await tui.waitFor(
			"the picker with two running children",
			(s) =>
				s.includes("subagents of this session: 2") && /sa-2 +beta.+running/.test(s) && /sa-1 +alpha.+running/.test(s),
			{ timeoutMs: STEP_MS },
		);
		keepCapture(`subagents-picker-${line}`, picker);
		const list = picker.slice(picker.indexOf("subagents of this session"));
		expect(list.indexOf("sa-2")).toBeLessThan(list.indexOf("sa-1"));
		expect(picker).toMatch(/name +agent +model +state +elapsed +turns +tokens +context/);
		expect(picker).toContain("mock/mock-model");

		// Enter opens the first (newest) child: its live view shows its own tool call while it still runs.
		tui.press("Enter");
		const view = await tui.waitFor(
			"beta's live view with its tool call",
			(s) => s.includes("MARK-beta-") && /● sa-2 beta · mock\/mock-model · running/.test(s),
			{ timeoutMs: STEP_MS },
		);
		keepCapture(`subagents-view-${line}`, view);
		expect(view).toContain("task ›");
		expect(view).toMatch(/→ bash command="echo MARK-beta-\d; sleep 2"/);
		expect(view).toContain("enter steer · ctrl+x cancel");

		// Typing a line and Enter steers it: its next request carries the text, and it finishes.
		await tui.submit(STEER_TEXT);
		await tui.waitFor("beta done after the steer", (s) => s.includes("BETA-DONE steered"), { timeoutMs: STEP_MS });
		const betaRequests = server.requests.filter((r) => isChild(r) && r.firstUser.includes("VIEW-CHILD beta"));
		expect(betaRequests.some((r) => r.lastUser.includes(STEER_TEXT))).toBe(true);

		// Esc back to the picker, Esc again closes it.
		tui.press("Escape");
		await tui.waitFor("the picker again", (s) => s.includes("subagents of this session: 2"), { timeoutMs: STEP_MS });
		tui.press("Escape");
		await tui.waitFor("the picker closed", (s) => !s.includes("subagents of this session"), { timeoutMs: STEP_MS });

		// Both finish: every spawn row shows its final state.
		const done = await tui.waitFor(
			"both spawn rows completed",
			(s) => /✓ sa-1 alpha completed/.test(s) && /✓ sa-2 beta completed/.test(s) && s.includes(PARENT_THANKS),
			{ timeoutMs: STEP_MS },
		);
		expect(done).not.toMatch(/[●◷] sa-\d (alpha|beta) (starting|running|queued)/);

		// Nothing the view did reached the parent's model.
		const parentRequests = server.requests.filter((r) => !isChild(r));
		expect(parentRequests.length).toBeGreaterThan(1);
		for (const r of parentRequests) {
			expect(r.raw).not.toContain(STEER_TEXT);
			expect(r.raw).not.toContain("MARK-");
			expect(r.raw).not.toContain("subagents of this session");
		}

		// A new process on the same session (`pi -c`): the spawn rows come back with their final state.
		const resumed = await runs
			.restart(["-c"])
			.waitFor(
				"the resumed session's spawn rows",
				(s) => /✓ sa-1 alpha completed/.test(s) && /✓ sa-2 beta completed/.test(s),
				{ timeoutMs: STEP_MS, whole: true },
			);
		expect(resumed).not.toMatch(/[●◷] sa-\d (alpha|beta) (starting|running|queued)/);
	}, 240_000);

	it("hostile names and output leave no fragment of an escape sequence on screen", async () => {
		const { tui } = await runs.start({ script, sandbox, tag: "evil" });
		await tui.submit(PROMPT_HOSTILE);
		const rows = await tui.waitFor(
			"the hostile child's rows after delivery",
			(s) => /✓ sa-1 evilREDbell completed/.test(s) && s.includes(PARENT_THANKS),
			{ timeoutMs: STEP_MS },
		);
		expectNoDebris(rows, tui.screenWithEscapes());

		await tui.submit("/subagents");
		const picker = await tui.waitFor("the picker", (s) => /sa-1 +evilREDbell/.test(s), { timeoutMs: STEP_MS });
		expectNoDebris(picker, tui.screenWithEscapes());
		tui.press("Enter");
		const view = await tui.waitFor("the hostile transcript", (s) => s.includes("HOSTILE-END"), { timeoutMs: STEP_MS });
		expect(view).toMatch(/ cleared\? +TAB link {2}HOSTILE-END/);
		expectNoDebris(view, tui.screenWithEscapes());
		tui.press("Escape");
		tui.press("Escape");
	}, 180_000);
});

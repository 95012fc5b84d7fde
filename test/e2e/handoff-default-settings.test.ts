/**
 * The probe under Pi's DEFAULT compaction settings (reserve 16,384, keep 20,000): a long run on a 64k
 * window grows 3k tokens a step and crosses Pi's threshold mid-task. Pi 1.x compacts mid-run there;
 * Pi 0.73 runs on until the provider overflows, then compacts and retries. On both lines the handoff
 * must be staged and ready by then: no handoff call is in flight while the agent waits for the
 * compaction, none runs after the run's last request, and the task goes on after the compaction.
 */
import { afterEach, describe, expect, it } from "vitest";
import { PI_LINES } from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText, type ScriptedReply } from "../fixtures/scripted-server.ts";
import { HandoffRuns, handoffScript, kindOf, SUMMARY_REPLY, sessionEntries, sessionFileOf } from "./handoff-helpers.ts";

const WINDOW = 64_000;
/** Every model call — the agent's and the handoff's — takes this long: the handoff gets no head start. */
const LATENCY_MS = 250;
/** Characters of tool output per step before the compaction: about 3k tokens. */
const STEP_CHARS = 12_000;
const LAST_STEP = 24;
const DONE = "TASK-DONE-ALL-STEPS";

/** Highest step whose tool result the request carries (0 when none). */
function stepsDone(req: ChatRequest): number {
	let max = 0;
	for (const m of req.body.messages) {
		if (m.role !== "tool") continue;
		for (const hit of messageText(m).matchAll(/STEP-(\d+)-done/g)) max = Math.max(max, Number(hit[1]));
	}
	return max;
}

const compactedRequest = (req: ChatRequest) => req.raw.includes(SUMMARY_REPLY);

describe.each(PI_LINES)("handoff probe under Pi's default compaction settings on $label", ({ line }) => {
	const runs = new HandoffRuns(line);
	afterEach(() => runs.stop());

	it("stages early enough: 0 handoff calls block the agent, 0 run after its last request, the task goes on", async () => {
		const agent = (_n: number, req: ChatRequest): ScriptedReply => {
			const done = stepsDone(req);
			// What the request really holds (Pi's own estimate is 4 characters a token, too).
			const tokens = Math.ceil(req.raw.length / 4);
			if (tokens > WINDOW) {
				return {
					error: { status: 400, message: `This model's maximum context length is ${WINDOW} tokens.` },
					delayMs: LATENCY_MS,
				};
			}
			if (done >= LAST_STEP) return { text: DONE, promptTokens: tokens, delayMs: LATENCY_MS };
			const step = done + 1;
			// ~3k tokens a step until the compaction, small steps after it.
			const chars = compactedRequest(req) ? 400 : STEP_CHARS;
			return {
				toolCalls: [
					{
						name: "bash",
						arguments: { command: `head -c ${chars} /dev/zero | tr '\\0' x; echo; echo STEP-${step}-done` },
					},
				],
				promptTokens: tokens,
				delayMs: LATENCY_MS,
			};
		};
		const slow = (reply: ScriptedReply): ScriptedReply => ({ ...reply, delayMs: LATENCY_MS });
		const base = handoffScript(agent);
		// Pi's defaults: only `enabled` is set (the sandbox switches compaction off unless told).
		const { server, sandbox, rpc } = await runs.start(
			(req) => {
				const reply = base(req);
				return kindOf(req) === "agent" ? reply : slow(reply);
			},
			{ contextWindow: WINDOW, settings: { compaction: { enabled: true } } },
		);
		rpc.send({ type: "prompt", message: `TASK-ORIGINAL: run steps 1 to ${LAST_STEP}, one bash call each` });
		await rpc.waitFor(
			(e) =>
				e.type === "agent_end" && JSON.stringify((e.messages as unknown[] | undefined)?.at(-1) ?? null).includes(DONE),
			150_000,
		);

		const requests = server.requests;
		const agents = requests.filter((r) => kindOf(r) === "agent");
		const handoffs = requests.filter((r) => kindOf(r) !== "agent");
		// Exactly one handoff, staged: three calls, Pi's own summary never ran.
		expect(handoffs.map(kindOf)).toEqual(["summary", "questions", "answers"]);
		// The compaction happened between the last agent request without the handoff and the first with it.
		const firstAfter = agents.findIndex(compactedRequest);
		expect(firstAfter).toBeGreaterThan(0);
		const before = agents[firstAfter - 1];
		const after = agents[firstAfter];
		// Pi 1.x compacted mid-run at its threshold; 0.73 on the overflow (its request failed).
		if (line === "1.x") expect(stepsDone(before)).toBeLessThan(18);
		// 0 handoff calls block the agent: every one was finished before the agent needed the compaction.
		for (const h of handoffs) {
			expect(h.finishedAt).toBeDefined();
			expect(h.finishedAt as number).toBeLessThanOrEqual(before.finishedAt as number);
		}
		// 0 handoff calls after the run's last request.
		const last = agents.at(-1) as ChatRequest;
		for (const h of handoffs) expect(h.receivedAt).toBeLessThan(last.receivedAt);
		// The task went on after the compaction, from where it was, to its end.
		expect(stepsDone(after)).toBeGreaterThanOrEqual(stepsDone(before));
		expect(stepsDone(last)).toBe(LAST_STEP);
		expect(after.receivedAt).toBeGreaterThanOrEqual(before.finishedAt as number);

		const entries = sessionEntries(sessionFileOf(sandbox.agentDir));
		const compactions = entries.filter((e) => e.type === "compaction");
		expect(compactions).toHaveLength(1);
		expect(compactions[0].details.staged).toBe(true);
	}, 200_000);
});

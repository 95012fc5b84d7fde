/**
 * ToolArtifactsSession (tool-artifacts/session.ts) without Pi: the turn's batch and the stub cache driven
 * by plain calls in the orders Pi fires its events — tool_call for every prepared call, then tool_result
 * per call (concurrently in parallel mode, one by one in sequential mode), tool_execution_end for a call
 * that never reaches tool_result, session_start after /new or /reload — over a real artifact store.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import type { ToolArtifactsConfig } from "../../extensions/tool-artifacts/artifacts.ts";
import { isNested, type ToolArtifactsContext, ToolArtifactsSession } from "../../extensions/tool-artifacts/session.ts";
import { useTempStore } from "./store-fixture.ts";

const temp = useTempStore("ta-session");

/** Summaries off (no model here); the turn cap at 30,000 characters, the threshold at 12,000. */
function config(overrides: Partial<ToolArtifactsConfig> = {}): ToolArtifactsConfig {
	const base = structuredClone(DEFAULT_CONFIG.toolArtifacts);
	return { ...base, turnCapChars: 30_000, summary: { ...base.summary, enabled: false }, ...overrides };
}

function harness(options: { cfg?: ToolArtifactsConfig; store?: ArtifactStore } = {}) {
	const seen = { warnings: [] as string[], summaryAsked: 0 };
	const state = { cfg: options.cfg ?? config(), signal: undefined as AbortSignal | undefined };
	const session = new ToolArtifactsSession();
	const ctx: ToolArtifactsContext = {
		config: () => state.cfg,
		store: () => options.store ?? temp.store,
		cwd: temp.agentDir,
		get signal() {
			return state.signal;
		},
		summary: () => {
			seen.summaryAsked++;
			return {};
		},
		warn: (message) => seen.warnings.push(message),
	};
	const result = (id: string, text: string, extra: Record<string, unknown> = {}) =>
		session.toolResult(
			{
				toolCallId: id,
				toolName: "bash",
				input: {},
				content: [{ type: "text", text }],
				details: undefined,
				isError: false,
				...extra,
			},
			ctx,
		);
	const call = (id: string) => session.toolCalled({ toolCallId: id }, ctx);
	return { session, ctx, state, seen, result, call };
}

const isStub = (patch: { content: unknown[] } | undefined) =>
	String((patch?.content[0] as { text?: string } | undefined)?.text ?? "").startsWith("[Artifact ");

/** Whether `promise` has settled after the microtasks pending now have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
	let done = false;
	void promise.then(() => {
		done = true;
	});
	await new Promise((r) => setImmediate(r));
	return done;
}

describe("one turn's batch (the per-turn cap)", () => {
	it("parallel mode: results wait for every registered sibling, then the largest moves first", async () => {
		const h = harness();
		h.session.turnStarted(h.ctx);
		for (const id of ["a", "b", "c"]) h.call(id);
		const pa = h.result("a", "a".repeat(9_000));
		const pb = h.result("b", "b".repeat(11_000));
		expect(await settled(Promise.race([pa, pb]))).toBe(false);
		const pc = h.result("c", "c".repeat(11_500));
		const [a, b, c] = await Promise.all([pa, pb, pc]);
		expect(a).toBeUndefined();
		expect(b).toBeUndefined();
		expect(isStub(c)).toBe(true);
		expect(h.seen.summaryAsked).toBe(1); // only for the stub that was built
	});

	it("sequential mode: each result decides at once, earlier ones counting at their final size", async () => {
		const h = harness();
		h.session.turnStarted(h.ctx);
		h.call("s1");
		expect(await h.result("s1", "s".repeat(11_000))).toBeUndefined();
		h.call("s2");
		expect(await h.result("s2", "t".repeat(11_000))).toBeUndefined();
		h.call("s3");
		expect(isStub(await h.result("s3", "u".repeat(11_000)))).toBe(true); // 33,000 > 30,000
	});

	it("a new turn starts a new batch: a call of the last turn that never arrived holds nothing", async () => {
		const h = harness();
		h.session.turnStarted(h.ctx);
		h.call("lost");
		h.session.turnStarted(h.ctx);
		h.call("next");
		expect(await h.result("next", "small")).toBeUndefined();
	});

	it("without turn_start the first call opens a batch; tool_execution_end of a blocked call releases it", async () => {
		const h = harness();
		h.call("ok");
		h.call("blocked");
		const pending = h.result("ok", "short");
		expect(await settled(pending)).toBe(false);
		h.session.toolExecutionEnded({ toolCallId: "blocked", result: { content: [] } });
		expect(await pending).toBeUndefined();
	});

	it("an aborted run stops the wait: the result decides with what is known", async () => {
		const h = harness();
		const controller = new AbortController();
		h.state.signal = controller.signal;
		h.session.turnStarted(h.ctx);
		h.call("x");
		h.call("never");
		const pending = h.result("x", "x".repeat(500));
		expect(await settled(pending)).toBe(false);
		controller.abort();
		expect(await pending).toBeUndefined();
	});
});

describe("stubs", () => {
	it("a result over its threshold is stubbed once; the same call id gets the same stub", async () => {
		const h = harness();
		h.session.turnStarted(h.ctx);
		const first = await h.result("big", "x".repeat(13_000));
		expect(isStub(first)).toBe(true);
		expect(first?.details.headroom).toMatchObject({ projected: true });
		expect(await h.result("big", "something else entirely")).toBe(first);
		expect(h.seen.summaryAsked).toBe(1);
	});

	it("session_start (/new, /reload) forgets the stubs of the session before", async () => {
		const h = harness();
		const first = await h.result("t1", "x".repeat(13_000));
		h.session.sessionStarted();
		expect(await h.result("t1", "small now")).toBeUndefined();
		const again = await h.result("t2", "x".repeat(13_000));
		expect(again).not.toBe(first);
		expect(again?.content).toEqual(first?.content); // content-addressed: the same artifact
	});

	it("left alone: switched off, a nested call (Pi 1.x executeTool), a tool set to false, a projected result", async () => {
		const big = "y".repeat(20_000);
		const off = harness({ cfg: config({ enabled: false }) });
		off.call("o");
		expect(await off.result("o", big)).toBeUndefined();
		const h = harness({ cfg: config({ perTool: { bash: false } }) });
		expect(await h.result("n", big, { toolName: "other", parentToolCallId: "p" })).toBeUndefined();
		expect(await h.result("f", big)).toBeUndefined();
		expect(await h.result("p", big, { toolName: "other", details: { headroom: { projected: true } } })).toBeUndefined();
		expect(isStub(await h.result("s", big, { toolName: "other" }))).toBe(true);
		expect(isNested({ toolCallId: "n", parentToolCallId: "p" })).toBe(true);
		expect(isNested({ toolCallId: "n" })).toBe(false);
	});

	it("a store that cannot write: the stub says so, and the person is told", async () => {
		const blocked = join(temp.agentDir, "not-a-dir");
		writeFileSync(blocked, "a file where the agent dir should be");
		const h = harness({ store: new ArtifactStore({ agentDir: blocked }) });
		const patch = await h.result("u", "z".repeat(13_000));
		expect(JSON.stringify(patch?.content)).toMatch(/NOT stored/i);
		expect(h.seen.warnings).toEqual([expect.stringMatching(/^could not store a bash result: /)]);
	});
});

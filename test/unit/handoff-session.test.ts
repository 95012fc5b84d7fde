/**
 * HandoffSession (handoff/session.ts) without Pi: the lifecycle and its Pi-version timing paths driven by
 * plain calls and fake timers. Pi 0.73 ends a run with agent_end only (the session polls for idleness,
 * and Pi may still run its own compaction); Pi 1.x follows it with agent_settled; /reload, /new and quit
 * shut the session down (a /reload or /new then builds a fresh session object). The fake context plays
 * Pi's part of ctx.compact(): it asks the session through beforeCompact, as Pi does.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { HandoffDetails } from "../../extensions/handoff/details.ts";
import type { AppliedHandoff, ComputedHandoff, HandoffRequest } from "../../extensions/handoff/prepare.ts";
import { LOG } from "../../extensions/handoff/prompt.ts";
import type { BranchEntry } from "../../extensions/handoff/serialize.ts";
import {
	APPLY_DELAY_MS,
	APPLY_RETRY_MS,
	APPLY_TRIES,
	type CompactionAnswer,
	type CompactionRequest,
	type HandoffContext,
	HandoffSession,
	lastStopReason,
} from "../../extensions/handoff/session.ts";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { NO_USAGE } from "../../extensions/shared/host/model-usage.ts";

const WINDOW = 100_000;
/** Pi's defaults: reserve 16,384, so with the 8,192 margin the probe stages below 24,576 free tokens. */
const PI_SETTINGS = { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 };
const LOW = 90_000; // 10,000 free: due
const ROOMY = 50_000; // 50,000 free: not due

const BRANCH: BranchEntry[] = [
	{ type: "message", id: "e1", message: { role: "user", content: "the task" } },
	{ type: "message", id: "e2", message: { role: "assistant", content: "working" } },
];

function computedFor(input: HandoffRequest): ComputedHandoff {
	return {
		outcome: { kind: input.summaryOnly ? "summary-only" : "full", text: `HANDOFF staged=${input.staged}` },
		modelName: "p/m",
		staged: input.staged,
		copiedMessages: [],
		copiedBlocks: [],
		summaryInstruction: "",
		transcriptOmittedBytes: 0,
		taskOmittedBytes: 0,
	} as unknown as ComputedHandoff;
}

function appliedFor(computed: ComputedHandoff, index: number): AppliedHandoff {
	const details = {
		kind: "headroom-handoff",
		version: 1,
		index,
		outcome: computed.outcome.kind,
		staged: computed.staged,
		model: computed.modelName,
		trajectoryDir: "",
		trajectories: [],
		errors: [],
		calls: [],
		usage: { ...NO_USAGE, calls: 3, input: 30, output: 15 },
		transcriptOmittedBytes: 0,
		taskOmittedBytes: 0,
	} satisfies HandoffDetails;
	return { text: computed.outcome.text, details };
}

/** A session and a fake context over it, with what the session did recorded. */
function harness(options: { hold?: boolean } = {}) {
	const state = {
		idle: true,
		tokens: LOW as number | null,
		modelKey: "p/m",
		handoff: structuredClone(DEFAULT_CONFIG.handoff) as typeof DEFAULT_CONFIG.handoff,
		/** Pi's reply to ctx.compact: "pi" runs beforeCompact like Pi; "error" fails before asking. */
		compactMode: "pi" as "pi" | "error",
		/** The reason Pi gives a compaction it runs for ctx.compact (1.x: "manual"; 0.73: none). */
		compactReason: undefined as CompactionRequest["reason"],
	};
	const seen = {
		logs: [] as string[],
		computes: [] as HandoffRequest[],
		signals: [] as Array<AbortSignal | undefined>,
		appliedPast: [] as number[],
		compacts: 0,
		completed: [] as unknown[],
		resumes: 0,
		piReads: 0,
	};
	/** Staging runs that wait for the test to let them finish (hold: true). */
	const held: Array<() => void> = [];
	const session = new HandoffSession<string>({ resume: () => seen.resumes++ });
	const ctx: HandoffContext<string> = {
		settings: () => ({ handoff: state.handoff, headShare: 0.75 }),
		modelKey: () => state.modelKey,
		modelWindow: () => WINDOW,
		readPiCompaction: () => {
			seen.piReads++;
			return { ...PI_SETTINGS };
		},
		usage: () => ({ tokens: state.tokens, contextWindow: WINDOW }),
		leafId: () => "e2",
		branch: () => BRANCH,
		location: () => ({ sessionFile: undefined, trajectoryDir: "trajectories" }),
		chooseModel: (configured) =>
			configured === "p/missing" ? { model: "p/m", warning: "p/missing was not found" } : { model: "p/m" },
		computeHandoff: async (_model, input, signal) => {
			seen.computes.push(input);
			seen.signals.push(signal);
			if (options.hold && input.staged) await new Promise<void>((resolve) => held.push(resolve));
			return signal?.aborted ? undefined : computedFor(input);
		},
		applyHandoff: (computed, lastIndex) => {
			seen.appliedPast.push(lastIndex);
			return appliedFor(computed, lastIndex + 1);
		},
		isIdle: () => state.idle,
		compact: (done) => {
			seen.compacts++;
			if (state.compactMode === "error") {
				done.onError("no model");
				return;
			}
			void session.beforeCompact(request({ reason: state.compactReason }), ctx).then((answer) => {
				seen.completed.push(answer?.compaction.details);
				if (answer) done.onComplete(answer.compaction.details);
				else done.onError("compaction produced nothing");
			});
		},
		log: (message) => seen.logs.push(message),
	};
	/** One turn: start, the context grows to `tokens`, end (the probe runs). */
	const turn = (tokens: number) => {
		session.turnStarted();
		state.tokens = tokens;
		session.turnEnded(ctx);
	};
	/** Stage a handoff (one turn ending with little room) and let its calls finish. */
	const stage = async () => {
		turn(LOW);
		expect(session.phase).toBe("staging");
		for (const release of held.splice(0)) release();
		await tick();
		expect(session.phase).toBe("staged");
	};
	return { session, ctx, state, seen, held, turn, stage };
}

function request(overrides: Partial<CompactionRequest> = {}): CompactionRequest {
	return {
		effectiveSettings: undefined,
		reason: undefined,
		customInstructions: undefined,
		messagesToSummarize: BRANCH.map((e) => e.message ?? { role: "user" }),
		turnPrefixMessages: [],
		previousSummary: undefined,
		firstKeptEntryId: "e2",
		tokensBefore: LOW,
		branch: BRANCH,
		signal: new AbortController().signal,
		...overrides,
	};
}

/** Let promises settle and timers set for "a tick later" fire. */
const tick = () => vi.advanceTimersByTimeAsync(1);

beforeEach(() => {
	vi.useFakeTimers();
});
afterEach(() => {
	vi.useRealTimers();
});

describe("Pi 0.73: agent_end, then polling for idleness", () => {
	it("applies the staged handoff only after the delay, once idle, and resumes a run that ended mid-task", async () => {
		const h = harness();
		await h.stage();
		h.session.agentStarted();
		h.state.idle = false;
		h.session.agentEnded("toolUse", h.ctx);
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS - 1);
		expect(h.seen.compacts).toBe(0);
		await vi.advanceTimersByTimeAsync(1 + 3 * APPLY_RETRY_MS); // still busy: polled four times
		expect(h.seen.compacts).toBe(0);
		h.state.idle = true;
		await vi.advanceTimersByTimeAsync(APPLY_RETRY_MS);
		expect(h.seen.compacts).toBe(1);
		expect(h.seen.completed).toEqual([expect.objectContaining({ staged: true, index: 1 })]);
		expect(h.seen.computes).toHaveLength(1); // the staged calls, not a second round
		expect(h.seen.resumes).toBe(0); // a tick later
		await tick();
		expect(h.seen.resumes).toBe(1);
		expect(h.session.phase).toBe("idle");
		await vi.advanceTimersByTimeAsync(10 * APPLY_DELAY_MS);
		expect(h.seen.compacts).toBe(1);
	});

	it("a run that ended on its own (stop) is not resumed under resume: auto; resume: always resumes it", async () => {
		for (const [mode, resumes] of [
			["auto", 0],
			["always", 1],
		] as const) {
			const h = harness();
			h.state.handoff.resume = mode;
			await h.stage();
			h.session.agentEnded("stop", h.ctx);
			await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS);
			await tick();
			expect(h.seen.compacts).toBe(1);
			expect(h.seen.resumes).toBe(resumes);
		}
	});

	it("gives up after APPLY_TRIES polls when Pi never becomes idle: nothing applied, the handoff stays staged", async () => {
		const h = harness();
		await h.stage();
		h.state.idle = false;
		h.session.agentEnded("toolUse", h.ctx);
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS + APPLY_TRIES * APPLY_RETRY_MS);
		h.state.idle = true;
		await vi.advanceTimersByTimeAsync(10 * APPLY_RETRY_MS);
		expect(h.seen.compacts).toBe(0);
		expect(h.session.phase).toBe("staged");
	});

	it("Pi's own compaction after agent_end takes the staged handoff; the poll then applies nothing", async () => {
		const h = harness();
		await h.stage();
		h.session.agentEnded("toolUse", h.ctx);
		const answer = (await h.session.beforeCompact(request(), h.ctx)) as CompactionAnswer;
		expect(answer.compaction).toMatchObject({
			summary: "HANDOFF staged=true",
			firstKeptEntryId: "e2",
			tokensBefore: LOW,
		});
		expect(answer.compaction.details).toMatchObject({ staged: true, index: 1 });
		expect(answer.compaction.usage).toMatchObject({ input: 30, output: 15, totalTokens: 45 });
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS + APPLY_TRIES * APPLY_RETRY_MS);
		expect(h.seen.compacts).toBe(0);
		expect(h.seen.computes).toHaveLength(1);
	});

	it("Pi's own compaction still waiting for a staging in flight: the poll leaves it to Pi", async () => {
		const h = harness({ hold: true });
		h.turn(LOW);
		h.session.agentEnded("toolUse", h.ctx);
		const pis = h.session.beforeCompact(request(), h.ctx); // Pi compacts at the run's end (0.73)
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS + APPLY_TRIES * APPLY_RETRY_MS);
		expect(h.session.phase).toBe("staging");
		expect(h.seen.compacts).toBe(0);
		for (const release of h.held.splice(0)) release();
		expect((await pis)?.compaction.details).toMatchObject({ staged: true, index: 1 });
		expect(h.seen.computes).toHaveLength(1);
	});

	it("a new run before the delay, or a later agent_end, supersedes the poll: one application at most", async () => {
		const h = harness();
		await h.stage();
		h.session.agentEnded("toolUse", h.ctx);
		h.session.agentStarted(); // a follow-up run started at once
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS * 2);
		expect(h.seen.compacts).toBe(0);
		h.session.agentEnded("toolUse", h.ctx);
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS / 2);
		h.session.agentEnded("toolUse", h.ctx); // the later agent_end's poll is the one that counts
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS / 2);
		expect(h.seen.compacts).toBe(0);
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS / 2);
		expect(h.seen.compacts).toBe(1);
	});

	it("nothing staged: agent_end schedules nothing", async () => {
		const h = harness();
		h.session.agentEnded("toolUse", h.ctx);
		expect(vi.getTimerCount()).toBe(0);
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS);
		expect(h.seen.compacts).toBe(0);
	});
});

describe("Pi 1.x: agent_settled", () => {
	it("applies a tick after agent_settled; the agent_end poll that 1.x also triggers finds it done", async () => {
		const h = harness();
		h.state.compactReason = "manual";
		await h.stage();
		h.session.agentStarted();
		h.session.agentEnded("toolUse", h.ctx);
		h.session.agentSettled(h.ctx);
		expect(h.seen.compacts).toBe(0); // out of the handler
		await tick();
		expect(h.seen.compacts).toBe(1);
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS + APPLY_TRIES * APPLY_RETRY_MS);
		expect(h.seen.compacts).toBe(1);
		expect(h.seen.completed).toEqual([expect.objectContaining({ staged: true })]);
		expect(h.seen.resumes).toBe(1);
	});

	it("two agent_settled while one application is under way start one compaction", async () => {
		const h = harness();
		await h.stage();
		h.ctx.compact = () => {
			h.seen.compacts++; // Pi is still compacting: neither callback yet
		};
		h.session.agentSettled(h.ctx);
		h.session.agentSettled(h.ctx);
		await tick();
		h.session.agentSettled(h.ctx);
		await tick();
		expect(h.seen.compacts).toBe(1);
	});

	it("a failed application is logged and allows the next one; a staged handoff survives it", async () => {
		const h = harness();
		await h.stage();
		h.state.compactMode = "error";
		h.session.agentSettled(h.ctx);
		await tick();
		expect(h.seen.logs).toContain(LOG.compactFailed("no model"));
		expect(h.session.phase).toBe("staged");
		h.state.compactMode = "pi";
		h.session.agentSettled(h.ctx);
		await tick();
		expect(h.seen.compacts).toBe(2);
		expect(h.seen.completed).toEqual([expect.objectContaining({ staged: true, index: 1 })]);
	});

	it("session_compact_failed drops what is staged and what is being applied, and says so", async () => {
		const h = harness();
		await h.stage();
		h.ctx.compact = () => {
			h.seen.compacts++; // Pi started, then failed: it reports session_compact_failed
		};
		h.session.agentSettled(h.ctx);
		await tick();
		h.session.compactFailed({ reason: "threshold", errorMessage: "boom", aborted: false }, h.ctx);
		expect(h.seen.logs).toContain(LOG.piCompactFailed("threshold", "boom", false));
		expect(h.session.phase).toBe("idle");
		h.session.compactFailed({}, h.ctx);
		expect(h.seen.logs).toContain(LOG.piCompactFailed("automatic", undefined, false));
		// `applying` was cleared: staging again and settling applies again.
		await h.stage();
		h.session.agentSettled(h.ctx);
		await tick();
		expect(h.seen.compacts).toBe(2);
	});
});

describe("session_shutdown: /reload, /new, quit", () => {
	it("drops a staging in flight (its calls are aborted) and the poll after agent_end then applies nothing", async () => {
		const h = harness({ hold: true });
		h.turn(LOW);
		expect(h.session.phase).toBe("staging");
		h.session.agentEnded("toolUse", h.ctx);
		h.session.shutdown();
		expect(h.seen.signals[0]?.aborted).toBe(true);
		for (const release of h.held.splice(0)) release();
		await vi.advanceTimersByTimeAsync(APPLY_DELAY_MS + APPLY_TRIES * APPLY_RETRY_MS);
		expect(h.session.phase).toBe("idle");
		expect(h.seen.compacts).toBe(0);
	});

	it("a staged handoff is gone after shutdown: the next compaction runs the calls afresh, past the index already used", async () => {
		const h = harness();
		const first = await h.session.beforeCompact(request(), h.ctx);
		expect(first?.compaction.details.index).toBe(1);
		await h.stage();
		h.session.shutdown(); // /new: the same extension instance may still see a compaction
		const next = await h.session.beforeCompact(request(), h.ctx);
		expect(next?.compaction.details).toMatchObject({ staged: false, index: 2 });
		expect(h.seen.appliedPast).toEqual([0, 1]);
		expect(h.seen.computes.map((c) => c.staged)).toEqual([false, true, false]);
	});

	it("forgets Pi's compaction settings: they are read again after shutdown (a reload may have changed them)", async () => {
		const h = harness();
		h.turn(ROOMY);
		h.turn(ROOMY);
		expect(h.seen.piReads).toBe(1); // cached per model
		h.state.modelKey = "p/other";
		h.turn(ROOMY);
		expect(h.seen.piReads).toBe(2);
		h.session.shutdown();
		h.turn(ROOMY);
		expect(h.seen.piReads).toBe(3);
	});

	it("/reload builds a fresh session: it starts idle at index 0 (the files and entries carry the count on)", async () => {
		const h = harness();
		await h.session.beforeCompact(request(), h.ctx);
		await h.stage();
		h.session.shutdown();
		const fresh = new HandoffSession<string>({ resume: () => undefined });
		expect(fresh.phase).toBe("idle");
		await fresh.beforeCompact(request(), h.ctx);
		expect(h.seen.appliedPast).toEqual([0, 0]);
	});
});

describe("beforeCompact", () => {
	it("an overflow with nothing ready is one summary call; with a focus it is three calls afresh", async () => {
		const h = harness();
		await h.session.beforeCompact(request({ reason: "overflow" }), h.ctx);
		await h.session.beforeCompact(request({ reason: "overflow", customInstructions: "the API" }), h.ctx);
		await h.session.beforeCompact(request({ customInstructions: "   " }), h.ctx);
		expect(h.seen.computes.map((c) => [c.summaryOnly, c.focus])).toEqual([
			[true, undefined],
			[false, "the API"],
			[false, undefined],
		]);
	});

	it("a /compact with instructions drops the staged handoff and runs afresh with the focus", async () => {
		const h = harness();
		await h.stage();
		const answer = await h.session.beforeCompact(request({ customInstructions: "focus" }), h.ctx);
		expect(answer?.compaction.details.staged).toBe(false);
		expect(h.session.phase).toBe("idle");
	});

	it("a staged handoff the history outgrew is dropped with a log line; the handoff runs afresh", async () => {
		const h = harness();
		await h.stage();
		const tokensBefore = LOW + 60_000; // past max(keepRecentTokens, 60% of (window − reserve))
		const answer = await h.session.beforeCompact(request({ tokensBefore }), h.ctx);
		expect(h.seen.logs).toContain(LOG.staleDropped(60_000, Math.floor((WINDOW - 16_384) * 0.6)));
		expect(answer?.compaction.details.staged).toBe(false);
	});

	it("a compaction's own settings replace what was read from Pi's files", async () => {
		const h = harness();
		h.turn(ROOMY);
		expect(h.session.phase).toBe("idle");
		// Pi says (1.x) that it reserves 60,000 tokens: 50,000 free is now due.
		await h.session.beforeCompact(request({ effectiveSettings: { ...PI_SETTINGS, reserveTokens: 60_000 } }), h.ctx);
		h.turn(ROOMY);
		expect(h.session.phase).toBe("staging");
		expect(h.seen.piReads).toBe(1);
	});

	it("disabled: answers nothing (Pi compacts) and drops what was staged", async () => {
		const h = harness();
		await h.stage();
		h.state.handoff.enabled = false;
		expect(await h.session.beforeCompact(request(), h.ctx)).toBeUndefined();
		expect(h.session.phase).toBe("idle");
		expect(h.seen.computes).toHaveLength(1);
	});

	it("an aborted compaction answers nothing and applies nothing", async () => {
		const h = harness();
		const controller = new AbortController();
		controller.abort();
		expect(await h.session.beforeCompact(request({ signal: controller.signal }), h.ctx)).toBeUndefined();
		expect(h.seen.appliedPast).toEqual([]);
	});

	it("no model: logged, Pi compacts; a failing pipeline: logged, Pi compacts", async () => {
		const h = harness();
		h.ctx.chooseModel = () => ({ model: undefined });
		expect(await h.session.beforeCompact(request(), h.ctx)).toBeUndefined();
		expect(h.seen.logs).toContain(LOG.noModel);
		h.ctx.chooseModel = () => ({ model: "p/m" });
		h.ctx.computeHandoff = async () => {
			throw new Error("provider down");
		};
		expect(await h.session.beforeCompact(request(), h.ctx)).toBeUndefined();
		expect(h.seen.logs).toContain(LOG.summaryFailed("provider down"));
	});

	it("an unknown configured model is warned about once per value", async () => {
		const h = harness();
		h.state.handoff.model = "p/missing";
		await h.session.beforeCompact(request(), h.ctx);
		await h.session.beforeCompact(request(), h.ctx);
		expect(h.seen.logs.filter((l) => l.includes("p/missing"))).toEqual(["p/missing was not found"]);
	});
});

describe("turnEnded: the probe", () => {
	it("stages only when free context falls below the threshold, and only once", () => {
		const h = harness({ hold: true });
		h.turn(ROOMY);
		expect(h.session.phase).toBe("idle");
		h.turn(LOW);
		h.turn(LOW + 100);
		expect(h.session.phase).toBe("staging");
		expect(h.seen.computes).toEqual([
			expect.objectContaining({ staged: true, messages: BRANCH.map((e) => e.message) }),
		]);
	});

	it("does not stage when Pi never compacts on its own, unless a fixed threshold says so", () => {
		const h = harness();
		h.ctx.readPiCompaction = () => ({ ...PI_SETTINGS, enabled: false });
		h.turn(LOW);
		expect(h.session.phase).toBe("idle");
		h.state.handoff.probe.freeTokensThreshold = 20_000;
		h.turn(LOW);
		expect(h.session.phase).toBe("staging");
	});

	it("a staged handoff the history outgrew is replaced by a fresh staging", async () => {
		const h = harness({ hold: true });
		await h.stage();
		h.turn(WINDOW - 1);
		expect(h.seen.computes).toHaveLength(1); // 9,999 more tokens is within the bound: kept
		expect(h.session.phase).toBe("staged");
		h.state.handoff.probe.maxStaleTokens = 1_000;
		h.turn(LOW + 5_000);
		expect(h.session.phase).toBe("staging");
		expect(h.seen.computes).toHaveLength(2);
	});

	it("a failed staging is logged and leaves the session idle", async () => {
		const h = harness();
		h.ctx.computeHandoff = () => Promise.reject(new Error("nope"));
		h.turn(LOW);
		await tick();
		expect(h.session.phase).toBe("idle");
		expect(h.seen.logs).toContain(LOG.summaryFailed("nope"));
		h.ctx.chooseModel = () => {
			throw new Error("registry gone");
		};
		h.turn(LOW);
		await tick();
		expect(h.session.phase).toBe("idle");
		expect(h.seen.logs).toContain(LOG.stageFailed("registry gone"));
	});
});

describe("lastStopReason", () => {
	it("is the stop reason of the last assistant message", () => {
		expect(
			lastStopReason([
				{ role: "assistant", stopReason: "toolUse" } as never,
				{ role: "assistant", stopReason: "stop" } as never,
				{ role: "toolResult" },
			]),
		).toBe("stop");
		expect(lastStopReason([{ role: "user" }])).toBeUndefined();
	});
});

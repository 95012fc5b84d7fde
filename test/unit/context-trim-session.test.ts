/**
 * context-trim's lifecycle object (extensions/context-trim/session.ts, its warm-up warm-up.ts) without Pi:
 * both Pi lines' event orders (`context` alone on 0.73; `context` then `context_with_system` on 0.87+), the settings made again
 * after a configuration read, the session record written once per cut, and the safe failures; the
 * warm-up in idle time after session_start (sizing the resumed history a chunk per turn, then the trim the
 * first request would run), its races with a request that comes first and with a session switch, and that a
 * warm-up never changes an answer: every request equals the one a session without warm-up gives.
 */
import { rmSync } from "node:fs";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { MARKER_CUSTOM_TYPE } from "../../extensions/context-trim/prompt.ts";
import { type ContextTrimContext, ContextTrimSession } from "../../extensions/context-trim/session.ts";
import { type Later, WARM_UP_CHUNK_MESSAGES, WARM_UP_DELAY_MS } from "../../extensions/context-trim/warm-up.ts";
import { DEFAULT_CONFIG, type HeadroomConfig } from "../../extensions/shared/host/config.ts";
import type { ContextTrimRecord } from "../../extensions/shared/host/details.ts";
import { sessionHistory } from "../../extensions/shared/host/pi-host.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { fingerprintReady } from "../../extensions/shared/text/fingerprint.ts";
import type { TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { buildHistory, filler, HistoryBuilder, historyArb } from "./transcript-history.ts";

beforeAll(async () => {
	await fingerprintReady();
});

/**
 * One agent dir per test, shared by every session the test makes: shortened texts name their artifact's path,
 * so a session and the one it is compared with must store into the same folder to give the same answer.
 */
let agentDir: string | undefined;
afterEach(() => {
	if (agentDir) rmSync(agentDir, { recursive: true, force: true });
	agentDir = undefined;
});

const TOOLS = [{ name: "bash", description: "Run a command", parameters: { type: "object" } }];

/** A session and a context over plain data; `notices` collects what the person would be told. */
function harness(options: {
	config?: HeadroomConfig;
	seesSystem?: boolean;
	record?: boolean;
	prompt?: () => string;
	history?: () => TranscriptMessage[] | undefined;
	later?: Later;
}) {
	agentDir ??= makeTestDir("ct-session");
	const store = new ArtifactStore({ agentDir });
	const records: ContextTrimRecord[] = [];
	const notices: string[] = [];
	let config = options.config ?? DEFAULT_CONFIG;
	const session = new ContextTrimSession({
		activeTools: () => ["bash"],
		allTools: () => TOOLS,
		record: options.record === false ? undefined : (data) => records.push(data),
		later: options.later,
	});
	const told = new Set<string>();
	const ctx: ContextTrimContext = {
		config: () => config,
		store: () => store,
		model: () => ({ contextWindow: 16_000, maxTokens: 2000 }),
		usageWindow: () => undefined,
		systemPrompt: options.prompt ?? (() => "You are a coding agent."),
		sessionFile: () => "/sessions/s.jsonl",
		seesSystemMessages: () => options.seesSystem === true,
		history: options.history ?? (() => undefined),
		notify: (text) => notices.push(text),
		notifyOnce: (text) => {
			if (told.has(text)) return;
			told.add(text);
			notices.push(text);
		},
	};
	const setConfig = (next: HeadroomConfig) => {
		config = next;
	};
	return { session, ctx, records, notices, setConfig };
}

function history(turns: number, startAt?: number): TranscriptMessage[] {
	const b = new HistoryBuilder(startAt).user("TASK: tidy the repo");
	for (let i = 0; i < turns; i++)
		b.assistant(`step ${i}`, [{ name: "bash", arguments: { command: `ls ${i}` }, result: filler(`out ${i}`, 3000) }]);
	return b.messages;
}

const markers = (messages: TranscriptMessage[] | undefined) =>
	(messages ?? []).filter((m) => m.customType === MARKER_CUSTOM_TYPE);

/** A transcript as Pi 0.87+ hands context_with_system: the system message first, then the conversation. */
function withSystem(conversation: TranscriptMessage[]): TranscriptMessage[] {
	const system: TranscriptMessage = { role: "system", content: "You are a coding agent.", timestamp: 1 };
	return [system, ...conversation];
}

const sync = <T>(value: T | Promise<T>): T => {
	if (value instanceof Promise) throw new Error("expected a synchronous answer once the fingerprint runs");
	return value;
};

describe("ContextTrimSession on Pi 0.73 (context alone)", () => {
	it("leaves a history that fits and trims one that does not, recording each cut once", () => {
		const { session, ctx, records } = harness({});
		expect(sync(session.context(history(3), ctx))).toBeUndefined();
		const long = history(60);
		const out = sync(session.context(long, ctx));
		expect(markers(out?.messages)).toHaveLength(1);
		expect(String(markers(out?.messages)[0].content)).toContain("/sessions/s.jsonl");
		expect(records).toHaveLength(1);
		expect(records[0].messagesBefore).toBe(long.length);
		// The same cut again: no second record.
		sync(session.context(history(60), ctx));
		expect(records).toHaveLength(1);
	});

	it("makes its settings again after configChanged, not before", () => {
		const { session, ctx, setConfig } = harness({});
		expect(sync(session.context(history(60), ctx))).toBeDefined();
		setConfig({ ...DEFAULT_CONFIG, contextTrim: { ...DEFAULT_CONFIG.contextTrim, enabled: false } });
		expect(sync(session.context(history(60), ctx))).toBeDefined();
		session.configChanged();
		expect(sync(session.context(history(60), ctx))).toBeUndefined();
	});

	it("sends the history untrimmed on an internal error and says so once", () => {
		const { session, ctx, notices } = harness({
			prompt: () => {
				throw new Error("prompt unavailable");
			},
		});
		expect(sync(session.context(history(60), ctx))).toBeUndefined();
		expect(sync(session.context(history(61), ctx))).toBeUndefined();
		expect(notices).toHaveLength(1);
		expect(notices[0]).toContain("prompt unavailable");
	});

	it("trims without a session to record in, and reports a failing record once", () => {
		const bare = harness({ record: false });
		expect(markers(sync(bare.session.context(history(60), bare.ctx))?.messages)).toHaveLength(1);
		const { session, ctx, notices } = harness({});
		const failing = new ContextTrimSession({
			activeTools: () => ["bash"],
			allTools: () => TOOLS,
			record: () => {
				throw new Error("disk full");
			},
		});
		expect(markers(sync(failing.context(history(60), ctx))?.messages)).toHaveLength(1);
		expect(markers(sync(failing.context(history(80), ctx))?.messages)).toHaveLength(1);
		expect(notices.filter((n) => n.includes("disk full"))).toHaveLength(1);
		expect(sync(session.context(history(3), ctx))).toBeUndefined();
	});
});

describe("ContextTrimSession on Pi 0.87+ (context, then context_with_system)", () => {
	it("lets context pass and trims in context_with_system, the system message kept first", () => {
		const { session, ctx, records } = harness({ seesSystem: true });
		const conversation = history(60);
		expect(sync(session.context(conversation, ctx))).toBeUndefined();
		const out = sync(session.contextWithSystem(withSystem(conversation), ctx));
		expect(out?.messages[0].role).toBe("system");
		expect(markers(out?.messages)).toHaveLength(1);
		expect(records).toHaveLength(1);
		expect(records[0].messagesBefore).toBe(conversation.length);
	});

	it("once context_with_system ran, context never trims again, even where the host looks like 0.73", () => {
		const { session, ctx } = harness({ seesSystem: false });
		const conversation = history(60);
		// A first request as 0.73 would run it: context trims.
		expect(markers(sync(session.context(conversation, ctx))?.messages)).toHaveLength(1);
		expect(markers(sync(session.contextWithSystem(withSystem(conversation), ctx))?.messages)).toHaveLength(1);
		expect(sync(session.context(history(61), ctx))).toBeUndefined();
	});

	it("gives the same trim whether or not the context phase's list was seen", () => {
		const a = harness({ seesSystem: true });
		const b = harness({ seesSystem: true });
		const conversation = history(60);
		sync(a.session.context(conversation, a.ctx));
		const seen = sync(a.session.contextWithSystem(withSystem(conversation), a.ctx));
		const unseen = sync(b.session.contextWithSystem(withSystem(history(60)), b.ctx));
		expect(JSON.stringify(seen?.messages)).toBe(JSON.stringify(unseen?.messages));
	});
});

/** A scheduler the test steps by hand: each scheduled run waits in a queue until `step`. */
class ManualLater {
	private readonly queue: Array<{ run: () => void; ms: number; cancelled: boolean }> = [];
	readonly delays: number[] = [];
	readonly later: Later = (run, ms) => {
		const item = { run, ms, cancelled: false };
		this.queue.push(item);
		this.delays.push(ms);
		return () => {
			item.cancelled = true;
		};
	};
	/** Scheduled runs not cancelled. */
	get pending(): number {
		return this.queue.filter((item) => !item.cancelled).length;
	}
	/** Run the oldest scheduled run (a cancelled one is dropped); false when none is left. */
	step(): boolean {
		const item = this.queue.shift();
		if (!item) return false;
		if (!item.cancelled) item.run();
		return true;
	}
	runAll(): number {
		let steps = 0;
		while (this.step()) steps++;
		return steps;
	}
}

/** Pi's copy of the resumed history plus the new prompt: fresh objects, as every request gets. */
function request(history: TranscriptMessage[], prompt = "go on"): TranscriptMessage[] {
	const copy = structuredClone(history);
	copy.push({ role: "user", content: [{ type: "text", text: prompt }], timestamp: 1_900_000_000_000 });
	return copy;
}

/** The answer a session without warm-up gives to the same requests. */
function fresh(history: TranscriptMessage[], seesSystem = false, prompts = ["go on"]): string[] {
	const { session, ctx } = harness({ seesSystem });
	return prompts.map((prompt) => answer(session, ctx, request(history, prompt), seesSystem));
}

function answer(
	session: ContextTrimSession,
	ctx: ContextTrimContext,
	messages: TranscriptMessage[],
	seesSystem = false,
) {
	if (!seesSystem) return JSON.stringify(sync(session.context(messages, ctx)) ?? "untouched");
	sync(session.context(messages, ctx));
	return JSON.stringify(sync(session.contextWithSystem(withSystem(messages), ctx)) ?? "untouched");
}

describe("ContextTrimSession warm-up in idle time (session_start)", () => {
	const resumed = history(150);

	it("sizes the resumed history after its delay, a chunk per turn, then the first request sizes only the prompt", () => {
		const clock = new ManualLater();
		let reads = 0;
		const { session, ctx } = harness({
			later: clock.later,
			history: () => {
				reads++;
				return structuredClone(resumed);
			},
		});
		session.sessionStarted(ctx);
		expect(session.warmUp).toBe("waiting");
		expect(clock.delays).toEqual([WARM_UP_DELAY_MS]);
		expect(reads).toBe(0);
		clock.step();
		expect(session.warmUp).toBe("sizing");
		expect(reads).toBe(1);
		const steps = clock.runAll();
		expect(steps).toBe(Math.ceil(resumed.length / WARM_UP_CHUNK_MESSAGES) - 1);
		expect(clock.delays.slice(1).every((ms) => ms === 0)).toBe(true);
		expect(session.warmUp).toBe("ready");
		const before = session.estimatedMessages;
		expect(before).toBeGreaterThanOrEqual(resumed.length);
		const out = answer(session, ctx, request(resumed));
		expect(out).toBe(fresh(resumed)[0]);
		expect(out).toContain(MARKER_CUSTOM_TYPE);
		// The new prompt only (estimated for Pi's usage reading and at its position).
		expect(session.estimatedMessages - before).toBeLessThanOrEqual(2);
	});

	it("gives the same answers on Pi 0.87+'s order (context, then context_with_system)", () => {
		const clock = new ManualLater();
		const { session, ctx } = harness({ later: clock.later, seesSystem: true, history: () => structuredClone(resumed) });
		session.sessionStarted(ctx);
		clock.runAll();
		expect(session.warmUp).toBe("ready");
		const before = session.estimatedMessages;
		const prompts = ["go on", "and then"];
		const expected = fresh(resumed, true, prompts);
		expect(prompts.map((p) => answer(session, ctx, request(resumed, p), true))).toEqual(expected);
		expect(session.estimatedMessages - before).toBeLessThanOrEqual(4);
	});

	it("runs on the real timers to the end while nothing else wakes the event loop (one pending timer)", async () => {
		const { session, ctx } = harness({ history: () => structuredClone(resumed) });
		session.sessionStarted(ctx);
		// One ref'd timer and nothing else to do: each step must be due on its own, not wait for other events.
		await new Promise((resolve) => setTimeout(resolve, WARM_UP_DELAY_MS + 2500));
		expect(session.warmUp).toBe("ready");
		const before = session.estimatedMessages;
		expect(answer(session, ctx, request(resumed))).toBe(fresh(resumed)[0]);
		expect(session.estimatedMessages - before).toBeLessThanOrEqual(2);
	}, 15_000);

	it("a request before the warm-up finished stops it and answers as without warm-up", () => {
		const clock = new ManualLater();
		const { session, ctx } = harness({ later: clock.later, history: () => structuredClone(resumed) });
		session.sessionStarted(ctx);
		clock.step();
		clock.step();
		expect(session.warmUp).toBe("sizing");
		const expected = fresh(resumed, false, ["go on", "and then"]);
		expect(answer(session, ctx, request(resumed, "go on"))).toBe(expected[0]);
		expect(session.warmUp).toBe("stopped");
		expect(clock.pending).toBe(0);
		// Whatever was still queued does nothing, and the next request is still right.
		clock.runAll();
		expect(session.warmUp).toBe("stopped");
		expect(answer(session, ctx, request(resumed, "and then"))).toBe(expected[1]);
	});

	it("a request during the delay stops the warm-up before it reads the history", () => {
		const clock = new ManualLater();
		let reads = 0;
		const { session, ctx } = harness({
			later: clock.later,
			history: () => {
				reads++;
				return structuredClone(resumed);
			},
		});
		session.sessionStarted(ctx);
		expect(answer(session, ctx, request(resumed))).toBe(fresh(resumed)[0]);
		clock.runAll();
		expect(reads).toBe(0);
		expect(session.warmUp).toBe("stopped");
	});

	it("a session switched while sizing: the old warm-up stops, the new one sizes the new history", () => {
		const clock = new ManualLater();
		const other = history(120, 1_800_000_000_000);
		let current = resumed;
		const reads: TranscriptMessage[][] = [];
		const { session, ctx } = harness({
			later: clock.later,
			history: () => {
				reads.push(current);
				return structuredClone(current);
			},
		});
		session.sessionStarted(ctx);
		clock.step();
		clock.step();
		expect(session.warmUp).toBe("sizing");
		current = other;
		session.sessionStarted(ctx);
		expect(session.warmUp).toBe("waiting");
		clock.runAll();
		expect(session.warmUp).toBe("ready");
		expect(reads).toEqual([resumed, other]);
		expect(answer(session, ctx, request(other))).toBe(fresh(other)[0]);
	});

	it("shutdown (quit, /reload, /new) while sizing leaves nothing scheduled", () => {
		const clock = new ManualLater();
		const { session, ctx } = harness({ later: clock.later, history: () => structuredClone(resumed) });
		session.sessionStarted(ctx);
		clock.step();
		session.shutdown();
		expect(session.warmUp).toBe("stopped");
		expect(clock.pending).toBe(0);
		const estimated = session.estimatedMessages;
		clock.runAll();
		expect(session.estimatedMessages).toBe(estimated);
	});

	it("sizes nothing for a history within budget, a disabled trim, or a host that cannot read the history", () => {
		const small = history(3);
		const within = new ManualLater();
		const a = harness({ later: within.later, history: () => structuredClone(small) });
		a.session.sessionStarted(a.ctx);
		within.runAll();
		expect(a.session.warmUp).toBe("ready");
		// Only what follows Pi's last usage reading (the last tool result) is estimated, not the history.
		expect(a.session.estimatedMessages).toBeLessThanOrEqual(1);
		expect(answer(a.session, a.ctx, request(small))).toBe(fresh(small)[0]);

		const off = new ManualLater();
		let reads = 0;
		const disabled = { ...DEFAULT_CONFIG, contextTrim: { ...DEFAULT_CONFIG.contextTrim, enabled: false } };
		const b = harness({
			later: off.later,
			config: disabled,
			history: () => {
				reads++;
				return resumed;
			},
		});
		b.session.sessionStarted(b.ctx);
		off.runAll();
		expect(reads).toBe(0);
		expect(b.session.warmUp).toBe("ready");

		const none = new ManualLater();
		const c = harness({ later: none.later, history: () => undefined });
		c.session.sessionStarted(c.ctx);
		none.runAll();
		expect(c.session.warmUp).toBe("ready");
		expect(answer(c.session, c.ctx, request(resumed))).toBe(fresh(resumed)[0]);
	});

	it("a history read that throws stops the warm-up quietly; the request answers as without it", () => {
		const clock = new ManualLater();
		const { session, ctx, notices } = harness({
			later: clock.later,
			history: () => {
				throw new Error("session manager gone");
			},
		});
		session.sessionStarted(ctx);
		clock.runAll();
		expect(session.warmUp).toBe("stopped");
		expect(notices).toEqual([]);
		expect(answer(session, ctx, request(resumed))).toBe(fresh(resumed)[0]);
	});

	it("a message Pi hands differently from the session's list (same role and time, other text) is sized again", () => {
		const clock = new ManualLater();
		// The session's list as read in idle time: one old result half as long as in Pi's copy.
		const differs = structuredClone(resumed);
		const at = 37; // not a multiple of the shape-check stride
		const part = (differs[at].content as Array<{ text: string }>)[0];
		part.text = part.text.slice(0, part.text.length / 2);
		const { session, ctx } = harness({ later: clock.later, history: () => differs });
		session.sessionStarted(ctx);
		clock.runAll();
		expect(session.warmUp).toBe("ready");
		expect(answer(session, ctx, request(resumed))).toBe(fresh(resumed)[0]);
	});

	it("property: warm-up stopped after any number of steps never changes the next two answers", () => {
		fc.assert(
			fc.property(historyArb, fc.integer({ min: 0, max: 12 }), fc.boolean(), ({ steps, summary }, stop, seesSystem) => {
				const h = buildHistory(steps, { summary });
				const clock = new ManualLater();
				const { session, ctx } = harness({ later: clock.later, seesSystem, history: () => structuredClone(h) });
				session.sessionStarted(ctx);
				for (let i = 0; i < stop; i++) clock.step();
				const prompts = ["go on", "and then"];
				const got = prompts.map((p) => answer(session, ctx, request(h, p), seesSystem));
				expect(got).toEqual(fresh(h, seesSystem, prompts));
			}),
			{ numRuns: 40 },
		);
	});
});

describe("sessionHistory: the resumed history the warm-up reads", () => {
	it("is Pi 0.73's session context (what Pi sets the agent's messages to on resume)", () => {
		const sm = SessionManager.inMemory("/work");
		const [user, assistant] = history(1);
		sm.appendMessage(user as never);
		sm.appendMessage(assistant as never);
		const read = sessionHistory({ sessionManager: sm });
		expect(read).toHaveLength(2);
		expect(read).toEqual(sm.buildSessionContext().messages);
	});

	it("prefers 1.x's projection (context edits applied), and is undefined where neither exists or reading fails", () => {
		const projected = history(2);
		const both = {
			buildSessionProjection: () => ({ messages: projected }),
			buildSessionContext: () => ({ messages: [] }),
		};
		expect(sessionHistory({ sessionManager: both })).toBe(projected);
		expect(sessionHistory({ sessionManager: {} })).toBeUndefined();
		expect(sessionHistory(undefined)).toBeUndefined();
		const failing = {
			buildSessionContext: () => {
				throw new Error("gone");
			},
		};
		expect(sessionHistory({ sessionManager: failing })).toBeUndefined();
	});
});

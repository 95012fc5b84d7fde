/**
 * context-trim's lifecycle object (extensions/context-trim/session.ts) without Pi: both Pi lines' event
 * orders (`context` alone on 0.73; `context` then `context_with_system` on 0.87+), the settings made again
 * after a configuration read, the session record written once per cut, and the safe failures.
 */
import { rmSync } from "node:fs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { MARKER_CUSTOM_TYPE } from "../../extensions/context-trim/prompt.ts";
import { ContextTrimSession, type TrimContext } from "../../extensions/context-trim/session.ts";
import { DEFAULT_CONFIG, type HeadroomConfig } from "../../extensions/shared/host/config.ts";
import type { ContextTrimRecord } from "../../extensions/shared/host/details.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { fingerprintReady } from "../../extensions/shared/text/fingerprint.ts";
import type { TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { filler, HistoryBuilder } from "./transcript-history.ts";

beforeAll(async () => {
	await fingerprintReady();
});

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const TOOLS = [{ name: "bash", description: "Run a command", parameters: { type: "object" } }];

/** A session and a context over plain data; `notices` collects what the person would be told. */
function harness(options: { config?: HeadroomConfig; seesSystem?: boolean; record?: boolean; prompt?: () => string }) {
	const agentDir = makeTestDir("ct-session");
	dirs.push(agentDir);
	const store = new ArtifactStore({ agentDir });
	const records: ContextTrimRecord[] = [];
	const notices: string[] = [];
	let config = options.config ?? DEFAULT_CONFIG;
	const session = new ContextTrimSession({
		activeTools: () => ["bash"],
		allTools: () => TOOLS,
		record: options.record === false ? undefined : (data) => records.push(data),
	});
	const told = new Set<string>();
	const ctx: TrimContext = {
		config: () => config,
		store: () => store,
		model: () => ({ contextWindow: 16_000, maxTokens: 2000 }),
		usageWindow: () => undefined,
		systemPrompt: options.prompt ?? (() => "You are a coding agent."),
		sessionFile: () => "/sessions/s.jsonl",
		seesSystemMessages: () => options.seesSystem === true,
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

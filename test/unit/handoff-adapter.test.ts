/**
 * The handoff adapter (index.ts + prepare.ts) with a fake Pi and a mocked provider call: when an index
 * is taken and trajectories are written (only when a handoff is applied), what a planted symlink in the
 * cache does (nothing written through it, the handoff still succeeds), the warning for an unknown
 * configured model, and the bound on a huge original task.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { HandoffDetails } from "../../extensions/handoff/details.ts";
import handoffExtension from "../../extensions/handoff/index.ts";
import {
	ANSWERS_SYSTEM_PROMPT,
	LOG,
	QUESTIONS_SYSTEM_PROMPT,
	SUMMARY_SYSTEM_PROMPT,
	trajectoriesLine,
	transcriptLine,
} from "../../extensions/handoff/prompt.ts";
import { utf8Length } from "../../extensions/shared/text/tokens.ts";
import { useAgentDirEnv } from "../fixtures/agent-dir-env.ts";

/** Every provider call the handoff made: which model, which system prompt, the user texts. */
const calls: Array<{ model: string; system: string; texts: string[] }> = [];

vi.mock("@mariozechner/pi-ai", async (importOriginal) => {
	const original = await importOriginal<Record<string, unknown>>();
	return {
		...original,
		complete: async (
			model: { id: string },
			context: { systemPrompt: string; messages: Array<{ content: Array<{ text: string }> }> },
		) => {
			const { FIVE_QUESTIONS, handoffStep } = await import("../fixtures/handoff-steps.ts");
			const texts = context.messages.map((m) => m.content.map((p) => p.text).join(""));
			calls.push({ model: model.id, system: context.systemPrompt, texts });
			const step = handoffStep(context.systemPrompt);
			const text = step
				? { summary: "SUMMARY-TEXT", questions: FIVE_QUESTIONS, answers: "ANSWERS-TEXT" }[step]
				: "unexpected";
			return {
				content: [{ type: "text", text }],
				stopReason: "stop",
				model: model.id,
				usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, cost: { total: 0 } },
			};
		},
	};
});

const MODELS = [
	{ provider: "mock", id: "mock-model", api: "openai-completions", contextWindow: 32_000, maxTokens: 4096 },
	{ provider: "mock", id: "mock-cheap", api: "openai-completions", contextWindow: 32_000, maxTokens: 4096 },
];

type Handler = (event: unknown, ctx: unknown) => unknown;

function branchWithTask(task: string) {
	return [
		{ type: "message", id: "e1", message: { role: "user", content: task } },
		{
			type: "message",
			id: "e2",
			message: {
				role: "assistant",
				content: [
					{ type: "text", text: "working" },
					{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "ls" } },
				],
				stopReason: "toolUse",
			},
		},
		{ type: "message", id: "e3", message: { role: "toolResult", toolName: "bash", content: "out" } },
		{ type: "message", id: "e4", message: { role: "assistant", content: "done", stopReason: "stop" } },
	];
}

const env = useAgentDirEnv();
let root: string;
let agentDir: string;
let errors: string[];

beforeEach(() => {
	root = env.folder("handoff-adapter");
	agentDir = join(root, "agent");
	mkdirSync(agentDir);
	env.point(agentDir);
	calls.length = 0;
	errors = [];
	vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
		errors.push(args.map(String).join(" "));
	});
});

/** A fresh extension instance (its own config, stager and index) and a context for it. */
function setup(opts: { sessionFile?: string; task?: string; config?: unknown }) {
	if (opts.config) writeFileSync(join(agentDir, "headroom.json"), JSON.stringify(opts.config));
	const handlers = new Map<string, Handler>();
	handoffExtension({
		on: (event: string, handler: Handler) => handlers.set(event, handler),
		sendMessage: () => undefined,
	} as never);
	const branch = branchWithTask(opts.task ?? "TASK-ORIGINAL");
	const ctx = {
		cwd: root,
		hasUI: false,
		ui: {},
		model: MODELS[0],
		modelRegistry: {
			find: (p: string, id: string) => MODELS.find((m) => m.provider === p && m.id === id),
			getAvailable: () => MODELS,
			getAll: () => MODELS,
			getApiKey: async () => "key",
		},
		sessionManager: {
			getSessionId: () => "sess-1",
			getSessionFile: () => opts.sessionFile,
			getEntries: () => branch,
			getLeafId: () => "e4",
			getBranch: () => branch,
		},
		getContextUsage: () => ({ tokens: 31_000, contextWindow: 32_000, percent: 97 }),
		isIdle: () => true,
		compact: () => undefined,
	};
	const compact = async () =>
		(await handlers.get("session_before_compact")?.(
			{
				preparation: {
					messagesToSummarize: branch.map((e) => e.message),
					turnPrefixMessages: [],
					firstKeptEntryId: "e4",
					tokensBefore: 31_000,
				},
				branchEntries: branch,
				signal: new AbortController().signal,
			},
			ctx,
		)) as { compaction: { summary: string; details: HandoffDetails } } | undefined;
	const stage = async () => {
		const before = calls.length;
		handlers.get("turn_end")?.({}, ctx);
		await vi.waitFor(() => expect(calls.length).toBe(before + 3));
		await new Promise((r) => setTimeout(r, 20)); // the stager settles after the last call
	};
	return { handlers, ctx, compact, stage };
}

function sessionFileIn(dir: string): string {
	mkdirSync(dir, { recursive: true });
	const file = join(dir, "2026_s.jsonl");
	writeFileSync(file, "");
	return file;
}

describe("a staged handoff takes an index and writes trajectories only when applied", () => {
	it("staged then discarded: no files, no index used; the next handoff is number 1", async () => {
		const sessions = join(root, "sessions");
		const { handlers, compact, stage } = setup({ sessionFile: sessionFileIn(sessions) });
		await stage();
		expect(readdirSync(sessions)).toEqual(["2026_s.jsonl"]);
		handlers.get("session_shutdown")?.({}, {});
		const result = await compact();
		expect(calls).toHaveLength(6); // the discarded staging's three calls, then three afresh
		expect(result?.compaction.details).toMatchObject({ index: 1, staged: false });
		expect(readdirSync(join(sessions, "2026_s.handoffs")).sort()).toEqual([
			"trajectory.summarization-1-answers.json",
			"trajectory.summarization-1-questions.json",
			"trajectory.summarization-1-summary.json",
		]);
		expect(result?.compaction.details.trajectoryDir).toBe(join(sessions, "2026_s.handoffs"));
		// A fresh handoff names the session file and the folder its trajectories were written to.
		expect(result?.compaction.summary).toContain(transcriptLine(join(sessions, "2026_s.jsonl")));
		expect(result?.compaction.summary).toContain(trajectoriesLine(join(sessions, "2026_s.handoffs")));
	});

	it("staged then applied: the files appear at application, with index 1", async () => {
		const sessions = join(root, "sessions");
		const { compact, stage } = setup({ sessionFile: sessionFileIn(sessions) });
		await stage();
		expect(existsSync(join(sessions, "2026_s.handoffs"))).toBe(false);
		const result = await compact();
		expect(calls).toHaveLength(3); // no second round
		expect(result?.compaction.details).toMatchObject({ index: 1, staged: true });
		expect(result?.compaction.details.trajectories.map((t) => t.label)).toHaveLength(3);
		// The staged handoff names the same session file and trajectory folder as a fresh one.
		expect(result?.compaction.summary).toContain(transcriptLine(join(sessions, "2026_s.jsonl")));
		expect(result?.compaction.summary).toContain(trajectoriesLine(join(sessions, "2026_s.handoffs")));
		const second = await compact();
		expect(second?.compaction.details.index).toBe(2);
	});
});

describe("a session with no file", () => {
	it("the handoff says plainly there is no session file and names the cache trajectory folder, staged or not", async () => {
		const { compact, stage } = setup({});
		const cacheDir = join(agentDir, "cache", "headroom", "handoffs", "sess-1");
		const fresh = await compact();
		await stage();
		const staged = await compact();
		expect(staged?.compaction.details.staged).toBe(true);
		for (const result of [fresh, staged]) {
			expect(result?.compaction.summary).toContain(transcriptLine(undefined));
			expect(result?.compaction.summary).toContain(trajectoriesLine(cacheDir));
			expect(result?.compaction.details.trajectoryDir).toBe(cacheDir);
		}
		expect(readdirSync(cacheDir)).toHaveLength(6);
	});
});

describe("trajectory folder safety", () => {
	it("a symlink planted at cache/headroom/handoffs is not followed; the handoff still succeeds and the failure is logged", async () => {
		const elsewhere = join(root, "elsewhere");
		mkdirSync(elsewhere);
		mkdirSync(join(agentDir, "cache", "headroom"), { recursive: true, mode: 0o700 });
		symlinkSync(elsewhere, join(agentDir, "cache", "headroom", "handoffs"));
		const { compact } = setup({});
		const result = await compact();
		expect(result?.compaction.summary).toContain("SUMMARY-TEXT");
		expect(result?.compaction.details.trajectories).toEqual([]);
		expect(readdirSync(elsewhere)).toEqual([]);
		const logged = errors.filter((e) => e.startsWith(LOG.trajectoryFailed("").replace(/\)$/, "")));
		expect(logged.length).toBeGreaterThan(0);
		expect(logged.join("\n")).toMatch(/symlink/);
	});
});

describe("model choice", () => {
	it("an unknown configured handoff.model is named in a warning with the available models; the session's model is used", async () => {
		const { compact } = setup({ config: { handoff: { model: "mock/nope" } } });
		const result = await compact();
		expect(result?.compaction.details.model).toBe("mock/mock-model");
		expect(new Set(calls.map((c) => c.model))).toEqual(new Set(["mock-model"]));
		expect(errors).toContain(LOG.modelNotFound("mock/nope", ["mock/mock-model", "mock/mock-cheap"]));
		await compact();
		expect(errors.filter((e) => e.includes("mock/nope"))).toHaveLength(1); // warned once, not per handoff
	});

	it("a configured model that exists is used, without a warning", async () => {
		const { compact } = setup({ config: { handoff: { model: "mock/mock-cheap" } } });
		await compact();
		expect(new Set(calls.map((c) => c.model))).toEqual(new Set(["mock-cheap"]));
		expect(errors.some((e) => e.includes("was not found"))).toBe(false);
	});
});

describe("the original task is bounded", () => {
	it("a multi-MB first message reaches no prompt whole; head and tail survive and the full text is an artifact", async () => {
		const lines = Array.from({ length: 120_000 }, (_, i) => `task line ${i + 1} ${"x".repeat(20)}`);
		const task = `TASK-HEAD\n${lines.join("\n")}\nTASK-TAIL`;
		expect(utf8Length(task)).toBeGreaterThan(3_000_000);
		const budget = 4096;
		const { compact } = setup({
			task,
			config: { handoff: { userMessagesBudgetBytes: budget }, projection: { headShare: 0.2 } },
		});
		const result = await compact();
		expect(calls.map((c) => c.system)).toEqual([SUMMARY_SYSTEM_PROMPT, QUESTIONS_SYSTEM_PROMPT, ANSWERS_SYSTEM_PROMPT]);
		for (const c of calls) {
			const sent = c.texts.join("\n");
			// The task view is at most `budget` bytes; the rest of each prompt is small here.
			expect(utf8Length(sent)).toBeLessThan(64 * 1024);
			expect(sent).toContain("TASK-HEAD");
			expect(sent).toContain("TASK-TAIL");
		}
		const summary = result?.compaction.summary ?? "";
		expect(utf8Length(summary)).toBeLessThan(32 * 1024);
		expect(summary).toContain("TASK-HEAD");
		expect(summary).toContain("TASK-TAIL");
		expect(result?.compaction.details.taskOmittedBytes).toBeGreaterThan(3_000_000);
		// projection.headShare 0.2 from the config: the task view keeps fewer head lines than tail lines.
		const taskView = summary.slice(summary.indexOf("TASK-HEAD"), summary.indexOf("TASK-TAIL"));
		const kept = [...taskView.matchAll(/task line (\d+) /g)].map((m) => Number(m[1]));
		const head = kept.filter((n) => n < 60_000).length;
		const tail = kept.filter((n) => n >= 60_000).length;
		expect(head).toBeGreaterThan(0);
		expect(tail).toBeGreaterThan(head);
		const dir = join(agentDir, "cache", "headroom", "transcripts");
		const stored = readdirSync(dir).map((f) => readFileSync(join(dir, f), "utf8"));
		expect(stored).toContain(task);
	});
});

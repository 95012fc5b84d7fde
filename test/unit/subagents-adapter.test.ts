/**
 * The adapter's contract without a model: what it registers (drift guards), its validation
 * errors (which must list the valid choices), the wording pins and the renderers.
 */
import { join } from "node:path";
import { visibleWidth } from "@mariozechner/pi-tui";
import { beforeAll, describe, expect, it } from "vitest";
import { ownerFraming } from "../../extensions/shared/transcript/prompt.ts";
import { type ChildRecord, SUBAGENT_TOOL_NAMES } from "../../extensions/subagents/domain/records.ts";
import subagents, { setupSubagents } from "../../extensions/subagents/index.ts";
import * as P from "../../extensions/subagents/prompt/common.ts";
import { depthLimitError } from "../../extensions/subagents/prompt/spawn.ts";
import { row } from "../../extensions/subagents/tools/reply.ts";
import { RARE_TOOLS, SUBAGENT_TOOLS } from "../../extensions/subagents/tools/table.ts";
import {
	callText,
	resultText,
	rowText,
	statusText,
	WIDGET_QUESTION_COLUMNS,
	widgetLines,
} from "../../extensions/subagents/view/render.ts";
import { useAgentDirEnv } from "../fixtures/agent-dir-env.ts";
import { childRecord } from "./subagents-fakes.ts";

type Tool = {
	name: string;
	label: string;
	description: string;
	execute: (...args: unknown[]) => Promise<{ content: Array<{ text: string }> }>;
	renderCall?: unknown;
	renderResult?: unknown;
};

const tools = new Map<string, Tool>();
const events = new Set<string>();
const renderers = new Set<string>();
const commands = new Set<string>();
const fakePi = {
	registerTool: (t: Tool) => tools.set(t.name, t),
	registerCommand: (name: string) => commands.add(name),
	registerMessageRenderer: (type: string) => renderers.add(type),
	on: (event: string) => events.add(event),
	sendMessage: () => undefined,
	appendEntry: () => undefined,
	getThinkingLevel: () => "off",
};

const env = useAgentDirEnv("file");
const root = env.folder("subagents-adapter");

const models = [
	{ provider: "mock", id: "mock-model" },
	{ provider: "mock", id: "shared" },
	{ provider: "other", id: "shared" },
];
const ctx = {
	cwd: root,
	hasUI: false,
	ui: {},
	model: models[0],
	modelRegistry: {
		getAll: () => models,
		find: (p: string, id: string) => models.find((m) => m.provider === p && m.id === id),
	},
	sessionManager: { getSessionDir: () => join(root, "sessions"), getBranch: () => [], getSessionFile: () => undefined },
	isIdle: () => true,
	getContextUsage: () => undefined,
};

beforeAll(() => {
	env.point(join(root, "agent"));
	subagents(fakePi as never);
});

const run = (name: string, params: unknown) => tools.get(name)!.execute("call-1", params, undefined, undefined, ctx);

describe("registration drift guards", () => {
	it("registers exactly the seven tools of the table, each worded in prompt/ and with both renderers", () => {
		// The table is the child's list of this extension's tools too (enabled in a child only below the depth limit).
		expect(SUBAGENT_TOOLS.map((t) => t.name)).toEqual([...SUBAGENT_TOOL_NAMES]);
		expect(RARE_TOOLS).toEqual(["subagent_check", "subagent_send", "subagent_cancel", "subagent_list"]);
		const expected = ["spawn", "wait", "check", "send", "cancel", "list", "cleanup"] as const;
		expect([...tools.keys()].sort()).toEqual(expected.map((k) => `subagent_${k}`).sort());
		for (const key of expected) {
			const tool = tools.get(`subagent_${key}`)!;
			// The spawn description lists the named agents after the fixed text.
			if (key === "spawn") expect(tool.description.startsWith(P.TOOL_TEXT.spawn.description)).toBe(true);
			else expect(tool.description).toBe(P.TOOL_TEXT[key].description);
			expect(tool.label).toBe(P.TOOL_TEXT[key].label);
			expect(typeof tool.renderCall).toBe("function");
			expect(typeof tool.renderResult).toBe("function");
		}
	});

	it("hooks the lifecycle on both Pi lines and renders delivered results", () => {
		// tool_execution_* and message_end: a question joins a busy parent's turn, its time limit starts when taken in.
		for (const e of [
			"session_start",
			"agent_end",
			"agent_settled",
			"session_shutdown",
			"tool_execution_start",
			"tool_execution_end",
			"message_end",
		])
			expect(events.has(e)).toBe(true);
		expect(renderers.has("subagent-result")).toBe(true);
		expect(commands.has("agents")).toBe(true);
	});

	it("lists the built-in agents in the spawn description, and refuses an unknown agent by listing the known ones", async () => {
		const description = tools.get("subagent_spawn")!.description;
		for (const name of ["scout", "planner", "worker", "reviewer"]) expect(description).toContain(`- ${name} — `);
		await expect(run("subagent_spawn", { prompt: "x", agent: "nope" })).rejects.toThrow(
			'Unknown agent "nope"; known agents: planner, reviewer, scout, worker. No child was started',
		);
		const list = await run("subagent_list", {});
		expect(list.content[0].text).toBe(P.NO_CHILDREN);
	});
});

describe("validation errors list the valid choices", () => {
	it("unknown and ambiguous models", async () => {
		await expect(run("subagent_spawn", { prompt: "x", model: "nope" })).rejects.toThrow(
			'Unknown model "nope"; models you can use: mock/mock-model, mock/shared, other/shared.',
		);
		await expect(run("subagent_spawn", { prompt: "x", model: "shared" })).rejects.toThrow(
			'Model "shared" is ambiguous among the models you can use; pass provider/id, one of: mock/shared, other/shared.',
		);
	});

	it("a missing cwd, unknown tools and thinking levels", async () => {
		await expect(run("subagent_spawn", { prompt: "x", cwd: "no-such-dir" })).rejects.toThrow(
			`cwd "no-such-dir" does not exist or is not a directory; pass an existing directory (default: ${root}).`,
		);
		await expect(run("subagent_spawn", { prompt: "x", tools: ["read", "subagent_spawn"] })).rejects.toThrow(
			"Unknown tool subagent_spawn; available to children: read, bash, edit, write, grep, find, ls.",
		);
		await expect(run("subagent_spawn", { prompt: "x", thinking: "max" })).rejects.toThrow("use one of: off, minimal");
	});

	it("unknown ids, with and without children", async () => {
		await expect(run("subagent_wait", { ids: ["sa-9"] })).rejects.toThrow(
			"Unknown subagent id sa-9; no subagents were spawned in this session.",
		);
		await expect(run("subagent_check", { id: "sa-2" })).rejects.toThrow("Unknown subagent id sa-2");
		expect(P.unknownIdsError(["sa-9", "x"], ["sa-1", "sa-2"])).toBe("Unknown subagent ids sa-9, x; known: sa-1, sa-2.");
		const list = await run("subagent_list", {});
		expect(list.content[0].text).toBe(P.NO_CHILDREN);
	});
});

describe("depth limit", () => {
	it("an instance at the depth limit refuses to spawn and says why", async () => {
		const nested = new Map<string, Tool>();
		setupSubagents({ ...fakePi, registerTool: (t: Tool) => nested.set(t.name, t) } as never, 1);
		await expect(
			nested.get("subagent_spawn")!.execute("c", { prompt: "x" }, undefined, undefined, ctx),
		).rejects.toThrow(depthLimitError(1));
	});
});

describe("wording pins", () => {
	it("a fresh child owns its work from the first turn and is never told it was handed over", () => {
		const fresh = `${P.CHILD_SYSTEM_APPEND}\n${ownerFraming({ forked: false })}`;
		expect(fresh).not.toMatch(/hand(ed)? ?over|parent|continue it|someone/i);
	});

	it("failed results put the error first and keep the partial output", () => {
		expect(P.failedResultText("failed", "boom", "half\n\n")).toBe(
			"Error: boom\n\nPartial output before it stopped:\nhalf",
		);
		expect(P.failedResultText("cancelled", "stop", "")).toBe("Cancelled: stop\n\n(No output before it stopped.)");
		expect(P.watchdogError("p/m", 120)).toContain("subagents.idleTimeoutSeconds");
	});
});

function rec(id: string, state: ChildRecord["state"]): ChildRecord {
	return childRecord({ id, name: `task ${id}`, state, turns: 2, contextTokens: 1500, outputTokens: 10 });
}

describe("renderers", () => {
	it("collapsed: one row per child with its glyph; expanded adds the full text", () => {
		const rows = [
			{
				id: "sa-1",
				name: "a",
				state: "completed" as const,
				fullBytes: 37_212,
				shownBytes: 15_000,
				artifactPath: "/x/y/z.txt",
			},
			{ id: "sa-2", name: "b", state: "failed" as const },
		];
		const collapsed = resultText(rows, "FULL TEXT", false);
		expect(collapsed.split("\n")).toEqual(["✓ sa-1 a completed 37,212 B → 15,000 B …/y/z.txt", "✗ sa-2 b failed"]);
		expect(resultText(rows, "FULL TEXT", true)).toMatch(/\n\nFULL TEXT$/);
		expect(rowText({ id: "sa-3", name: "c", state: "queued", note: "queued" })).toBe("◷ sa-3 c queued");
	});

	it("calls, status line and widget", () => {
		expect(callText("subagent_spawn", { prompt: "line one\nline two", model: "p/m", context: "fork" })).toBe(
			"subagent_spawn line one (p/m, fork)",
		);
		expect(callText("subagent_wait", {})).toBe("subagent_wait all outstanding");
		const children = [rec("sa-1", "running"), rec("sa-2", "queued"), rec("sa-3", "completed")];
		expect(statusText(children)).toBe("● subagents: 1 running, 1 queued");
		expect(statusText([rec("sa-3", "completed")])).toBeUndefined();
		expect(widgetLines(children, 13_500)).toEqual([
			"● sa-1 task sa-1 · 12.5 s · 1,500 tok",
			"◷ sa-2 task sa-2 · waiting · 1,500 tok",
		]);
	});

	it("widget: a child waiting for the parent's answer is marked ? with the question's start", () => {
		const question = (text: string) => ({ seq: 1, text, options: [], run: 1, askedAt: 0, delivered: true });
		const asking = { ...rec("sa-1", "running"), question: question("Which colour\nshould the banner use?") };
		const long = { ...rec("sa-2", "running"), question: question(`Which of these ${"very ".repeat(40)}long names?`) };
		const [one, two] = widgetLines([asking, long], 13_500);
		expect(one).toBe("? sa-1 task sa-1 · 12.5 s · 1,500 tok · asks you: Which colour should the banner use?");
		// A long question is cut to its start, so the row stays one line; the live view shows it whole.
		const brief = two.slice(two.indexOf("asks you: ") + "asks you: ".length);
		expect(brief.startsWith("Which of these very")).toBe(true);
		expect(brief).toContain("…");
		expect(brief).not.toContain("long names?");
		expect(visibleWidth(brief)).toBeLessThanOrEqual(WIDGET_QUESTION_COLUMNS);
		// The mark goes with the question: a child without one shows its state's glyph again.
		expect(widgetLines([{ ...asking, question: undefined }], 13_500)[0]).toMatch(/^● sa-1 /);
	});

	it("footer: children waiting for the parent's answer are counted apart and mark the line ?", () => {
		const question = { seq: 1, text: "Which colour?", options: [], run: 1, askedAt: 0, delivered: true };
		const asking = (id: string) => ({ ...rec(id, "running"), question });
		expect(statusText([asking("sa-1"), rec("sa-2", "running"), rec("sa-3", "queued")])).toBe(
			"? subagents: 1 running, 1 queued, 1 asks you",
		);
		expect(statusText([asking("sa-1")])).toBe("? subagents: 0 running, 1 asks you");
		expect(statusText([asking("sa-1"), asking("sa-2")])).toBe("? subagents: 0 running, 2 ask you");
		// Painted as the widget paints its mark; without a question the line is the plain count again.
		const painted = statusText([asking("sa-1")], (color, text) => `<${color}>${text}`);
		expect(painted).toBe("<warning>? subagents: 0 running, 1 asks you");
		expect(statusText([{ ...asking("sa-1"), question: undefined }])).toBe("● subagents: 1 running");
		// A run that ended while it asked is not active: the widget does not list it, the footer does not count it.
		expect(statusText([{ ...asking("sa-1"), state: "interrupted" }])).toBeUndefined();
	});

	it("tool rows: a row made while a child asks carries the question's start, drawn as in the widget", () => {
		const question = {
			seq: 1,
			text: "Which colour\nshould the banner use?",
			options: [],
			run: 1,
			askedAt: 0,
			delivered: true,
		};
		const made = row({ ...rec("sa-1", "running"), question });
		expect(made.question).toBe("Which colour should the banner use?");
		expect(made.note).toBeUndefined();
		expect(rowText(made)).toBe("? sa-1 task sa-1 asks you: Which colour should the banner use?");
		expect(row(rec("sa-1", "running")).question).toBeUndefined();
	});
});

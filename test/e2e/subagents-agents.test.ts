/**
 * Named agents and capable children, end to end: the real pi CLI (both lines) with the subagents
 * extension, agent files on disk, the user's own extensions in `<agentDir>/extensions/`, and the
 * scripted model playing parent and children. Honest outcomes: output-limit and maxTurns cuts.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, type Sandbox, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import type { ChatRequest, ScriptedServer } from "../fixtures/scripted-server.ts";
import { calledTools, childTools, isChild, lastToolText, toolTexts } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];

function write(path: string, content: string): void {
	mkdirSync(dirname(path), { recursive: true });
	writeFileSync(path, content);
}

function agentFile(fields: Record<string, string>, body: string): string {
	const lines = Object.entries(fields).map(([k, v]) => `${k}: ${v}`);
	return `---\n${lines.join("\n")}\n---\n${body}\n`;
}

/** The task marker a child's first user message carries. */
function taskOf(req: ChatRequest): string {
	return /CHILD-TASK (\S+)/.exec(req.firstUser)?.[1] ?? "";
}

function childRequests(server: ScriptedServer, task: string): ChatRequest[] {
	return server.requests.filter((r) => isChild(r) && taskOf(r) === task);
}

function spawnDescriptionOf(req: ChatRequest): string {
	const tool = (req.body.tools ?? []).find((t) => t.function.name === "subagent_spawn") as
		| { function: { description?: string } }
		| undefined;
	return tool?.function.description ?? "";
}

/** Parent script: spawn these, wait for all, then (optionally) list and check one, then finish. */
function parentScript(spawns: Array<Record<string, unknown>>, options: { list?: boolean; check?: string } = {}) {
	return (req: ChatRequest) => {
		const called = calledTools(req);
		if (called.length === 0) return { toolCalls: spawns.map((s) => ({ name: "subagent_spawn", arguments: s })) };
		if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
		if (options.list && !called.includes("subagent_list"))
			return { toolCalls: [{ name: "subagent_list", arguments: {} }] };
		if (options.check && !called.includes("subagent_check"))
			return { toolCalls: [{ name: "subagent_check", arguments: { id: options.check } }] };
		return { text: "done" };
	};
}

/**
 * A user extension with one tool, as a user would put it in <agentDir>/extensions/. It asks the UI
 * something at start, as UI-minded extensions do: in a child there is none, so that must not hang or fail.
 */
const PROBE_EXTENSION = `import { Type } from "typebox";
export default function (pi) {
	pi.on("session_start", async (_event, ctx) => {
		if (ctx.hasUI) throw new Error("a child must have no UI");
		await ctx.ui.select("pick one", ["a", "b"]);
		ctx.ui.notify("probe loaded", "info");
	});
	pi.registerTool({
		name: "probe_echo",
		label: "Probe echo",
		description: "Echoes its text with a PROBE: prefix.",
		parameters: Type.Object({ text: Type.String() }),
		async execute(_id, params) {
			return { content: [{ type: "text", text: "PROBE:" + params.text }], details: {} };
		},
	});
}
`;

const BROKEN_EXTENSION = `export default function () {
	throw new Error("broken on purpose");
}
`;

/** Loads fine, then fails when its session starts. */
const SOUR_EXTENSION = `export default function (pi) {
	pi.on("session_start", () => {
		throw new Error("sour at start");
	});
}
`;

describe.each(PI_LINES)("named agents on $label", ({ line }) => {
	const runs = usePrintRuns(line, { extensions: EXT, args: ["--no-session"] });
	const startServer = runs.startServer;

	/** User and project agents of the same name, and a Claude Code agent in the project. */
	function writeAgents(sandbox: Sandbox) {
		write(
			join(sandbox.agentDir, "agents", "auditor.md"),
			agentFile(
				{ name: "auditor", description: "Audits code (user file)", tools: "read, grep" },
				"AUDITOR-USER-PROMPT",
			),
		);
		write(
			join(sandbox.cwd, ".pi", "agents", "auditor.md"),
			agentFile({ description: "Audits code (project file)", tools: "[ls]" }, "AUDITOR-PROJECT-PROMPT"),
		);
		write(
			join(sandbox.cwd, ".claude", "agents", "claudebot.md"),
			agentFile(
				{ name: "claudebot", description: "A Claude Code agent", tools: "Read, Glob", model: "sonnet", color: "blue" },
				"CLAUDEBOT-PROMPT",
			),
		);
	}

	const trustArgs = line === "1.x" ? ["--approve"] : [];

	it("agent files set the child's system prompt and exact tools; project beats user; .claude agents work; the first request lists them", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: `answer of ${taskOf(req)}` };
			return parentScript(
				[
					{ prompt: "CHILD-TASK audit", agent: "auditor" },
					{ prompt: "CHILD-TASK claude", agent: "claudebot" },
				],
				{ list: true },
			)(req);
		});
		const { run } = await runs.print(server, {
			prompt: "delegate",
			args: ["--no-session", ...trustArgs],
			before: writeAgents,
		});
		const description = spawnDescriptionOf(server.requests[0]);
		expect(description).toContain("- auditor (this project's; replaces the user one) — Audits code (project file)");
		expect(description).toContain("- claudebot (this project's) — A Claude Code agent");
		expect(description).toContain("- scout — ");
		const [audit] = childRequests(server, "audit");
		expect(audit.system).toContain("AUDITOR-PROJECT-PROMPT");
		expect(audit.system).not.toContain("AUDITOR-USER-PROMPT");
		expect([...audit.toolNames].sort()).toEqual(childTools(["ls"]));
		const [claude] = childRequests(server, "claude");
		expect(claude.system).toContain("CLAUDEBOT-PROMPT");
		expect([...claude.toolNames].sort()).toEqual(childTools(["find", "read"]));
		// "sonnet" is no model here: the child runs on the parent's, with a warning.
		expect(claude.body.model).toBe("mock-model");
		expect(run.stderr).toContain('agent "claudebot" asks for model "sonnet"');
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(wait.text).toMatch(/sa-1 "[^"]*" as auditor completed/);
		expect(wait.text).toContain("answer of audit");
		const [list] = toolResults(run.events, "subagent_list");
		expect(list.text).toContain("agent auditor");
		expect(list.text).toContain("agent claudebot");
	});

	if (line === "1.x") {
		it("an untrusted project's agent files are ignored with a warning (Pi 1.x project trust)", async () => {
			const server = await startServer((req) => {
				if (isChild(req)) return { text: "ok" };
				return parentScript([{ prompt: "CHILD-TASK audit", agent: "auditor" }])(req);
			});
			const { sandbox, run } = await runs.print(server, {
				prompt: "delegate",
				args: ["--no-session", "--no-approve"],
				before: writeAgents,
			});
			expect(run.stderr).toContain(`${join(sandbox.cwd, ".pi", "agents")}: ignored: Pi does not trust this project`);
			expect(spawnDescriptionOf(server.requests[0])).not.toContain("claudebot");
			const [audit] = childRequests(server, "audit");
			expect(audit.system).toContain("AUDITOR-USER-PROMPT");
			expect(audit.system).not.toContain("AUDITOR-PROJECT-PROMPT");
			expect([...audit.toolNames].sort()).toEqual(childTools(["grep", "read"]));
		});
	}

	it("an unknown agent is an error that lists the agents, and no child starts", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: "should not run" };
			const called = calledTools(req);
			if (called.length === 0)
				return { toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK x", agent: "nope" } }] };
			if (!called.includes("subagent_list")) return { toolCalls: [{ name: "subagent_list", arguments: {} }] };
			return { text: "done" };
		});
		const { run } = await runs.print(server, { prompt: "delegate" });
		const [spawn] = toolResults(run.events, "subagent_spawn");
		expect(spawn.isError).toBe(true);
		expect(spawn.text).toContain('Unknown agent "nope"; known agents: planner, reviewer, scout, worker.');
		expect(server.requests.filter(isChild)).toHaveLength(0);
		expect(toolResults(run.events, "subagent_list")[0].text).toContain("No subagents");
	});

	it("a default child can call a tool of an extension in <agentDir>/extensions/; one with extensions: [] cannot; neither can spawn", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) {
				if (taskOf(req) === "with-ext" && !calledTools(req).includes("probe_echo"))
					return { toolCalls: [{ name: "probe_echo", arguments: { text: "hi" } }] };
				if (taskOf(req) === "with-ext") return { text: `tool said ${lastToolText(req)}` };
				return { text: `tools: ${[...req.toolNames].sort().join(",")}` };
			}
			return parentScript([{ prompt: "CHILD-TASK with-ext" }, { prompt: "CHILD-TASK no-ext", extensions: [] }])(req);
		});
		const { run } = await runs.print(server, {
			prompt: "delegate",
			before: (sandbox) => {
				write(join(sandbox.agentDir, "extensions", "probe.ts"), PROBE_EXTENSION);
			},
		});
		const withExt = childRequests(server, "with-ext");
		expect(withExt[0].toolNames).toContain("probe_echo");
		expect(withExt[0].toolNames).toContain("read");
		expect(withExt[0].toolNames).not.toContain("subagent_spawn");
		expect(toolTexts(withExt[withExt.length - 1])).toContain("PROBE:hi");
		const noExt = childRequests(server, "no-ext");
		expect(noExt[0].toolNames).not.toContain("probe_echo");
		expect(noExt[0].toolNames).not.toContain("subagent_spawn");
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(wait.text).toContain("tool said PROBE:hi");
	});

	if (line === "1.x") {
		it('on Pi 1.x a default child also gets the built-in extensions its parent has active (codemode, tool search); extensions: ["!codemode"] drops one', async () => {
			const server = await startServer((req) => {
				if (isChild(req)) return { text: `tools: ${[...req.toolNames].sort().join(",")}` };
				return parentScript([
					{ prompt: "CHILD-TASK builtins" },
					{ prompt: "CHILD-TASK no-codemode", extensions: ["!codemode"] },
				])(req);
			});
			// The harness runs --no-extensions: the parent loads Pi's codemode and tool search back by name.
			const parent = await runs.print(server, {
				prompt: "delegate",
				extensions: [...EXT, "builtin:codemode", "builtin:tool-search"],
				sandbox: { settings: { defaultTools: ["+codemode", "+tool_search"] } },
				before: (sandbox) => {
					write(join(sandbox.agentDir, "extensions", "probe.ts"), PROBE_EXTENSION);
				},
			});
			const parentTools = server.requests.find((r) => !isChild(r))?.toolNames ?? [];
			expect(parentTools).toEqual(expect.arrayContaining(["codemode", "tool_search"]));
			expect(parent.run.exitCode).toBe(0);
			const [all] = childRequests(server, "builtins");
			expect(all.toolNames).toEqual(expect.arrayContaining(["read", "probe_echo", "codemode", "tool_search"]));
			expect(all.toolNames).not.toContain("subagent_spawn");
			const [some] = childRequests(server, "no-codemode");
			expect(some.toolNames).toEqual(expect.arrayContaining(["probe_echo", "tool_search"]));
			expect(some.toolNames).not.toContain("codemode");
		});
	}

	it("a failing extension fails that child's start with an error naming it; the parent and an excluding child go on", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: `ran ${taskOf(req)}` };
			return parentScript([
				{ prompt: "CHILD-TASK default" },
				{ prompt: "CHILD-TASK not-broken", extensions: ["!broken"] },
				{ prompt: "CHILD-TASK excluding", extensions: ["!broken", "!sour"] },
			])(req);
		});
		const { run } = await runs.print(server, {
			prompt: "delegate",
			before: (sandbox) => {
				write(join(sandbox.agentDir, "extensions", "broken.ts"), BROKEN_EXTENSION);
				write(join(sandbox.agentDir, "extensions", "sour.ts"), SOUR_EXTENSION);
			},
		});
		const [wait] = toolResults(run.events, "subagent_wait");
		// Failing to load: named, with its error.
		expect(wait.text).toMatch(/sa-1 "[^"]*" failed[\s\S]*extension "broken"[\s\S]*broken on purpose/);
		// Loading, then throwing at session_start: named too.
		expect(wait.text).toMatch(/sa-2 "[^"]*" failed[\s\S]*extension "sour"[\s\S]*sour at start/);
		expect(childRequests(server, "default")).toHaveLength(0);
		expect(childRequests(server, "not-broken")).toHaveLength(0);
		expect(wait.text).toMatch(/sa-3 "[^"]*" completed/);
		expect(wait.text).toContain("ran excluding");
	});

	it("/agents lists each agent with its source file, tools and model, and the warnings", async () => {
		const server = await startServer(() => ({ text: "unused" }));
		const sandbox = makeSandbox({ server });
		const file = join(sandbox.agentDir, "agents", "auditor.md");
		write(
			file,
			agentFile({ description: "Audits code", tools: "read, grep", model: "mock/mock-cheap", colour: "red" }, "BODY"),
		);
		write(join(sandbox.agentDir, "agents", "broken.md"), "---\nname: [\n---\n");
		const run = await runs.printIn(sandbox, { prompt: "/agents" });
		const out = `${run.stdout}\n${run.stderr}`;
		expect(out).toContain("auditor — Audits code");
		expect(out).toContain(`source user: ${file}`);
		expect(out).toContain("tools read, grep · model mock/mock-cheap");
		expect(out).toContain("scout — Read-only reconnaissance");
		expect(out).toContain("source built-in");
		expect(out).toContain(`${file}: unknown key "colour" ignored`);
		expect(out).toContain(`${join(sandbox.agentDir, "agents", "broken.md")}: the frontmatter is not valid YAML`);
		expect(server.requests).toHaveLength(0); // a command, not a prompt
	});

	it("a reply cut at the output limit, and a run past its maxTurns, are incomplete with their partial output", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) {
				if (taskOf(req) === "long") return { text: "PARTIAL-ANSWER the first half of", finishReason: "length" };
				return { text: `step ${calledTools(req).length + 1}`, toolCalls: [{ name: "ls", arguments: {} }] };
			}
			return parentScript([{ prompt: "CHILD-TASK long" }, { prompt: "CHILD-TASK steps", agent: "stepper" }], {
				list: true,
				check: "sa-2",
			})(req);
		});
		const { run } = await runs.print(server, {
			prompt: "delegate",
			before: (sandbox) => {
				write(
					join(sandbox.agentDir, "agents", "stepper.md"),
					agentFile({ description: "Takes steps", tools: "ls", maxTurns: "2" }, "STEPPER"),
				);
			},
		});
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(wait.text).toMatch(/sa-1 "[^"]*" incomplete/);
		expect(wait.text).toContain("Incomplete: its last reply stopped at the model's output limit");
		expect(wait.text).toContain("PARTIAL-ANSWER the first half of");
		expect(wait.text).toMatch(/sa-2 "[^"]*" as stepper incomplete/);
		expect(wait.text).toContain("Incomplete: stopped after its maxTurns of 2");
		expect(wait.text).toContain("step 1");
		expect(childRequests(server, "steps")).toHaveLength(2);
		const [list] = toolResults(run.events, "subagent_list");
		expect(list.text).toMatch(/◐ sa-1 .* incomplete/);
		expect(list.text).toMatch(/◐ sa-2 .* incomplete/);
		const [check] = toolResults(run.events, "subagent_check");
		expect(check.text).toMatch(/^sa-2 "[^"]*" — incomplete/);
		expect(check.text).toContain("agent stepper · model mock/mock-model");
		expect(check.text).toContain("error: stopped after its maxTurns of 2");
	});
});

/**
 * Agent files and capable children, pure parts: parsing and validation (never fatal), source
 * precedence, the on-disk catalog (trust, .claude, caching), extension policies, the child's tool
 * allowlist, maxTurns, and the bounded agent list in the spawn description.
 */
import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseFrontmatter } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { AgentCatalog } from "../../extensions/subagents/agents/agent-files.ts";
import {
	type AgentDefinition,
	BUILT_IN_AGENTS,
	describePolicy,
	mergeAgents,
	parseAgentFile,
	parseExtensionPolicy,
} from "../../extensions/subagents/agents/agents.ts";
import {
	allowedByPolicy,
	childToolAllowlist,
	extensionNames,
	fatalLoadError,
	keepExtension,
} from "../../extensions/subagents/children/child-extensions.ts";
import { maxTurnsVerdict, runOutcome } from "../../extensions/subagents/children/child-run.ts";
import { SUBAGENT_TOOL_NAMES } from "../../extensions/subagents/domain/records.ts";
import * as P from "../../extensions/subagents/prompt/common.ts";
import { AGENT_LIST_BUDGET, spawnDescription } from "../../extensions/subagents/prompt/spawn.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const root = makeTestDir("agents-unit");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const parse = (content: string, file = "/a/agents/thing.md", source: AgentDefinition["source"] = "user") =>
	parseAgentFile(content, { file, source, parseFrontmatter });

describe("parseAgentFile", () => {
	it("reads every key, the body as the system prompt, and the file name as the default name", () => {
		const { agent, warnings } = parse(
			"---\ndescription: Finds things\ntools: read, grep\nmodel: mock/mock-model\nthinking: low\nextensions: [websearch, '!mcp']\nmaxTurns: 7\ncontext: fork\n---\nYou find things.\n",
		);
		expect(warnings).toEqual([]);
		expect(agent).toMatchObject({
			name: "thing",
			description: "Finds things",
			systemPrompt: "You find things.",
			tools: ["read", "grep"],
			model: "mock/mock-model",
			thinking: "low",
			extensions: { mode: "only", include: ["websearch"], exclude: ["mcp"] },
			maxTurns: 7,
			context: "fork",
			source: "user",
			file: "/a/agents/thing.md",
		});
		expect(parse("---\nname: x\ntools:\n  - ls\n  - find\nextensions: false\n---\nbody").agent).toMatchObject({
			tools: ["ls", "find"],
			extensions: { mode: "none" },
		});
	});

	it("warns on unknown keys and bad values naming key and file, and keeps the rest", () => {
		const { agent, warnings } = parse("---\nname: ok\ncolour: red\nmaxTurns: -1\nthinking: max\n---\nbody");
		expect(agent?.name).toBe("ok");
		expect(agent?.maxTurns).toBeUndefined();
		expect(warnings).toHaveLength(4); // colour, maxTurns, thinking, and no description
		expect(warnings[0]).toContain('/a/agents/thing.md: unknown key "colour" ignored');
		expect(warnings.some((w) => w.includes('"maxTurns"'))).toBe(true);
		expect(warnings.some((w) => w.includes('"thinking"'))).toBe(true);
	});

	it("reads isolation and output_schema (a YAML mapping or JSON text), refusing a broken schema with a warning", () => {
		const yaml = parse(
			"---\nname: rev\ndescription: Reviews\nisolation: worktree\noutput_schema:\n  type: object\n  properties:\n    verdict:\n      enum: [pass, fail]\n  required: [verdict]\n---\nbody",
		);
		expect(yaml.warnings).toEqual([]);
		expect(yaml.agent).toMatchObject({
			isolation: "worktree",
			outputSchema: { type: "object", properties: { verdict: { enum: ["pass", "fail"] } }, required: ["verdict"] },
		});
		const json = parse(
			'---\nname: j\ndescription: d\noutput_schema: \'{"type":"array","items":{"type":"string"}}\'\n---\nb',
		);
		expect(json.agent?.outputSchema).toEqual({ type: "array", items: { type: "string" } });
		const bad = parse(
			"---\nname: b\ndescription: d\nisolation: container\noutput_schema:\n  type: object\n  requried: [x]\n---\nb",
		);
		expect(bad.agent?.isolation).toBeUndefined();
		expect(bad.agent?.outputSchema).toBeUndefined();
		expect(bad.warnings.some((w) => w.includes('"isolation"'))).toBe(true);
		expect(bad.warnings.find((w) => w.includes('"output_schema"'))).toMatch(
			/not a usable JSON Schema: unsupported keyword "requried"; supported: .*; ignored$/,
		);
		const claude = parse(
			"---\nname: c\ndescription: d\nisolation: worktree\n---\nb",
			"/p/.claude/agents/c.md",
			"claude-project",
		);
		expect(claude.agent?.isolation).toBe("worktree");
	});

	it("skips a file whose frontmatter does not parse or whose name is unusable, with a warning naming it", () => {
		const broken = parse("---\nname: [unclosed\n---\nbody");
		expect(broken.agent).toBeUndefined();
		expect(broken.warnings[0]).toMatch(/^\/a\/agents\/thing\.md: the frontmatter is not valid YAML/);
		const scalar = parse("---\njust text\n---\nbody");
		expect(scalar.agent).toBeUndefined();
		// A hostile name is refused with a warning; the file name stands in for it.
		const hostile = parse("---\nname: ../../etc\x1b[31m\ndescription: x\n---\nbody");
		expect(hostile.agent?.name).toBe("thing");
		expect(hostile.warnings[0]).toContain('"name"');
		expect(parse("---\ndescription: x\n---\n", "/a/agents/bad name.md").agent).toBeUndefined();
	});

	it("never throws, whatever the text", () => {
		fc.assert(
			fc.property(fc.string({ maxLength: 400 }), (body) => {
				const result = parse(`---\n${body}\n---\n${body}`);
				expect(Array.isArray(result.warnings)).toBe(true);
				if (result.agent) expect(result.agent.name).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);
			}),
		);
	});

	it("cleans descriptions to one line without escape sequences", () => {
		const { agent } = parse('---\ndescription: "a\\x1b[2Jb\\nc\\u0007d"\n---\n');
		expect(agent?.description).toBe("ab cd");
	});

	it("reads Claude Code agents: their tool names mapped to Pi's, other Claude keys ignored silently", () => {
		const { agent, warnings } = parse(
			"---\nname: helper\ndescription: Helps\ntools: Read, Glob, Bash, WebFetch\nmodel: inherit\ncolor: blue\n---\nHelp.",
			"/p/.claude/agents/helper.md",
			"claude-project",
		);
		expect(agent).toMatchObject({ name: "helper", tools: ["read", "find", "bash"], source: "claude-project" });
		expect(agent?.model).toBeUndefined(); // inherit = the parent's model
		expect(warnings).toEqual(["/p/.claude/agents/helper.md: tools with no Pi equivalent ignored: WebFetch"]);
	});
});

describe("sources", () => {
	const agent = (name: string, source: AgentDefinition["source"]): AgentDefinition => ({
		name,
		description: source,
		systemPrompt: "",
		source,
	});

	it("a later source overrides an earlier one by name, whatever the input order", () => {
		const merged = mergeAgents([
			agent("x", "project"),
			agent("x", "user"),
			agent("x", "built-in"),
			agent("y", "claude-user"),
			agent("y", "claude-project"),
		]);
		expect(merged.map((a) => [a.name, a.source])).toEqual([
			["x", "project"],
			["y", "claude-project"],
		]);
	});

	it("ships read-only scout, planner and reviewer and a general worker, each saying when to use it", () => {
		const byName = Object.fromEntries(BUILT_IN_AGENTS.map((a) => [a.name, a]));
		for (const name of ["scout", "planner", "reviewer"]) {
			expect(byName[name].tools).toEqual(["read", "grep", "find", "ls"]);
			expect(byName[name].description).toMatch(/Use /);
		}
		expect(byName.worker.tools).toBeUndefined();
		expect(byName.worker.description).toMatch(/Use /);
	});

	it("the catalog reads user, project (only when trusted) and .claude folders, and re-reads only changed files", () => {
		const agentDir = join(root, "agent");
		const home = join(root, "home");
		const project = join(root, "proj");
		const cwd = join(project, "sub", "dir");
		mkdirSync(cwd, { recursive: true });
		const put = (path: string, text: string) => {
			mkdirSync(join(path, ".."), { recursive: true });
			writeFileSync(path, text);
		};
		put(join(agentDir, "agents", "scout.md"), "---\ndescription: my scout\n---\nMINE");
		put(join(project, ".pi", "agents", "scout.md"), "---\ndescription: project scout\n---\nPROJECT");
		put(join(project, ".claude", "agents", "cc.md"), "---\ndescription: claude\ntools: Read\n---\nCC");
		put(join(home, ".claude", "agents", "homecc.md"), "---\ndescription: home claude\n---\nHOME");
		put(join(agentDir, "agents", "broken.md"), "---\nname: [\n---\n");
		let parses = 0;
		const catalog = new AgentCatalog((text) => {
			parses++;
			return parseFrontmatter(text);
		});
		const options = { agentDir, cwd, home, projectTrusted: true, claudeAgents: true, projectRoot: project };
		const trusted = catalog.load(options);
		const find = (s: typeof trusted, name: string) => s.agents.find((a) => a.name === name);
		expect(find(trusted, "scout")).toMatchObject({ source: "project", systemPrompt: "PROJECT" });
		expect(find(trusted, "cc")).toMatchObject({ source: "claude-project", tools: ["read"] });
		expect(find(trusted, "homecc")?.source).toBe("claude-user");
		expect(find(trusted, "planner")?.source).toBe("built-in");
		expect(trusted.warnings.some((w) => w.startsWith(join(agentDir, "agents", "broken.md")))).toBe(true);
		const firstParses = parses;
		catalog.load(options);
		expect(parses).toBe(firstParses); // nothing changed: nothing parsed again
		const changed = join(agentDir, "agents", "scout.md");
		writeFileSync(changed, "---\ndescription: my scout, longer now\n---\nMINE2");
		utimesSync(changed, new Date(), new Date(Date.now() + 5000));
		catalog.load(options);
		expect(parses).toBe(firstParses + 1);
		const untrusted = catalog.load({ ...options, projectTrusted: false });
		expect(find(untrusted, "scout")).toMatchObject({ source: "user", systemPrompt: "MINE2" });
		expect(find(untrusted, "cc")).toBeUndefined();
		expect(untrusted.warnings).toContain(`${join(project, ".pi", "agents")}: ignored: this project is not trusted`);
		const noClaude = catalog.load({ ...options, claudeAgents: false });
		expect(find(noClaude, "cc")).toBeUndefined();
		expect(find(noClaude, "homecc")).toBeUndefined();
	});
});

describe("extension policies and the child's tools", () => {
	it("parses true/false/lists/exclusions the same from frontmatter, config and spawn", () => {
		expect(parseExtensionPolicy(true)).toEqual({ mode: "all", include: [], exclude: [] });
		expect(parseExtensionPolicy(false).mode).toBe("none");
		expect(parseExtensionPolicy([]).mode).toBe("none");
		expect(parseExtensionPolicy(["a", "b"])).toEqual({ mode: "only", include: ["a", "b"], exclude: [] });
		expect(parseExtensionPolicy(["!mcp"])).toEqual({ mode: "all", include: [], exclude: ["mcp"] });
		expect(parseExtensionPolicy("*, !x")).toEqual({ mode: "all", include: [], exclude: ["x"] });
		expect(describePolicy(parseExtensionPolicy(["!mcp"]))).toBe("all but !mcp");
	});

	it("names an extension by its file, its index folder, its built-in name and its package", () => {
		expect(extensionNames("/u/.pi/agent/extensions/websearch.ts")).toEqual(["websearch"]);
		expect(extensionNames("/u/.pi/agent/extensions/mcp-tools/index.ts")).toEqual(["mcp-tools"]);
		expect(extensionNames("builtin:mcp")).toEqual(["mcp"]);
		expect(extensionNames("/pkgs/node_modules/pi-foo/ext/a.js", "/pkgs/node_modules/pi-foo")).toEqual(["a", "pi-foo"]);
		expect(extensionNames("<inline:1>")).toEqual([]);
	});

	it("keeps inline factories, drops other copies of the subagent tools, and applies the policy", () => {
		const ext = (path: string, tools: string[] = []) => ({ path, tools });
		const all = parseExtensionPolicy(true);
		expect(keepExtension(ext("<inline:2>", [...SUBAGENT_TOOL_NAMES]), all, SUBAGENT_TOOL_NAMES)).toBe(true);
		expect(
			keepExtension(ext("/x/pi-headroom/extensions/subagents/index.ts", ["subagent_spawn"]), all, SUBAGENT_TOOL_NAMES),
		).toBe(false);
		expect(keepExtension(ext("/x/a.ts"), parseExtensionPolicy(["!a"]), SUBAGENT_TOOL_NAMES)).toBe(false);
		expect(keepExtension(ext("/x/a.ts"), parseExtensionPolicy(["b"]), SUBAGENT_TOOL_NAMES)).toBe(false);
		expect(keepExtension(ext("/x/b.ts"), parseExtensionPolicy(["b"]), SUBAGENT_TOOL_NAMES)).toBe(true);
		expect(allowedByPolicy(parseExtensionPolicy(false), ["b"])).toBe(false);
	});

	it("a load error fails the start unless it is a name clash or of an excluded extension", () => {
		const errors = [
			{ path: "/x/a.ts", error: 'Tool "t" conflicts with /x/b.ts' },
			{ path: "/x/broken.ts", error: "boom" },
		];
		expect(fatalLoadError(errors, parseExtensionPolicy(true))).toMatchObject({ name: "broken", error: "boom" });
		expect(fatalLoadError(errors, parseExtensionPolicy(["!broken"]))).toBeUndefined();
		expect(fatalLoadError(errors, parseExtensionPolicy(false))).toBeUndefined();
	});

	it("an exact tool list is the whole set; otherwise extension tools join the defaults", () => {
		const builtIn = ["read", "bash", "ls"];
		expect(childToolAllowlist({ base: ["read"], exact: true, builtIn, extensionTools: ["web"] })).toEqual({
			tools: ["read"],
			missing: [],
		});
		expect(
			childToolAllowlist({ base: ["read", "bash"], exact: false, builtIn, extensionTools: ["web"] }).tools,
		).toEqual(["read", "bash", "web"]);
		expect(
			childToolAllowlist({ base: ["web", "nope"], exact: true, builtIn, extensionTools: ["web"] }).missing,
		).toEqual(["nope"]);
	});
});

describe("honest outcomes", () => {
	it("a last reply at the output limit is incomplete, not completed", () => {
		const out = runOutcome(
			[{ role: "assistant", content: [{ type: "text", text: "half" }], stopReason: "length" }],
			"half",
		);
		expect(out).toEqual({ state: "incomplete", error: P.outputLimitReason() });
		expect(P.failedResultText("incomplete", P.outputLimitReason(), "half").split("\n")[0]).toBe(
			`Incomplete: ${P.outputLimitReason()}`,
		);
	});

	it("maxTurns stops a run only when it is used up and the model asked for another turn", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 0, max: 12 }),
				fc.integer({ min: 1, max: 10 }),
				fc.boolean(),
				(turns, max, more) => {
					const verdict = maxTurnsVerdict({ turns, maxTurns: max, state: "running" }, { continuing: more });
					expect(verdict !== undefined).toBe(turns >= max && more);
					if (verdict) expect(verdict).toEqual({ state: "incomplete", error: P.maxTurnsReason(max) });
				},
			),
		);
		expect(maxTurnsVerdict({ turns: 9, state: "running" }, { continuing: true })).toBeUndefined();
	});
});

describe("the agent list in the spawn description", () => {
	it("stays within its byte and line budget with any agents, and names every agent it cannot describe", () => {
		const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,30}$/);
		fc.assert(
			fc.property(
				fc.uniqueArray(fc.record({ name, description: fc.string({ maxLength: 400 }) }), {
					selector: (a) => a.name,
					maxLength: 80,
				}),
				(agents) => {
					const text = spawnDescription(agents);
					const list = text.slice(P.TOOL_TEXT.spawn.description.length);
					expect(Buffer.byteLength(list.trim(), "utf8")).toBeLessThanOrEqual(AGENT_LIST_BUDGET.maxBytes);
					expect(list.trim().split("\n").length).toBeLessThanOrEqual(
						agents.length === 0 ? 1 : AGENT_LIST_BUDGET.maxLines,
					);
					const described = agents.filter((a) => list.includes(`- ${a.name}`)).length;
					if (described < agents.length) expect(list).toMatch(/… and \d+ more/);
				},
			),
		);
	});
});

describe("rows and texts show the agent and the incomplete state", () => {
	it("list, check and result headers name the agent; incomplete has its own glyph", async () => {
		const { childRecord } = await import("./subagents-fakes.ts");
		const { rowText } = await import("../../extensions/subagents/view/render.ts");
		const { statusGlyph } = await import("../../extensions/subagents/domain/format.ts");
		const child = childRecord({ id: "sa-3", name: "look around", agent: "scout", state: "incomplete" });
		expect(P.listLine(child, Date.now(), statusGlyph(child.state))).toMatch(
			/^◐ sa-3 "look around" incomplete .* agent scout/,
		);
		expect(P.checkText(child, Date.now(), "")).toContain("agent scout · model");
		expect(P.resultHeader(child, "incomplete", 1)).toContain('sa-3 "look around" as scout incomplete');
		expect(rowText({ id: "sa-3", name: "look around", state: "incomplete", agent: "scout" })).toBe(
			"◐ sa-3 look around (scout) incomplete",
		);
		expect(new Set(["completed", "incomplete", "failed", "cancelled"].map((s) => statusGlyph(s as never))).size).toBe(
			4,
		);
	});
});

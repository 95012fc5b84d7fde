/**
 * Isolated and structured children end to end: the real pi CLI (both lines), the scripted model playing
 * parent and children, real git. Isolated children edit in their own worktrees while the parent's tree
 * and index stay clean, and each result names its own files and a patch that applies in the parent;
 * an unchanged worktree is removed; outside a repository no child starts. A schema'd child gets exactly
 * one correction turn: prose then JSON arrives as the JSON, a child that never complies is reported invalid.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, gitTestEnv, makeGitRepo } from "../fixtures/git-repo.ts";
import { extensionPath, makeSandbox, PI_LINES, type Sandbox, toolResults } from "../fixtures/pi-runner.ts";
import { usePrintRuns } from "../fixtures/print-runs.ts";
import type { ChatRequest, ScriptedServer } from "../fixtures/scripted-server.ts";
import { calledTools, isChild } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
const task = (req: ChatRequest) => /CHILD-TASK (\S+)/.exec(req.firstUser)?.[1] ?? "";
const CORRECTION = "Reply now with only the corrected JSON value";
const REVIEW_SCHEMA = {
	type: "object",
	properties: { verdict: { enum: ["pass", "fail"] }, files: { type: "array", items: { type: "string" } } },
	required: ["verdict", "files"],
	additionalProperties: false,
};

/** A sandbox whose git sees no user config and no repository above the sandbox (this checkout's own). */
function gitSandbox(server: ScriptedServer, repo: boolean): Sandbox {
	const sandbox = makeSandbox({ server });
	sandbox.env = gitTestEnv(sandbox.root, sandbox.env);
	if (repo) {
		makeGitRepo(
			sandbox.cwd,
			{ "a.txt": "alpha\n", "b.txt": "one\ntwo\nthree\n", "gone.txt": "bye\n", "src/keep.ts": "export {};\n" },
			sandbox.env,
		);
	}
	return sandbox;
}

/** One child's section of a wait result (by its id or its quoted name), from its header to the next one. */
function section(text: string, who: string): string {
	const start = who.startsWith("sa-") ? text.indexOf(`── ${who} `) : text.search(new RegExp(`── sa-\\d+ "${who}"`));
	if (start < 0) return "";
	const next = text.indexOf("── sa-", start + 3);
	return text.slice(start, next < 0 ? undefined : next);
}

const patchPath = (text: string) => /untracked files included\): (\S+) —/.exec(text)?.[1] ?? "";

describe.each(PI_LINES)("isolated and structured subagents on $label", ({ line }) => {
	const runs = usePrintRuns(line, { extensions: EXT, args: ["--no-session"] });
	const startServer = runs.startServer;

	it("two isolated children edit in parallel: the parent's tree stays clean, each result names its own files and a patch that applies", async () => {
		const edits: Record<string, string> = {
			"edit-a": "printf 'more\\n' >> a.txt && printf 'new\\n' > only-a.txt",
			"edit-b": "rm gone.txt && printf 'one\\n2\\nthree\\n' > b.txt",
		};
		const server = await startServer((req) => {
			if (isChild(req)) {
				if (req.last?.role === "tool") return { text: `finished ${task(req)}` };
				return { toolCalls: [{ name: "bash", arguments: { command: edits[task(req)] } }] };
			}
			const called = calledTools(req);
			if (called.length === 0) {
				return {
					toolCalls: Object.keys(edits).map((t) => ({
						name: "subagent_spawn",
						arguments: { prompt: `CHILD-TASK ${t}`, name: t, isolation: "worktree" },
					})),
				};
			}
			if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "done" };
		});
		const sandbox = gitSandbox(server, true);
		const indexBefore = readFileSync(`${sandbox.cwd}/.git/index`);
		const run = await runs.printIn(sandbox, { prompt: "edit in isolation" });
		const spawns = toolResults(run.events, "subagent_spawn");
		expect(spawns.map((s) => s.isError)).toEqual([false, false]);
		for (const s of spawns) {
			expect(s.text).toContain("Isolated: it works in a new git worktree");
			expect(s.text).toContain("Your working tree had no uncommitted changes");
		}
		const [wait] = toolResults(run.events, "subagent_wait");
		expect(wait.isError).toBe(false);
		// Spawns run in parallel, so ids follow whichever worktree was ready first: find the children by name.
		const a = section(wait.text, "edit-a");
		const b = section(wait.text, "edit-b");
		expect(a).toMatch(/2 files changed, \+2 −0/);
		expect(a).toContain("  M a.txt (+1 −0)");
		expect(a).toContain("  A only-a.txt (+1 −0)");
		expect(a).not.toContain("gone.txt");
		expect(b).toContain("  D gone.txt (+0 −1)");
		expect(b).toContain("  M b.txt (+1 −1)");
		expect(b).not.toContain("only-a.txt");
		expect(a).toContain("finished edit-a");
		// The parent's working tree, index and status are exactly as before.
		expect(git(sandbox.cwd, ["status", "--porcelain", "--untracked-files=all"], sandbox.env)).toBe("");
		expect(readFileSync(`${sandbox.cwd}/.git/index`).equals(indexBefore)).toBe(true);
		for (const part of [a, b]) {
			const patch = patchPath(part);
			expect(patch, part).not.toBe("");
			expect(readFileSync(patch, "utf8")).toContain("diff --git");
			git(sandbox.cwd, ["apply", "--check", patch], sandbox.env);
			const worktree = /Changes in worktree (\S+) /.exec(part)?.[1] ?? "";
			expect(existsSync(worktree)).toBe(true);
		}
		type Results = { results: Array<{ id: string; changes: { kept: boolean; files: Array<{ path: string }> } }> };
		const details = wait.details as Results;
		const idOf = (part: string) => /── (sa-\d+) /.exec(part)?.[1];
		const byId = new Map(details.results.map((r) => [r.id, [r.changes.kept, r.changes.files.map((f) => f.path)]]));
		expect(byId.get(idOf(a)!)).toEqual([true, ["a.txt", "only-a.txt"]]);
		expect(byId.get(idOf(b)!)).toEqual([true, ["b.txt", "gone.txt"]]);
	});

	it("an unchanged worktree is removed with its branch; outside a repository the spawn fails and no child starts", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: "looked, changed nothing" };
			const called = calledTools(req);
			if (called.length === 0) {
				return {
					toolCalls: [{ name: "subagent_spawn", arguments: { prompt: "CHILD-TASK look", isolation: "worktree" } }],
				};
			}
			if (
				!called.includes("subagent_wait") &&
				!req.body.messages.some((m) => m.role === "tool" && /No child was started/.test(JSON.stringify(m.content)))
			)
				return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "done" };
		});
		const inRepo = gitSandbox(server, true);
		const run = await runs.printIn(inRepo, { prompt: "look only" });
		const [wait] = toolResults(run.events, "subagent_wait");
		const removed = /the worktree (\S+) and its branch were removed/.exec(wait.text);
		expect(removed, wait.text).not.toBeNull();
		expect(existsSync(removed![1])).toBe(false);
		expect(git(inRepo.cwd, ["branch", "--list", "headroom/*"], inRepo.env).trim()).toBe("");
		expect(git(inRepo.cwd, ["worktree", "list", "--porcelain"], inRepo.env)).not.toContain(removed![1]);
		expect(wait.text).toContain("looked, changed nothing");

		const before = server.requests.filter(isChild).length;
		const outside = gitSandbox(server, false);
		const second = await runs.printIn(outside, { prompt: "look only" });
		const [spawn] = toolResults(second.events, "subagent_spawn");
		expect(spawn.isError).toBe(true);
		expect(spawn.text).toMatch(/isolation "worktree" is not possible: .* is not inside a git repository/);
		expect(spawn.text).toContain("No child was started");
		expect(server.requests.filter(isChild).length).toBe(before);
	});

	it("output_schema: prose then JSON takes exactly one correction and arrives as the JSON; a child that never complies is invalid", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) {
				const corrected = req.lastUser.includes(CORRECTION);
				if (task(req) === "late") {
					return corrected
						? { text: '```json\n{"verdict": "pass", "files": ["src/keep.ts"]}\n```' }
						: { text: "It looks fine to me; nothing to report." };
				}
				return corrected ? { text: '{"verdict": "maybe"}' } : { text: "I would rather explain in prose." };
			}
			const called = calledTools(req);
			if (called.length === 0) {
				return {
					toolCalls: [
						...["late", "never"].map((t) => ({
							name: "subagent_spawn",
							arguments: { prompt: `CHILD-TASK ${t}`, name: t, output_schema: REVIEW_SCHEMA },
						})),
						{
							name: "subagent_spawn",
							arguments: { prompt: "CHILD-TASK broken", output_schema: { type: "object", requried: ["x"] } },
						},
					],
				};
			}
			if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "done" };
		});
		const sandbox = makeSandbox({ server });
		const run = await runs.printIn(sandbox, { prompt: "review" });
		const spawns = toolResults(run.events, "subagent_spawn");
		expect(spawns.map((s) => s.isError)).toEqual([false, false, true]);
		expect(spawns[2].text).toMatch(/output_schema cannot be used: unsupported keyword "requried"/);
		const children = server.requests.filter(isChild);
		expect(children.filter((r) => task(r) === "broken")).toEqual([]);
		// The schema is in the task; exactly one correction request per child.
		for (const t of ["late", "never"]) {
			const mine = children.filter((r) => task(r) === t);
			expect(mine[0].firstUser).toContain('"verdict"');
			expect(mine.filter((r) => r.lastUser.includes(CORRECTION)).length).toBe(1);
			expect(mine.length).toBe(2);
		}
		const never = children.filter((r) => task(r) === "never" && r.lastUser.includes(CORRECTION));
		expect(never[0].lastUser).toContain("does not end with a JSON value");
		const [wait] = toolResults(run.events, "subagent_wait");
		const late = section(wait.text, "late");
		expect(late).toContain("completed, output valid");
		expect(late.trimEnd().endsWith('{"verdict": "pass", "files": ["src/keep.ts"]}')).toBe(true);
		const invalid = section(wait.text, "never");
		expect(invalid).toContain("completed, output INVALID");
		expect(invalid).toContain("Invalid structured output");
		expect(invalid).toContain("(root): must have required properties files");
		expect(invalid).toContain('/verdict: must be equal to one of the allowed values ["pass","fail"]');
		expect(invalid).toContain('Raw answer:\n{"verdict": "maybe"}');
		type Results = {
			results: Array<{ id: string; structured: { status: string; value?: unknown; corrections: number } }>;
		};
		const details = wait.details as Results;
		expect(details.results).toEqual([
			{
				id: "sa-1",
				run: 1,
				structured: { status: "valid", value: { verdict: "pass", files: ["src/keep.ts"] }, corrections: 1 },
			},
			{
				id: "sa-2",
				run: 1,
				structured: expect.objectContaining({ status: "invalid", value: { verdict: "maybe" }, corrections: 1 }),
			},
		]);
	});

	it("an agent file's isolation and output_schema apply: the result starts with the changes and ends with the valid JSON", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) {
				if (req.last?.role === "tool") return { text: 'Fixed it.\n```json\n{"fixed": ["a.txt"]}\n```' };
				return { toolCalls: [{ name: "bash", arguments: { command: "printf 'fixed\\n' > a.txt" } }] };
			}
			const called = calledTools(req);
			if (called.length === 0) {
				return { toolCalls: [{ name: "subagent_spawn", arguments: { agent: "fixer", prompt: "CHILD-TASK fix" } }] };
			}
			if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
			return { text: "done" };
		});
		const sandbox = gitSandbox(server, true);
		mkdirSync(join(sandbox.agentDir, "agents"), { recursive: true });
		writeFileSync(
			join(sandbox.agentDir, "agents", "fixer.md"),
			"---\nname: fixer\ndescription: Fixes files in its own worktree and reports as JSON\nisolation: worktree\n" +
				"output_schema:\n  type: object\n  properties:\n    fixed:\n      type: array\n      items: { type: string }\n" +
				"  required: [fixed]\n---\nYou fix files.\n",
		);
		const run = await runs.printIn(sandbox, { prompt: "fix it" });
		const [spawn] = toolResults(run.events, "subagent_spawn");
		expect(spawn.isError, spawn.text).toBe(false);
		expect(spawn.text).toContain("Isolated: it works in a new git worktree");
		expect(spawn.text).toContain("Its answer must end with JSON valid against output_schema");
		const child = server.requests.filter(isChild);
		expect(child[0].firstUser).toContain('"fixed"');
		expect(child.some((r) => r.lastUser.includes(CORRECTION))).toBe(false);
		const [wait] = toolResults(run.events, "subagent_wait");
		const part = section(wait.text, "sa-1");
		expect(part).toContain("completed, output valid");
		expect(part).toContain("  M a.txt (+1 −1)");
		expect(part.trimEnd().endsWith('{"fixed": ["a.txt"]}')).toBe(true);
		expect(part.indexOf("Changes in worktree")).toBeLessThan(part.indexOf('{"fixed"'));
		expect(git(sandbox.cwd, ["status", "--porcelain", "--untracked-files=all"], sandbox.env)).toBe("");
		git(sandbox.cwd, ["apply", "--check", patchPath(part)], sandbox.env);
		type Results = { results: Array<{ structured: { status: string; value: unknown }; changes: { kept: boolean } }> };
		const [result] = (wait.details as Results).results;
		expect(result.structured).toMatchObject({ status: "valid", value: { fixed: ["a.txt"] } });
		expect(result.changes.kept).toBe(true);
	});
});

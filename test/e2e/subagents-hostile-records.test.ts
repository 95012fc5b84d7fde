/**
 * A tampered session file on `pi -c` (the real pi CLI, both lines): records the package wrote are input, never
 * instructions. A settled result whose text is not a string and whose worktree record names a foreign path and
 * an option as its base, and a waiting pipeline stage whose recorded parameters fail the spawn schema: the
 * result arrives saying it is damaged (no throw), no git runs on the worktree record, the stage is not spawned
 * and says why, and the user is warned once.
 */
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, runPiPrint, toolResults } from "../fixtures/pi-runner.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { calledTools, isChild } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];

/** The parent's session file (the one .jsonl directly in the sandbox's sessions folder). */
function parentSessionFile(agentDir: string): string {
	const root = join(agentDir, "sessions");
	const files = readdirSync(root).flatMap((dir) =>
		readdirSync(join(root, dir))
			.filter((f) => f.endsWith(".jsonl"))
			.map((f) => join(root, dir, f)),
	);
	expect(files).toHaveLength(1);
	return files[0];
}

/** Append custom entries to a session file, each the child of the one before (as Pi appends them). */
function appendCustom(file: string, entries: Array<{ customType: string; data: unknown }>): void {
	const lines = readFileSync(file, "utf8").trim().split("\n");
	let parentId = (JSON.parse(lines.at(-1)!) as { id: string }).id;
	for (const e of entries) {
		const id = randomBytes(4).toString("hex");
		const entry = { type: "custom", ...e, id, parentId, timestamp: new Date().toISOString() };
		appendFileSync(file, `${JSON.stringify(entry)}\n`);
		parentId = id;
	}
}

describe.each(PI_LINES)("a tampered session on pi -c on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("reports damaged records, runs no git on them and spawns no stage from them", async () => {
		const server = await startServer((req) => {
			if (isChild(req)) return { text: "CHILD-SHOULD-NOT-RUN" };
			if (req.lastUser.includes("phase two") && calledTools(req).length === 0)
				return { toolCalls: [{ name: "subagent_wait", arguments: { ids: ["sa-1", "sa-2"], timeout_s: 30 } }] };
			return { text: "done" };
		});
		const sandbox = makeSandbox({ server });
		const first = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "phase one" });
		expect(first.exitCode, first.stderr).toBe(0);
		const file = parentSessionFile(sandbox.agentDir);
		const victim = join(sandbox.root, "victim");
		const foreign = join(sandbox.root, "foreign-dir");
		mkdirSync(foreign);
		const base = { run: 1, model: "mock/mock-model", prompt: "task", turns: 1, createdAt: 1, endedAt: 2 };
		appendCustom(file, [
			{
				customType: "subagent-settled",
				data: {
					...base,
					key: "sa-1#1",
					id: "sa-1",
					name: "alpha",
					state: "completed",
					bytes: 5,
					text: { not: "a string" },
					worktree: {
						path: foreign,
						branch: "main",
						base: `--output=${victim}`,
						repoTop: sandbox.cwd,
						cwd: foreign,
						parentUncommitted: 0,
					},
				},
			},
			{
				customType: "subagent-run",
				data: {
					...base,
					id: "sa-2",
					name: "beta",
					phase: "queued",
					after: ["sa-1"],
					afterFailed: "run",
					spawn: { prompt: "TASK-TAMPERED", tools: "bash", after: ["sa-1"], after_failed: "run" },
				},
			},
		]);
		const second = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "phase two", args: ["-c"] });
		expect(second.exitCode, second.stderr).toBe(0);
		const [wait] = toolResults(second.events, "subagent_wait");
		expect(wait.isError, wait.text).toBe(false);
		expect(wait.text).toContain("sa-1's worktree record in the session file was refused");
		expect(wait.text).toContain("sa-1's recorded result is damaged in the session file");
		// The stage settled at session start; its result reached the parent (delivered then, or in the wait).
		const parentSaw = server.requests
			.filter((r) => !isChild(r))
			.map((r) => r.raw)
			.join("\n");
		expect(parentSaw).toMatch(/sa-2[^\n]*recorded spawn parameters are damaged \(\/tools/);
		expect(second.stderr).toMatch(/subagents: 2 damaged records in this session file/);
		expect(server.requests.filter(isChild)).toEqual([]);
		expect(existsSync(victim)).toBe(false);
		expect(existsSync(foreign)).toBe(true);
	});
});

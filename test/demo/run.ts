/**
 * `npm run demo`: the subagents capability end to end, offline.
 *
 * Starts the bundled scripted model, makes a sandbox agent dir, and runs the real pi CLI
 * (0.73.1 on this Node) with every extension of this package. The scripted parent spawns three
 * children through named agents — the built-in `reviewer` and `scout`, and `db-surveyor` from an
 * agent file the demo writes — whose answers are long, waits for them, then pages each stored answer
 * with Pi's own `read` using the call printed in the projection footer. The demo prints, per child,
 * the agent it ran as (checked against the system prompt and tools the child's requests carried), the
 * full size, what reached the parent, the artifact and the read call, checks every claim, and exits
 * non-zero if one fails.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { BUILT_IN_AGENTS } from "../../extensions/subagents/agents/agents.ts";
import { CHILD_SYSTEM_APPEND } from "../../extensions/subagents/prompt/common.ts";
import { childTools } from "../e2e/subagents-support.ts";
import { extensionPath, makeSandbox, REPO_ROOT, runPiPrint, toolResults } from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText, startScriptedServer } from "../fixtures/scripted-server.ts";
import { keepSandboxes } from "../fixtures/test-dirs.ts";

interface ChildPlan {
	/** Tag in the task and in every line of the answer. */
	tag: string;
	title: string;
	lines: number;
	/** The named agent the parent spawns it as. */
	agent: string;
}

const CHILDREN: ChildPlan[] = [
	{ tag: "AUTH", title: "audit the auth module", lines: 420, agent: "reviewer" },
	{ tag: "DB", title: "survey the database layer", lines: 700, agent: "db-surveyor" },
	{ tag: "UI", title: "list UI components", lines: 260, agent: "scout" },
];

/** The agent file the demo writes into the sandbox's `<agentDir>/agents/`, as a user would. */
const DB_SURVEYOR_PROMPT =
	"You survey database layers: schemas, migrations, queries. Report every finding on its own line.";
const DB_SURVEYOR_FILE = `---
name: db-surveyor
description: Surveys a database layer (schemas, migrations, queries); read-only.
tools: read, grep, ls
---
${DB_SURVEYOR_PROMPT}
`;

/** What each agent's child must have carried in its requests: its prompt and exactly its tools (plus ask_parent). */
function expectedAgent(name: string): { prompt: string; tools: string[]; source: string } {
	if (name === "db-surveyor")
		return { prompt: DB_SURVEYOR_PROMPT, tools: ["read", "grep", "ls"], source: "agent file" };
	const builtIn = BUILT_IN_AGENTS.find((a) => a.name === name)!;
	return { prompt: builtIn.systemPrompt, tools: builtIn.tools ?? [], source: "built-in" };
}

/** A long, line-numbered report: what a diligent child might return. */
function answerFor(plan: ChildPlan): string {
	const out = [`BEGIN ${plan.tag} report: ${plan.title}`];
	for (let i = 1; i <= plan.lines; i++) {
		out.push(
			`${plan.tag}-${String(i).padStart(4, "0")} finding ${i}: checked item ${i * 7} of ${plan.title}; status ok`,
		);
	}
	out.push(`END ${plan.tag} report — ${plan.lines} findings`);
	return out.join("\n");
}

/** Every extension the package ships (package.json "pi.extensions"), loaded as `pi install` would. */
function packageExtensions(): string[] {
	const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { pi: { extensions: string[] } };
	return pkg.pi.extensions.map((entry) => extensionPath(basename(entry, ".ts")));
}

const ANSWERS = new Map(CHILDREN.map((c) => [c.tag, answerFor(c)]));
const READ_CALL = /read\(path="([^"]+)", offset=(\d+), limit=(\d+)\)/;

function script(req: ChatRequest) {
	if (req.system.includes(CHILD_SYSTEM_APPEND)) {
		const tag = /DEMO-TASK (\w+)/.exec(req.firstUser)?.[1] ?? "";
		return { text: ANSWERS.get(tag) ?? `no such task ${tag}` };
	}
	const called = req.body.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.function.name));
	if (called.length === 0) {
		return {
			toolCalls: CHILDREN.map((c) => ({
				name: "subagent_spawn",
				arguments: { prompt: `DEMO-TASK ${c.tag}: ${c.title}`, name: c.title, agent: c.agent },
			})),
		};
	}
	if (!called.includes("subagent_wait")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
	if (!called.includes("read")) {
		const waitText = messageText(req.last);
		const reads = waitText
			.split("\n")
			.map((line) => READ_CALL.exec(line))
			.filter((m): m is RegExpExecArray => m !== null)
			.map((m) => ({ name: "read", arguments: { path: m[1], offset: Number(m[2]), limit: Number(m[3]) } }));
		return { toolCalls: reads };
	}
	return { text: "All three reports received; the omitted middles were paged with read." };
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const rule = (title: string) => console.log(`\n── ${title} ${"─".repeat(Math.max(4, 72 - title.length))}`);
let failures = 0;
function check(ok: boolean, what: string): void {
	console.log(`   ${ok ? "✓" : "✗"} ${what}`);
	if (!ok) failures++;
}

interface Item {
	id: string;
	fullBytes: number;
	fullLines: number;
	projectedBytes: number;
	truncated: boolean;
	artifactPath?: string;
	read?: { path: string; offset: number; limit: number };
}

async function main(): Promise<void> {
	const started = Date.now();
	const server = await startScriptedServer(script, { lifetimeMs: 120_000 });
	const sandbox = makeSandbox({ server });
	try {
		console.log(
			"pi-context-headroom demo — subagents run as named agents; their long answers reach the parent as head + tail, full text one read away",
		);
		console.log(`model: scripted, offline on ${server.baseUrl}; pi 0.73.1 on node ${process.version}`);
		console.log(`sandbox agent dir: ${sandbox.agentDir}`);
		const agentFile = join(sandbox.agentDir, "agents", "db-surveyor.md");
		mkdirSync(join(sandbox.agentDir, "agents"), { recursive: true });
		writeFileSync(agentFile, DB_SURVEYOR_FILE);
		console.log(`agent file written: ${agentFile}`);
		const run = await runPiPrint({
			line: "0.73",
			sandbox,
			extensions: packageExtensions(),
			prompt:
				"Spawn a reviewer, a db-surveyor and a scout to audit auth, the database layer and the UI; wait for all; page what was omitted.",
			args: ["--no-session"],
			timeoutMs: 50_000,
		});
		if (run.exitCode !== 0) {
			console.error(`pi exited with ${run.exitCode}\n${run.stderr.slice(-2000)}`);
			process.exit(1);
		}
		const spawns = toolResults(run.events, "subagent_spawn");
		rule("1. the parent spawned");
		for (const s of spawns) console.log(`   ${s.text.slice(0, 110)}…`);
		const wait = toolResults(run.events, "subagent_wait")[0];
		if (!wait) throw new Error("the parent never received a subagent_wait result");
		const items = (wait.details as { items: Item[] }).items;
		const reads = toolResults(run.events, "read");
		const fullTotal = items.reduce((s, i) => s + i.fullBytes, 0);
		const waitBytes = Buffer.byteLength(wait.text, "utf8");
		rule("2. one subagent_wait returned all three");
		console.log(
			`   full answers: ${kb(fullTotal)} — what the parent's context received: ${kb(waitBytes)} (batch cap 48 KiB)`,
		);
		check(waitBytes <= 48 * 1024, "the whole wait result fits the 48 KiB batch cap");
		for (const [index, item] of items.entries()) {
			const plan = CHILDREN[index];
			const answer = ANSWERS.get(plan.tag)!;
			rule(`3.${index + 1} ${item.id} "${plan.title}"`);
			const row = (wait.details as { rows?: Array<{ id: string; agent?: string }> }).rows?.find(
				(r) => r.id === item.id,
			);
			const expected = expectedAgent(plan.agent);
			const childRequest = server.requests.find(
				(r) => r.system.includes(CHILD_SYSTEM_APPEND) && r.firstUser.includes(`DEMO-TASK ${plan.tag}`),
			);
			console.log(
				`   ran as agent:   ${row?.agent ?? "(none)"} (${expected.source}; tools ${expected.tools.join(", ")})`,
			);
			check(row?.agent === plan.agent, `spawned as the "${plan.agent}" agent`);
			check(
				!!childRequest &&
					childRequest.system.includes(expected.prompt) &&
					[...childRequest.toolNames].sort().join() === childTools(expected.tools).join(),
				"the child's requests carried that agent's system prompt and exactly its tools",
			);
			console.log(`   full answer:    ${item.fullBytes.toLocaleString("en-US")} bytes, ${item.fullLines} lines`);
			console.log(
				`   parent saw:     ${item.projectedBytes.toLocaleString("en-US")} bytes (head + omission marker + tail + footer)`,
			);
			console.log(`   artifact:       ${item.artifactPath ?? "(none)"}`);
			if (item.read)
				console.log(
					`   read call:      read(path="${item.read.path}", offset=${item.read.offset}, limit=${item.read.limit})`,
				);
			check(item.truncated && item.projectedBytes <= 16 * 1024, "projected to at most 16 KiB");
			check(
				wait.text.includes(`BEGIN ${plan.tag}`) && wait.text.includes(`END ${plan.tag}`),
				"its beginning and its end are both visible",
			);
			if (!item.artifactPath || !item.read) {
				check(false, "artifact and read call present");
				continue;
			}
			const stored = readFileSync(item.artifactPath, "utf8");
			const mode = statSync(item.artifactPath).mode & 0o777;
			const sha = createHash("sha256").update(answer, "utf8").digest("hex");
			check(stored === answer, "artifact is byte-identical to the child's answer");
			check(
				mode === 0o600 && basename(item.artifactPath) === `${sha}.txt`,
				`mode ${mode.toString(8)}, named by its SHA-256`,
			);
			const result = reads.find((r) => r.text.includes(`${plan.tag}-${String(item.read!.offset).padStart(4, "0")}`));
			const omitted = answer.split("\n").slice(item.read.offset - 1, item.read.offset - 1 + item.read.limit);
			console.log(`   the parent's read returned ${result ? result.text.split("\n").length : 0} lines:`);
			for (const l of (result?.text ?? "").split("\n").slice(0, 3)) console.log(`      │ ${l}`);
			console.log("      │ …");
			check(
				!!result && result.text.startsWith(omitted.join("\n")),
				`read returned lines ${item.read.offset}–${item.read.offset + item.read.limit - 1}, the first omitted ones`,
			);
		}
		rule("result");
		const seconds = ((Date.now() - started) / 1000).toFixed(1);
		if (failures > 0) {
			console.log(`   ${failures} check(s) FAILED (${seconds} s)`);
			process.exitCode = 1;
		} else console.log(`   all checks passed in ${seconds} s — DEMO OK`);
	} finally {
		await server.close();
		if (keepSandboxes()) console.log(`   sandbox kept: ${sandbox.root}`);
		else rmSync(sandbox.root, { recursive: true, force: true });
	}
}

main().catch((error) => {
	console.error(`demo failed: ${error instanceof Error ? error.stack : String(error)}`);
	process.exit(1);
});

/**
 * Nothing vanishes in a crash (the real pi CLI, both lines): a seeded random schedule of children (random
 * durations, one failing, one stalling until the watchdog stops it, one cancelled by the parent), the parent
 * killed with SIGKILL at a random moment, then `pi -c` and subagent_wait on every id. Each child's outcome
 * reaches the parent exactly once over both processes — a report, or failed / cancelled / interrupted with the
 * partial output its own session file holds — and every id is known to the resumed parent's tools.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, runPiPrint, toolResults } from "../fixtures/pi-runner.ts";
import { type ChatRequest, messageText } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";
import { calledTools, isChild } from "./subagents-support.ts";

const EXT = [extensionPath("subagents")];
const SEEDS = [11, 23, 37];
const CHILDREN = 6;

type Kind = "normal" | "fail" | "stall" | "cancel";

/** A small seeded generator (mulberry32): the same seed gives the same schedule and kill moment. */
function random(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

interface Plan {
	kinds: Kind[];
	firstDelayMs: number[];
	secondDelayMs: number[];
	killAfterMs: number;
}

function planFor(seed: number): Plan {
	const next = random(seed);
	const kinds: Kind[] = Array.from({ length: CHILDREN }, () => "normal");
	const slots = [...Array(CHILDREN).keys()].sort(() => next() - 0.5);
	kinds[slots[0]] = "fail";
	kinds[slots[1]] = "stall";
	kinds[slots[2]] = "cancel";
	const ms = (lo: number, hi: number) => Math.round(lo + next() * (hi - lo));
	return {
		kinds,
		firstDelayMs: kinds.map(() => ms(100, 1500)),
		secondDelayMs: kinds.map((k) => (k === "cancel" ? 60_000 : ms(300, 3000))),
		killAfterMs: ms(300, 4500),
	};
}

const tagOf = (req: ChatRequest) => [...req.firstUser.matchAll(/CHILD-TASK (c\d+)/g)].pop()?.[1] ?? "";
const allText = (req: ChatRequest) => req.body.messages.map((m) => messageText(m)).join("\n");

describe.each(PI_LINES)("subagents after a crash on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it.each(SEEDS)("seed %i: every child's outcome reaches the resumed parent exactly once", async (seed) => {
		const plan = planFor(seed);
		const tags = plan.kinds.map((_, i) => `c${i + 1}`);
		const ids = tags.map((_, i) => `sa-${i + 1}`);
		const cancelId = ids[plan.kinds.indexOf("cancel")];
		let spawnsReturned: () => void = () => undefined;
		const spawned = new Promise<void>((r) => {
			spawnsReturned = r;
		});
		const server = await startServer((req) => {
			if (isChild(req)) {
				const i = tags.indexOf(tagOf(req));
				const kind = plan.kinds[i];
				if (kind === "fail") return { error: { status: 400, message: `boom-${tags[i]}` } };
				if (req.last?.role !== "tool")
					return {
						text: `STEP-ONE-${tags[i]}`,
						toolCalls: [{ name: "ls", arguments: {} }],
						delayMs: plan.firstDelayMs[i],
					};
				if (kind === "stall") return { hang: true };
				return { text: `ANSWER-${tags[i]} complete`, delayMs: plan.secondDelayMs[i] };
			}
			const called = calledTools(req);
			if (req.lastUser.includes("phase two")) {
				const since = req.body.messages.slice(req.body.messages.findLastIndex((m) => m.role === "user"));
				if (!since.some((m) => (m.tool_calls ?? []).length > 0))
					return { toolCalls: [{ name: "subagent_wait", arguments: { ids, timeout_s: 30 } }] };
				return { text: "phase two done" };
			}
			if (called.length === 0)
				return {
					toolCalls: tags.map((t) => ({ name: "subagent_spawn", arguments: { prompt: `CHILD-TASK ${t}`, name: t } })),
				};
			spawnsReturned();
			const last = req.last?.role === "tool" ? messageText(req.last) : "";
			if (last.startsWith("No subagent results are outstanding")) return { text: "phase one done" };
			if (!called.includes("subagent_cancel") && called.includes("subagent_wait"))
				return { toolCalls: [{ name: "subagent_cancel", arguments: { ids: [cancelId] } }] };
			return { toolCalls: [{ name: "subagent_wait", arguments: { mode: "any", timeout_s: 30 } }] };
		});
		const sandbox = makeSandbox({
			server,
			headroomConfig: { subagents: { maxConcurrent: 3, idleTimeoutSeconds: 5 } },
		});
		let killed = false;
		const first = await runPiPrint({
			line,
			sandbox,
			extensions: EXT,
			prompt: "phase one",
			timeoutMs: 60_000,
			onStart: (child) => {
				void spawned.then(() =>
					setTimeout(() => {
						killed = child.exitCode === null && child.kill("SIGKILL");
					}, plan.killAfterMs),
				);
			},
		});
		// The stalling child keeps the first run alive past the latest kill moment: it is always killed mid-run.
		expect(killed, first.stderr).toBe(true);

		const second = await runPiPrint({ line, sandbox, extensions: EXT, prompt: "phase two", args: ["-c"] });
		expect(second.exitCode, second.stderr).toBe(0);
		// Every id is known to the resumed parent's tools.
		const [wait] = toolResults(second.events, "subagent_wait");
		expect(wait.isError, wait.text).toBe(false);
		expect(wait.text).not.toContain("Unknown");

		// The resumed parent's last request holds both processes' history: each outcome in it exactly once.
		const last = server.requests.filter((r) => !isChild(r)).at(-1)!;
		expect(last.lastUser.includes("phase two") || allText(last).includes("phase two")).toBe(true);
		const context = allText(last);
		const childFiles = childSessionFiles(sandbox.agentDir);
		const outcomes: string[] = [];
		for (const [i, id] of ids.entries()) {
			const headers = [...context.matchAll(new RegExp(`── ${id} "${tags[i]}" (\\w+)`, "g"))];
			const why = `seed ${seed}, ${id} (${plan.kinds[i]}), kill after ${plan.killAfterMs} ms (killed: ${killed})`;
			expect(headers.length, why).toBe(1);
			const state = headers[0][1];
			outcomes.push(`${id}:${plan.kinds[i]}:${state}`);
			const allowed = {
				normal: ["completed", "interrupted"],
				fail: ["failed", "interrupted"],
				stall: ["failed", "interrupted"],
				cancel: ["cancelled", "interrupted"],
			}[plan.kinds[i]];
			expect(allowed, `${why}: ${state}`).toContain(state);
			const answer = `ANSWER-${tags[i]} complete`;
			if (state === "completed") expect(countOf(context, answer), why).toBe(1);
			if (state === "interrupted") {
				expect(countOf(context, answer), why).toBe(0);
				// What the child's own session file held of its run is in the report.
				const file = childFiles.find((f) => readFileSync(f, "utf8").includes(`CHILD-TASK ${tags[i]}`));
				if (file && readFileSync(file, "utf8").includes(`STEP-ONE-${tags[i]}`))
					expect(context, why).toContain(`its session file: ${file}):\nSTEP-ONE-${tags[i]}`);
			}
		}
		expect(outcomes.length).toBe(CHILDREN);
	});
});

function countOf(text: string, needle: string): number {
	return text.split(needle).length - 1;
}

function childSessionFiles(agentDir: string): string[] {
	const root = join(agentDir, "sessions");
	if (!existsSync(root)) return [];
	return readdirSync(root).flatMap((dir) => {
		const sub = join(root, dir, "subagents");
		return existsSync(sub) ? readdirSync(sub).map((f) => join(sub, f)) : [];
	});
}

/**
 * The process-wide home of a session's children: records go through the attached instance; while none is
 * attached after a switch away they go straight into the session's file; during a reload (or before the session
 * has a file) they wait, in order, and are written through the next instance of that session, or into its file
 * when the process ends. One map for every module instance.
 */
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { createSessionHome, sessionHomes } from "../../extensions/subagents/children/home.ts";
import { SubagentManager } from "../../extensions/subagents/children/manager.ts";
import { ControlledBackend, FAKE_LIMITS, tempRoot } from "./subagents-fakes.ts";

const manager = () => new SubagentManager(new ControlledBackend(), FAKE_LIMITS);

afterEach(() => sessionHomes().clear());

describe("a session's home", () => {
	it("writes through the attached instance, keeps records while detached, hands them to the next one in order", () => {
		const home = createSessionHome("k", undefined, manager());
		const first: unknown[] = [];
		home.attach((type, data) => first.push([type, data]));
		home.record("a", 1);
		home.detach();
		home.record("b", 2);
		home.record("c", 3);
		expect(first).toEqual([["a", 1]]);
		expect(home.waiting()).toBe(2);
		const second: unknown[] = [];
		home.attach((type, data) => second.push([type, data]));
		expect(second).toEqual([
			["b", 2],
			["c", 3],
		]);
		expect(home.waiting()).toBe(0);
	});

	it("writes what waits into the session file when no instance will take it", () => {
		const dir = tempRoot("subagents-home-");
		const sm = SessionManager.create(dir, join(dir, "sessions"));
		sm.appendMessage({ role: "user", content: "task", timestamp: 1 } as never);
		sm.appendMessage({
			role: "assistant",
			content: [{ type: "text", text: "ok" }],
			api: "openai-completions",
			provider: "mock",
			model: "m",
			usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { total: 0 } },
			stopReason: "stop",
			timestamp: 2,
		} as never);
		const file = sm.getSessionFile()!;
		const home = createSessionHome(file, file, manager());
		home.record("subagent-settled", { key: "sa-1#1" });
		home.flushToFile();
		expect(home.waiting()).toBe(0);
		const branch = SessionManager.open(file).getBranch() as Array<{
			type: string;
			customType?: string;
			data?: unknown;
		}>;
		expect(branch.at(-1)).toMatchObject({ type: "custom", customType: "subagent-settled", data: { key: "sa-1#1" } });
	});

	it("after a switch away, writes each record straight into the session file (nothing waits in memory)", () => {
		const file = sessionOnFile();
		const home = createSessionHome(file, file, manager());
		const through: unknown[] = [];
		home.attach((type, data) => through.push([type, data]));
		home.detach(true);
		home.record("subagent-settled", { key: "sa-1#1" });
		home.record("subagent-run", { id: "sa-2" });
		expect(home.waiting()).toBe(0);
		expect(through).toEqual([]);
		const customs = () =>
			(SessionManager.open(file).getBranch() as Array<{ type: string; customType?: string; data?: unknown }>)
				.filter((e) => e.type === "custom")
				.map((e) => [e.customType, e.data]);
		expect(customs()).toEqual([
			["subagent-settled", { key: "sa-1#1" }],
			["subagent-run", { id: "sa-2" }],
		]);
		// Back to that session: nothing is written twice.
		home.attach((type, data) => through.push([type, data]));
		expect(through).toEqual([]);
		// A reload keeps the session open in Pi: records wait for the next instance instead.
		home.detach();
		home.record("subagent-settled", { key: "sa-2#1" });
		expect(home.waiting()).toBe(1);
		expect(customs()).toHaveLength(2);
	});

	it("after a switch away from a session with no file yet, records wait (and keep their order)", () => {
		const dir = tempRoot("subagents-home-");
		const file = join(dir, "never-written.jsonl");
		const home = createSessionHome(file, file, manager());
		home.detach(true);
		home.record("a", 1);
		home.record("b", 2);
		expect(home.waiting()).toBe(2);
		const next: unknown[] = [];
		home.attach((type, data) => next.push([type, data]));
		expect(next).toEqual([
			["a", 1],
			["b", 2],
		]);
	});

	it("is one map for the whole process, found under a global symbol", () => {
		const home = createSessionHome("k2", undefined, manager());
		sessionHomes().set("k2", home);
		const g = globalThis as unknown as Record<symbol, Map<string, unknown>>;
		expect(g[Symbol.for("pi-context-headroom.subagents.homes")].get("k2")).toBe(home);
	});
});

/** A parent session on file (a user message and an answer, as Pi writes it once the conversation starts). */
function sessionOnFile(): string {
	const dir = tempRoot("subagents-home-");
	const sm = SessionManager.create(dir, join(dir, "sessions"));
	sm.appendMessage({ role: "user", content: "task", timestamp: 1 } as never);
	sm.appendMessage({
		role: "assistant",
		content: [{ type: "text", text: "ok" }],
		api: "openai-completions",
		provider: "mock",
		model: "m",
		usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { total: 0 } },
		stopReason: "stop",
		timestamp: 2,
	} as never);
	return sm.getSessionFile()!;
}

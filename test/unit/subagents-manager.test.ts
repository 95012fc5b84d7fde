import { afterEach, describe, expect, it } from "vitest";
import {
	type ChildBackend,
	type ChildEvent,
	type ChildHandle,
	type ChildSpec,
	type ManagerLimits,
	SubagentManager,
} from "../../extensions/subagents/children/manager.ts";
import { type ChildRecord, isSettled } from "../../extensions/subagents/domain/records.ts";
import { EMPTY_SEND_TEXT_ERROR, restoredSendError } from "../../extensions/subagents/prompt/common.ts";

/** A scripted child: emits events, then ends its run as told; abort ends it as aborted. */
interface FakeRun {
	events?: ChildEvent[];
	/** Final assistant message of the run. */
	final?: { text?: string; stopReason?: string; errorMessage?: string };
	/** Never ends unless aborted. */
	hang?: boolean;
	/** Milliseconds before ending. */
	delayMs?: number;
	throws?: string;
}

class FakeBackend implements ChildBackend {
	created: ChildSpec[] = [];
	prompts: Array<{ id: string; text: string }> = [];
	steers: Array<{ id: string; text: string }> = [];
	active = 0;
	maxActive = 0;
	constructor(private readonly plan: (id: string, runIndex: number) => FakeRun) {}

	async create(spec: ChildSpec, onEvent: (e: ChildEvent) => void): Promise<ChildHandle> {
		this.created.push(spec);
		let runs = 0;
		let abortRun: (() => void) | undefined;
		return {
			sessionFile: `/sessions/${spec.id}.jsonl`,
			prompt: async (text) => {
				this.prompts.push({ id: spec.id, text });
				this.active++;
				this.maxActive = Math.max(this.maxActive, this.active);
				try {
					const run = this.plan(spec.id, runs++);
					for (const e of run.events ?? []) onEvent(e);
					if (run.throws) throw new Error(run.throws);
					const aborted = await new Promise<boolean>((resolve) => {
						abortRun = () => resolve(true);
						if (!run.hang) setTimeout(() => resolve(false), run.delayMs ?? 1);
					});
					if (aborted) return [{ role: "assistant", content: [], stopReason: "aborted", errorMessage: "aborted" }];
					const f = run.final ?? { text: "done" };
					return [{ role: "assistant", content: [{ type: "text", text: f.text ?? "" }], ...f }];
				} finally {
					this.active--;
				}
			},
			steer: async (text) => {
				this.steers.push({ id: spec.id, text });
			},
			abort: async () => abortRun?.(),
			dispose: () => undefined,
		};
	}
}

const LIMITS: ManagerLimits = {
	maxConcurrent: 2,
	inactivityTimeoutMs: 10_000,
	maxRunTimeMs: 60_000,
	watchdogTickMs: 20,
};

function request(prompt: string) {
	return {
		prompt,
		modelLabel: "mock/m",
		model: {},
		tools: ["read"],
		cwd: "/w",
		context: "fresh" as const,
		systemAppend: [],
	};
}

const managers: SubagentManager[] = [];
function make(backend: ChildBackend, limits = LIMITS, onSettled?: (key: string) => void) {
	const m = new SubagentManager(backend, limits);
	m.subscribe((event) => {
		if (event.type === "settled") onSettled?.(event.result.key);
	});
	managers.push(m);
	return m;
}
afterEach(async () => {
	for (const m of managers.splice(0)) await m.shutdown();
});

describe("SubagentManager", () => {
	it("queues past maxConcurrent, in spawn order, and never runs more at once", async () => {
		const backend = new FakeBackend(() => ({ delayMs: 30, final: { text: "ok" } }));
		const m = make(backend);
		const children = ["a", "b", "c", "d", "e"].map((p) => m.spawn(request(p)));
		expect(children.map((c) => c.state)).toEqual(["starting", "starting", "queued", "queued", "queued"]);
		await m.waitFor(
			children.map((c) => c.id),
			{ mode: "all" },
		);
		expect(backend.maxActive).toBeLessThanOrEqual(2);
		expect(backend.prompts.map((p) => p.text)).toEqual(["a", "b", "c", "d", "e"]);
		expect(m.ledger.pending().map((r) => r.text)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
	});

	it("settles a provider error, a throw and an abort with error text and partial output", async () => {
		const backend = new FakeBackend((id) => {
			if (id === "sa-1")
				return {
					events: [{ type: "text", delta: "half-" }],
					final: { stopReason: "error", errorMessage: "429 slow down" },
				};
			if (id === "sa-2") return { events: [{ type: "text", delta: "started" }], throws: "socket closed" };
			return { events: [{ type: "text", delta: "PARTIAL" }], hang: true };
		});
		const m = make(backend, { ...LIMITS, maxConcurrent: 4 });
		const [a, b, c] = ["x", "y", "z"].map((p) => m.spawn(request(p)));
		await m.waitFor([a.id, b.id], { mode: "all" });
		await new Promise((r) => setTimeout(r, 10));
		await m.cancel([c.id]);
		const text = (id: string) => m.ledger.latest(id)!.text;
		expect(m.get(a.id)!.state).toBe("failed");
		expect(text(a.id)).toMatch(/^Error: 429 slow down\n\nPartial output before it stopped:\nhalf-/);
		expect(m.get(b.id)!.state).toBe("failed");
		expect(text(b.id)).toContain("socket closed");
		expect(text(b.id)).toContain("started");
		expect(m.get(c.id)!.state).toBe("cancelled");
		expect(text(c.id)).toMatch(/^Cancelled: stopped by subagent_cancel[\s\S]*PARTIAL/);
	});

	it("watchdog: stops a child silent past the limit at any point, but not while a tool runs", async () => {
		const backend = new FakeBackend((id) =>
			id === "sa-1"
				? { events: [{ type: "turn_end" }, { type: "text", delta: "turn one" }], hang: true }
				: { events: [{ type: "tool_start", name: "bash", args: "{}" }], delayMs: 250, final: { text: "tool done" } },
		);
		const m = make(backend, { ...LIMITS, inactivityTimeoutMs: 120 });
		const [stalled, busy] = [m.spawn(request("s")), m.spawn(request("t"))];
		await m.waitFor([stalled.id, busy.id], { mode: "all", timeoutMs: 3000 });
		expect(m.get(stalled.id)!.state).toBe("failed");
		expect(m.ledger.latest(stalled.id)!.text).toMatch(/watchdog[\s\S]*turn one/);
		expect(m.get(busy.id)!.state).toBe("completed");
	});

	it("max run time stops a child that keeps talking", async () => {
		const backend = new FakeBackend(() => ({ hang: true }));
		const m = make(backend, { ...LIMITS, maxRunTimeMs: 80 });
		const c = m.spawn(request("x"));
		await m.waitFor([c.id], { mode: "all", timeoutMs: 3000 });
		expect(m.get(c.id)!.error).toMatch(/maximum run time/);
	});

	it("send steers a running child and re-runs a settled one as a new result", async () => {
		const backend = new FakeBackend((_id, run) =>
			run === 0 ? { delayMs: 60, final: { text: "first" } } : { final: { text: "second" } },
		);
		const m = make(backend);
		const c = m.spawn(request("x"));
		await new Promise((r) => setTimeout(r, 10));
		expect(await m.send(c.id, "hurry")).toBe("steered");
		await m.waitFor([c.id], { mode: "all" });
		expect(await m.send(c.id, "again")).toBe("rerun");
		await m.waitFor([c.id], { mode: "all" });
		expect(backend.steers).toEqual([{ id: c.id, text: "hurry" }]);
		expect(m.ledger.all().map((r) => [r.key, r.text])).toEqual([
			[`${c.id}#1`, "first"],
			[`${c.id}#2`, "second"],
		]);
	});

	it("waitFor: any returns on the first, a timeout and an abort return early", async () => {
		const backend = new FakeBackend((id) => (id === "sa-1" ? { delayMs: 20 } : { hang: true }));
		const m = make(backend);
		const [a, b] = [m.spawn(request("a")), m.spawn(request("b"))];
		expect(await m.waitFor([a.id, b.id], { mode: "any" })).toEqual({ timedOut: false, aborted: false });
		expect(isSettled(m.get(a.id)!.state)).toBe(true);
		expect(await m.waitFor([b.id], { mode: "all", timeoutMs: 30 })).toEqual({ timedOut: true, aborted: false });
		const controller = new AbortController();
		setTimeout(() => controller.abort(), 20);
		expect(await m.waitFor([b.id], { mode: "all", signal: controller.signal })).toEqual({
			timedOut: false,
			aborted: true,
		});
		expect(m.get(b.id)!.state).toBe("running");
	});

	it("cancelling a queued child settles it at once; shutdown settles every running one", async () => {
		const settled: string[] = [];
		const backend = new FakeBackend(() => ({ hang: true }));
		const m = make(backend, { ...LIMITS, maxConcurrent: 1 }, (k) => settled.push(k));
		const [a, b] = [m.spawn(request("a")), m.spawn(request("b"))];
		await m.cancel([b.id]);
		expect(m.get(b.id)!.state).toBe("cancelled");
		expect(backend.prompts.map((p) => p.text)).toEqual(["a"]);
		await new Promise((r) => setTimeout(r, 5));
		await m.shutdown();
		expect(m.get(a.id)!.state).toBe("cancelled");
		expect(m.ledger.latest(a.id)!.text).toContain("shut down");
		expect(settled.sort()).toEqual([`${a.id}#1`, `${b.id}#1`]);
	});

	it("send refuses empty or blank text and says what to pass", async () => {
		const backend = new FakeBackend(() => ({ delayMs: 1 }));
		const m = make(backend);
		const c = m.spawn(request("x"));
		await m.waitFor([c.id], { mode: "all" });
		for (const text of ["", "   ", "\n\t"]) await expect(m.send(c.id, text)).rejects.toThrow(EMPTY_SEND_TEXT_ERROR);
		expect(EMPTY_SEND_TEXT_ERROR).toMatch(/text must not be empty: pass the message/);
		expect(backend.prompts).toHaveLength(1);
		expect(m.get(c.id)!.run).toBe(1);
	});
});

describe("a failing settle hook", () => {
	it("does not stall waiters or the queue: the result stays in the ledger", async () => {
		const backend = new FakeBackend(() => ({ delayMs: 5, final: { text: "ok" } }));
		const m = new SubagentManager(backend, { ...LIMITS, maxConcurrent: 1 });
		m.subscribe((event) => {
			if (event.type === "settled") throw new Error("hook broke");
		});
		managers.push(m);
		const errors: unknown[] = [];
		const original = console.error;
		console.error = (...args: unknown[]) => errors.push(args.join(" "));
		try {
			const [a, b] = [m.spawn(request("a")), m.spawn(request("b"))];
			await m.waitFor([a.id, b.id], { mode: "all" });
			expect(m.ledger.pending().map((r) => r.key)).toEqual([`${a.id}#1`, `${b.id}#1`]);
		} finally {
			console.error = original;
		}
		expect(errors.join("\n")).toContain("hook broke");
	});
});

describe("the read model", () => {
	it("publishes changes and each settled run to subscribers before waits resume, until they unsubscribe", async () => {
		const backend = new FakeBackend(() => ({ delayMs: 5, final: { text: "ok" } }));
		const m = make(backend);
		const heard: string[] = [];
		const stop = m.subscribe((event) => {
			// A settled run's subscribers see it in the ledger and the child settled, before any wait resumes.
			if (event.type === "settled")
				heard.push(`settled ${event.result.key} ${event.child.state} ${m.ledger.latest(event.child.id)?.delivery}`);
			else if (event.type !== "changed")
				heard.push(`${event.type} ${event.child.id}#${event.run} ${event.child.state}`);
			else
				heard.push(
					`changed ${m
						.list()
						.map((c) => c.state)
						.join(",")}`,
				);
		});
		const a = m.spawn(request("a"));
		// The run is recorded as queued before spawn() returns, and as started once it runs.
		expect(heard[0]).toBe(`queued ${a.id}#1 queued`);
		await m.waitFor([a.id], { mode: "all" });
		heard.push("wait resumed");
		expect(heard[1]).toBe("changed starting");
		expect(heard.indexOf(`started ${a.id}#1 running`)).toBe(heard.indexOf("changed running") - 1);
		expect(heard.slice(-3)).toEqual([`settled ${a.id}#1 completed pending`, "changed completed", "wait resumed"]);
		stop();
		const before = heard.length;
		const b = m.spawn(request("b"));
		await m.waitFor([b.id], { mode: "all" });
		expect(heard).toHaveLength(before);
	});
});

/** A child as restoreFromSession rebuilds it from the parent's session entries. */
function restored(run: number, sessionFile?: string): ChildRecord {
	return {
		id: "sa-2",
		name: "old task",
		prompt: "old task",
		model: "mock/m",
		tools: ["read", "bash"],
		cwd: "/w",
		thinking: "low",
		context: "fork",
		state: "completed",
		run,
		createdAt: 1,
		queuedAt: 1,
		turns: 3,
		outputTokens: 0,
		partialText: "",
		finalText: `answer ${run}`,
		sessionFile,
		recentTools: [],
	};
}

const result = (run: number) => ({
	key: `sa-2#${run}`,
	id: "sa-2",
	run,
	text: `answer ${run}`,
	state: "completed" as const,
	settledAt: run,
	delivery: "wait" as const,
});

describe("children restored from an earlier process", () => {
	it("send reopens the child's session file and runs the next run number with the given model and framing", async () => {
		const backend = new FakeBackend(() => ({ final: { text: "resumed answer" } }));
		const m = make(backend);
		m.restore(restored(1, "/sessions/old-sa-2.jsonl"), result(1));
		m.restore(restored(2, "/sessions/old-sa-2.jsonl"), result(2));
		expect(m.get("sa-2")!.run).toBe(2);
		expect(m.isRestored("sa-2")).toBe(true);
		const model = { id: "m" };
		expect(await m.send("sa-2", "and now the tests", { model, systemAppend: ["FRAMING"] })).toBe("rerun");
		await m.waitFor(["sa-2"], { mode: "all" });
		expect(backend.created).toEqual([
			{
				id: "sa-2",
				cwd: "/w",
				tools: ["read", "bash"],
				thinking: "low",
				model,
				systemAppend: ["FRAMING"],
				sessionFile: "/sessions/old-sa-2.jsonl",
				// Its way to ask the parent (ask_parent), bound to this child.
				ask: expect.any(Function),
			},
		]);
		expect(backend.prompts).toEqual([{ id: "sa-2", text: "and now the tests" }]);
		expect(m.isRestored("sa-2")).toBe(false);
		const latest = m.ledger.latest("sa-2")!;
		expect([latest.key, latest.text, latest.delivery]).toEqual(["sa-2#3", "resumed answer", "pending"]);
		// A new spawn does not reuse the restored id.
		expect(m.spawn(request("y")).id).toBe("sa-3");
	});

	it("a restored child without a session file cannot continue and says what to do", async () => {
		const m = make(new FakeBackend(() => ({})));
		m.restore(restored(1), result(1));
		await expect(m.send("sa-2", "more")).rejects.toThrow(restoredSendError({ id: "sa-2", name: "old task" }));
		expect(m.get("sa-2")!.state).toBe("completed");
	});
});

/**
 * Run steps in the manager: a structured child's one correction turn inside the same run, a conclude step
 * that runs exactly once however the run settles (completed, cancelled while running, cancelled while
 * queued), and step sets composed in order with their extras merged.
 */
import { describe, expect, it } from "vitest";
import { structuredSteps } from "../../extensions/subagents/checkable/checkable.ts";
import { composeSteps, type RunSteps } from "../../extensions/subagents/checkable/run-steps.ts";
import { compileOutputSchema } from "../../extensions/subagents/checkable/schema.ts";
import { type SpawnRequest, SubagentManager } from "../../extensions/subagents/children/manager.ts";
import { ControlledBackend, FAKE_LIMITS } from "./subagents-fakes.ts";

const request = (extra: Partial<SpawnRequest> = {}): SpawnRequest => ({
	prompt: "task",
	modelLabel: "mock/mock-model",
	model: {},
	tools: ["read"],
	cwd: "/",
	context: "fresh",
	systemAppend: [],
	...extra,
});

const until = async (cond: () => boolean) => {
	for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
	expect(cond()).toBe(true);
};

function schemaSteps(): RunSteps {
	const c = compileOutputSchema({ type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] });
	if (!c.ok) throw new Error(c.error);
	return structuredSteps(c.schema);
}

describe("run steps in the manager", () => {
	it("a structured child gets exactly one correction prompt in the same run; the JSON becomes its result", async () => {
		const backend = new ControlledBackend();
		const manager = new SubagentManager(backend, FAKE_LIMITS);
		const child = manager.spawn(request({ steps: schemaSteps(), structured: true }));
		await until(() => backend.started(child.id));
		backend.finish(child.id, "prose first");
		await until(() => backend.prompts.length === 2);
		expect(backend.prompts[1].text).toContain("Your final message does not end with a JSON value.");
		expect(child.state).toBe("running");
		backend.finish(child.id, '{"ok": true}');
		await until(() => child.state === "completed");
		const result = manager.ledger.latest(child.id)!;
		expect(result.text).toBe('{"ok": true}');
		expect(result.verdict).toBe("output valid");
		expect(result.extras).toEqual({ structured: { status: "valid", value: { ok: true }, corrections: 1 } });
		expect(backend.created.length).toBe(1);
	});

	it("still invalid after the correction: reported invalid with the errors, no third prompt", async () => {
		const backend = new ControlledBackend();
		const manager = new SubagentManager(backend, FAKE_LIMITS);
		const child = manager.spawn(request({ steps: schemaSteps() }));
		await until(() => backend.started(child.id));
		backend.finish(child.id, '{"ok": "yes"}');
		await until(() => backend.prompts.length === 2);
		expect(backend.prompts[1].text).toContain("- /ok: must be boolean");
		backend.finish(child.id, '{"ok": "still no"}');
		await until(() => child.state === "completed");
		expect(backend.prompts.length).toBe(2);
		const result = manager.ledger.latest(child.id)!;
		expect(result.verdict).toBe("output INVALID");
		expect(result.text).toMatch(
			/^Invalid structured output: .* after one correction turn\.\nErrors:\n- \/ok: must be boolean/,
		);
		expect(result.text.endsWith('Raw answer:\n{"ok": "still no"}')).toBe(true);
	});

	it("conclude runs once per run, whoever settles it: completed, cancelled while running, cancelled while queued", async () => {
		const calls: string[] = [];
		const steps = (tag: string): RunSteps => ({
			conclude: async (state, result) => {
				calls.push(`${tag}:${state}`);
				await new Promise((r) => setTimeout(r, 20));
				return { ...result, text: `CHANGES ${tag}\n\n${result.text}` };
			},
		});
		const backend = new ControlledBackend();
		const manager = new SubagentManager(backend, { ...FAKE_LIMITS, maxConcurrent: 2 });
		const done = manager.spawn(request({ steps: steps("a") }));
		const cancelled = manager.spawn(request({ steps: steps("b") }));
		const queued = manager.spawn(request({ steps: steps("c") }));
		expect(queued.state).toBe("queued");
		await until(() => backend.started(done.id) && backend.started(cancelled.id));
		backend.finish(done.id, "answer a");
		await manager.cancel([cancelled.id, queued.id]);
		await until(() => done.state === "completed");
		expect(calls.sort()).toEqual(["a:completed", "b:cancelled", "c:cancelled"]);
		expect(manager.ledger.latest(done.id)!.text).toBe("CHANGES a\n\nanswer a");
		expect(manager.ledger.latest(cancelled.id)!.text).toMatch(/^CHANGES b\n\nCancelled: /);
		expect(manager.ledger.latest(queued.id)!.text).toMatch(/^CHANGES c\n\nCancelled: /);
	});

	it("a failing conclude step still settles the run, with a note first", async () => {
		const backend = new ControlledBackend();
		const manager = new SubagentManager(backend, FAKE_LIMITS);
		const child = manager.spawn(
			request({
				steps: {
					conclude: async () => {
						throw new Error("disk gone");
					},
				},
			}),
		);
		await until(() => backend.started(child.id));
		backend.finish(child.id, "answer");
		await until(() => child.state === "completed");
		expect(manager.ledger.latest(child.id)!.text).toBe(
			"[could not summarise this child's changes: disk gone]\n\nanswer",
		);
	});

	it("composeSteps runs each kind in order and merges extras", async () => {
		const order: string[] = [];
		const steps = composeSteps([
			{
				beforeRun: async () => void order.push("before-1"),
				review: async (t) => ({
					text: `${t}+r1`,
					extras: { structured: { status: "valid", value: 1, corrections: 0 } },
				}),
			},
			{
				beforeRun: async () => void order.push("before-2"),
				conclude: async (_s, r) => ({ ...r, text: `c2+${r.text}` }),
			},
		])!;
		await steps.beforeRun!();
		const reviewed = await steps.review!("t", async () => ({ ok: true, text: "" }));
		const concluded = await steps.conclude!("completed", reviewed);
		expect(order).toEqual(["before-1", "before-2"]);
		expect(concluded.text).toBe("c2+t+r1");
		expect(concluded.extras?.structured).toEqual({ status: "valid", value: 1, corrections: 0 });
		expect(composeSteps([])).toBeUndefined();
	});
});

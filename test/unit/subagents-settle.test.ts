/**
 * Results in a single-shot run on Pi 1.x (settle.ts): the pure decision (wait, deliver, or let Pi settle)
 * as a property over every input, and the boundary handler on a fake world — it waits for the children,
 * returns ONE message draft plus its delivery record with `continue`, exactly once, and the automatic
 * `trigger` path stays out of such runs.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { singleShotMode } from "../../extensions/shared/host/pi-host.ts";
import { deliverPending, RESULT_MESSAGE_TYPE } from "../../extensions/subagents/delivery/delivery.ts";
import { DELIVERED_ENTRY } from "../../extensions/subagents/delivery/persistence.ts";
import {
	planSettle,
	SETTLE_MAX_ROUNDS,
	SETTLE_WAIT_SLACK_MS,
	type SettleInput,
	type SettleState,
	settleSingleShot,
} from "../../extensions/subagents/delivery/settle.ts";
import { type ChildState, isSettled } from "../../extensions/subagents/domain/records.ts";
import * as P from "../../extensions/subagents/prompt/common.ts";
import { childRecord, type FakeWorld, spawnChild, until, useFakeWorlds } from "./subagents-fakes.ts";

const STATES: ChildState[] = ["queued", "starting", "running", "completed", "incomplete", "failed", "cancelled"];

const inputs = fc.record({
	mode: fc.constantFrom<SettleInput["mode"]>("print", "json", undefined),
	depth: fc.nat({ max: 3 }),
	outcome: fc.constantFrom<SettleInput["outcome"]>("completed", "aborted", "error", undefined),
	closing: fc.boolean(),
	rounds: fc.nat({ max: SETTLE_MAX_ROUNDS + 2 }),
	children: fc.array(
		fc.record({ id: fc.integer({ min: 1, max: 99 }).map((n) => `sa-${n}`), state: fc.constantFrom(...STATES) }),
		{ maxLength: 6 },
	),
	pending: fc.nat({ max: 5 }),
	maxRunSeconds: fc.integer({ min: 1, max: 7200 }),
});

describe("planSettle", () => {
	it("waits only in a top-level single-shot run that completed, within its rounds, for exactly the unsettled children", () => {
		fc.assert(
			fc.property(inputs, (input) => {
				const plan = planSettle(input);
				const eligible =
					input.mode !== undefined &&
					input.depth === 0 &&
					!input.closing &&
					(input.outcome === undefined || input.outcome === "completed") &&
					input.rounds < SETTLE_MAX_ROUNDS;
				const unsettled = input.children.filter((c) => !isSettled(c.state)).map((c) => c.id);
				if (!eligible) expect(plan.act).toBe("none");
				else if (unsettled.length > 0)
					expect(plan).toEqual({
						act: "wait",
						ids: unsettled,
						timeoutMs: input.maxRunSeconds * 1000 + SETTLE_WAIT_SLACK_MS,
					});
				else expect(plan.act).toBe(input.pending > 0 ? "deliver" : "none");
			}),
		);
	});

	it("names why it lets Pi settle", () => {
		const base: SettleInput = {
			mode: "print",
			depth: 0,
			outcome: "completed",
			closing: false,
			rounds: 0,
			children: [],
			pending: 0,
			maxRunSeconds: 60,
		};
		expect(planSettle({ ...base, mode: undefined })).toEqual({ act: "none", why: "has-ui" });
		expect(planSettle({ ...base, depth: 1 })).toEqual({ act: "none", why: "child" });
		expect(planSettle({ ...base, closing: true })).toEqual({ act: "none", why: "closing" });
		expect(planSettle({ ...base, outcome: "error" })).toEqual({ act: "none", why: "outcome" });
		expect(planSettle({ ...base, rounds: SETTLE_MAX_ROUNDS, pending: 1 })).toEqual({ act: "none", why: "rounds" });
		expect(planSettle(base)).toEqual({ act: "none", why: "nothing" });
	});
});

describe("singleShotMode", () => {
	it("is the mode of Pi 1.x's print and json runs only", () => {
		expect(singleShotMode({ mode: "print" })).toBe("print");
		expect(singleShotMode({ mode: "json" })).toBe("json");
		expect(singleShotMode({ mode: "tui" })).toBeUndefined();
		expect(singleShotMode({ mode: "rpc" })).toBeUndefined();
		expect(singleShotMode({ hasUI: false })).toBeUndefined(); // Pi 0.73: no ctx.mode
		expect(singleShotMode(undefined)).toBeUndefined();
		const throwing = Object.defineProperty({}, "mode", {
			get() {
				throw new Error("stale context");
			},
		});
		expect(singleShotMode(throwing)).toBeUndefined();
	});
});

describe("spawn text in a 1.x single-shot run", () => {
	it("says the run waits (with its bound) and never that the child is stopped", () => {
		const text = P.spawnedText(childRecord({ id: "sa-3", name: "t" }), { settle: 90 });
		expect(text).toContain("if your run would end while it still runs, the run waits for it (at most 1m 30s");
		expect(text).toContain("subagents.maxRunSeconds");
		expect(text).toContain('subagent_wait(ids=["sa-3"])');
		expect(text).not.toContain("stopped");
	});
});

const newWorld = useFakeWorlds();

function printWorld(): FakeWorld {
	const world = newWorld();
	(world.ctx as { mode?: string }).mode = "print";
	return world;
}

function spawn(world: FakeWorld, prompt: string) {
	return spawnChild(world, { prompt, tools: ["read"] });
}

/** A child of `world` that ran `prompt` and answered `text`: its result is owed to the parent. */
async function owedResult(world: FakeWorld, prompt: string, text: string) {
	const child = spawn(world, prompt);
	await until(() => world.backend.started(child.id));
	world.backend.finish(child.id, text);
	await until(() => world.manager.ledger.pending().length === 1);
	return child;
}

const event = (entries: unknown[] = []) => ({ entries, continue: false, outcome: "completed" as const });

describe("settleSingleShot", () => {
	it("waits for running children, then returns one batch after earlier drafts, with its delivery record and continue", async () => {
		const world = printWorld();
		const a = spawn(world, "task a");
		const b = spawn(world, "task b");
		await until(() => world.backend.started(a.id) && world.backend.started(b.id));
		const state: SettleState = { rounds: 0 };
		const earlier = { type: "custom", customType: "someone-else", data: 1 };
		const settling = settleSingleShot(world.services, state, event([earlier]), world.ctx);
		let done = false;
		void settling.then(() => {
			done = true;
		});
		world.backend.finish(a.id, "RESULT-A");
		await new Promise((r) => setTimeout(r, 30));
		expect(done).toBe(false); // b still runs
		world.backend.finish(b.id, "RESULT-B");
		const result = await settling;
		expect(result?.continue).toBe(true);
		const [kept, message, record] = result!.entries as Array<Record<string, unknown>>;
		expect(kept).toBe(earlier);
		expect(message).toMatchObject({ type: "custom_message", customType: RESULT_MESSAGE_TYPE, display: true });
		expect(String(message.content)).toContain(P.settleDeliveryHeader(2));
		expect(String(message.content)).toContain("RESULT-A");
		expect(String(message.content)).toContain("RESULT-B");
		expect(record).toEqual({
			type: "custom",
			customType: DELIVERED_ENTRY,
			data: { keys: ["sa-1#1", "sa-2#1"], by: "auto" },
		});
		expect(state.rounds).toBe(1);
		expect(world.manager.ledger.pending()).toEqual([]);
		// Exactly once: nothing left for a second boundary, the automatic path, or a wait.
		expect(await settleSingleShot(world.services, state, event(), world.ctx)).toBeUndefined();
		expect(world.sent).toEqual([]);
	});

	it("does nothing with a UI or on Pi 0.73 (no ctx.mode): the automatic path delivers as before", async () => {
		const world = newWorld();
		await owedResult(world, "task a", "RESULT-A");
		expect(await settleSingleShot(world.services, { rounds: 0 }, event(), world.ctx)).toBeUndefined();
		expect(await deliverPending(world.services, "trigger")).toBe(true);
		expect(world.sent.length).toBe(1);
	});

	it("keeps the automatic trigger out of a 1.x single-shot run (a later turn would race the exit)", async () => {
		const world = printWorld();
		await owedResult(world, "task a", "RESULT-A");
		expect(await deliverPending(world.services, "trigger")).toBe(true);
		expect(world.sent).toEqual([]);
		expect(world.manager.ledger.pending().length).toBe(1); // still owed: the boundary or `pi -c` hands it over
	});

	it("stops waiting at its bound: what still runs is cut with the reason and delivered", async () => {
		const world = printWorld();
		world.config = {
			...world.config,
			subagents: { ...world.config.subagents, maxRunSeconds: 0.001 },
		};
		const a = spawn(world, "task a");
		await until(() => world.backend.started(a.id));
		const result = await settleSingleShot(world.services, { rounds: 0 }, event(), world.ctx);
		expect(world.manager.get(a.id)?.state).toBe("cancelled");
		expect(String((result!.entries![0] as { content: string }).content)).toContain("stopped waiting after");
	}, 20_000);

	it("a shutdown during the wait delivers nothing: the results stay owed for the next start", async () => {
		const world = printWorld();
		const a = spawn(world, "task a");
		await until(() => world.backend.started(a.id));
		const state: SettleState = { rounds: 0 };
		const settling = settleSingleShot(world.services, state, event(), world.ctx);
		await until(() => state.abort !== undefined);
		world.closing = true;
		state.abort!.abort();
		await world.manager.shutdown();
		expect(await settling).toBeUndefined();
		expect(world.manager.ledger.pending().map((r) => r.key)).toEqual(["sa-1#1"]);
	});
});

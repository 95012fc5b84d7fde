/**
 * The subagents extension's lifecycle object (adapter/lifecycle.ts) without Pi: the Pi-version timing paths
 * of automatic delivery (0.73: agent_end, then polls until the parent is idle; 1.x: agent_settled delivers at
 * once), a single-shot run leaving the trigger path alone, what a reload keeps and the end of the process
 * stops, and the spawn tool registered again only when its description changed.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { ExtensionHost } from "../../extensions/shared/host/bootstrap.ts";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { loadLater } from "../../extensions/subagents/adapter/later.ts";
import { SubagentsLifecycle } from "../../extensions/subagents/adapter/lifecycle.ts";
import { sessionHomes } from "../../extensions/subagents/children/home.ts";
import { RESULT_MESSAGE_TYPE } from "../../extensions/subagents/delivery/delivery.ts";
import { resultKey } from "../../extensions/subagents/domain/ledger.ts";
import { childRecord, tempRoot, until } from "./subagents-fakes.ts";

// These tests make managers directly: the children's code, loaded on first use in Pi, is loaded first.
beforeAll(() => loadLater());

type Sent = { message: { customType?: string; content?: unknown }; options?: unknown };

function setup(depth = 0) {
	const root = tempRoot("subagents-lifecycle");
	const sent: Sent[] = [];
	const spawnDescriptions: string[] = [];
	const pi = {
		sendMessage: (message: Sent["message"], options?: unknown) => sent.push({ message, options }),
		appendEntry: () => undefined,
		getThinkingLevel: () => "off",
	};
	const host = {
		name: "subagents",
		config: () => DEFAULT_CONFIG,
		onConfig: () => undefined,
		agentDir: () => join(root, "agent"),
		store: () => new ArtifactStore({ agentDir: join(root, "agent") }),
	} as unknown as ExtensionHost;
	const life = new SubagentsLifecycle({
		pi: pi as never,
		depth,
		host,
		nested: () => () => undefined,
		registerSpawn: (description) => spawnDescriptions.push(description),
	});
	let idle = true;
	const sessionFile = join(root, "sessions", "parent.jsonl");
	const ctx = {
		cwd: root,
		hasUI: false,
		mode: undefined as string | undefined,
		modelRegistry: { getAll: () => [], find: () => undefined },
		sessionManager: {
			getSessionDir: () => join(root, "sessions"),
			getSessionFile: () => sessionFile,
			getSessionId: () => "parent",
			getBranch: () => [],
			getEntries: () => [],
		},
		isIdle: () => idle,
		getContextUsage: () => undefined,
	};
	/** A settled, undelivered result in this session's ledger (as a restored child leaves one). */
	const owe = (id = "sa-1") => {
		life.state.enter(ctx as never);
		const manager = life.services.children(ctx as never);
		manager.restore(childRecord({ id, state: "completed", finalText: "done" }), {
			key: resultKey(id, 1),
			id,
			run: 1,
			text: `result of ${id}`,
			state: "completed",
			settledAt: 1,
			delivery: "pending",
		});
		return manager;
	};
	const delivered = () => sent.filter((s) => s.message.customType === RESULT_MESSAGE_TYPE);
	const cleanup = () => {
		for (const [key, home] of sessionHomes())
			if (home.manager === life.services.existingChildren()) sessionHomes().delete(key);
	};
	return { life, ctx, sent, delivered, owe, spawnDescriptions, setIdle: (v: boolean) => (idle = v), cleanup };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Run `fn` on a fresh top-level lifecycle; the process "ends" afterwards (its children stopped), pass or fail. */
async function withLifecycle(fn: (t: ReturnType<typeof setup>) => Promise<void>): Promise<void> {
	const t = setup();
	try {
		await fn(t);
	} finally {
		await t.life.sessionShutdown({ reason: "quit" });
		t.cleanup();
	}
}

describe("the subagents lifecycle object", () => {
	it("0.73: after agent_end it polls while the parent winds down, and delivers once it is idle", () =>
		withLifecycle(async (t) => {
			const manager = t.owe();
			t.setIdle(false);
			t.life.agentEnd(t.ctx as never);
			await sleep(200);
			expect(t.delivered()).toHaveLength(0);
			expect(manager.ledger.pending()).toHaveLength(1);
			t.setIdle(true);
			await until(() => t.delivered().length > 0);
			expect(t.delivered()).toHaveLength(1);
			expect(String(t.delivered()[0].message.content)).toContain("result of sa-1");
			expect(t.delivered()[0].options).toEqual({ deliverAs: "followUp", triggerTurn: true });
			expect(manager.ledger.pending()).toHaveLength(0);
		}));

	it("1.x: agent_settled delivers at once, exactly once", () =>
		withLifecycle(async (t) => {
			t.owe();
			t.life.agentSettled(t.ctx as never);
			await until(() => t.delivered().length > 0);
			t.life.agentSettled(t.ctx as never);
			await sleep(100);
			expect(t.delivered()).toHaveLength(1);
		}));

	it("a single-shot run (print mode) leaves the trigger path alone: its settle step delivers instead", () =>
		withLifecycle(async (t) => {
			const manager = t.owe();
			t.ctx.mode = "print";
			t.life.agentSettled(t.ctx as never);
			t.life.agentEnd(t.ctx as never);
			await sleep(200);
			expect(t.delivered()).toHaveLength(0);
			expect(manager.ledger.pending()).toHaveLength(1);
		}));

	it("a reload lets the children go on in their home; the end of the process stops them and clears the homes", async () => {
		const t = setup();
		const manager = t.owe();
		const running = childRecord({ id: "sa-2", state: "running" });
		manager.restore(running);
		await t.life.sessionShutdown({ reason: "reload" });
		expect(t.life.services.existingChildren()).toBeUndefined();
		expect([...sessionHomes().values()].some((h) => h.manager === manager)).toBe(true);
		// A new instance of the same session takes them over at session start.
		const again = setup();
		try {
			expect(again.life.state.adopt(t.ctx as never)).toBe(true);
			expect(again.life.services.existingChildren()).toBe(manager);
			await again.life.sessionShutdown({ reason: "quit" });
			expect([...sessionHomes().values()].some((h) => h.manager === manager)).toBe(false);
			expect(again.life.services.existingChildren()).toBeUndefined();
			expect(again.life.services.closing()).toBe(true);
		} finally {
			again.cleanup();
			t.cleanup();
		}
	});

	it("registers subagent_spawn again only when its description changed", () => {
		const t = setup();
		t.life.describeSpawn("one");
		t.life.describeSpawn("one");
		t.life.describeSpawn("two");
		t.life.describeSpawn("two");
		expect(t.spawnDescriptions).toEqual(["one", "two"]);
	});
});

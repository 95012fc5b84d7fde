/**
 * subagents loads the code a start does not need on first use (adapter/later.ts, docs/startup.md "Loaded on
 * first use"): a session start with no children and no records of any loads none of it and makes no manager;
 * a session whose branch holds records of children loads it and restores them; the adapter loads it for the
 * first tool call (index.ts), and the tool then makes the manager.
 * Runs first in its own module state (vitest isolates each file), so "not loaded" is observable.
 */
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ExtensionHost } from "../../extensions/shared/host/bootstrap.ts";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { laterIfLoaded, loadLater } from "../../extensions/subagents/adapter/later.ts";
import { hasChildRecords, SubagentsLifecycle } from "../../extensions/subagents/adapter/lifecycle.ts";
import { sessionHomes } from "../../extensions/subagents/children/home.ts";
import { RUN_ENTRY, SETTLED_ENTRY } from "../../extensions/subagents/domain/entries.ts";
import { SUBAGENT_TOOLS } from "../../extensions/subagents/tools/table.ts";
import { tempRoot } from "./subagents-fakes.ts";

function setup(branch: unknown[]) {
	const root = tempRoot("subagents-later");
	const host = {
		name: "subagents",
		config: () => DEFAULT_CONFIG,
		onConfig: () => undefined,
		agentDir: () => join(root, "agent"),
		store: () => new ArtifactStore({ agentDir: join(root, "agent") }),
	} as unknown as ExtensionHost;
	const pi = {
		sendMessage: () => undefined,
		appendEntry: () => undefined,
		getThinkingLevel: () => "off",
		getActiveTools: () => ["subagent_spawn"],
		setActiveTools: () => undefined,
		getAllTools: () => [],
	};
	const life = new SubagentsLifecycle({
		pi: pi as never,
		depth: 0,
		host,
		nested: () => () => undefined,
		registerSpawn: () => undefined,
	});
	const ctx = {
		cwd: root,
		hasUI: false,
		modelRegistry: { getAll: () => [], find: () => undefined },
		sessionManager: {
			getSessionDir: () => join(root, "sessions"),
			getSessionFile: () => join(root, "sessions", "parent.jsonl"),
			getSessionId: () => "parent",
			getBranch: () => branch,
			getEntries: () => branch,
		},
		isIdle: () => true,
		getContextUsage: () => undefined,
	};
	const stop = async () => {
		await life.sessionShutdown({ reason: "quit" });
		for (const [key, home] of sessionHomes())
			if (home.manager === life.services.existingChildren()) sessionHomes().delete(key);
	};
	return { life, ctx, stop };
}

describe("subagents' code that a start does not need", () => {
	it("a start with no records of children loads none of it and makes no manager", async () => {
		const t = setup([{ type: "message", message: { role: "user", content: "hi" } }]);
		try {
			await t.life.sessionStart(t.ctx as never);
			expect(laterIfLoaded()).toBeUndefined();
			expect(t.life.services.existingChildren()).toBeUndefined();
		} finally {
			await t.stop();
		}
		expect(laterIfLoaded()).toBeUndefined();
	});

	it("loaded as the adapter loads it for a tool call, the tool makes the manager", async () => {
		const t = setup([]);
		try {
			await t.life.sessionStart(t.ctx as never);
			expect(laterIfLoaded()).toBeUndefined();
			const list = SUBAGENT_TOOLS.find((tool) => tool.name === "subagent_list");
			if (!list) throw new Error("no subagent_list in the table");
			const code = await loadLater();
			expect(laterIfLoaded()).toBe(code);
			const reply = await list.run(
				code,
				t.life.services,
				{},
				{
					signal: undefined,
					onUpdate: () => undefined,
					ctx: t.ctx as never,
				},
			);
			expect(JSON.stringify(reply.content)).toContain("text");
			expect(laterIfLoaded()).toBeDefined();
			expect(t.life.services.existingChildren()).toBeDefined();
		} finally {
			await t.stop();
		}
	});

	it("a start whose branch records a child restores it (the code loaded for it)", async () => {
		const settled = {
			type: "custom",
			customType: SETTLED_ENTRY,
			data: {
				key: "sa-1#1",
				id: "sa-1",
				run: 1,
				state: "completed",
				text: "done",
				task: "t",
				agent: "worker",
				settledAt: 1,
			},
		};
		const t = setup([settled]);
		try {
			await t.life.sessionStart(t.ctx as never);
			expect(laterIfLoaded()).toBeDefined();
			expect(
				t.life.services
					.existingChildren()
					?.list()
					.map((c) => c.id),
			).toEqual(["sa-1"]);
		} finally {
			await t.stop();
		}
	});

	it("hasChildRecords: true exactly when a custom entry is a run, result or question record", () => {
		expect(hasChildRecords([])).toBe(false);
		expect(hasChildRecords([{ type: "custom", customType: RUN_ENTRY, data: {} }])).toBe(true);
		expect(hasChildRecords([{ type: "custom_message", customType: RUN_ENTRY }])).toBe(false);
		expect(hasChildRecords([null, 3, "x", { type: "custom" }])).toBe(false);
		fc.assert(
			fc.property(
				fc.array(
					fc.record({
						type: fc.constantFrom("custom", "message", "custom_message"),
						customType: fc.constantFrom(RUN_ENTRY, SETTLED_ENTRY, "subagent-question", "subagent-delivered", "other"),
					}),
				),
				(entries) => {
					const expected = entries.some(
						(e) =>
							e.type === "custom" && ["subagent-run", "subagent-settled", "subagent-question"].includes(e.customType),
					);
					expect(hasChildRecords(entries)).toBe(expected);
				},
			),
		);
	});
});

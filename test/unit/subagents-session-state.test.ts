/**
 * The adapter's state behind the services: the configuration is read once (on the first context that
 * asks, or when the bootstrap reads it), contexts are remembered, the manager is made once per session
 * and handed to the adapter before any spawn, dropped at shutdown and made afresh after; the closing flag
 * is the adapter's alone.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { ExtensionHost } from "../../extensions/shared/host/bootstrap.ts";
import { DEFAULT_CONFIG, type HeadroomConfig } from "../../extensions/shared/host/config.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { loadLater } from "../../extensions/subagents/adapter/later.ts";
import { createSessionState } from "../../extensions/subagents/adapter/session-state.ts";
import type { SubagentManager } from "../../extensions/subagents/children/manager.ts";
import { tempRoot } from "./subagents-fakes.ts";

// These tests make managers directly: the children's code, loaded on first use in Pi, is loaded first.
beforeAll(() => loadLater());

function fakeHost(root: string, config: HeadroomConfig) {
	const reads: unknown[] = [];
	const listeners: Array<(c: HeadroomConfig, ctx: never) => void> = [];
	const host = {
		name: "subagents",
		config: (ctx?: unknown) => {
			reads.push(ctx);
			return config;
		},
		onConfig: (listener: (c: HeadroomConfig, ctx: never) => void) => listeners.push(listener),
		agentDir: () => join(root, "agent"),
		store: () => new ArtifactStore({ agentDir: join(root, "agent") }),
	} as unknown as ExtensionHost;
	const readNow = (c: HeadroomConfig) => {
		for (const listener of listeners) listener(c, undefined as never);
	};
	return { host, reads, readNow };
}

/** The session state of a top-level adapter over `host`; `onChildren` sees each manager made. */
function stateOver(host: ExtensionHost, onChildren: (manager: SubagentManager) => void = () => {}) {
	return createSessionState({ pi: {} as never, depth: 0, host, nested: () => () => undefined, onChildren });
}

function context(root: string, label: string) {
	return {
		label,
		cwd: root,
		hasUI: false,
		modelRegistry: { getAll: () => [], find: () => undefined },
		sessionManager: { getSessionDir: () => join(root, "sessions") },
	} as never;
}

describe("the adapter's session state", () => {
	it("reads the configuration once, on the first context entered; remember reads nothing", () => {
		const root = tempRoot("subagents-state");
		const configured = { ...DEFAULT_CONFIG, subagents: { ...DEFAULT_CONFIG.subagents, maxConcurrent: 7 } };
		const { host, reads } = fakeHost(root, configured);
		const state = stateOver(host);
		const { services } = state;
		expect(services.config()).toBe(DEFAULT_CONFIG);
		const first = context(root, "first");
		state.remember(first);
		expect(reads).toHaveLength(0);
		expect(services.context()).toBe(first);
		const second = context(root, "second");
		state.enter(second);
		state.enter(context(root, "third"));
		expect(reads).toEqual([second]);
		expect(services.config()).toBe(configured);
		expect(services.agentDir()).toBe(join(root, "agent"));
		expect(services.store()).toBe(services.store());
	});

	it("takes the configuration the bootstrap read, without reading it again", () => {
		const root = tempRoot("subagents-state");
		const { host, reads, readNow } = fakeHost(root, DEFAULT_CONFIG);
		const state = stateOver(host);
		const read = { ...DEFAULT_CONFIG, subagents: { ...DEFAULT_CONFIG.subagents, maxDepth: 3 } };
		readNow(read);
		state.enter(context(root, "after"));
		expect(reads).toHaveLength(0);
		expect(state.services.config()).toBe(read);
	});

	it("makes the manager once, hands it to the adapter first, and a new one after it was dropped", async () => {
		const root = tempRoot("subagents-state");
		const { host } = fakeHost(root, DEFAULT_CONFIG);
		const made: SubagentManager[] = [];
		const state = stateOver(host, (m) => {
			expect(m.list()).toEqual([]);
			made.push(m);
		});
		const { services } = state;
		expect(services.existingChildren()).toBeUndefined();
		const ctx = context(root, "ctx");
		const manager = services.children(ctx);
		expect(services.children(ctx)).toBe(manager);
		expect(services.existingChildren()).toBe(manager);
		expect(services.context()).toBe(ctx);
		expect(made).toEqual([manager]);
		expect(manager.maxConcurrent).toBe(DEFAULT_CONFIG.subagents.maxConcurrent);
		await manager.shutdown();
		expect(state.dropChildren()).toBe(manager);
		expect(services.existingChildren()).toBeUndefined();
		const next = services.children(ctx);
		expect(next).not.toBe(manager);
		expect(made).toEqual([manager, next]);
		await next.shutdown();
	});

	it("reports the closing flag only the adapter sets", () => {
		const root = tempRoot("subagents-state");
		const { host } = fakeHost(root, DEFAULT_CONFIG);
		const state = stateOver(host);
		expect(state.services.closing()).toBe(false);
		state.setClosing(true);
		expect(state.services.closing()).toBe(true);
		state.setClosing(false);
		expect(state.services.closing()).toBe(false);
	});
});

describe("children in their process-wide home", () => {
	const sessionContext = (root: string, file: string) =>
		({
			cwd: root,
			hasUI: false,
			modelRegistry: { getAll: () => [], find: () => undefined },
			sessionManager: { getSessionDir: () => join(root, "sessions"), getSessionFile: () => file },
		}) as never;

	it("outlive the instance: the next instance of the same session adopts them and writes what waited", () => {
		const root = tempRoot("subagents-state");
		const { host } = fakeHost(root, DEFAULT_CONFIG);
		const file = join(root, "sessions", "a.jsonl");
		const ctx = sessionContext(root, file);
		const written = { first: [] as unknown[], second: [] as unknown[] };
		let record: ((type: string, data: unknown) => void) | undefined;
		const follows: string[] = [];
		const make = (which: "first" | "second") =>
			createSessionState({
				pi: { appendEntry: (type: string, data: unknown) => written[which].push([type, data]) } as never,
				depth: 0,
				host,
				nested: () => () => undefined,
				onChildren: (_m, r) => {
					record = r;
				},
				follow: () => {
					follows.push(`${which} follows`);
					return () => follows.push(`${which} lets go`);
				},
			});
		const first = make("first");
		const manager = first.services.children(ctx);
		record?.("a", 1);
		first.detach();
		record?.("b", 2);
		expect(first.services.existingChildren()).toBeUndefined();
		const second = make("second");
		expect(second.adopt(sessionContext(root, join(root, "sessions", "other.jsonl")))).toBe(false);
		expect(second.adopt(ctx)).toBe(true);
		expect(second.services.existingChildren()).toBe(manager);
		expect(second.services.children(ctx)).toBe(manager);
		record?.("c", 3);
		expect(written).toEqual({
			first: [["a", 1]],
			second: [
				["b", 2],
				["c", 3],
			],
		});
		expect(follows).toEqual(["first follows", "first lets go", "second follows"]);
		// The process ends: the home is gone; a later instance of the session starts afresh.
		expect(second.dropChildren()).toBe(manager);
		expect(make("first").adopt(ctx)).toBe(false);
	});
});

/**
 * Fakes for the subagents adapter-level unit tests: a Pi API that records what the extension
 * sends and appends, a context without UI, a backend whose runs end when the test says so, and the
 * services every handler takes, wired to a real artifact store in a private folder.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterEach } from "vitest";
import { DEFAULT_CONFIG, type HeadroomConfig } from "../../extensions/shared/host/config.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import { agentLoader } from "../../extensions/subagents/agents/loader.ts";
import {
	type ChildBackend,
	type ChildHandle,
	type ChildSpec,
	type ManagerLimits,
	SubagentManager,
} from "../../extensions/subagents/children/manager.ts";
import type { SpawnRequest } from "../../extensions/subagents/children/requests.ts";
import {
	DELIVERED_ENTRY,
	persistRun,
	persistSettled,
	SETTLED_ENTRY,
} from "../../extensions/subagents/delivery/persistence.ts";
import type { SettledResult } from "../../extensions/subagents/domain/ledger.ts";
import type { ChildRecord } from "../../extensions/subagents/domain/records.ts";
import type { SubagentServices } from "../../extensions/subagents/domain/services.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

export const FAKE_LIMITS: ManagerLimits = {
	maxConcurrent: 4,
	inactivityTimeoutMs: 60_000,
	maxRunTimeMs: 600_000,
	watchdogTickMs: 1_000,
};

/** A backend whose runs end only when finish(id, text) is called; records specs and prompts. */
export class ControlledBackend implements ChildBackend {
	readonly created: ChildSpec[] = [];
	readonly prompts: Array<{ id: string; text: string }> = [];
	private readonly finishers = new Map<string, (text: string) => void>();

	async create(spec: ChildSpec): Promise<ChildHandle> {
		this.created.push(spec);
		return {
			sessionFile: spec.sessionFile ?? `/sessions/${spec.id}.jsonl`,
			prompt: (text) => {
				this.prompts.push({ id: spec.id, text });
				return new Promise((resolve) => {
					this.finishers.set(spec.id, (answer) =>
						resolve([{ role: "assistant", content: [{ type: "text", text: answer }], stopReason: "stop" }]),
					);
				});
			},
			steer: async () => undefined,
			abort: async () => this.finish(spec.id, ""),
			dispose: () => undefined,
		};
	}

	/** True once the child's run has called prompt() and waits to be finished. */
	started(id: string): boolean {
		return this.finishers.has(id);
	}

	/** End the child's current run with `text` as its answer (synchronously resolves its prompt). */
	finish(id: string, text: string): void {
		const done = this.finishers.get(id);
		this.finishers.delete(id);
		done?.(text);
	}
}

export interface FakeWorld {
	/** What the handlers take: reads the world's fields below (config and closing may be changed by a test). */
	services: SubagentServices;
	/** The configuration the services hand out. */
	config: HeadroomConfig;
	/** The adapter's closing flag, as the services report it. */
	closing: boolean;
	agentDir: string;
	store: ArtifactStore;
	ctx: never;
	backend: ControlledBackend;
	manager: SubagentManager;
	/** Messages the extension sent to the parent. */
	sent: Array<{ message: { customType: string; content: string; details?: unknown }; options?: unknown }>;
	/** Entries the extension appended to the parent's session. */
	entries: Array<{ type: string; data: unknown }>;
	root: string;
}

/** A private folder under <repo>/.tmp, removed when the test file ends (makeTestDir). */
export function tempRoot(prefix: string): string {
	return makeTestDir(prefix.replace(/-$/, ""));
}

export interface FakeWorldOptions {
	config?: HeadroomConfig;
	models?: Array<{ provider: string; id: string; contextWindow?: number; maxTokens?: number }>;
	/** Models with credentials (default: all of them); the session runs on models[0] either way. */
	available?: Array<{ provider: string; id: string }>;
	/** Whether the parent has a UI (default false, as in print mode). */
	hasUI?: boolean;
	sessionManager?: unknown;
	root?: string;
}

/**
 * Fake worlds for one test file (call once, at its top level): the returned function makes one like fakeWorld,
 * `defaults` under its own options, and after each test every world it made has its manager shut down and its
 * folder removed, passed or failed.
 */
export function useFakeWorlds(defaults: FakeWorldOptions = {}): (options?: FakeWorldOptions) => FakeWorld {
	const worlds: FakeWorld[] = [];
	afterEach(async () => {
		for (const w of worlds.splice(0)) {
			await w.manager.shutdown();
			rmSync(w.root, { recursive: true, force: true });
		}
	});
	return (options = {}) => {
		const w = fakeWorld({ ...defaults, ...options });
		worlds.push(w);
		return w;
	};
}

export function fakeWorld(options: FakeWorldOptions = {}): FakeWorld {
	const root = options.root ?? tempRoot("subagents-fake-");
	const sent: FakeWorld["sent"] = [];
	const entries: FakeWorld["entries"] = [];
	const pi = {
		sendMessage: (message: FakeWorld["sent"][number]["message"], opts?: unknown) =>
			sent.push({ message, options: opts }),
		appendEntry: (type: string, data: unknown) => entries.push({ type, data }),
		getThinkingLevel: () => "off",
	};
	const models = options.models ?? [{ provider: "mock", id: "mock-model", contextWindow: 128_000, maxTokens: 4096 }];
	const ctx = {
		cwd: root,
		hasUI: options.hasUI ?? false,
		ui: {},
		model: models[0],
		modelRegistry: {
			getAll: () => models,
			getAvailable: () => options.available ?? models,
			find: (p: string, id: string) => models.find((m) => m.provider === p && m.id === id),
		},
		sessionManager: options.sessionManager ?? {
			getSessionDir: () => join(root, "sessions"),
			getBranch: () => [],
			getSessionFile: () => undefined,
		},
		isIdle: () => true,
		getContextUsage: () => undefined,
	};
	const agentDir = join(root, "agent");
	mkdirSync(agentDir, { recursive: true });
	const backend = new ControlledBackend();
	const manager = new SubagentManager(backend, FAKE_LIMITS);
	const world = {
		config: options.config ?? DEFAULT_CONFIG,
		closing: false,
		agentDir,
		store: new ArtifactStore({ agentDir }),
		ctx: ctx as never,
		backend,
		manager,
		sent,
		entries,
		root,
	} as FakeWorld;
	world.services = {
		depth: 0,
		config: () => world.config,
		agentDir: () => agentDir,
		store: () => world.store,
		context: () => ctx as never,
		closing: () => world.closing,
		children: () => manager,
		existingChildren: () => manager,
		agents: agentLoader({ config: () => world.config, agentDir: () => agentDir }),
		session: pi as never,
		parent: pi as never,
	};
	return world;
}

/**
 * A parent's session manager (for FakeWorldOptions.sessionManager) whose branch holds one settled run, `entry`,
 * already delivered by subagent_wait: what an earlier process leaves for restoreFromSession.
 */
export function deliveredSession(root: string, entry: { key: string }) {
	const branch = [
		{ type: "custom", customType: SETTLED_ENTRY, data: entry },
		{ type: "custom", customType: DELIVERED_ENTRY, data: { keys: [entry.key], by: "wait" } },
	];
	return { getSessionDir: () => join(root, "s"), getBranch: () => branch, getSessionFile: () => undefined };
}

/** What the parent did before it spawned: asked `task`, ran `tool` with `args` over `output`, then said `answer`. */
export interface ParentTurn {
	task: string;
	tool: string;
	args: Record<string, unknown>;
	output: string;
	answer: string;
}

/** A parent session in memory holding one turn with one tool call, as a fork's child sees its history. */
export function parentSession(cwd: string, turn: ParentTurn): SessionManager {
	const sm = SessionManager.inMemory(cwd);
	const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
	const meta = {
		api: "openai-completions",
		provider: "mock",
		model: "mock-model",
		usage: { ...usage, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		timestamp: 1,
	};
	sm.appendMessage({ role: "user", content: turn.task, timestamp: 1 } as never);
	sm.appendMessage({
		...meta,
		role: "assistant",
		content: [{ type: "toolCall", id: "c1", name: turn.tool, arguments: turn.args }],
		stopReason: "toolUse",
	} as never);
	sm.appendMessage({
		role: "toolResult",
		toolCallId: "c1",
		toolName: turn.tool,
		content: [{ type: "text", text: turn.output }],
		isError: false,
		timestamp: 2,
	} as never);
	sm.appendMessage({
		...meta,
		role: "assistant",
		content: [{ type: "text", text: turn.answer }],
		stopReason: "stop",
	} as never);
	return sm;
}

/** Call `fn` after every run that settles in the world's manager (as the adapter's persistence and delivery do). */
export function onSettled(w: FakeWorld, fn: (result: SettledResult, child: ChildRecord) => void): () => void {
	return w.manager.subscribe((event) => {
		if (event.type === "settled") fn(event.result, event.child);
	});
}

/**
 * Spawn a child in the world's manager: a plain request (the mock model, no tools, a fresh context in the world's
 * root, no system addition) with `request`'s fields over it.
 */
export function spawnChild(w: FakeWorld, request: Partial<SpawnRequest> & { prompt: string }): ChildRecord {
	return w.manager.spawn({
		modelLabel: "mock/mock-model",
		model: {},
		tools: [],
		cwd: w.root,
		context: "fresh",
		systemAppend: [],
		...request,
	});
}

/** Resolve once `check` holds, polling on timers (children start on later ticks). */
export async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
	const start = Date.now();
	while (!check()) {
		if (Date.now() - start > timeoutMs) throw new Error("condition not reached in time");
		await new Promise((r) => setTimeout(r, 2));
	}
}

/** A child record with plain defaults (a running child, run 1, no output); tests override what they look at. */
export function childRecord(overrides: Partial<ChildRecord> = {}): ChildRecord {
	const state = overrides.state ?? "running";
	return {
		id: "sa-1",
		name: "t",
		prompt: "",
		model: "p/m",
		tools: [],
		cwd: "/",
		context: "fresh",
		state,
		run: 1,
		createdAt: 0,
		queuedAt: 0,
		startedAt: state === "queued" ? undefined : 1000,
		turns: 0,
		outputTokens: 0,
		partialText: "",
		recentTools: [],
		...overrides,
	};
}

/** Records every run and result in the world's session entries, as the adapter does. */
export function recordAll(w: FakeWorld): void {
	w.manager.subscribe((event) => {
		if (event.type === "changed") return;
		if (event.type === "settled") persistSettled(w.services, event.result, event.child);
		else persistRun(w.services, event.child, event.run, event.type);
	});
}

/** A world (made by `world`) started on the entries an earlier process left in the parent's session. */
export function resumedWorld(
	world: (options?: FakeWorldOptions) => FakeWorld,
	entries: FakeWorld["entries"],
	prefix: string,
): FakeWorld {
	const root = tempRoot(prefix);
	const branch = entries.map((e) => ({ type: "custom", customType: e.type, data: structuredClone(e.data) }));
	const w = world({
		root,
		sessionManager: { getSessionDir: () => join(root, "s"), getBranch: () => branch, getSessionFile: () => undefined },
	});
	recordAll(w);
	return w;
}

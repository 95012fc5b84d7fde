/**
 * How the shipped bundle (dist/extensions.js) evaluates the package's modules for the entries Pi calls: once
 * per load, shared by every entry Pi calls before the first event reaches one of them, and afresh for the next
 * load — after a session_shutdown (a /reload, /new, /resume or /fork) or once the load's session started.
 * The entries are called as Pi's loader calls them: an Error whose stack names Pi 0.73.1's loader, a `pi`
 * that records what the extension registers. (The e2e suite runs the same bundle in the real Pi on both lines.)
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { BUNDLE, EXTENSIONS } from "../../scripts/build.ts";
import { REPO_ROOT } from "../fixtures/sandbox.ts";

type Handler = (...args: unknown[]) => unknown;

interface Bundle {
	start(name: string, ids: string[], caller: Error, fallback: (id: string) => Promise<unknown>, pi: unknown): unknown;
	load(host: Record<string, unknown>, name: string): Promise<Handler>;
	evaluationCount(): number;
	laterEvaluationCount(): number;
}

const bundle = (await import(pathToFileURL(join(REPO_ROOT, "dist", BUNDLE)).href)) as Bundle;
const PI_ROOT = join(REPO_ROOT, "node_modules/@mariozechner/pi-coding-agent");
const IDS = ["@mariozechner/pi-coding-agent", "@mariozechner/pi-ai", "@mariozechner/pi-tui"];

/** An Error as the entry makes it in Pi's call: its stack names Pi's loader. */
function callerInPi(): Error {
	const caller = new Error("locating the running Pi");
	caller.stack = `Error: locating the running Pi\n    at loadExtension (${join(PI_ROOT, "dist/core/extensions/loader.js")}:300:2)`;
	return caller;
}

/** A recording `pi` (fakePi). */
interface FakePi {
	pi: unknown;
	registered: string[];
	/** The handlers of the commands registered, by name. */
	commands: Map<string, Handler>;
	emit(event: string): void;
	events(): string[];
}

/** Every fake pi made, so that each test ends with its loads closed (as a session_shutdown would). */
const made: FakePi[] = [];
afterEach(() => {
	for (const fake of made.splice(0)) fake.emit("session_shutdown");
});

/** A `pi` that records handlers and registrations; `emit` calls an event's handlers as Pi would. */
function fakePi(): FakePi {
	const handlers = new Map<string, Handler[]>();
	const registered: string[] = [];
	const commands = new Map<string, Handler>();
	const pi = new Proxy(
		{},
		{
			get(_target, key) {
				if (key === "on")
					return (event: string, handler: Handler) => handlers.set(event, [...(handlers.get(event) ?? []), handler]);
				if (key === "events") return { on: () => () => undefined, emit: () => undefined };
				if (key === "registerCommand")
					return (name: string, options: { handler: Handler }) => {
						registered.push(name);
						commands.set(name, options.handler);
					};
				if (typeof key === "string" && key.startsWith("register"))
					return (what: unknown) =>
						registered.push(typeof what === "string" ? what : String((what as { name?: unknown })?.name));
				return () => undefined;
			},
		},
	);
	const fake = {
		pi,
		registered,
		commands,
		/**
		 * Pi's emit of `event`, reduced to the bundle's own handler (registered before the factory runs, so
		 * first): the extensions' handlers would read the real agent dir.
		 */
		emit: (event: string) => {
			handlers.get(event)?.[0]();
		},
		/** Events the extension itself subscribed to (the bundle's own two excluded). */
		events: () =>
			[...handlers].flatMap(([event, list]) => list.slice(event.startsWith("session_") ? 1 : 0).map(() => event)),
	};
	made.push(fake);
	return fake;
}

/** One load as Pi makes it: every named entry's factory in turn; returns the fake pis. */
async function loadAll(names: readonly string[] = EXTENSIONS) {
	const pis = names.map(() => fakePi());
	for (const [i, name] of names.entries()) await bundle.start(name, IDS, callerInPi(), (id) => import(id), pis[i].pi);
	return pis;
}

describe("one evaluation per load", () => {
	it("the five entries of one load share one evaluation, and each subscribes its own handlers", async () => {
		const before = bundle.evaluationCount();
		const pis = await loadAll();
		expect(bundle.evaluationCount() - before).toBe(1);
		for (const { events } of pis) expect(events()).toContain("session_start");
		expect(pis[1].events()).toContain("context");
		expect(pis[0].registered).toContain("headroom");
		expect(pis[3].registered).toContain("subagent_spawn");
	});

	it("a session_shutdown (reload, new, resume, fork) closes the load: the next one evaluates afresh", async () => {
		const first = await loadAll();
		const before = bundle.evaluationCount();
		first[2].emit("session_shutdown");
		await loadAll();
		expect(bundle.evaluationCount() - before).toBe(1);
	});

	it("the load's first session_start closes it too; factories called before it share the evaluation", async () => {
		const before = bundle.evaluationCount();
		const first = await loadAll(["headroom", "context-trim"]);
		await loadAll(["handoff"]);
		expect(bundle.evaluationCount() - before).toBe(1);
		first[1].emit("session_start");
		await loadAll(["subagents"]);
		expect(bundle.evaluationCount() - before).toBe(2);
	});

	it("a session_start or session_shutdown of another load's extension closes the open one too", async () => {
		const earlier = await loadAll(["handoff"]);
		earlier[0].emit("session_start"); // that load is done
		const before = bundle.evaluationCount();
		await loadAll(["headroom"]); // a new load, still open
		earlier[0].emit("session_shutdown"); // e.g. a /reload of the other session
		await loadAll(["context-trim"]);
		expect(bundle.evaluationCount() - before).toBe(2);
	});

	it("an entry turned off is simply not called: the others load alone, in one evaluation", async () => {
		const before = bundle.evaluationCount();
		const pis = await loadAll(["tool-artifacts", "handoff"]);
		expect(bundle.evaluationCount() - before).toBe(1);
		expect(pis[0].registered).toContain("recall_artifact");
	});

	it("another Pi's modules under the same names get their own evaluation", async () => {
		const before = bundle.evaluationCount();
		const [a] = await loadAll(["handoff"]);
		const sdk = await import(pathToFileURL(join(PI_ROOT, "dist/index.js")).href);
		const other = fakePi();
		const noPi = new Error("no Pi here");
		noPi.stack = "Error: no Pi here\n    at x (/no/such/file.js:1:1)";
		const saved = process.argv[1];
		process.argv[1] = "/no/such/main.js";
		try {
			// The fallback hands a copy of the SDK: the same names, other objects.
			await bundle.start("handoff", IDS, noPi, async (id) => (id === IDS[0] ? { ...sdk } : import(id)), other.pi);
		} finally {
			process.argv[1] = saved;
		}
		expect(bundle.evaluationCount() - before).toBe(2);
		expect(a.events()).toEqual(other.events());
		expect(a.events().length).toBeGreaterThan(0);
	});

	it("load(host, name) evaluates afresh on every call", async () => {
		const host = Object.fromEntries(
			await Promise.all(IDS.map(async (id) => [id, await import(id)] as const)),
		) as Record<string, unknown>;
		const before = bundle.evaluationCount();
		const one = await bundle.load(host, "context-trim");
		const two = await bundle.load(host, "context-trim");
		expect(bundle.evaluationCount() - before).toBe(2);
		expect(one).not.toBe(two);
	});
});

describe("the later file (modules reached only on first use)", () => {
	/** A context that refuses to be read: the command's own work stops at once, after its code loaded. */
	const refusing = new Proxy(
		{},
		{
			get: () => {
				throw new Error("not read in this test");
			},
		},
	);

	it("a load and its factories never read it; the first use evaluates it into that load's module state, once", async () => {
		const before = bundle.laterEvaluationCount();
		const pis = await loadAll();
		expect(bundle.laterEvaluationCount()).toBe(before);
		const view = pis[3].commands.get("subagents");
		if (!view) throw new Error("subagents registered no /subagents");
		await expect(view("", refusing)).rejects.toThrow();
		expect(bundle.laterEvaluationCount()).toBe(before + 1);
		await expect(view("", refusing)).rejects.toThrow();
		expect(bundle.laterEvaluationCount()).toBe(before + 1);
		// The next load (a /reload) starts from fresh module state: its first use evaluates the file again.
		pis[0].emit("session_shutdown");
		const next = await loadAll(["subagents"]);
		await expect(next[0].commands.get("subagents")?.("", refusing)).rejects.toThrow();
		expect(bundle.laterEvaluationCount()).toBe(before + 2);
	});
});

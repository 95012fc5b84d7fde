/**
 * The one extension bootstrap against a stand-in of Pi's extension API: the reload policy (re-read at
 * session_start, fixed in between), warnings once per process across extensions, project trust, the
 * notifier's routing, and the store.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { bootExtension, CONFIG_WARNING_PREFIX, sessionTrust } from "../../extensions/shared/host/bootstrap.ts";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { hasUI, projectTrusted } from "../../extensions/shared/host/pi-host.ts";
import { writeTrustDecision } from "../../extensions/shared/host/trust.ts";
import { useAgentDirEnv } from "../fixtures/agent-dir-env.ts";

type Handler = (event: unknown, ctx: unknown) => unknown;

const env = useAgentDirEnv();

/** An agent dir with a project folder, PI_CODING_AGENT_DIR pointing at it. */
function world(userConfig?: unknown) {
	const agentDir = env.agentDir("bootstrap");
	const cwd = join(agentDir, "project");
	mkdirSync(join(cwd, ".pi"), { recursive: true });
	const writeUser = (config: unknown) => writeFileSync(join(agentDir, "headroom.json"), JSON.stringify(config));
	if (userConfig !== undefined) writeUser(userConfig);
	return { agentDir, cwd, writeUser };
}

/** A stand-in pi that records handlers, and a context without UI unless given one. */
function standIn() {
	const handlers = new Map<string, Handler[]>();
	const pi = {
		on: (name: string, handler: Handler) => handlers.set(name, [...(handlers.get(name) ?? []), handler]),
	};
	/** Pi's emit: one event object for every handler of the emission (a new one unless `event` is given). */
	const fire = async (name: string, ctx: unknown, event: object = { type: name }) => {
		for (const handler of handlers.get(name) ?? []) await handler(event, ctx);
	};
	return { pi: pi as never, handlers, fire };
}

describe("bootExtension", () => {
	it("re-reads the configuration at each session_start and keeps it fixed in between", async () => {
		const w = world({ subagents: { maxConcurrent: 2 } });
		const { pi, fire } = standIn();
		const host = bootExtension(pi, "test-ext");
		const ctx = { cwd: w.cwd, hasUI: false };
		await fire("session_start", ctx);
		expect(host.config(ctx as never).subagents.maxConcurrent).toBe(2);
		w.writeUser({ subagents: { maxConcurrent: 7 } });
		expect(host.config(ctx as never).subagents.maxConcurrent).toBe(2); // same session, same configuration
		const seen: number[] = [];
		host.onConfig((config) => seen.push(config.subagents.maxConcurrent));
		await fire("session_start", ctx);
		expect(host.config(ctx as never).subagents.maxConcurrent).toBe(7);
		expect(seen).toEqual([7]);
	});

	it("one session_start emission is read once for every extension booted from this module; the next afresh", async () => {
		const w = world({ subagents: { maxConcurrent: 2 } });
		const [a, b, c] = [standIn(), standIn(), standIn()];
		const hosts = [bootExtension(a.pi, "one"), bootExtension(b.pi, "two"), bootExtension(c.pi, "three")];
		const ctx = { cwd: w.cwd, hasUI: false };
		const emission = { type: "session_start" };
		await a.fire("session_start", ctx, emission);
		w.writeUser({ subagents: { maxConcurrent: 5 } });
		await b.fire("session_start", ctx, emission); // the same emission: the first extension's reading
		expect(hosts[1].config().subagents.maxConcurrent).toBe(2);
		// Each extension has its own copy of the configuration.
		expect(hosts[1].config()).not.toBe(hosts[0].config());
		hosts[0].config().subagents.maxConcurrent = 99;
		expect(hosts[1].config().subagents.maxConcurrent).toBe(2);
		// Another folder in the same event object is not the same reading.
		const elsewhere = join(w.agentDir, "elsewhere");
		mkdirSync(elsewhere);
		await c.fire("session_start", { cwd: elsewhere, hasUI: false }, emission);
		expect(hosts[2].config().subagents.maxConcurrent).toBe(5);
		// The next session_start (a /reload, /new, ...) is another emission: read afresh.
		await b.fire("session_start", ctx);
		expect(hosts[1].config().subagents.maxConcurrent).toBe(5);
	});

	it("sessionTrust: a session_start's own context gets that emission's decision; any other asks afresh", async () => {
		const w = world();
		const { pi, fire } = standIn();
		bootExtension(pi, "one");
		const ctx = { cwd: w.cwd, hasUI: false };
		await fire("session_start", ctx);
		expect(sessionTrust(w.agentDir, w.cwd, ctx as never)).toEqual({ trusted: false, reason: "undecided" });
		writeTrustDecision(w.agentDir, w.cwd, true);
		// The emission's context keeps the decision its reading made (no second look-up under Pi's lock)...
		expect(sessionTrust(w.agentDir, w.cwd, ctx as never).trusted).toBe(false);
		// ...another context, another folder or no context decides now, from the records as they are.
		expect(sessionTrust(w.agentDir, w.cwd, { cwd: w.cwd, hasUI: false } as never)).toMatchObject({ trusted: true });
		expect(sessionTrust(w.agentDir, w.cwd)).toMatchObject({ trusted: true, reason: "own-record" });
		const elsewhere = join(w.agentDir, "elsewhere");
		mkdirSync(elsewhere);
		expect(sessionTrust(w.agentDir, elsewhere, ctx as never).trusted).toBe(false);
		// A context read on first use (not a session_start) is not remembered.
		const firstUse = { cwd: w.cwd, hasUI: false };
		bootExtension(standIn().pi, "two").config(firstUse as never);
		writeTrustDecision(w.agentDir, w.cwd, null);
		expect(sessionTrust(w.agentDir, w.cwd, firstUse as never).trusted).toBe(false);
		writeTrustDecision(w.agentDir, w.cwd, true);
		expect(sessionTrust(w.agentDir, w.cwd, firstUse as never).trusted).toBe(true);
	});

	it("reads on first use when an event comes before any session_start; defaults without a context", () => {
		const w = world({ toolArtifacts: { thresholdChars: 999 } });
		const host = bootExtension(standIn().pi, "test-ext");
		expect(host.config()).toBe(DEFAULT_CONFIG);
		expect(host.config({ cwd: w.cwd, hasUI: false } as never).toolArtifacts.thresholdChars).toBe(999);
	});

	it("shows each configuration warning once per process, however many extensions boot", async () => {
		const w = world({ subagents: { maxConcurrent: -3 }, bogusSection: true });
		const errors = vi.spyOn(console, "error").mockImplementation(() => {});
		const a = standIn();
		const b = standIn();
		bootExtension(a.pi, "one");
		bootExtension(b.pi, "two");
		const ctx = { cwd: w.cwd, hasUI: false };
		await a.fire("session_start", ctx);
		await b.fire("session_start", ctx);
		await a.fire("session_start", ctx);
		const printed = errors.mock.calls.map((call) => String(call[0]));
		expect(printed.filter((line) => line.includes("subagents.maxConcurrent"))).toHaveLength(1);
		expect(printed.filter((line) => line.includes("bogusSection"))).toHaveLength(1);
		for (const line of printed) expect(line.startsWith(CONFIG_WARNING_PREFIX)).toBe(true);
	});

	it("reads the project's file only when the user trusted the project explicitly, not on isProjectTrusted() alone", async () => {
		const w = world();
		writeFileSync(join(w.cwd, ".pi", "headroom.json"), JSON.stringify({ subagents: { maxConcurrent: 3 } }));
		vi.spyOn(console, "error").mockImplementation(() => {});
		const piSaysYes = { cwd: w.cwd, hasUI: false, isProjectTrusted: () => true };
		const piSaysNo = { cwd: w.cwd, hasUI: false, isProjectTrusted: () => false };
		const notAsked = bootExtension(standIn().pi, "a");
		expect(notAsked.config(piSaysYes as never).subagents.maxConcurrent).toBe(DEFAULT_CONFIG.subagents.maxConcurrent);
		expect(notAsked.trust()).toEqual({ trusted: false, reason: "undecided" });
		writeTrustDecision(w.agentDir, w.cwd, true);
		const recorded = bootExtension(standIn().pi, "b");
		expect(recorded.config(piSaysYes as never).subagents.maxConcurrent).toBe(3);
		expect(recorded.trust()).toMatchObject({ trusted: true, reason: "own-record" });
		const denied = bootExtension(standIn().pi, "c");
		expect(denied.config(piSaysNo as never).subagents.maxConcurrent).toBe(DEFAULT_CONFIG.subagents.maxConcurrent);
		expect(denied.trust()).toEqual({ trusted: false, reason: "pi-denied" });
	});

	it("notifies in the UI when there is one, else on stderr, prefixed with the extension; notifyOnce once", () => {
		world();
		const errors = vi.spyOn(console, "error").mockImplementation(() => {});
		const host = bootExtension(standIn().pi, "tool-artifacts");
		const notes: Array<[string, string]> = [];
		const withUI = { hasUI: true, ui: { notify: (text: string, level: string) => notes.push([text, level]) } };
		host.notify(withUI as never, "store is read-only");
		host.notify({ hasUI: false } as never, "store is read-only", "error");
		host.notifyOnce(undefined, "said once");
		host.notifyOnce(undefined, "said once");
		expect(notes).toEqual([["tool-artifacts: store is read-only", "warning"]]);
		expect(errors.mock.calls.map((call) => String(call[0]))).toEqual([
			"tool-artifacts: store is read-only",
			"tool-artifacts: said once",
		]);
	});

	it("gives one store per agent dir, under that agent dir", () => {
		const w = world();
		const host = bootExtension(standIn().pi, "x");
		expect(host.store()).toBe(host.store());
		expect(host.store().root.startsWith(w.agentDir)).toBe(true);
		const next = world();
		expect(host.store().root.startsWith(next.agentDir)).toBe(true);
	});
});

describe("Pi-line shims", () => {
	it("projectTrusted: trusted without a check (0.73), as the check says on 1.x, untrusted when it throws", () => {
		expect(projectTrusted({})).toBe(true);
		expect(projectTrusted({ isProjectTrusted: () => false })).toBe(false);
		expect(projectTrusted({ isProjectTrusted: () => true })).toBe(true);
		expect(
			projectTrusted({
				isProjectTrusted: () => {
					throw new Error("no");
				},
			}),
		).toBe(false);
	});

	it("hasUI: only with hasUI set and a ui to draw on", () => {
		expect(hasUI({ hasUI: true, ui: {} } as never)).toBe(true);
		expect(hasUI({ hasUI: false, ui: {} } as never)).toBe(false);
		expect(hasUI({ hasUI: true } as never)).toBe(false);
		expect(hasUI(undefined)).toBe(false);
	});
});

import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SURFACES } from "../../extensions/shared/surfaces.ts";
import { bytesForTokens } from "../../extensions/shared/text/tokens.ts";
import { utf8ByteLength } from "../../extensions/shared/text/utf8.ts";
import { deliverPending } from "../../extensions/subagents/delivery/delivery.ts";
import { composeHandover } from "../../extensions/subagents/delivery/handover.ts";
import { statusGlyph } from "../../extensions/subagents/domain/format.ts";
import type { SettledResult } from "../../extensions/subagents/domain/ledger.ts";
import type { ChildState } from "../../extensions/subagents/domain/records.ts";
import {
	consumersOf,
	findCycle,
	type PipelineNode,
	readiness,
	resolveAfter,
	stagesOf,
	waitingDependents,
} from "../../extensions/subagents/pipeline/graph.ts";
import { checkText, listLine, queuedSendError, statusLine } from "../../extensions/subagents/prompt/common.ts";
import { afterProblemError } from "../../extensions/subagents/prompt/pipeline.ts";
import { row } from "../../extensions/subagents/tools/reply.ts";
import { waitTool } from "../../extensions/subagents/tools/wait.ts";
import { currentRow } from "../../extensions/subagents/view/live-rows.ts";
import { statusText, widgetLines } from "../../extensions/subagents/view/render.ts";
import { stateWords } from "../../extensions/subagents/view/screens.ts";
import { childRecord, FAKE_LIMITS, spawnChild, until, useFakeWorlds } from "./subagents-fakes.ts";

const STATES: ChildState[] = [
	"waiting",
	"queued",
	"starting",
	"running",
	"completed",
	"incomplete",
	"failed",
	"cancelled",
	"skipped",
];
const SETTLED = new Set<ChildState>(["completed", "incomplete", "failed", "cancelled", "skipped"]);

/** A DAG: node i may only wait for nodes before it. */
const dag = fc.integer({ min: 1, max: 12 }).chain((n) =>
	fc
		.tuple(
			...Array.from({ length: n }, (_, i) =>
				fc.record({
					after: fc.subarray(
						Array.from({ length: i }, (_, j) => `sa-${j + 1}`),
						{ maxLength: Math.min(4, i) },
					),
					state: fc.constantFrom(...STATES),
				}),
			),
		)
		.map((nodes) =>
			nodes.map((n, i): PipelineNode => ({ id: `sa-${i + 1}`, name: `n${i + 1}`, state: n.state, after: n.after })),
		),
);

describe("pipeline graph (pure)", () => {
	it("finds no cycle in a DAG, and finds one once a back edge closes it", () => {
		fc.assert(
			fc.property(dag, fc.nat(), (nodes, pick) => {
				expect(findCycle(nodes)).toBeUndefined();
				const withEdges = nodes.filter((n) => (n.after ?? []).length > 0);
				if (withEdges.length === 0) return;
				const from = withEdges[pick % withEdges.length];
				const to = from.after![0];
				// to → from closes the cycle from → to → from.
				const cyclic = nodes.map((n) => (n.id === to ? { ...n, after: [...(n.after ?? []), from.id] } : n));
				const cycle = findCycle(cyclic)!;
				expect(cycle).toBeDefined();
				expect(cycle[0]).toBe(cycle[cycle.length - 1]);
				for (let i = 0; i + 1 < cycle.length; i++) {
					const node = cyclic.find((n) => n.id === cycle[i])!;
					expect(node.after).toContain(cycle[i + 1]);
				}
			}),
		);
	});

	it("readiness: waits while any input is unsettled; else runs iff all completed or afterFailed is run", () => {
		fc.assert(
			fc.property(dag, fc.constantFrom("skip" as const, "run" as const), (nodes, afterFailed) => {
				for (const node of nodes) {
					const inputs = node.after ?? [];
					const states = inputs.map((id) => nodes.find((n) => n.id === id)!.state);
					const verdict = readiness(inputs, nodes, afterFailed);
					if (states.some((s) => !SETTLED.has(s))) expect(verdict.act).toBe("wait");
					else if (states.every((s) => s === "completed") || afterFailed === "run") expect(verdict.act).toBe("run");
					else {
						expect(verdict.act).toBe("skip");
						if (verdict.act === "skip")
							expect(verdict.failed.map((f) => f.id)).toEqual(
								inputs.filter((id) => nodes.find((n) => n.id === id)!.state !== "completed"),
							);
					}
				}
			}),
		);
	});

	it("an unknown input is waited for, never run past", () => {
		expect(readiness(["sa-9"], [], "run")).toEqual({ act: "wait", pending: ["sa-9"] });
	});

	it("waitingDependents is the transitive closure over waiting children", () => {
		fc.assert(
			fc.property(dag, fc.nat(), (nodes, pick) => {
				const root = nodes[pick % nodes.length].id;
				const got = new Set(waitingDependents(nodes, [root]));
				for (const n of nodes) {
					const reaches =
						n.state === "waiting" && (n.after ?? []).some((i) => i === root || got.has(i)) && n.id !== root;
					expect(got.has(n.id), n.id).toBe(reaches);
				}
			}),
		);
	});

	it("stagesOf is 1 + the deepest input", () => {
		fc.assert(
			fc.property(dag, (nodes) => {
				for (const n of nodes) {
					const deepest = Math.max(0, ...(n.after ?? []).map((i) => stagesOf(nodes, i)));
					expect(stagesOf(nodes, n.id)).toBe(1 + deepest);
				}
			}),
		);
	});

	it("resolveAfter: ids and names, deduplicated; unknown, ambiguous, self, too deep are refused", () => {
		const nodes: PipelineNode[] = [
			{ id: "sa-1", name: "scout", state: "running" },
			{ id: "sa-2", name: "worker", state: "waiting", after: ["sa-1"] },
			{ id: "sa-3", name: "worker", state: "waiting", after: ["sa-1"] },
		];
		expect(resolveAfter(["scout", "sa-2", "sa-1"], nodes, "sa-4")).toEqual({ ok: true, ids: ["sa-1", "sa-2"] });
		const unknown = resolveAfter(["nope", "sa-9"], nodes, "sa-4");
		expect(unknown.ok).toBe(false);
		if (!unknown.ok) {
			expect(unknown.problem).toMatchObject({ kind: "unknown", refs: ["nope", "sa-9"] });
			expect(afterProblemError(unknown.problem)).toContain("sa-1 (scout)");
			expect(afterProblemError(unknown.problem)).toContain("Nothing was started");
		}
		expect(resolveAfter(["worker"], nodes, "sa-4")).toMatchObject({ ok: false, problem: { kind: "ambiguous" } });
		expect(resolveAfter(["sa-4"], nodes, "sa-4")).toMatchObject({ ok: false, problem: { kind: "cycle" } });
		const chain: PipelineNode[] = Array.from({ length: 5 }, (_, i) => ({
			id: `sa-${i + 1}`,
			name: `s${i + 1}`,
			state: "waiting",
			after: i === 0 ? [] : [`sa-${i}`],
		}));
		expect(resolveAfter(["sa-5"], chain, "sa-6", 5)).toMatchObject({
			ok: false,
			problem: { kind: "too-deep", stages: 6 },
		});
		expect(resolveAfter(["sa-5"], chain, "sa-6", 6).ok).toBe(true);
	});

	it("consumersOf leaves out skipped children and those cancelled before they ran", () => {
		const nodes: PipelineNode[] = [
			{ id: "sa-1", name: "a", state: "completed" },
			{ id: "sa-2", name: "b", state: "running", after: ["sa-1"], startedAt: 1 },
			{ id: "sa-3", name: "c", state: "skipped", after: ["sa-1"] },
			{ id: "sa-4", name: "d", state: "cancelled", after: ["sa-1"] },
			{ id: "sa-5", name: "e", state: "waiting", after: ["sa-1"] },
		];
		expect(consumersOf(nodes, "sa-1")).toEqual(["sa-2", "sa-5"]);
	});
});

const world = useFakeWorlds();

describe("pipeline in the manager (controlled backend)", () => {
	it("a waiting child gets its id at once, starts only after its inputs settle, and gets the handover", async () => {
		const w = world();
		const a = spawnChild(w, { prompt: "scout" });
		const seen: string[][] = [];
		const b = spawnChild(w, {
			prompt: "build",
			after: [a.id],
			handover: async (inputs, base) => {
				seen.push(inputs.map((i) => `${i.child.id}:${i.result?.text}`));
				return `INPUTS ${inputs.map((i) => i.result?.text).join("|")}\n${base}`;
			},
		});
		expect(b.id).toBe("sa-2");
		expect(b.state).toBe("waiting");
		await until(() => w.backend.started(a.id));
		expect(w.backend.started(b.id)).toBe(false);
		w.backend.finish(a.id, "SCOUT REPORT");
		await until(() => w.backend.started(b.id));
		expect(seen).toEqual([["sa-1:SCOUT REPORT"]]);
		expect(w.backend.prompts.find((p) => p.id === b.id)?.text).toBe("INPUTS SCOUT REPORT\nbuild");
	});

	it("the queue counts only running children: waiting ones take no slot", async () => {
		const w = world();
		w.manager.setLimits({ ...FAKE_LIMITS, maxConcurrent: 1 });
		const a = spawnChild(w, { prompt: "a" });
		const waiting = Array.from({ length: 3 }, (_, i) => spawnChild(w, { prompt: `w${i}`, after: [a.id] }));
		const c = spawnChild(w, { prompt: "independent" });
		expect(waiting.every((x) => x.state === "waiting")).toBe(true);
		expect(c.state).toBe("queued");
		await until(() => w.backend.started(a.id));
		w.backend.finish(a.id, "done");
		await until(() => w.backend.started(c.id));
		expect(w.manager.list().filter((x) => x.state === "running" || x.state === "starting")).toHaveLength(1);
	});

	it("a failed input skips its dependent (and the dependent's dependents) naming why; run anyway states it", async () => {
		const w = world();
		const a = spawnChild(w, { prompt: "a" });
		const b = spawnChild(w, { prompt: "b", after: [a.id] });
		const c = spawnChild(w, { prompt: "c", after: [b.id] });
		const d = spawnChild(w, { prompt: "d", after: [a.id], afterFailed: "run" });
		await until(() => w.backend.started(a.id));
		await w.manager.cancel([a.id]);
		await until(() => isDone(w, [b.id, c.id]));
		expect(w.manager.get(b.id)!.state).toBe("skipped");
		expect(w.manager.ledger.latest(b.id)!.text).toContain("sa-1");
		expect(w.manager.ledger.latest(b.id)!.text).toContain("cancelled");
		expect(w.manager.get(c.id)!.state).toBe("skipped");
		// Cancelling cancels the waiting dependents, even those that would run anyway.
		expect(w.manager.get(d.id)!.state).toBe("skipped");
		expect(w.backend.created.map((s) => s.id)).toEqual([a.id]);
	});

	it("after_failed run: an input that failed is reported, and the dependent runs", async () => {
		const w = world();
		const a = spawnChild(w, {
			prompt: "a",
			steps: {
				beforeRun: async () => {
					throw new Error("no model answered");
				},
			},
		});
		const b = spawnChild(w, { prompt: "b", after: [a.id] });
		const d = spawnChild(w, {
			prompt: "d",
			after: [a.id],
			afterFailed: "run",
			handover: async (inputs, base) => `${inputs.map((i) => `${i.child.id} ${i.child.state}`).join(",")} ${base}`,
		});
		await until(() => w.backend.started(d.id));
		expect(w.manager.get(b.id)!.state).toBe("skipped");
		expect(w.manager.ledger.latest(b.id)!.text).toContain("sa-1 (a) failed: no model answered");
		expect(w.backend.prompts.find((p) => p.id === d.id)?.text).toBe("sa-1 failed d");
	});

	it("a waiting child cancelled directly never starts; shutdown says why its waiting children never started", async () => {
		const w = world();
		const a = spawnChild(w, { prompt: "a" });
		const b = spawnChild(w, { prompt: "b", after: [a.id] });
		const c = spawnChild(w, { prompt: "c", after: [a.id] });
		await w.manager.cancel([b.id]);
		expect(w.manager.get(b.id)!.state).toBe("cancelled");
		await w.manager.shutdown();
		expect(w.manager.get(c.id)!.state).toBe("cancelled");
		expect(w.manager.get(c.id)!.error).toContain("waited for its inputs");
		expect(w.backend.created.map((s) => s.id)).toEqual([a.id]);
	});

	it("a bad after is refused by planAfter before anything is registered", () => {
		const w = world();
		spawnChild(w, { prompt: "a", name: "scout" });
		expect(w.manager.planAfter(["scout"])).toEqual({ ok: true, ids: ["sa-1"] });
		expect(w.manager.planAfter(["sa-2"])).toMatchObject({ ok: false, problem: { kind: "cycle" } });
		expect(w.manager.planAfter(["ghost"])).toMatchObject({ ok: false, problem: { kind: "unknown" } });
		expect(w.manager.list()).toHaveLength(1);
	});
});

function isDone(w: ReturnType<typeof world>, ids: string[]): boolean {
	return ids.every((id) => SETTLED.has(w.manager.get(id)!.state));
}

describe("handover: inputs open the dependent's task, cut to the child's window", () => {
	const input = (id: string, text: string, extras?: SettledResult["extras"]) => ({
		child: childRecord({ id, name: `n-${id}`, state: "completed" }),
		result: {
			key: `${id}#1`,
			id,
			run: 1,
			text,
			state: "completed" as const,
			settledAt: 1,
			delivery: "pending" as const,
			...(extras ? { extras } : {}),
		},
	});
	const options = (w: ReturnType<typeof world>, contextWindow: number, overheadTokens = 1000) => ({
		store: w.store,
		budget: SURFACES["subagents.handover"],
		window: { contextWindow, maxTokens: 1000, overheadTokens },
	});

	it("a short input whole, a long one head + tail within the child's budget, both named by their artifact", async () => {
		const w = world();
		const long = `BEGIN-LONG\n${"filler line of the long report\n".repeat(4000)}END-LONG`;
		const { text, batch } = await composeHandover(
			[input("sa-1", "SHORT REPORT"), input("sa-2", long)],
			"review both",
			options(w, 16_000),
		);
		expect(text).toContain("SHORT REPORT");
		expect(text).toContain("BEGIN-LONG");
		expect(text).toContain("END-LONG");
		expect(text.endsWith("=== your task\n\nreview both")).toBe(true);
		const path = batch.items[1].artifactPath!;
		expect(readFileSync(path, "utf8")).toBe(long);
		expect(text).toContain(path);
		// Budget: (16000 − 1000 − 1000) tokens × 0.5, at the conservative bytes-per-token ratio.
		expect(batch.allocation.source).toBe("headroom");
		expect(utf8ByteLength(batch.text)).toBeLessThanOrEqual(batch.allocation.batchBytes);
		expect(batch.allocation.batchBytes).toBe(bytesForTokens(7000));
	});

	it("a smaller window gives a smaller view, never a larger one", async () => {
		const w = world();
		const long = "x".repeat(200_000);
		const big = await composeHandover([input("sa-1", long)], "t", options(w, 200_000));
		const small = await composeHandover([input("sa-1", long)], "t", options(w, 12_000));
		expect(utf8ByteLength(small.text)).toBeLessThan(utf8ByteLength(big.text));
	});

	it("a structured input passes as its validated JSON, whole when it fits, else named by its artifact", async () => {
		const w = world();
		const value = { files: ["a.ts", "b.ts"], ok: true };
		const fits = await composeHandover(
			[input("sa-1", 'prose then {"files":...}', { structured: { status: "valid", value, corrections: 0 } })],
			"t",
			options(w, 128_000),
		);
		expect(fits.text).toContain(JSON.stringify(value, null, 2));
		const huge = { rows: Array.from({ length: 20_000 }, (_, i) => ({ i, name: `row ${i}` })) };
		const named = await composeHandover(
			[input("sa-1", "prose", { structured: { status: "valid", value: huge, corrections: 0 } })],
			"t",
			options(w, 128_000),
		);
		expect(named.text).toContain("too large to include here");
		expect(named.text).not.toContain('"row 19999"');
		const path = /too large to include here; read (\S+)\./.exec(named.text)![1];
		expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(huge);
	});

	it("an isolated input is named by its branch and patch; the dependent does not share its worktree", async () => {
		const w = world();
		const changes = {
			worktree: "/wt/sa-1",
			branch: "headroom/sa-1",
			base: "abc",
			kept: true,
			files: [],
			commits: 0,
			patchPath: "/store/patch.diff",
		};
		const { text } = await composeHandover([input("sa-1", "edited", { changes })], "t", options(w, 128_000));
		expect(text).toContain("branch headroom/sa-1, patch: /store/patch.diff");
		expect(text).toContain("not in your working tree unless you apply them");
	});
});

describe("the parent's context stays small: a result handed to children is one line in automatic delivery", () => {
	it("relays an input as one line naming its artifact and consumers; the last result arrives in full", async () => {
		const w = world();
		const a = spawnChild(w, { prompt: "scout" });
		const b = spawnChild(w, { prompt: "review", after: [a.id] });
		const report = `SCOUT-BEGIN\n${"finding\n".repeat(500)}SCOUT-END`;
		await until(() => w.backend.started(a.id));
		w.backend.finish(a.id, report);
		await until(() => w.backend.started(b.id));
		w.backend.finish(b.id, "REVIEW-BEGIN all good REVIEW-END");
		await until(() => w.manager.get(b.id)!.state === "completed");
		await deliverPending(w.services, "append");
		expect(w.sent).toHaveLength(1);
		const text = w.sent[0].message.content;
		expect(text).toContain("REVIEW-BEGIN all good REVIEW-END");
		expect(text).not.toContain("SCOUT-BEGIN");
		const line = text.split("\n").find((l) => l.startsWith("sa-1 "))!;
		expect(line).toContain("handed to sa-2");
		const path = /full text (\S+);/.exec(line)![1];
		expect(readFileSync(path, "utf8")).toBe(report);
		// Still the parent's to receive in full when it asks.
		expect(w.manager.ledger.latest(a.id)!.text).toBe(report);
	});

	it("a result whose only dependent was skipped arrives in full", async () => {
		const w = world();
		const a = spawnChild(w, { prompt: "a" });
		const z = spawnChild(w, {
			prompt: "z",
			steps: {
				beforeRun: async () => {
					throw new Error("down");
				},
			},
		});
		spawnChild(w, { prompt: "b", after: [a.id, z.id] });
		await until(() => w.backend.started(a.id));
		w.backend.finish(a.id, "A-FULL-REPORT");
		await until(() => w.manager.list().every((c) => SETTLED.has(c.state)));
		await deliverPending(w.services, "append");
		expect(w.sent[0].message.content).toContain("A-FULL-REPORT");
	});
});

describe("waiting children are seen everywhere", () => {
	const waiting = childRecord({ id: "sa-3", name: "review", state: "waiting", after: ["sa-1", "sa-2"] });
	it("in list lines, check, status lines, rows, the footer, the widget and /subagents", () => {
		expect(listLine(waiting, 0, statusGlyph("waiting"))).toContain("waiting for sa-1, sa-2");
		expect(checkText(waiting, 0, "")).toContain("waiting for sa-1, sa-2");
		expect(statusLine(waiting, 0)).toContain("waiting for sa-1, sa-2");
		expect(row(waiting).note).toBe("waits for sa-1, sa-2");
		expect(currentRow({ id: "sa-3", name: "review", state: "queued", note: "queued" }, [waiting]).note).toBe(
			"waits for sa-1, sa-2",
		);
		expect(statusText([waiting])).toContain("1 waiting");
		expect(widgetLines([waiting], 0).join("\n")).toContain("waits for sa-1, sa-2");
		expect(stateWords(waiting, [waiting])).toBe("waits for sa-1, sa-2");
	});
});

describe("waiting on the last child of a pipeline", () => {
	it("gives it in full and the intermediate results as one line each; a wait on one of those still gives it in full", async () => {
		const w = world();
		const a = spawnChild(w, { prompt: "scout" });
		const b = spawnChild(w, { prompt: "review", after: [a.id] });
		await until(() => w.backend.started(a.id));
		w.backend.finish(a.id, "SCOUT-BEGIN report SCOUT-END");
		await until(() => w.backend.started(b.id));
		w.backend.finish(b.id, "REVIEW-BEGIN ok REVIEW-END");
		const last = await waitTool(w.services, { ids: [b.id] }, undefined, undefined as never, w.ctx);
		const text = last.content[0].text;
		expect(text).toContain("REVIEW-BEGIN ok REVIEW-END");
		expect(text).not.toContain("SCOUT-BEGIN");
		expect(text).toMatch(/sa-1 \(scout\) completed, \d+ bytes, full text \S+; handed to sa-2/);
		expect(w.manager.ledger.pending()).toEqual([]);
		const asked = await waitTool(w.services, { ids: [a.id] }, undefined, undefined as never, w.ctx);
		expect(asked.content[0].text).toContain("SCOUT-BEGIN report SCOUT-END");
	});
});

describe("a message to a waiting child", () => {
	it("is refused, naming what it waits for", async () => {
		const w = world();
		const a = spawnChild(w, { prompt: "a" });
		const b = spawnChild(w, { prompt: "b", after: [a.id] });
		expect(await w.manager.send(b.id, "hurry")).toBe("queued-child");
		expect(queuedSendError(w.manager.get(b.id)!)).toContain("is waiting for sa-1 and has not started");
	});
});

/**
 * Pure decisions of pipelines (children spawned with `after`): which children a spawn's `after` names, whether
 * the graph would get a cycle or more stages than allowed, when a waiting child may start or must be skipped,
 * which waiting children a cancel takes with it, and who used a result. Plain data in, plain data out.
 */
import type { AfterFailed, ChildState } from "../domain/records.ts";
import { isSettled } from "../domain/records.ts";

/** Most stages a chain of waiting children may have (a spawn that would make a longer one is refused). */
export const MAX_PIPELINE_STAGES = 16;

/** What the decisions read of a child. */
export interface PipelineNode {
	id: string;
	name: string;
	state: ChildState;
	after?: readonly string[];
	/** Why its last run failed, was cancelled or was cut short. */
	error?: string;
	/** Epoch ms its current run started (undefined: it never ran). */
	startedAt?: number;
}

/** Why `after` cannot be used; the adapter turns it into wording (prompt-pipeline.ts). */
export type AfterProblem =
	| { kind: "unknown"; refs: string[]; known: Array<{ id: string; name: string }> }
	| { kind: "ambiguous"; ref: string; ids: string[] }
	| { kind: "cycle"; path: string[] }
	| { kind: "too-deep"; stages: number; max: number };

export type AfterResolution = { ok: true; ids: string[] } | { ok: false; problem: AfterProblem };

/**
 * The ids `refs` name among `children` (an id first, else a unique spawn name), deduplicated in order; `self`
 * is the id the new child will get (naming it is a cycle). Refs that name nothing are all reported at once.
 */
export function resolveAfter(
	refs: readonly string[],
	children: readonly PipelineNode[],
	self: string,
	maxStages = MAX_PIPELINE_STAGES,
): AfterResolution {
	const ids: string[] = [];
	const unknown: string[] = [];
	for (const raw of refs) {
		const ref = String(raw).trim();
		if (ref === self) return { ok: false, problem: { kind: "cycle", path: [self, self] } };
		let id = children.find((c) => c.id === ref)?.id;
		if (!id) {
			const named = children.filter((c) => c.name === ref);
			if (named.length > 1) return { ok: false, problem: { kind: "ambiguous", ref, ids: named.map((c) => c.id) } };
			id = named[0]?.id;
		}
		if (!id) unknown.push(ref);
		else if (!ids.includes(id)) ids.push(id);
	}
	if (unknown.length > 0) {
		const known = children.map((c) => ({ id: c.id, name: c.name }));
		return { ok: false, problem: { kind: "unknown", refs: unknown, known } };
	}
	const graph = [...children, { id: self, name: self, state: "waiting" as const, after: ids }];
	const cycle = findCycle(graph);
	if (cycle) return { ok: false, problem: { kind: "cycle", path: cycle } };
	const stages = stagesOf(graph, self);
	if (stages > maxStages) return { ok: false, problem: { kind: "too-deep", stages, max: maxStages } };
	return { ok: true, ids };
}

/** A cycle of `after` edges as a path that ends where it starts, or undefined. Edges to unknown ids are ignored. */
export function findCycle(nodes: readonly PipelineNode[]): string[] | undefined {
	const byId = new Map(nodes.map((n) => [n.id, n]));
	const color = new Map<string, 1 | 2>();
	const path: string[] = [];
	const visit = (id: string): string[] | undefined => {
		color.set(id, 1);
		path.push(id);
		for (const next of byId.get(id)?.after ?? []) {
			if (!byId.has(next)) continue;
			if (color.get(next) === 1) return [...path.slice(path.indexOf(next)), next];
			if (!color.has(next)) {
				const found = visit(next);
				if (found) return found;
			}
		}
		path.pop();
		color.set(id, 2);
		return undefined;
	};
	for (const n of nodes) {
		if (color.has(n.id)) continue;
		const found = visit(n.id);
		if (found) return found;
	}
	return undefined;
}

/** Stages of the longest chain ending at `id` (1 for a child with no inputs); the graph must be acyclic. */
export function stagesOf(nodes: readonly PipelineNode[], id: string): number {
	const byId = new Map(nodes.map((n) => [n.id, n]));
	const memo = new Map<string, number>();
	const depth = (at: string): number => {
		const known = memo.get(at);
		if (known !== undefined) return known;
		const inputs = (byId.get(at)?.after ?? []).filter((i) => byId.has(i));
		const d = 1 + inputs.reduce((m, i) => Math.max(m, depth(i)), 0);
		memo.set(at, d);
		return d;
	};
	return depth(id);
}

/** One input that did not complete, and why. */
export interface FailedInput {
	id: string;
	name: string;
	state: ChildState;
	error?: string;
}

/** What a waiting child does now. */
export type Readiness = { act: "wait"; pending: string[] } | { act: "run" } | { act: "skip"; failed: FailedInput[] };

/**
 * Whether a waiting child may start: it waits while any input is unsettled (or unknown: restored without it);
 * once all settled, it runs when all completed, or when `afterFailed` is "run"; otherwise it is skipped,
 * naming the inputs that did not complete.
 */
export function readiness(
	inputs: readonly string[],
	children: readonly PipelineNode[],
	afterFailed: AfterFailed = "skip",
): Readiness {
	const byId = new Map(children.map((c) => [c.id, c]));
	const pending = inputs.filter((id) => {
		const c = byId.get(id);
		return !c || !isSettled(c.state);
	});
	if (pending.length > 0) return { act: "wait", pending };
	const failed = inputs
		.map((id) => byId.get(id)!)
		.filter((c) => c.state !== "completed")
		.map((c) => ({ id: c.id, name: c.name, state: c.state, ...(c.error ? { error: c.error } : {}) }));
	if (failed.length === 0 || afterFailed === "run") return { act: "run" };
	return { act: "skip", failed };
}

/** Waiting children that depend on any of `ids`, directly or through other waiting children, in spawn order. */
export function waitingDependents(children: readonly PipelineNode[], ids: readonly string[]): string[] {
	const reached = new Set(ids);
	const out: string[] = [];
	let grew = true;
	while (grew) {
		grew = false;
		for (const c of children) {
			if (reached.has(c.id) || c.state !== "waiting") continue;
			if ((c.after ?? []).some((i) => reached.has(i))) {
				reached.add(c.id);
				out.push(c.id);
				grew = true;
			}
		}
	}
	return children.map((c) => c.id).filter((id) => out.includes(id));
}

/**
 * Children that take `id`'s result as an input and have not given up on it: waiting for it, or started
 * (a skipped child, or one cancelled before it ever ran, never used it).
 */
export function consumersOf(children: readonly PipelineNode[], id: string): string[] {
	return children
		.filter((c) => (c.after ?? []).includes(id))
		.filter((c) => c.state !== "skipped" && !(c.state === "cancelled" && c.startedAt === undefined))
		.map((c) => c.id);
}

/** Why a child that waited when an earlier process ended cannot be spawned again by `pi -c`. */
export type NotRestorable = { why: "not-recorded" } | { why: "unknown-inputs"; missing: string[] };

/** What `pi -c` does with a run recorded as waiting (queued with inputs, never started, never settled). */
export type RestoreVerdict = { act: "restore"; after: string[] } | { act: "give-up"; problem: NotRestorable };

/**
 * Whether a run an earlier process left waiting can be spawned again: its spawn's parameters must be
 * recorded (a prompt at least) and every input must be a child the restored session knows (`known`).
 */
export function restoreVerdict(
	entry: { after?: unknown; spawn?: unknown },
	known: ReadonlySet<string>,
): RestoreVerdict {
	const spawn = entry.spawn as { prompt?: unknown } | undefined;
	const after = Array.isArray(entry.after) ? entry.after : [];
	if (!spawn || typeof spawn !== "object" || typeof spawn.prompt !== "string" || after.length === 0)
		return { act: "give-up", problem: { why: "not-recorded" } };
	const ids = after.map(String);
	const missing = ids.filter((id) => !known.has(id));
	if (missing.length > 0) return { act: "give-up", problem: { why: "unknown-inputs", missing } };
	return { act: "restore", after: ids };
}

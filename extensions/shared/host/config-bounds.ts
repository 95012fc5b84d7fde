/**
 * What a (trusted) project's `.pi/headroom.json` may change. A project never lifts what the user's own settings
 * bound: security-relevant keys are either the user's alone (which model gets summaries and handoffs, the shared
 * store's pruning, which extensions children load, whether children may exceed their parent's tools), or capped
 * by the user's effective value (depth, concurrency, run time, children's budgets: a project may lower them, and only
 * the user's own file can raise them), or a subset of it (a child's default tools). Pure: plain data in, plain data out.
 */
import type { HeadroomConfig } from "./config-schema.ts";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Keys only the user's own file sets: a project's value is ignored. Whole sections end in no dot. */
export const USER_ONLY_KEYS: readonly string[] = [
	"store",
	"toolArtifacts.summary.model",
	"handoff.model",
	"subagents.toolsBeyondParent",
];

/** Numeric keys a project may only lower: at most the user's effective value. */
export const PROJECT_CEILING_KEYS: readonly string[] = [
	"subagents.maxDepth",
	"subagents.maxConcurrent",
	"subagents.maxRunSeconds",
	"subagents.idleTimeoutSeconds",
	"subagents.askTimeoutSeconds",
	"subagents.maxQuestions",
	"toolArtifacts.summary.timeoutMs",
	"subagents.budget.perChild.tokens",
	"subagents.budget.perChild.cost",
	"subagents.budget.perSession.tokens",
	"subagents.budget.perSession.cost",
];

/** List keys a project may only narrow: a subset of the user's effective list. */
export const PROJECT_SUBSET_KEYS: readonly string[] = ["subagents.defaultTools"];

function at(root: unknown, path: readonly string[]): unknown {
	let node = root;
	for (const key of path) {
		if (!isObject(node)) return undefined;
		node = node[key];
	}
	return node;
}

function remove(root: Json, path: readonly string[]): void {
	const parent = at(root, path.slice(0, -1));
	if (isObject(parent)) delete parent[path[path.length - 1]];
}

function set(root: Json, path: readonly string[], value: unknown): void {
	const parent = at(root, path.slice(0, -1));
	if (isObject(parent)) parent[path[path.length - 1]] = value;
}

/**
 * The project file's valid keys with every security-relevant one bounded by `user` (the configuration the user's
 * own file gives, defaults included), and one warning per key it changed. `userFile` is named so the person
 * knows where a bound can be raised. Never mutates its input.
 */
export function boundProjectConfig(
	project: Json,
	user: HeadroomConfig,
	files: { project: string; user: string },
): { config: Json; warnings: string[] } {
	const out = structuredClone(project);
	const warnings: string[] = [];
	const raise = `only ${files.user} can set or raise it`;
	for (const key of USER_ONLY_KEYS) {
		const path = key.split(".");
		if (at(out, path) === undefined) continue;
		remove(out, path);
		warnings.push(`${files.project}: "${key}" ignored: a project cannot set it (${raise})`);
	}
	// A project may turn children's extensions off, never choose which of yours they load.
	const extensions = at(out, ["subagents", "childExtensions"]);
	if (extensions !== undefined && extensions !== false) {
		remove(out, ["subagents", "childExtensions"]);
		warnings.push(
			`${files.project}: "subagents.childExtensions" ignored: a project can only set it to false (${raise})`,
		);
	}
	for (const key of PROJECT_CEILING_KEYS) {
		const path = key.split(".");
		const value = at(out, path);
		const ceiling = at(user, path);
		if (typeof value !== "number" || typeof ceiling !== "number" || value <= ceiling) continue;
		set(out, path, ceiling);
		warnings.push(`${files.project}: "${key}" ${value} is above your limit ${ceiling}; using ${ceiling} (${raise})`);
	}
	for (const key of PROJECT_SUBSET_KEYS) {
		const path = key.split(".");
		const value = at(out, path);
		const allowed = at(user, path);
		if (!Array.isArray(value) || !Array.isArray(allowed)) continue;
		const beyond = value.filter((v) => !allowed.includes(v));
		if (beyond.length === 0) continue;
		set(
			out,
			path,
			value.filter((v) => allowed.includes(v)),
		);
		warnings.push(`${files.project}: "${key}" ${beyond.join(", ")} not among yours; left out (${raise})`);
	}
	return { config: out, warnings };
}

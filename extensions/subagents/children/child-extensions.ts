/**
 * Which of the user's extensions a child keeps, and which tools it gets: pure decisions over what
 * Pi's resource loader loaded (paths, tool names, load errors). The backend applies them.
 *
 * An extension is known by a few names: its file name without extension (`websearch.ts` →
 * `websearch`), its folder for an `index.*` entry (`extensions/mcp-tools/index.ts` → `mcp-tools`),
 * a Pi 1.x built-in's own name (`builtin:mcp` → `mcp`), and the folder of the package it came from.
 */
import type { ExtensionPolicy } from "../agents/agents.ts";

/** What the backend knows of one loaded extension. */
export interface LoadedExtension {
	/** Pi's path for it (a file, `builtin:<name>`, or `<inline:…>` for factories passed in). */
	path: string;
	/** Tool names it registered. */
	tools: string[];
	/** The package folder it came from, if any (Pi's sourceInfo.baseDir for package resources). */
	packageDir?: string;
}

/** Every extension Pi would load: the default policy. */
export const ALL_EXTENSIONS: ExtensionPolicy = Object.freeze({ mode: "all", include: [], exclude: [] });

const lastSegment = (path: string) => path.split(/[\\/]/).filter(Boolean).pop() ?? path;

/** Whether a path is an inline factory this package passed in (never filtered: it is the nested subagents). */
export function isInline(path: string): boolean {
	return path.startsWith("<inline:");
}

/** The names an extension answers to in an `extensions` list. */
export function extensionNames(path: string, packageDir?: string): string[] {
	const names = new Set<string>();
	if (path.startsWith("builtin:")) names.add(path.slice("builtin:".length));
	else if (!isInline(path)) {
		const parts = path.split(/[\\/]/).filter(Boolean);
		const file = parts[parts.length - 1] ?? path;
		const stem = file.replace(/\.(m|c)?(t|j)sx?$/i, "");
		if (stem.toLowerCase() === "index" && parts.length >= 2) names.add(parts[parts.length - 2]);
		else names.add(stem);
	}
	if (packageDir) names.add(lastSegment(packageDir));
	return [...names].filter((n) => n.length > 0);
}

/** Whether a policy lets an extension with these names load. */
export function allowedByPolicy(policy: ExtensionPolicy, names: readonly string[]): boolean {
	if (policy.mode === "none") return false;
	if (names.some((n) => policy.exclude.includes(n))) return false;
	if (policy.mode === "only") return names.some((n) => policy.include.includes(n));
	return true;
}

/**
 * The policy that applies: the spawn's own, else the agent file's, else the global setting.
 * A spawn or agent file that names extensions replaces the default wholesale.
 */
export function effectivePolicy(
	spawn: ExtensionPolicy | undefined,
	agent: ExtensionPolicy | undefined,
	global: ExtensionPolicy,
): ExtensionPolicy {
	return spawn ?? agent ?? global;
}

/**
 * Which loaded extensions a child keeps: inline ones (the nested subagents extension) always; others
 * when the policy allows them and they do not register this package's subagent tools (another copy of
 * this package's subagents extension, installed as a package, must not give a child spawn tools past
 * the depth limit).
 */
export function keepExtension(
	ext: LoadedExtension,
	policy: ExtensionPolicy,
	subagentTools: readonly string[],
): boolean {
	if (isInline(ext.path)) return true;
	if (ext.tools.some((t) => subagentTools.includes(t))) return false;
	return allowedByPolicy(policy, extensionNames(ext.path, ext.packageDir));
}

/** Pi's own wording for a name clash between extensions: a diagnostic, not a failure (Pi keeps loading). */
const CONFLICT = /^(Tool|Flag|Command|Shortcut) "[^"]*" conflicts with /;

/**
 * The first load error that must fail the child's start: an extension the policy keeps that did not load.
 * Clashes are diagnostics Pi itself tolerates; errors of excluded extensions do not matter to this child.
 */
export function fatalLoadError(
	errors: ReadonlyArray<{ path: string; error: string }>,
	policy: ExtensionPolicy,
): { path: string; error: string; name: string } | undefined {
	for (const e of errors) {
		if (CONFLICT.test(e.error)) continue;
		const names = extensionNames(e.path);
		if (!isInline(e.path) && !allowedByPolicy(policy, names)) continue;
		return { ...e, name: names[0] ?? e.path };
	}
	return undefined;
}

/**
 * The child's tool allowlist. An exact list (from the spawn or the agent file) is the whole set;
 * otherwise the base tools plus every tool of the extensions it kept. `missing` names listed tools no
 * built-in and no kept extension provides.
 */
export function childToolAllowlist(options: {
	base: readonly string[];
	exact: boolean;
	builtIn: readonly string[];
	extensionTools: readonly string[];
}): { tools: string[]; missing: string[] } {
	const provided = new Set([...options.builtIn, ...options.extensionTools]);
	if (options.exact) {
		const tools = [...new Set(options.base)];
		return { tools, missing: tools.filter((t) => !provided.has(t)) };
	}
	const tools = [...new Set([...options.base, ...options.extensionTools])];
	return { tools, missing: options.base.filter((t) => !provided.has(t)) };
}

/** Read-only search tools a parent with `read` is taken to have (Pi activates only read, bash, edit, write by default). */
export const READ_COMPANIONS: readonly string[] = ["grep", "find", "ls"];

/**
 * A child's tools within its parent's active ones: `kept` in order, `beyond` the ones the parent lacks. Only Pi's
 * own tools (`builtIns`: read, bash, edit, write, grep, find, ls, and on 1.x those of its built-in extensions such
 * as codemode and tool_search) are bounded here, and a parent with `read` counts as having grep, find and ls; the
 * user's extension tools come with the extensions a child loads, which the user's own `subagents.childExtensions`
 * decides, and this package's subagent tools with the depth limit. No bound (undefined): every tool is kept.
 */
export function boundByParent(
	tools: readonly string[],
	bound: readonly string[] | undefined,
	builtIns: readonly string[],
): { kept: string[]; beyond: string[] } {
	if (!bound) return { kept: [...tools], beyond: [] };
	const has = new Set(bound);
	if (has.has("read")) for (const t of READ_COMPANIONS) has.add(t);
	const kept: string[] = [];
	const beyond: string[] = [];
	for (const t of tools) (!builtIns.includes(t) || has.has(t) ? kept : beyond).push(t);
	return { kept, beyond };
}

/**
 * User configuration: loading. The schema (one zod object with defaults, one section per extension) is
 * ./config-schema.ts; the `surfaces` section and surface resolution are ./config-surfaces.ts.
 *
 * Read from <agentDir>/headroom.json, then <cwd>/.pi/headroom.json when the project is trusted (deep-merged, the
 * project file wins within the bounds the user's own file sets; arrays are replaced, not merged). A bad value or an unknown key produces a warning that
 * names the key path and the file, and only that key falls back to its default. An unreadable
 * file or invalid JSON produces a warning and contributes nothing. loadConfig never throws.
 */
import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { boundProjectConfig } from "./config-bounds.ts";
import { DEFAULT_CONFIG, defaultConfig } from "./config-defaults.ts";
import {
	CONFIG_FILE_NAME,
	type HeadroomConfig,
	headroomConfigSchema,
	MAX_CONFIG_FILE_BYTES,
	TIMER_KEYS,
} from "./config-schema.ts";
import { surfaceFallback, surfaceKeysHint } from "./config-surfaces.ts";

export { DEFAULT_CONFIG, defaultConfig } from "./config-defaults.ts";
export {
	CONFIG_FILE_NAME,
	type HeadroomConfig,
	headroomConfigSchema,
	MAX_CONFIG_FILE_BYTES,
} from "./config-schema.ts";
export {
	CONFIGURABLE_SURFACES,
	type ConfigurableSurface,
	configuredSurface,
	projectionHeadShare,
	SURFACE_ALIASES,
	type SurfaceOverrides,
	type SurfaceSource,
	surfaceFor,
} from "./config-surfaces.ts";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const keyPath = (path: readonly PropertyKey[]): string => path.map(String).join(".");

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
	let node = root;
	for (const key of path) {
		if (!isObject(node)) return undefined;
		node = node[key as string];
	}
	return node;
}

function deleteAt(root: Json, path: readonly PropertyKey[]): void {
	const parent = valueAt(root, path.slice(0, -1));
	if (isObject(parent)) delete parent[path[path.length - 1] as string];
}

/** Project file over agent file; objects merge key by key, anything else is replaced. */
function deepMerge(base: Json, over: Json): Json {
	const out: Json = { ...base };
	for (const [key, value] of Object.entries(over)) {
		out[key] = isObject(value) && isObject(out[key]) ? deepMerge(out[key] as Json, value) : value;
	}
	return out;
}

function describeDefault(path: readonly PropertyKey[]): string {
	if (path[0] === "surfaces") return path.length === 3 ? surfaceFallback(String(path[1]), String(path[2])) : "ignored";
	const fallback = valueAt(DEFAULT_CONFIG, path);
	if (fallback === undefined) return "ignored";
	return isObject(fallback) ? "using the defaults of that section" : `using the default ${JSON.stringify(fallback)}`;
}

function knownKeysHint(path: readonly PropertyKey[], key: string): string {
	if (path[0] === "surfaces") return surfaceKeysHint(path, key);
	const known = valueAt(DEFAULT_CONFIG, path);
	return isObject(known) ? ` (known keys: ${Object.keys(known).join(", ")})` : "";
}

/**
 * Drop every key of `raw` that the schema rejects, with one warning each, so the rest of the
 * file still applies. Array elements are not dropped one by one: the whole array falls back.
 */
function keepValidKeys(raw: Json, file: string, warnings: string[]): Json {
	const candidate = structuredClone(raw);
	delete candidate.$schema; // editors' schema hint, not a setting
	for (let round = 0; round < 64; round++) {
		const parsed = headroomConfigSchema().safeParse(candidate);
		if (parsed.success) return candidate;
		for (const issue of parsed.error.issues) {
			if (issue.code === "unrecognized_keys") {
				for (const key of issue.keys) {
					const hint = knownKeysHint(issue.path, key);
					warnings.push(`${file}: unknown key "${keyPath([...issue.path, key])}" ignored${hint}`);
					deleteAt(candidate, [...issue.path, key]);
				}
				continue;
			}
			const firstIndex = issue.path.findIndex((k) => typeof k === "number");
			const path = firstIndex >= 0 ? issue.path.slice(0, firstIndex) : issue.path;
			// A delay beyond the runtime's longest timer would fire at once: it is clamped to that limit, not dropped.
			const parent = valueAt(candidate, path.slice(0, -1));
			if (issue.code === "too_big" && TIMER_KEYS.has(keyPath(path)) && isObject(parent)) {
				const limit = Number((issue as { maximum?: unknown }).maximum);
				parent[path[path.length - 1] as string] = limit;
				warnings.push(`${file}: "${keyPath(path)}": ${issue.message}; clamped to ${limit}`);
				continue;
			}
			if (path.length === 0) {
				warnings.push(`${file}: ${issue.message}; the file is ignored`);
				return {};
			}
			warnings.push(`${file}: "${keyPath(path)}": ${issue.message}; ${describeDefault(path)}`);
			deleteAt(candidate, path);
		}
	}
	warnings.push(`${file}: could not be validated; the file is ignored`);
	return {};
}

/** The file's JSON object, or undefined (with a warning unless the file simply does not exist). */
function readConfigFile(file: string, warnings: string[]): Json | undefined {
	let text: string;
	try {
		const stats = statSync(file);
		if (!stats.isFile()) {
			warnings.push(`${file}: not a regular file; ignored`);
			return undefined;
		}
		if (stats.size > MAX_CONFIG_FILE_BYTES) {
			warnings.push(`${file}: larger than ${MAX_CONFIG_FILE_BYTES} bytes; ignored`);
			return undefined;
		}
		text = readFileSync(file, "utf8");
	} catch (error) {
		const code = (error as NodeJS.ErrnoException)?.code;
		if (code === "ENOENT" || code === "ENOTDIR") return undefined;
		warnings.push(`${file}: cannot be read (${code ?? String(error)}); ignored`);
		return undefined;
	}
	let parsed: unknown;
	try {
		parsed = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
	} catch (error) {
		warnings.push(`${file}: invalid JSON (${(error as Error).message}); ignored`);
		return undefined;
	}
	if (!isObject(parsed)) {
		warnings.push(`${file}: expected a JSON object at the top level; ignored`);
		return undefined;
	}
	return parsed;
}

/**
 * Why a project's configuration file is not read though the project is trusted: a symbolic link (it could point at
 * any file of yours), or a file (or `.pi` folder) another user owns. Undefined when it is fine or absent.
 */
function unsafeProjectFile(file: string): string | undefined {
	const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
	for (const path of [dirname(file), file]) {
		let st: ReturnType<typeof lstatSync>;
		try {
			st = lstatSync(path);
		} catch {
			return undefined; // absent: nothing to read
		}
		if (st.isSymbolicLink()) return `${path}: a symbolic link; not followed, the project's configuration is ignored`;
		if (uid !== undefined && st.uid !== uid) return `${path}: not owned by you; the project's configuration is ignored`;
	}
	return undefined;
}

/** Paths of the two configuration files, in the order they apply. */
export function configFilePaths(opts: { agentDir: string; cwd: string }): { user: string; project: string } {
	return { user: join(opts.agentDir, CONFIG_FILE_NAME), project: join(opts.cwd, ".pi", CONFIG_FILE_NAME) };
}

/** Whether Pi trusts the project's own files: a Pi-line shim, defined with the others in ./pi-host.ts. */
export { projectTrusted } from "./pi-host.ts";

/**
 * The effective configuration and every problem found on the way; never throws. An untrusted project's
 * `.pi/headroom.json` is not read (it could point summaries at another model, or widen a child's tools); a
 * trusted one is bounded by the user's own settings (./config-bounds.ts). `untrustedHint` says why the project is
 * not trusted and how to trust it, in the warning that names the ignored file.
 */
export function loadConfig(opts: { agentDir: string; cwd: string; projectTrusted?: boolean; untrustedHint?: string }): {
	config: HeadroomConfig;
	warnings: string[];
} {
	const warnings: string[] = [];
	try {
		const { user, project } = configFilePaths(opts);
		const userRaw = readConfigFile(user, warnings);
		let merged: Json = userRaw ? keepValidKeys(userRaw, user, warnings) : {};
		let read = userRaw !== undefined;
		if (opts.projectTrusted !== false) {
			const unsafe = unsafeProjectFile(project);
			if (unsafe) warnings.push(unsafe);
			const projectRaw = unsafe ? undefined : readConfigFile(project, warnings);
			if (projectRaw) {
				read = true;
				const userParsed = headroomConfigSchema().safeParse(merged);
				const bounded = boundProjectConfig(
					keepValidKeys(projectRaw, project, warnings),
					userParsed.success ? userParsed.data : defaultConfig(),
					{ project, user },
				);
				warnings.push(...bounded.warnings);
				merged = deepMerge(merged, bounded.config);
			}
		} else if (existsSync(project)) {
			warnings.push(`${project}: ignored: ${opts.untrustedHint ?? "this project is not trusted"}`);
		}
		// No file: the defaults as plain data, without loading the schema (start-up; docs/startup.md).
		if (!read) return { config: defaultConfig(), warnings };
		const parsed = headroomConfigSchema().safeParse(merged);
		if (parsed.success) return { config: parsed.data, warnings };
		warnings.push(`configuration rejected after merging (${parsed.error.message}); using defaults`);
	} catch (error) {
		warnings.push(`configuration could not be loaded (${String(error)}); using defaults`);
	}
	return { config: defaultConfig(), warnings };
}

/** Shared across module copies: Pi may load each extension with its own instance of this module. */
const SEEN_WARNINGS = Symbol.for("pi-context-headroom.config-warnings-seen");

/**
 * The warnings not yet shown by this process. Every extension reads the same files, so without this one bad key
 * would be reported once per loaded extension; each warning names its file and key, so a changed file warns again.
 */
export function unseenConfigWarnings(warnings: readonly string[]): string[] {
	const holder = globalThis as { [SEEN_WARNINGS]?: Set<string> };
	holder[SEEN_WARNINGS] ??= new Set();
	const seen = holder[SEEN_WARNINGS];
	const fresh: string[] = [];
	for (const warning of warnings) {
		if (seen.has(warning)) continue;
		seen.add(warning);
		fresh.push(warning);
	}
	return fresh;
}

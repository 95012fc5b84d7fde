/**
 * User configuration: one zod schema with defaults, one section per extension.
 *
 * Read from <agentDir>/headroom.json, then <cwd>/.pi/headroom.json (deep-merged, the project file
 * wins; arrays are replaced, not merged). A bad value or an unknown key produces a warning that
 * names the key path and the file, and only that key falls back to its default. An unreadable
 * file or invalid JSON produces a warning and contributes nothing. loadConfig never throws.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { DEFAULT_HEADROOM_SHARE, STATIC_CAPS, type Surface } from "../budget/batch.ts";
import { DEFAULT_HEAD_SHARE, MIN_WINDOW_BYTES, MIN_WINDOW_LINES } from "../projection/projection.ts";
import { resolveSurface, SURFACES, type SurfaceBudget, type SurfaceName, type SurfaceOverride } from "../surfaces.ts";

/** File name of the configuration, in the agent dir and in <cwd>/.pi/. */
export const CONFIG_FILE_NAME = "headroom.json";
/** Larger files are not read: a configuration is a few hundred bytes. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

const GIB = 1024 * 1024 * 1024;
const MODEL_REF = /^[^/\s]+\/\S+$/;

const positiveInt = () => z.number().int().positive();
const nonNegativeInt = () => z.number().int().nonnegative();
const modelRef = () => z.string().regex(MODEL_REF, { error: 'expected "provider/model-id"' }).optional();

const surfaceCaps = (surface: Surface) =>
	z
		.strictObject({
			batchBytes: positiveInt().default(STATIC_CAPS[surface].batchBytes),
			perResultBytes: positiveInt().min(MIN_WINDOW_BYTES).default(STATIC_CAPS[surface].perResultBytes),
			perResultLines: positiveInt().min(MIN_WINDOW_LINES).default(STATIC_CAPS[surface].perResultLines),
		})
		.prefault({});

/**
 * Surfaces a user may override by name in the `surfaces` section: the ones resolved per call from the
 * configuration. Other entries of the table are fixed (module constants, list caps); naming one warns.
 */
export const CONFIGURABLE_SURFACES = [
	"toolArtifacts.stub.command",
	"toolArtifacts.stub.search",
	"toolArtifacts.stub.listing",
	"toolArtifacts.stub.structured",
	"toolArtifacts.stub.web",
	"toolArtifacts.stub.file",
	"toolArtifacts.stub.unknown",
	"toolArtifacts.summary",
	"toolArtifacts.summaryInput",
] as const satisfies readonly SurfaceName[];
export type ConfigurableSurface = (typeof CONFIGURABLE_SURFACES)[number];
/** The validated `surfaces` section: per surface name, the limits the user set. */
export type SurfaceOverrides = Partial<Record<ConfigurableSurface, SurfaceOverride>>;

const surfaceOverride = z.strictObject({
	/** UTF-8 bytes of the whole text of the surface (at least two minimum windows: a stub has a header and footer). */
	maxBytes: positiveInt()
		.min(2 * MIN_WINDOW_BYTES)
		.optional(),
	/** Lines of the whole text of the surface. */
	maxLines: positiveInt().min(MIN_WINDOW_LINES).optional(),
	/** Share of the body kept at the head, 0..1. */
	headShare: z.number().min(0).max(1).optional(),
});

export const headroomConfigSchema = z
	.strictObject({
		/** By-name overrides of the table of budgets; an entry here wins over the older alias keys. */
		surfaces: z
			.partialRecord(z.enum(CONFIGURABLE_SURFACES, { error: "not a configurable surface name" }), surfaceOverride)
			.default(() => ({})),
		projection: z
			.strictObject({
				/** Share of a projection's body given to the head, 0..1. */
				headShare: z.number().min(0).max(1).default(DEFAULT_HEAD_SHARE),
			})
			.prefault({}),
		store: z
			.strictObject({
				/** Artifacts older than this many days are pruned. */
				maxAgeDays: z.number().positive().default(30),
				/** Pruning removes the oldest artifacts until the store is at most this many bytes. */
				maxTotalBytes: positiveInt().default(GIB),
				/** Artifacts younger than this many hours are never pruned. */
				minAgeHours: z.number().nonnegative().default(24),
			})
			.prefault({}),
		budgets: z
			.strictObject({
				/** Share of the context headroom one batch of results may use, (0, 1]. */
				headroomShare: z.number().gt(0).max(1).default(DEFAULT_HEADROOM_SHARE),
				autoDelivery: surfaceCaps("autoDelivery"),
				wait: surfaceCaps("wait"),
				check: surfaceCaps("check"),
			})
			.prefault({}),
		subagents: z
			.strictObject({
				maxConcurrent: positiveInt().default(4),
				/** How deep subagents may nest (1 = children cannot spawn). */
				maxDepth: nonNegativeInt().default(1),
				idleTimeoutSeconds: z.number().positive().default(120),
				maxRunSeconds: z.number().positive().default(1800),
				defaultTools: z.array(z.string().min(1)).default(() => ["read", "bash", "edit", "write", "grep", "find", "ls"]),
				/** Minimum milliseconds between two status polls of the same child. */
				pollThrottleMs: nonNegativeInt().default(1000),
				/**
				 * Which of the user's extensions a child loads unless its agent file or spawn says otherwise:
				 * true = what Pi would load for a new session in the child's cwd, false = none, or a list of
				 * names ("!name" excludes one).
				 */
				childExtensions: z
					.union([z.boolean(), z.array(z.string().min(1))], {
						error: 'expected true, false or a list of extension names ("!name" excludes one)',
					})
					.default(true),
				/** Whether `.claude/agents/*.md` (project and home) are read as agent files too. */
				claudeAgents: z.boolean().default(true),
			})
			.prefault({}),
		toolArtifacts: z
			.strictObject({
				enabled: z.boolean().default(true),
				/** Tool results longer than this many characters become artifacts. */
				thresholdChars: positiveInt().default(12_000),
				/** Per-tool threshold in characters, or false to leave that tool's results alone. */
				perTool: z
					.record(
						z.string(),
						z.union([positiveInt(), z.literal(false)], { error: "expected a positive integer or false" }),
					)
					.default(() => ({})),
				/** Characters of tool output one turn may add before further results are stored. */
				turnCapChars: positiveInt().default(100_000),
				/** UTF-8 bytes of a whole stub (header, body, footer line). */
				stubMaxBytes: positiveInt()
					.min(2 * MIN_WINDOW_BYTES)
					.default(SURFACES["toolArtifacts.stub.unknown"].maxBytes),
				/** Lines of a whole stub. */
				stubMaxLines: positiveInt().min(MIN_WINDOW_LINES).default(SURFACES["toolArtifacts.stub.unknown"].maxLines),
				/** Tool name → output kind, for tools whose names do not say what they return. */
				toolClasses: z
					.record(z.string(), z.enum(["command", "search", "listing", "structured", "web", "file", "unknown"]))
					.default(() => ({})),
				summary: z
					.strictObject({
						enabled: z.boolean().default(true),
						model: modelRef(),
						timeoutMs: positiveInt().default(30_000),
						maxInputChars: positiveInt().default(SURFACES["toolArtifacts.summaryInput"].maxBytes),
						maxOutputTokens: positiveInt().default(2048),
						temperature: z.number().min(0).max(2).default(0.3),
					})
					.prefault({}),
			})
			.prefault({}),
		handoff: z
			.strictObject({
				enabled: z.boolean().default(true),
				model: modelRef(),
				userMessagesBudgetBytes: positiveInt().default(SURFACES["handoff.userMessages"].maxBytes),
				/** After a staged handoff: "auto" resumes the task when the run ended mid-task. */
				resume: z.enum(["auto", "always", "never"]).default("auto"),
				probe: z
					.strictObject({
						enabled: z.boolean().default(true),
						/** Fixed threshold in free tokens; absent = Pi's reserve + the margin below. */
						freeTokensThreshold: positiveInt().optional(),
						/** Least margin above Pi's compaction reserve at which staging starts, in tokens. */
						marginTokens: positiveInt().default(8192),
						/** Turns of context growth the margin covers (raised when handoffs are measured slower). */
						leadTurns: positiveInt().default(4),
						/** Tokens of new history after which a staged handoff is stale; absent = max(keepRecentTokens, 60% of window − reserve). */
						maxStaleTokens: positiveInt().optional(),
					})
					.prefault({}),
			})
			.prefault({}),
		exposure: z
			.strictObject({
				/**
				 * Pi 1.x with tool_search active: register the rarely used tools (subagent_check/send/cancel/list,
				 * recall_artifact) deferred, so their schemas stay out of every request until tool_search loads them.
				 */
				deferRareTools: z.boolean().default(true),
			})
			.prefault({}),
		contextTrim: z
			.strictObject({
				enabled: z.boolean().default(true),
				safetyMarginTokens: nonNegativeInt().default(2048),
				/** Tokens kept free for the answer; absent = the model's maxTokens. */
				reserveTokens: positiveInt().optional(),
				/** The trim cut moves in steps of about this many tokens (at most a quarter of the tail budget). */
				cutStepTokens: positiveInt().default(16_384),
			})
			.prefault({}),
	})
	.prefault({});

export type HeadroomConfig = z.output<typeof headroomConfigSchema>;

function deepFreeze<T>(value: T): T {
	if (value && typeof value === "object") {
		for (const v of Object.values(value)) deepFreeze(v);
		Object.freeze(value);
	}
	return value;
}

/** Every default, frozen. loadConfig returns a fresh, unfrozen object. */
export const DEFAULT_CONFIG: HeadroomConfig = deepFreeze(headroomConfigSchema.parse({}));

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
	if (path[0] === "surfaces") {
		const entry = SURFACES[path[1] as SurfaceName] as SurfaceBudget | undefined;
		const field = path[2] as keyof SurfaceOverride | undefined;
		if (entry && field) return `using the alias key or the table's ${JSON.stringify(entry[field] ?? "default")}`;
		return "ignored";
	}
	const fallback = valueAt(DEFAULT_CONFIG, path);
	if (fallback === undefined) return "ignored";
	return isObject(fallback) ? "using the defaults of that section" : `using the default ${JSON.stringify(fallback)}`;
}

function knownKeysHint(path: readonly PropertyKey[]): string {
	if (path[0] === "surfaces") {
		const keys = path.length === 1 ? CONFIGURABLE_SURFACES : Object.keys(surfaceOverride.shape);
		return ` (known ${path.length === 1 ? "surfaces" : "keys"}: ${keys.join(", ")})`;
	}
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
		const parsed = headroomConfigSchema.safeParse(candidate);
		if (parsed.success) return candidate;
		for (const issue of parsed.error.issues) {
			if (issue.code === "unrecognized_keys") {
				const hint = knownKeysHint(issue.path);
				for (const key of issue.keys) {
					warnings.push(`${file}: unknown key "${keyPath([...issue.path, key])}" ignored${hint}`);
					deleteAt(candidate, [...issue.path, key]);
				}
				continue;
			}
			const firstIndex = issue.path.findIndex((k) => typeof k === "number");
			const path = firstIndex >= 0 ? issue.path.slice(0, firstIndex) : issue.path;
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

/** Paths of the two configuration files, in the order they apply. */
export function configFilePaths(opts: { agentDir: string; cwd: string }): { user: string; project: string } {
	return { user: join(opts.agentDir, CONFIG_FILE_NAME), project: join(opts.cwd, ".pi", CONFIG_FILE_NAME) };
}

/** Whether Pi trusts the project's own files: a Pi-line shim, defined with the others in ./pi-host.ts. */
export { projectTrusted } from "./pi-host.ts";

/**
 * The effective configuration and every problem found on the way; never throws. An untrusted project's
 * `.pi/headroom.json` is not read (it could point summaries at another model, or widen a child's tools).
 */
export function loadConfig(opts: { agentDir: string; cwd: string; projectTrusted?: boolean }): {
	config: HeadroomConfig;
	warnings: string[];
} {
	const warnings: string[] = [];
	try {
		const { user, project } = configFilePaths(opts);
		let merged: Json = {};
		const files = [user];
		if (opts.projectTrusted !== false) files.push(project);
		else if (existsSync(project)) warnings.push(`${project}: ignored because Pi does not trust this project`);
		for (const file of files) {
			const raw = readConfigFile(file, warnings);
			if (raw) merged = deepMerge(merged, keepValidKeys(raw, file, warnings));
		}
		const parsed = headroomConfigSchema.safeParse(merged);
		if (parsed.success) return { config: parsed.data, warnings };
		warnings.push(`configuration rejected after merging (${parsed.error.message}); using defaults`);
	} catch (error) {
		warnings.push(`configuration could not be loaded (${String(error)}); using defaults`);
	}
	return { config: headroomConfigSchema.parse({}), warnings };
}

/**
 * The budget of a configurable surface: the table's entry, under the older alias keys (`alias`, e.g.
 * toolArtifacts.stubMaxBytes), under the user's by-name `surfaces` entry, which wins field by field.
 */
export function configuredSurface(
	name: ConfigurableSurface,
	alias: SurfaceOverride,
	overrides: SurfaceOverrides | undefined,
): SurfaceBudget {
	const own = overrides?.[name] ?? {};
	return resolveSurface(name, {
		maxBytes: own.maxBytes ?? alias.maxBytes,
		maxLines: own.maxLines ?? alias.maxLines,
		headShare: own.headShare ?? alias.headShare,
	});
}

function isShare(value: unknown): value is number {
	return typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1;
}

/**
 * The head share a projection uses: an explicit share (0..1) wins, else the configured
 * projection.headShare, else DEFAULT_HEAD_SHARE. Callers with no share of their own pass only the config.
 */
export function projectionHeadShare(config?: { projection?: { headShare?: number } }, explicit?: number): number {
	if (isShare(explicit)) return explicit;
	const configured = config?.projection?.headShare;
	return isShare(configured) ? configured : DEFAULT_HEAD_SHARE;
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

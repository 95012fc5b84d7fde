/**
 * The `surfaces` section of the configuration, and how any surface of the table is resolved from a loaded
 * configuration, per call: the table's entry, under its alias keys (the older configuration keys, kept
 * working), under the user's by-name entry `surfaces.<name>`, field by field; a surface with no head share
 * of its own takes `projection.headShare`. Clipped and fixed surfaces resolve to the table's entry.
 *
 * Reads a configuration as plain data (no import of the schema module), so the schema can embed this section.
 */
import type * as Zod from "zod";
import { DEFAULT_HEAD_SHARE, MIN_WINDOW_BYTES, MIN_WINDOW_LINES } from "../projection/projection.ts";
import {
	type OverridableField,
	overridableFields,
	resolveSurface,
	SURFACE_NAMES,
	SURFACES,
	type SurfaceBudget,
	type SurfaceName,
	type SurfaceOverride,
} from "../surfaces.ts";
import type { ZodApi } from "./zod.ts";

/**
 * Every surface a user may override by name (those with overridable fields), the tool-artifacts ones first
 * (the first configurable ones), then the others in table order.
 */
export const CONFIGURABLE_SURFACES: readonly SurfaceName[] = Object.freeze([
	...SURFACE_NAMES.filter((n) => n.startsWith("toolArtifacts.") && overridableFields(n).length > 0),
	...SURFACE_NAMES.filter((n) => !n.startsWith("toolArtifacts.") && overridableFields(n).length > 0),
]);
export type ConfigurableSurface = SurfaceName;
/** The validated `surfaces` section: per surface name, the fields the user set. */
export type SurfaceOverrides = Partial<Record<SurfaceName, SurfaceOverride>>;

const STUB_ALIAS = Object.freeze({ maxBytes: "toolArtifacts.stubMaxBytes", maxLines: "toolArtifacts.stubMaxLines" });

/**
 * The older keys that still set a surface's field, as key paths of the configuration. A `surfaces` entry
 * wins over them; they win over the table (their defaults are the table's figures).
 */
export const SURFACE_ALIASES: Readonly<Partial<Record<SurfaceName, Partial<Record<OverridableField, string>>>>> =
	Object.freeze({
		"subagents.autoDelivery": batchAlias("autoDelivery"),
		"subagents.wait": batchAlias("wait"),
		"subagents.check": batchAlias("check"),
		...Object.fromEntries(
			["command", "search", "listing", "structured", "web", "file", "unknown"].map((kind) => [
				`toolArtifacts.stub.${kind}`,
				STUB_ALIAS,
			]),
		),
		"toolArtifacts.summary": STUB_ALIAS,
		"toolArtifacts.summaryInput": { maxBytes: "toolArtifacts.summary.maxInputChars" },
		// Lines never bind on these two (a line is at least one byte): the byte key sets both, as it always did.
		"handoff.task": { maxBytes: "handoff.userMessagesBudgetBytes", maxLines: "handoff.userMessagesBudgetBytes" },
		"handoff.userMessages": {
			maxBytes: "handoff.userMessagesBudgetBytes",
			maxLines: "handoff.userMessagesBudgetBytes",
		},
	});

function batchAlias(key: string): Partial<Record<OverridableField, string>> {
	return {
		maxBytes: `budgets.${key}.perResultBytes`,
		maxLines: `budgets.${key}.perResultLines`,
		batchBytes: `budgets.${key}.batchBytes`,
	};
}

/** The `surfaces` section: one optional entry per configurable surface; any other name is an unknown key. */
export function surfacesSectionSchema(z: ZodApi) {
	const positiveInt = () => z.number().int().positive();
	/** The schema of each field (bytes at least two minimum windows: a stub has a header and a footer). */
	const FIELD_SCHEMAS = {
		/** UTF-8 bytes of the whole text of the surface (of one result, on a batch surface). */
		maxBytes: positiveInt()
			.min(2 * MIN_WINDOW_BYTES)
			.optional(),
		/** Lines of the whole text of the surface. */
		maxLines: positiveInt().min(MIN_WINDOW_LINES).optional(),
		/** Share of the body kept at the head, 0..1. */
		headShare: z.number().min(0).max(1).optional(),
		/** UTF-8 bytes of a whole batch of results (batch surfaces). */
		batchBytes: positiveInt()
			.min(2 * MIN_WINDOW_BYTES)
			.optional(),
	};
	const anyOverride = z.strictObject(FIELD_SCHEMAS);

	/**
	 * A surface whose own default is below the general minimum (a part added on top of a stub, not a window
	 * of its own) takes its default as its minimum, so a user can always set the value the table ships.
	 */
	function fieldSchema(name: SurfaceName, field: OverridableField) {
		const entry = SURFACES[name];
		if (field === "maxBytes" && entry.maxBytes < 2 * MIN_WINDOW_BYTES) {
			return positiveInt().min(entry.maxBytes).optional();
		}
		if (field === "maxLines" && entry.maxLines < MIN_WINDOW_LINES) {
			return positiveInt().min(entry.maxLines).optional();
		}
		return FIELD_SCHEMAS[field];
	}

	function overrideSchema(name: SurfaceName): typeof anyOverride {
		const shape = Object.fromEntries(overridableFields(name).map((f) => [f, fieldSchema(name, f)]));
		return z.strictObject(shape) as unknown as typeof anyOverride;
	}

	return z
		.strictObject(
			Object.fromEntries(CONFIGURABLE_SURFACES.map((n) => [n, overrideSchema(n).optional()])) as Record<
				SurfaceName,
				Zod.z.ZodOptional<typeof anyOverride>
			>,
		)
		.default(() => ({}));
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function valueAtPath(root: unknown, path: string): unknown {
	let node = root;
	for (const key of path.split(".")) {
		if (!isObject(node)) return undefined;
		node = node[key];
	}
	return node;
}

function isShare(value: unknown): value is number {
	return typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1;
}

/** A field's value when it is usable, else undefined (a configuration built by hand is not validated). */
function usable(field: OverridableField, value: unknown): number | undefined {
	if (field === "headShare") return isShare(value) ? value : undefined;
	return Number.isSafeInteger(value) && (value as number) > 0 ? (value as number) : undefined;
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

/** What resolution reads of a configuration: its `surfaces`, `projection` and alias keys (any may be absent). */
export type SurfaceSource = {
	readonly surfaces?: SurfaceOverrides;
	readonly projection?: { readonly headShare?: number };
	readonly [section: string]: unknown;
};

/**
 * The budget of surface `name` under `config`, per call: field by field the user's `surfaces.<name>` entry,
 * else its alias key, else the table; a surface without a head share of its own gets `defaultHeadShare`
 * (when given, e.g. a kind's stub share) or the configured projection.headShare. Never throws; unusable
 * values are skipped. A clipped or fixed surface is the table's entry.
 */
export function surfaceFor(
	config: SurfaceSource | undefined,
	name: SurfaceName,
	defaultHeadShare?: number,
): SurfaceBudget {
	const fields = overridableFields(name);
	if (fields.length === 0) return SURFACES[name];
	const own: Record<string, unknown> = (config?.surfaces?.[name] as Record<string, unknown> | undefined) ?? {};
	const aliases = SURFACE_ALIASES[name] ?? {};
	const override: { -readonly [K in OverridableField]?: number } = {};
	for (const field of fields) {
		const alias = aliases[field];
		const value = usable(field, own[field]) ?? (alias ? usable(field, valueAtPath(config, alias)) : undefined);
		if (value !== undefined) override[field] = value;
	}
	const entry: SurfaceBudget = SURFACES[name];
	if (override.headShare === undefined && entry.headShare === undefined) {
		override.headShare = projectionHeadShare(config, defaultHeadShare);
	}
	return resolveSurface(name, override);
}

/**
 * The budget of a configurable surface from explicit alias values (e.g. toolArtifacts.stubMaxBytes) and the
 * user's by-name entries, which win field by field. No projection.headShare default: see `surfaceFor`.
 */
export function configuredSurface(
	name: SurfaceName,
	alias: SurfaceOverride,
	overrides: SurfaceOverrides | undefined,
): SurfaceBudget {
	const own = overrides?.[name] ?? {};
	const override: { -readonly [K in OverridableField]?: number } = {};
	for (const field of overridableFields(name)) {
		const value = usable(field, own[field]) ?? usable(field, alias[field]);
		if (value !== undefined) override[field] = value;
	}
	return resolveSurface(name, override);
}

/** What a bad `surfaces.<name>.<field>` falls back to, for its warning. */
export function surfaceFallback(name: string, field: string): string {
	if (!Object.hasOwn(SURFACES, name)) return "ignored";
	const entry = SURFACES[name as SurfaceName] as SurfaceBudget;
	const alias = SURFACE_ALIASES[name as SurfaceName]?.[field as OverridableField];
	const table =
		field === "headShare" && entry.headShare === undefined
			? "projection.headShare"
			: `the table's ${JSON.stringify(entry[field as OverridableField] ?? "default")}`;
	return alias ? `using the alias key ${alias} or ${table}` : `using ${table}`;
}

/** Why a `surfaces` key is unknown, and what is known, for its warning. */
export function surfaceKeysHint(path: readonly PropertyKey[], key: string): string {
	if (path.length === 1) {
		const entry = Object.hasOwn(SURFACES, key) ? (SURFACES[key as SurfaceName] as SurfaceBudget) : undefined;
		const why = entry ? `fixed in the table: ${entry.doc}; ` : "";
		return ` (${why}known surfaces: ${CONFIGURABLE_SURFACES.join(", ")})`;
	}
	const name = String(path[1]);
	const fields = Object.hasOwn(SURFACES, name) ? overridableFields(name as SurfaceName) : [];
	return ` (known keys: ${fields.join(", ")})`;
}

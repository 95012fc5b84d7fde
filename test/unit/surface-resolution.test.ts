import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boundTask, fitUserMessages } from "../../extensions/handoff/serialize.ts";
import { allocateBatchBudgets, STATIC_CAPS } from "../../extensions/shared/budget/batch.ts";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import {
	CONFIGURABLE_SURFACES,
	SURFACE_ALIASES,
	type SurfaceSource,
	surfaceFor,
} from "../../extensions/shared/host/config-surfaces.ts";
import {
	DEFAULT_HEAD_SHARE,
	MIN_WINDOW_BYTES,
	MIN_WINDOW_LINES,
	project,
} from "../../extensions/shared/projection/projection.ts";
import {
	type OverridableField,
	overridableFields,
	SURFACE_NAMES,
	SURFACES,
	type SurfaceBudget,
	type SurfaceName,
} from "../../extensions/shared/surfaces.ts";
import { turnStubChars } from "../../extensions/tool-artifacts/artifacts.ts";
import { configLoader } from "./config-fixture.ts";
import { bytesOf, linesOf, textArb } from "./projection-arbitraries.ts";

/** loadConfig over a fresh agent dir holding `value` as its headroom.json. */
const load = configLoader("surface-resolution");

/** A copy of `config` with `value` at the dotted `path` (objects on the way created). */
function withValue(config: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
	const out = structuredClone(config);
	const keys = path.split(".");
	let node = out;
	for (const key of keys.slice(0, -1)) {
		node[key] = { ...((node[key] as Record<string, unknown>) ?? {}) };
		node = node[key] as Record<string, unknown>;
	}
	node[keys[keys.length - 1]] = value;
	return out;
}

const entry = (name: SurfaceName): SurfaceBudget => SURFACES[name];

describe("surfaceFor without configuration", () => {
	it("is the table's entry, with projection.headShare where the entry has no share; clipped and fixed ones as they are", () => {
		for (const name of SURFACE_NAMES) {
			for (const config of [undefined, DEFAULT_CONFIG]) {
				const s = surfaceFor(config, name);
				if (overridableFields(name).length === 0) {
					expect(s, name).toBe(SURFACES[name]);
					continue;
				}
				expect(s, name).toEqual({ ...entry(name), headShare: entry(name).headShare ?? DEFAULT_HEAD_SHARE });
			}
		}
		// The batch caps the allocator falls back to are the table's.
		for (const key of ["autoDelivery", "wait", "check"] as const) {
			const s = surfaceFor(DEFAULT_CONFIG, `subagents.${key}`);
			expect({ batchBytes: s.batchBytes, perResultBytes: s.maxBytes, perResultLines: s.maxLines }).toEqual(
				STATIC_CAPS[key],
			);
		}
	});
});

const FIELD_VALUE: Record<OverridableField, fc.Arbitrary<number>> = {
	maxBytes: fc.integer({ min: 2 * MIN_WINDOW_BYTES, max: 64 * 1024 }),
	maxLines: fc.integer({ min: MIN_WINDOW_LINES, max: 2000 }),
	headShare: fc.double({ min: 0, max: 1, noNaN: true }),
	batchBytes: fc.integer({ min: 2 * MIN_WINDOW_BYTES, max: 128 * 1024 }),
};

/** Any set of by-name overrides (valid values) over any configurable surfaces. */
const overridesArb = fc
	.uniqueArray(fc.constantFrom(...CONFIGURABLE_SURFACES), { maxLength: 6 })
	.chain((names) =>
		fc
			.tuple(
				...names.map((name) =>
					fc.record(
						Object.fromEntries(overridableFields(name).map((f) => [f, FIELD_VALUE[f]])) as Record<
							OverridableField,
							fc.Arbitrary<number>
						>,
						{ requiredKeys: [] },
					),
				),
			)
			.map((entries) => Object.fromEntries(names.map((name, i) => [name, entries[i]]))),
	);

/** Any values for the alias keys (valid, unusable, or absent). */
const aliasValueArb = fc.oneof(
	fc.integer({ min: 2 * MIN_WINDOW_BYTES, max: 64 * 1024 }),
	fc.constantFrom(undefined, -5, 0, 1.5, Number.NaN, "big"),
);
const ALIAS_KEYS = [...new Set(Object.values(SURFACE_ALIASES).flatMap((a) => Object.values(a ?? {})))];
const aliasesArb = fc.tuple(...ALIAS_KEYS.map(() => aliasValueArb));

function configOf(overrides: Record<string, unknown>, aliasValues: unknown[], headShare?: number): SurfaceSource {
	let config: Record<string, unknown> = { surfaces: overrides };
	if (headShare !== undefined) config.projection = { headShare };
	ALIAS_KEYS.forEach((key, i) => {
		if (aliasValues[i] !== undefined) config = withValue(config, key, aliasValues[i]);
	});
	return config as SurfaceSource;
}

const usable = (field: OverridableField, v: unknown) =>
	field === "headShare" ? typeof v === "number" && v >= 0 && v <= 1 : Number.isSafeInteger(v) && (v as number) > 0;

describe("surfaceFor with configuration", () => {
	it("property: field by field, the surfaces entry wins over its alias key, which wins over the table", () => {
		fc.assert(
			fc.property(overridesArb, aliasesArb, fc.double({ min: 0, max: 1, noNaN: true }), (overrides, aliases, share) => {
				const config = configOf(overrides, aliases, share);
				for (const name of CONFIGURABLE_SURFACES) {
					const s = surfaceFor(config, name);
					const own = (overrides as Record<string, Record<string, number>>)[name] ?? {};
					for (const field of overridableFields(name)) {
						const aliasKey = SURFACE_ALIASES[name]?.[field];
						const aliasValue = aliasKey ? aliases[ALIAS_KEYS.indexOf(aliasKey)] : undefined;
						const table = field === "headShare" ? (entry(name).headShare ?? share) : entry(name)[field];
						const expected = own[field] ?? (usable(field, aliasValue) ? aliasValue : table);
						expect(s[field], `${name}.${field}`).toBe(expected);
					}
				}
			}),
			{ numRuns: 150 },
		);
	});

	it("gives projection.headShare to surfaces without a share of their own, or the caller's default", () => {
		const config = { projection: { headShare: 0.3 } };
		expect(surfaceFor(config, "toolArtifacts.recall").headShare).toBe(0.3);
		expect(surfaceFor(config, "subagents.wait").headShare).toBe(0.3);
		expect(surfaceFor(config, "handoff.userMessages").headShare).toBe(0.3);
		expect(surfaceFor(config, "transcript.segment").headShare).toBe(0.3);
		// A share of its own stays; a by-name share wins over both.
		expect(surfaceFor(config, "handoff.toolResult").headShare).toBe(0.6);
		expect(surfaceFor(config, "subagents.check").headShare).toBe(0);
		expect(
			surfaceFor({ ...config, surfaces: { "subagents.check": { headShare: 0.5 } } }, "subagents.check").headShare,
		).toBe(0.5);
		// The summary input takes the kind's stub share when given one.
		expect(surfaceFor(config, "toolArtifacts.summaryInput", 0.4).headShare).toBe(0.4);
	});

	it("leaves clipped and fixed surfaces alone whatever the configuration says", () => {
		const config = {
			surfaces: { "subagents.name": { maxBytes: 4096 } },
			projection: { headShare: 0.1 },
		} as SurfaceSource;
		for (const name of SURFACE_NAMES.filter((s) => overridableFields(s).length === 0)) {
			expect(surfaceFor(config, name)).toBe(SURFACES[name]);
		}
	});

	it("counts a stub at the largest configured stub surface, with a command's growth and a summary's part, in the per-turn cap", () => {
		const tools = { ...DEFAULT_CONFIG.toolArtifacts, surfaces: {} };
		const beside = SURFACES["toolArtifacts.summaryBeside"].maxBytes;
		const overflow = SURFACES["toolArtifacts.stubOverflow"].maxBytes;
		expect(turnStubChars(tools)).toBe(DEFAULT_CONFIG.toolArtifacts.stubMaxBytes + overflow + beside);
		expect(turnStubChars({ ...tools, stubMaxBytes: 3000 })).toBe(3000 + overflow + beside);
		// A larger surface of another kind wins over the command stub with its growth.
		expect(turnStubChars({ ...tools, surfaces: { "toolArtifacts.stub.web": { maxBytes: 9000 } } })).toBe(9000 + beside);
		const smaller = {
			"toolArtifacts.summaryBeside": { maxBytes: 512 },
			"toolArtifacts.stubOverflow": { maxBytes: 600 },
		};
		expect(turnStubChars({ ...tools, surfaces: smaller })).toBe(DEFAULT_CONFIG.toolArtifacts.stubMaxBytes + 600 + 512);
		// Without summaries, no summary's part.
		const off = { ...tools, summary: { ...tools.summary, enabled: false } };
		expect(turnStubChars(off)).toBe(DEFAULT_CONFIG.toolArtifacts.stubMaxBytes + overflow);
	});
});

describe("the surfaces section as loaded", () => {
	it("applies batch, handoff and transcript overrides by name, and warns once per bad key with what applies instead", () => {
		const { config, warnings, file } = load({
			surfaces: {
				"subagents.wait": { maxBytes: 8192, batchBytes: 10 },
				"handoff.userMessages": { maxBytes: 32_768 },
				"handoff.piece": { headShare: 3 },
				"transcript.segment": { maxBytes: 4096 },
				"subagents.name": { maxBytes: 80 },
				"handoff.nope": {},
				"toolArtifacts.recall": { batchBytes: 4096 },
			},
			budgets: { wait: { perResultLines: 90 } },
		});
		const text = warnings.join("\n");
		expect(text).toContain(
			`${file}: "surfaces.subagents.wait.batchBytes": Too small: expected number to be >=2048; using the alias key budgets.wait.batchBytes or the table's 49152`,
		);
		expect(text).toContain(`${file}: "surfaces.handoff.piece.headShare"`);
		expect(text).toContain("using projection.headShare");
		expect(text).toContain(
			`unknown key "surfaces.subagents.name" ignored (fixed in the table: ${entry("subagents.name").doc}`,
		);
		expect(text).toMatch(/unknown key "surfaces\.handoff\.nope" ignored \(known surfaces: .*handoff\.userMessages/);
		expect(text).toContain(
			`unknown key "surfaces.toolArtifacts.recall.batchBytes" ignored (known keys: maxBytes, maxLines, headShare)`,
		);
		expect(warnings).toHaveLength(5);
		const wait = surfaceFor(config, "subagents.wait");
		expect([wait.maxBytes, wait.maxLines, wait.batchBytes]).toEqual([8192, 90, 48 * 1024]);
		expect(surfaceFor(config, "handoff.userMessages").maxBytes).toBe(32_768);
		expect(surfaceFor(config, "handoff.task").maxBytes).toBe(16 * 1024);
		expect(surfaceFor(config, "transcript.segment").maxBytes).toBe(4096);
		expect(surfaceFor(config, "handoff.piece").headShare).toBe(DEFAULT_HEAD_SHARE);
	});
});

describe("every output stays within the resolved budget", () => {
	it("property: any override set, any text: a projection on any configurable surface fits it (per-call ones too)", () => {
		fc.assert(
			fc.property(
				overridesArb,
				aliasesArb,
				fc.constantFrom(...CONFIGURABLE_SURFACES),
				textArb,
				fc.integer({ min: MIN_WINDOW_BYTES, max: 40_000 }),
				(overrides, aliases, name, text, callBytes) => {
					const s = surfaceFor(configOf(overrides, aliases), name);
					const perCall = entry(name).bytesPerLine !== undefined;
					const p = project(text, s, { headShare: s.headShare, maxBytes: perCall ? callBytes : undefined });
					const maxBytes = perCall ? Math.min(s.maxBytes, callBytes) : s.maxBytes;
					expect(bytesOf(p.text)).toBeLessThanOrEqual(Math.max(maxBytes, MIN_WINDOW_BYTES));
					expect(linesOf(p.text)).toBeLessThanOrEqual(s.maxLines);
				},
			),
			{ numRuns: 300 },
		);
	});

	it("property: a batch allocated on a resolved subagent surface keeps every result and the batch within it", () => {
		fc.assert(
			fc.property(
				overridesArb,
				aliasesArb,
				fc.constantFrom("autoDelivery", "wait", "check") as fc.Arbitrary<"autoDelivery" | "wait" | "check">,
				fc.array(fc.record({ bytes: fc.nat(200_000), lines: fc.nat(5000) }), { minLength: 1, maxLength: 6 }),
				(overrides, aliases, key, results) => {
					const budget = surfaceFor(configOf(overrides, aliases), `subagents.${key}`);
					const a = allocateBatchBudgets({ surface: key, budget, results });
					expect(a.batchBytes).toBe(budget.batchBytes);
					for (const item of a.items) {
						if (!item.limits) continue;
						expect(item.limits.maxBytes).toBeLessThanOrEqual(Math.max(budget.maxBytes, MIN_WINDOW_BYTES));
						expect(item.limits.maxLines).toBeLessThanOrEqual(Math.max(budget.maxLines, MIN_WINDOW_LINES));
					}
					if (a.items.every((i) => !i.oneLine)) {
						expect(a.items.reduce((sum, i) => sum + i.chargedBytes, 0)).toBeLessThanOrEqual(a.batchBytes);
					}
				},
			),
			{ numRuns: 200 },
		);
	});

	it("property: the handoff's task and later user messages fit their resolved surfaces", () => {
		fc.assert(
			fc.property(
				overridesArb,
				aliasesArb,
				fc.array(textArb, { maxLength: 5 }),
				textArb,
				(overrides, aliases, later, task) => {
					const config = configOf(overrides, aliases);
					const userMessages = surfaceFor(config, "handoff.userMessages");
					const { kept } = fitUserMessages(later, userMessages);
					expect(kept.reduce((sum, t) => sum + bytesOf(t), 0)).toBeLessThanOrEqual(userMessages.maxBytes);
					const taskSurface = surfaceFor(config, "handoff.task");
					const bounded = boundTask(task, taskSurface, undefined);
					expect(bytesOf(bounded.text)).toBeLessThanOrEqual(taskSurface.maxBytes);
					expect(linesOf(bounded.text)).toBeLessThanOrEqual(taskSurface.maxLines);
				},
			),
			{ numRuns: 150 },
		);
	});
});

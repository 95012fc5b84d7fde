import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { STATIC_CAPS } from "../../extensions/shared/budget/batch.ts";
import {
	CONFIG_FILE_NAME,
	DEFAULT_CONFIG,
	defaultConfig,
	type HeadroomConfig,
	headroomConfigSchema,
	loadConfig,
	MAX_CONFIG_FILE_BYTES,
	projectionHeadShare,
	projectTrusted,
	unseenConfigWarnings,
} from "../../extensions/shared/host/config.ts";
import { DEFAULT_HEAD_SHARE } from "../../extensions/shared/projection/projection.ts";

let root: string;
let agentDir: string;
let cwd: string;
let userFile: string;
let projectFile: string;

beforeEach(() => {
	root = mkdtempSync(join(tmpdir(), "headroom-config-"));
	agentDir = join(root, "agent");
	cwd = join(root, "project");
	mkdirSync(agentDir);
	mkdirSync(join(cwd, ".pi"), { recursive: true });
	userFile = join(agentDir, CONFIG_FILE_NAME);
	projectFile = join(cwd, ".pi", CONFIG_FILE_NAME);
});

afterEach(() => {
	rmSync(root, { recursive: true, force: true });
});

const writeJson = (file: string, value: unknown) => writeFileSync(file, JSON.stringify(value));
const load = () => loadConfig({ agentDir, cwd });

describe("defaults", () => {
	it("the plain defaults (used when no file exists, without loading zod) are exactly what the schema gives {}", () => {
		expect(defaultConfig()).toEqual(headroomConfigSchema().parse({}));
		expect(DEFAULT_CONFIG).toEqual(headroomConfigSchema().parse({}));
		expect(load().config).toEqual(headroomConfigSchema().parse({}));
		expect(load().config).not.toBe(load().config);
		expect(Object.isFrozen(load().config.subagents.defaultTools)).toBe(false);
	});

	// toMatchObject: other extensions may add keys to their sections; these are the ones documented here.
	it("are the documented values", () => {
		const d = DEFAULT_CONFIG;
		expect(d.projection.headShare).toBe(0.75);
		expect(d.store).toMatchObject({ maxAgeDays: 30, maxTotalBytes: 1024 ** 3, minAgeHours: 24 });
		expect(d.budgets.headroomShare).toBe(0.5);
		expect(d.budgets.autoDelivery).toEqual(STATIC_CAPS.autoDelivery);
		expect(d.budgets.wait).toEqual(STATIC_CAPS.wait);
		expect(d.budgets.check).toEqual(STATIC_CAPS.check);
		expect(d.subagents).toMatchObject({
			maxConcurrent: 4,
			maxDepth: 1,
			idleTimeoutSeconds: 120,
			maxRunSeconds: 1800,
			defaultTools: ["read", "bash", "edit", "write", "grep", "find", "ls"],
			pollThrottleMs: 1000,
		});
		expect(d.toolArtifacts).toMatchObject({
			enabled: true,
			thresholdChars: 12_000,
			perTool: {},
			turnCapChars: 100_000,
			summary: { enabled: true, timeoutMs: 30_000, maxInputChars: 50_000, maxOutputTokens: 2048, temperature: 0.3 },
		});
		expect(d.handoff).toMatchObject({
			enabled: true,
			userMessagesBudgetBytes: 16_384,
			probe: { enabled: true, marginTokens: 8192, leadTurns: 4 },
		});
		expect(d.contextTrim).toMatchObject({ enabled: true, safetyMarginTokens: 2048, cutStepTokens: 16_384 });
	});

	it("are frozen, while loadConfig returns a fresh mutable copy", () => {
		expect(Object.isFrozen(DEFAULT_CONFIG.subagents.defaultTools)).toBe(true);
		const { config } = load();
		config.subagents.defaultTools.push("extra");
		expect(DEFAULT_CONFIG.subagents.defaultTools).not.toContain("extra");
		expect(load().config).toEqual(DEFAULT_CONFIG);
	});
});

describe("loadConfig", () => {
	it("without files: defaults and no warnings", () => {
		expect(load()).toEqual({ config: DEFAULT_CONFIG, warnings: [] });
	});

	it("applies the agent file, then the project file over it (deep merge, arrays replaced)", () => {
		writeJson(userFile, {
			subagents: { maxConcurrent: 8, maxDepth: 2, defaultTools: ["read", "bash"] },
			toolArtifacts: { perTool: { bash: 20_000, read: false }, summary: { model: "openai/gpt-mini" } },
			handoff: { model: "anthropic/claude-haiku" },
		});
		writeJson(projectFile, {
			subagents: { maxConcurrent: 2, defaultTools: ["read"] },
			toolArtifacts: { perTool: { grep: 5000 } },
		});
		const { config, warnings } = load();
		expect(warnings).toEqual([]);
		expect(config.subagents).toMatchObject({ maxConcurrent: 2, maxDepth: 2, defaultTools: ["read"] });
		expect(config.toolArtifacts.perTool).toEqual({ bash: 20_000, read: false, grep: 5000 });
		expect(config.toolArtifacts.summary.model).toBe("openai/gpt-mini");
		expect(config.handoff.model).toBe("anthropic/claude-haiku");
		expect(config.store).toEqual(DEFAULT_CONFIG.store);
	});

	it("an unknown key: a warning naming the key path and the file; the other keys still apply", () => {
		writeJson(projectFile, { budgets: { headroomShare: 0.4, autoDelivry: { batchBytes: 1 } }, colour: "blue" });
		const { config, warnings } = load();
		expect(config.budgets.headroomShare).toBe(0.4);
		expect(config.budgets.autoDelivery).toEqual(STATIC_CAPS.autoDelivery);
		expect(warnings).toHaveLength(2);
		expect(warnings.find((w) => w.includes('"budgets.autoDelivry"'))).toMatch(
			new RegExp(`^${escapeRegExp(projectFile)}: unknown key .*known keys: headroomShare, autoDelivery, wait, check`),
		);
		expect(warnings.find((w) => w.includes('"colour"'))).toContain(projectFile);
	});

	it("a bad value: a warning naming key and file; that key falls back to its default, its siblings are kept", () => {
		writeJson(userFile, {
			store: { maxAgeDays: -3, maxTotalBytes: 5000 },
			budgets: { wait: { perResultBytes: 10, perResultLines: 50 } },
			toolArtifacts: { perTool: { bash: "big", read: 700 }, summary: { model: "no-slash" } },
			subagents: { defaultTools: ["read", 7] },
		});
		const { config, warnings } = load();
		expect(config.store).toEqual({ ...DEFAULT_CONFIG.store, maxTotalBytes: 5000 });
		expect(config.budgets.wait).toEqual({ ...STATIC_CAPS.wait, perResultLines: 50 });
		expect(config.toolArtifacts.perTool).toEqual({ read: 700 });
		expect(config.toolArtifacts.summary.model).toBeUndefined();
		expect(config.subagents.defaultTools).toEqual(DEFAULT_CONFIG.subagents.defaultTools);
		const keys = [
			"store.maxAgeDays",
			"budgets.wait.perResultBytes",
			"toolArtifacts.perTool.bash",
			"toolArtifacts.summary.model",
			"subagents.defaultTools",
		];
		expect(warnings).toHaveLength(keys.length);
		for (const key of keys) {
			const w = warnings.find((x) => x.includes(`"${key}"`));
			expect(w, key).toBeDefined();
			expect(w!.startsWith(`${userFile}: `)).toBe(true);
		}
		expect(warnings.find((w) => w.includes('"store.maxAgeDays"'))).toContain("using the default 30");
		expect(warnings.find((w) => w.includes("perTool.bash"))).toContain("positive integer or false");
	});

	it("a section of the wrong type falls back to that section's defaults", () => {
		writeJson(userFile, { budgets: 5, handoff: { enabled: false } });
		const { config, warnings } = load();
		expect(config.budgets).toEqual(DEFAULT_CONFIG.budgets);
		expect(config.handoff.enabled).toBe(false);
		expect(warnings).toHaveLength(1);
		expect(warnings[0]).toContain('"budgets"');
	});

	it("a bad project value does not undo a good agent value for another key", () => {
		writeJson(userFile, { subagents: { maxConcurrent: 6 } });
		writeJson(projectFile, { subagents: { maxConcurrent: 0, maxDepth: 0 } });
		const { config, warnings } = load();
		expect(config.subagents.maxConcurrent).toBe(6);
		expect(config.subagents.maxDepth).toBe(0);
		expect(warnings).toHaveLength(1);
		expect(warnings[0]).toContain(projectFile);
	});

	it("invalid JSON: a warning with the file; the other file still applies", () => {
		writeFileSync(userFile, '{ "store": { "maxAgeDays": 3 }, }');
		writeJson(projectFile, { subagents: { maxConcurrent: 2 } });
		const { config, warnings } = load();
		expect(config.store).toEqual(DEFAULT_CONFIG.store);
		expect(config.subagents.maxConcurrent).toBe(2);
		expect(warnings).toHaveLength(1);
		expect(warnings[0]).toMatch(new RegExp(`^${escapeRegExp(userFile)}: invalid JSON`));
	});

	it("a top-level value that is not an object is ignored with a warning", () => {
		for (const text of ["[1,2]", "42", "null", '"text"']) {
			writeFileSync(projectFile, text);
			const { config, warnings } = load();
			expect(config).toEqual(DEFAULT_CONFIG);
			expect(warnings).toEqual([`${projectFile}: expected a JSON object at the top level; ignored`]);
		}
	});

	it("unreadable paths: a directory, an oversized file and (when not root) a file without read permission", () => {
		mkdirSync(userFile);
		writeFileSync(projectFile, " ".repeat(MAX_CONFIG_FILE_BYTES + 1));
		let { config, warnings } = load();
		expect(config).toEqual(DEFAULT_CONFIG);
		expect(warnings).toHaveLength(2);
		expect(warnings[0]).toContain(userFile);
		expect(warnings[1]).toContain(projectFile);
		if (process.getuid?.() !== 0) {
			rmSync(projectFile);
			writeJson(projectFile, { store: { maxAgeDays: 1 } });
			chmodSync(projectFile, 0o000);
			({ config, warnings } = load());
			expect(config.store.maxAgeDays).toBe(30);
			expect(warnings.some((w) => w.includes(projectFile) && w.includes("EACCES"))).toBe(true);
		}
	});

	it("accepts a byte-order mark and an editor's $schema key silently", () => {
		writeFileSync(userFile, `\uFEFF${JSON.stringify({ $schema: "./schema.json", store: { maxAgeDays: 7 } })}`);
		const { config, warnings } = load();
		expect(warnings).toEqual([]);
		expect(config.store.maxAgeDays).toBe(7);
	});

	it("never throws and always returns a configuration the schema accepts, whatever the files hold", () => {
		fc.assert(
			fc.property(fc.jsonValue(), fc.option(fc.jsonValue(), { nil: undefined }), (user, project) => {
				writeJson(userFile, user);
				if (project === undefined) rmSync(projectFile, { force: true });
				else writeJson(projectFile, project);
				const { config, warnings } = load();
				expect(headroomConfigSchema().safeParse(config).success).toBe(true);
				expect(Array.isArray(warnings)).toBe(true);
			}),
			{ numRuns: 60 },
		);
	});

	it("a valid partial configuration comes back as written, with defaults elsewhere and no warnings", () => {
		const partial = fc.record(
			{
				store: fc.record({ maxAgeDays: fc.integer({ min: 1, max: 365 }) }),
				subagents: fc.record(
					{ maxConcurrent: fc.integer({ min: 1, max: 32 }), defaultTools: fc.array(fc.constantFrom("read", "ls")) },
					{ requiredKeys: [] },
				),
				budgets: fc.record(
					{
						headroomShare: fc.double({ min: 0.01, max: 1, noNaN: true }),
						check: fc.record({ perResultLines: fc.integer({ min: 8, max: 100 }) }),
					},
					{ requiredKeys: [] },
				),
				contextTrim: fc.record({ reserveTokens: fc.integer({ min: 1, max: 100_000 }) }),
			},
			{ requiredKeys: [] },
		);
		fc.assert(
			fc.property(partial, (value) => {
				writeJson(userFile, value);
				rmSync(projectFile, { force: true });
				const { config, warnings } = load();
				expect(warnings).toEqual([]);
				expect(config).toEqual(merge(DEFAULT_CONFIG, value));
			}),
			{ numRuns: 60 },
		);
	});

	it("every bad leaf value is reported once, with its path, and replaced by its default", () => {
		const leaves: Array<[string[], unknown]> = [
			[["projection", "headShare"], 1.5],
			[["store", "minAgeHours"], -1],
			[["budgets", "headroomShare"], 0],
			[["budgets", "check", "batchBytes"], 1.5],
			[["subagents", "pollThrottleMs"], "fast"],
			[["toolArtifacts", "thresholdChars"], null],
			[["toolArtifacts", "summary", "temperature"], 9],
			[["handoff", "probe", "freeTokensThreshold"], -8000],
			[["contextTrim", "cutStepTokens"], true],
		];
		fc.assert(
			fc.property(fc.subarray(leaves, { minLength: 1 }), (chosen) => {
				const value: Record<string, unknown> = {};
				for (const [path, bad] of chosen) setPath(value, path, bad);
				writeJson(userFile, value);
				rmSync(projectFile, { force: true });
				const { config, warnings } = load();
				expect(config).toEqual(DEFAULT_CONFIG);
				expect(warnings).toHaveLength(chosen.length);
				for (const [path] of chosen) expect(warnings.some((w) => w.includes(`"${path.join(".")}"`))).toBe(true);
			}),
			{ numRuns: 40 },
		);
	});
});

function escapeRegExp(s: string): string {
	return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
	let node = target;
	for (const key of path.slice(0, -1)) {
		node[key] ??= {};
		node = node[key] as Record<string, unknown>;
	}
	node[path[path.length - 1]] = value;
}

/** Test-side deep merge (objects by key, anything else replaced) to state the expected result. */
function merge(base: HeadroomConfig, over: unknown): HeadroomConfig {
	const walk = (a: unknown, b: unknown): unknown => {
		if (b && typeof b === "object" && !Array.isArray(b) && a && typeof a === "object" && !Array.isArray(a)) {
			const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
			for (const [k, v] of Object.entries(b)) out[k] = walk(out[k], v);
			return out;
		}
		return b;
	};
	return walk(structuredClone(base), over) as HeadroomConfig;
}

describe("projectionHeadShare", () => {
	const anyValue = fc.oneof(
		fc.double({ min: -2, max: 3, noNaN: false }),
		fc.constantFrom(undefined, Number.POSITIVE_INFINITY, "0.5" as unknown as number),
	);
	const isShare = (v: unknown): v is number => typeof v === "number" && v >= 0 && v <= 1;

	it("takes an explicit share first, then the configured one, then the default", () => {
		fc.assert(
			fc.property(anyValue, anyValue, (explicit, configured) => {
				const share = projectionHeadShare({ projection: { headShare: configured } }, explicit);
				expect(share).toBe(isShare(explicit) ? explicit : isShare(configured) ? configured : DEFAULT_HEAD_SHARE);
			}),
		);
		expect(projectionHeadShare()).toBe(DEFAULT_HEAD_SHARE);
		expect(projectionHeadShare(DEFAULT_CONFIG)).toBe(DEFAULT_CONFIG.projection.headShare);
	});

	it("reads projection.headShare from headroom.json", () => {
		writeFileSync(userFile, JSON.stringify({ projection: { headShare: 0.4 } }));
		expect(projectionHeadShare(loadConfig({ agentDir, cwd }).config)).toBe(0.4);
	});
});

describe("unseenConfigWarnings", () => {
	it("passes each warning once per process, whichever extension asks first", () => {
		const unique = `test warning ${process.pid} ${Date.now()}`;
		expect(unseenConfigWarnings([unique, `${unique} b`])).toEqual([unique, `${unique} b`]);
		expect(unseenConfigWarnings([unique])).toEqual([]);
		expect(unseenConfigWarnings([`${unique} b`, `${unique} c`, `${unique} c`])).toEqual([`${unique} c`]);
	});
});

describe("project trust", () => {
	it("reads an untrusted project's file not at all, and says so; a trusted or unknown one applies", () => {
		const root = mkdtempSync(join(tmpdir(), "headroom-trust-"));
		try {
			const agentDir = join(root, "agent");
			const cwd = join(root, "work");
			mkdirSync(agentDir, { recursive: true });
			mkdirSync(join(cwd, ".pi"), { recursive: true });
			writeFileSync(join(cwd, ".pi", CONFIG_FILE_NAME), JSON.stringify({ subagents: { maxConcurrent: 3 } }));
			const untrusted = loadConfig({ agentDir, cwd, projectTrusted: false });
			expect(untrusted.config.subagents.maxConcurrent).toBe(DEFAULT_CONFIG.subagents.maxConcurrent);
			expect(untrusted.warnings.join("\n")).toContain("ignored: this project is not trusted");
			expect(loadConfig({ agentDir, cwd, projectTrusted: true }).config.subagents.maxConcurrent).toBe(3);
			expect(loadConfig({ agentDir, cwd }).config.subagents.maxConcurrent).toBe(3);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it("asks Pi 1.x's ctx.isProjectTrusted() and treats Pi 0.73 (no such check) as trusted", () => {
		expect(projectTrusted({ isProjectTrusted: () => false })).toBe(false);
		expect(projectTrusted({ isProjectTrusted: () => true })).toBe(true);
		expect(projectTrusted({})).toBe(true);
		expect(projectTrusted(undefined)).toBe(true);
		expect(
			projectTrusted({
				isProjectTrusted: () => {
					throw new Error("stale context");
				},
			}),
		).toBe(false);
	});
});

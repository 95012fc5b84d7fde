/**
 * Every default of the configuration as plain data, so a session with no configuration file never loads the
 * schema's library (zod costs ~140 ms of start-up). The schema (./config-schema.ts) says the same: a test
 * pins `headroomConfigSchema().parse({})` equal to this object. Budget figures come from the one table.
 */
import { DEFAULT_HEADROOM_SHARE } from "../budget/batch.ts";
import { DEFAULT_HEAD_SHARE } from "../projection/projection.ts";
import { SURFACES } from "../surfaces.ts";
import type { HeadroomConfig } from "./config-schema.ts";

const GIB = 1024 * 1024 * 1024;

const batchAliases = (surface: "autoDelivery" | "wait" | "check") => {
	const entry = SURFACES[`subagents.${surface}`];
	return {
		batchBytes: entry.batchBytes ?? entry.maxBytes,
		perResultBytes: entry.maxBytes,
		perResultLines: entry.maxLines,
	};
};

/** A fresh, unfrozen copy of every default (what loadConfig returns when no file sets anything). */
export function defaultConfig(): HeadroomConfig {
	return {
		surfaces: {},
		projection: { headShare: DEFAULT_HEAD_SHARE },
		store: { maxAgeDays: 30, maxTotalBytes: GIB, minAgeHours: 24 },
		budgets: {
			headroomShare: DEFAULT_HEADROOM_SHARE,
			autoDelivery: batchAliases("autoDelivery"),
			wait: batchAliases("wait"),
			check: batchAliases("check"),
		},
		subagents: {
			maxConcurrent: 4,
			maxDepth: 1,
			idleTimeoutSeconds: 120,
			maxRunSeconds: 1800,
			defaultTools: ["read", "bash", "edit", "write", "grep", "find", "ls"],
			pollThrottleMs: 1000,
			childExtensions: true,
			claudeAgents: true,
			toolsBeyondParent: false,
			askTimeoutSeconds: 600,
			maxQuestions: 20,
			budget: { perChild: {}, perSession: {} },
		},
		toolArtifacts: {
			enabled: true,
			thresholdChars: 12_000,
			perTool: {},
			turnCapChars: 100_000,
			stubMaxBytes: SURFACES["toolArtifacts.stub.unknown"].maxBytes,
			stubMaxLines: SURFACES["toolArtifacts.stub.unknown"].maxLines,
			toolClasses: {},
			summary: {
				enabled: true,
				timeoutMs: 30_000,
				maxInputChars: SURFACES["toolArtifacts.summaryInput"].maxBytes,
				maxOutputTokens: 2048,
				temperature: 0.3,
			},
		},
		handoff: {
			enabled: true,
			userMessagesBudgetBytes: SURFACES["handoff.userMessages"].maxBytes,
			resume: "auto",
			probe: { enabled: true, marginTokens: 8192, leadTurns: 4 },
		},
		exposure: { deferRareTools: true },
		contextTrim: { enabled: true, safetyMarginTokens: 2048, cutStepTokens: 16_384 },
	};
}

function deepFreeze<T>(value: T): T {
	if (value && typeof value === "object") {
		for (const v of Object.values(value)) deepFreeze(v);
		Object.freeze(value);
	}
	return value;
}

/** Every default, frozen. loadConfig returns a fresh, unfrozen object. */
export const DEFAULT_CONFIG: HeadroomConfig = deepFreeze(defaultConfig());

/**
 * The schema of the user configuration: one zod object with defaults, one section per extension. How the
 * files are found, merged and validated key by key is ./config.ts; the `surfaces` section and the alias keys
 * of the table of budgets are ./config-surfaces.ts. Built on first use (zod loads then: ./zod.ts); the
 * defaults it produces are ./config-defaults.ts, pinned equal by a test.
 */
import type * as Zod from "zod";
import { DEFAULT_HEADROOM_SHARE } from "../budget/batch.ts";
import { DEFAULT_HEAD_SHARE, MIN_WINDOW_BYTES, MIN_WINDOW_LINES } from "../projection/projection.ts";
import { SURFACES, type SurfaceBudget } from "../surfaces.ts";
import { surfacesSectionSchema } from "./config-surfaces.ts";
import { MAX_TIMER_MS, MAX_TIMER_SECONDS } from "./timers.ts";
import { type ZodApi, zod } from "./zod.ts";

/** File name of the configuration, in the agent dir and in <cwd>/.pi/. */
export const CONFIG_FILE_NAME = "headroom.json";
/** Larger files are not read: a configuration is a few hundred bytes. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

const GIB = 1024 * 1024 * 1024;

/** Keys that set a timer's delay: a value beyond the runtime's longest timer is clamped to it (config.ts). */
export const TIMER_KEYS: ReadonlySet<string> = new Set([
	"subagents.idleTimeoutSeconds",
	"subagents.maxRunSeconds",
	"subagents.pollThrottleMs",
	"subagents.askTimeoutSeconds",
	"toolArtifacts.summary.timeoutMs",
]);
const TIMER_LIMIT = "longer than the longest timer Node and Bun can hold (about 24.8 days)";
const MODEL_REF = /^[^/\s]+\/\S+$/;

/** The whole schema, built with zod `z`. */
function buildSchema(z: ZodApi) {
	const positiveInt = () => z.number().int().positive();
	const nonNegativeInt = () => z.number().int().nonnegative();
	const spendLimit = () =>
		z
			.strictObject({
				tokens: positiveInt().optional(),
				cost: z.number().positive().optional(),
			})
			.prefault({});
	const modelRef = () => z.string().regex(MODEL_REF, { error: 'expected "provider/model-id"' }).optional();

	/**
	 * The older per-surface keys of a batch surface (aliases of `subagents.<surface>`'s maxBytes, maxLines and
	 * batchBytes), defaulting to the table's figures.
	 */
	const batchAliases = (surface: "autoDelivery" | "wait" | "check") => {
		const entry: SurfaceBudget = SURFACES[`subagents.${surface}`];
		return z
			.strictObject({
				batchBytes: positiveInt().default(entry.batchBytes ?? entry.maxBytes),
				perResultBytes: positiveInt().min(MIN_WINDOW_BYTES).default(entry.maxBytes),
				perResultLines: positiveInt().min(MIN_WINDOW_LINES).default(entry.maxLines),
			})
			.prefault({});
	};

	return z
		.strictObject({
			/** By-name overrides of the table of budgets; an entry here wins over the older alias keys. */
			surfaces: surfacesSectionSchema(z),
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
					autoDelivery: batchAliases("autoDelivery"),
					wait: batchAliases("wait"),
					check: batchAliases("check"),
				})
				.prefault({}),
			subagents: z
				.strictObject({
					maxConcurrent: positiveInt().default(4),
					/** How deep subagents may nest (1 = children cannot spawn). */
					maxDepth: nonNegativeInt().default(1),
					idleTimeoutSeconds: z.number().positive().max(MAX_TIMER_SECONDS, { error: TIMER_LIMIT }).default(120),
					maxRunSeconds: z.number().positive().max(MAX_TIMER_SECONDS, { error: TIMER_LIMIT }).default(1800),
					defaultTools: z
						.array(z.string().min(1))
						.default(() => ["read", "bash", "edit", "write", "grep", "find", "ls"]),
					/** Minimum milliseconds between two status polls of the same child. */
					pollThrottleMs: nonNegativeInt().max(MAX_TIMER_MS, { error: TIMER_LIMIT }).default(1000),
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
					/**
					 * Whether a child may have tools its parent does not have active (false: a child's tools are
					 * always a subset of the parent's). Only the user's own file sets it.
					 */
					toolsBeyondParent: z.boolean().default(false),
					/** How long a child's ask_parent waits for the parent's answer before it decides itself. */
					askTimeoutSeconds: z.number().positive().max(MAX_TIMER_SECONDS, { error: TIMER_LIMIT }).default(600),
					/** Questions all children of one session may ask together (0: children get no ask_parent). */
					maxQuestions: nonNegativeInt().default(20),
					/**
					 * What children may spend (tokens: input + output + cache reads and writes over every request;
					 * cost: Pi's prices): each child (`perChild`, a bound the spawn or agent file can only lower) and
					 * this session's children together (`perSession`). Absent: unbounded. A project may only lower them.
					 */
					budget: z
						.strictObject({
							perChild: spendLimit(),
							perSession: spendLimit(),
						})
						.prefault({}),
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
							timeoutMs: positiveInt().max(MAX_TIMER_MS, { error: TIMER_LIMIT }).default(30_000),
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
}

let schema: ReturnType<typeof buildSchema> | undefined;

/** The configuration's schema (built, and zod loaded, on the first call). */
export function headroomConfigSchema(): ReturnType<typeof buildSchema> {
	schema ??= buildSchema(zod());
	return schema;
}

export type HeadroomConfig = Zod.z.output<ReturnType<typeof buildSchema>>;

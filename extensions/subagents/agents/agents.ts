/**
 * Named agents: agent files (Markdown with YAML frontmatter, the body being the agent's system
 * prompt), the built-in agents, validation (zod, one warning per bad key, never fatal) and the
 * precedence of sources (a later source overrides an earlier one by name). Pure: the frontmatter
 * parser is passed in (Pi's own `parseFrontmatter`), files are read elsewhere (agent-files.ts).
 *
 * To add a key: add it to the fields of agentFields() (its zod type, optional) and to AgentDefinition; the
 * warnings, the unknown-key check and the per-key fallback follow from the shape.
 */

import type * as Zod from "zod";
import { type ZodApi, zod } from "../../shared/host/zod.ts";
import { project } from "../../shared/projection/projection.ts";
import { stripControls } from "../../shared/text/sanitize.ts";
import type { Budget } from "../budget/budget.ts";
import { compileOutputSchema } from "../checkable/schema.ts";
import type { ContextMode } from "../domain/records.ts";

/** Where an agent definition came from, lowest priority first (see AGENT_SOURCE_ORDER). */
export type AgentSource = "built-in" | "user" | "claude-user" | "claude-project" | "project";

/**
 * Precedence, lowest first: built-in, `<agentDir>/agents`, `~/.claude/agents`, the project's
 * `.claude/agents`, the project's `.pi/agents`. Project beats user; Pi's own folder beats Claude's.
 */
export const AGENT_SOURCE_ORDER: readonly AgentSource[] = [
	"built-in",
	"user",
	"claude-user",
	"claude-project",
	"project",
];

/** Which of the user's extensions a child loads: all (the default), none, or a filtered set. */
export interface ExtensionPolicy {
	/** "all": every extension Pi would load; "none": none; "only": those named in `include`. */
	mode: "all" | "none" | "only";
	/** Names to load (mode "only"). */
	include: string[];
	/** Names never to load. */
	exclude: string[];
}

/** One named agent, validated. */
export interface AgentDefinition {
	/** Name used in subagent_spawn { agent } (letters, digits, `.`, `_`, `-`). */
	name: string;
	/** One line the parent reads to choose an agent. */
	description: string;
	/** Added to the child's Pi system prompt (the file's body). */
	systemPrompt: string;
	/** Exactly these tools, when given. */
	tools?: string[];
	/** `provider/id` or a bare id, resolved like subagent_spawn's model. */
	model?: string;
	/** Thinking level. */
	thinking?: string;
	/** Which of the user's extensions the child loads (absent = subagents.childExtensions). */
	extensions?: ExtensionPolicy;
	/** Most turns a run may take before it is stopped as incomplete. */
	maxTurns?: number;
	/** Fresh start or narrated fork. */
	context?: ContextMode;
	/** "worktree": each child of this agent works in its own git worktree (see isolation.ts). */
	isolation?: "none" | "worktree";
	/** A JSON Schema the child's answer must end with a matching JSON value for (checked when the file is read). */
	outputSchema?: Record<string, unknown>;
	/** What each of its children may spend (tokens, cost); the spawn's and the configured bound can lower it. */
	budget?: Budget;
	/** Where it was defined. */
	source: AgentSource;
	/** Its file (absent for built-in agents). */
	file?: string;
	/** The definition of the same name this one replaces (a built-in, or a file of a lower source). */
	overrides?: { source: AgentSource; file?: string };
}

/** Longest agent name, in characters. */
export const AGENT_NAME_MAX_CHARS = 64;
/** Agent names: no paths, no spaces, no escape sequences. */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Largest agent file read, in bytes (a system prompt, not a data file). */
export const MAX_AGENT_FILE_BYTES = 256 * 1024;
/** Most turns an agent file may ask for. */
export const MAX_TURNS_LIMIT = 10_000;

export const THINKING_VALUES = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;

/** The frontmatter keys of a Pi agent file and their types (every key optional), built with zod's `z`. */
function buildAgentFields(z: ZodApi) {
	/** Comma-separated text or a YAML list → trimmed, non-empty names. */
	const nameList = z
		.union([z.string(), z.array(z.string())], { error: "expected a comma-separated string or a list of names" })
		.transform((v) => (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim()).filter((s) => s.length > 0));

	/** `false` | `true` | a list (or comma-separated text) of names, `!name` excluding one. */
	const extensionsField = z
		.union([z.boolean(), z.string(), z.array(z.string())], {
			error: 'expected false, true, or a list of extension names ("!name" excludes one)',
		})
		.transform((v): ExtensionPolicy => parseExtensionPolicy(v));

	/**
	 * `output_schema`: a JSON Schema as a YAML mapping or as JSON text, accepted only when subagent_spawn would
	 * accept it (the same check), so a broken schema is a warning when the file is read, not a failed spawn later.
	 */
	const outputSchemaField = z.unknown().transform((value, ctx) => {
		const compiled = compileOutputSchema(value);
		if (compiled.ok) return compiled.schema.schema;
		ctx.addIssue({ code: "custom", message: `not a usable JSON Schema: ${compiled.error}` });
		return z.NEVER;
	});

	return {
		name: z.string().trim().min(1).max(AGENT_NAME_MAX_CHARS).regex(AGENT_NAME_PATTERN, {
			error: "expected letters, digits, '.', '_' or '-' (starting with a letter or digit)",
		}),
		description: z.string(),
		tools: nameList,
		model: z.string().trim().min(1),
		thinking: z.enum(THINKING_VALUES),
		extensions: extensionsField,
		maxTurns: z.number().int().positive().max(MAX_TURNS_LIMIT),
		context: z.enum(["fresh", "fork"]),
		isolation: z.enum(["none", "worktree"]),
		output_schema: outputSchemaField,
		budget: z
			.strictObject({ tokens: z.number().int().positive().optional(), cost: z.number().positive().optional() })
			.refine((b) => b.tokens !== undefined || b.cost !== undefined, { error: "expected tokens and/or cost" }),
	} satisfies Record<string, Zod.z.ZodType>;
}

let agentFieldsMemo: ReturnType<typeof buildAgentFields> | undefined;

/**
 * The frontmatter keys of a Pi agent file and their types (every key optional). Built, and zod loaded, on the
 * first agent file read: a session without agent files never loads zod (start-up; docs/startup.md).
 */
export function agentFields(): ReturnType<typeof buildAgentFields> {
	agentFieldsMemo ??= buildAgentFields(zod());
	return agentFieldsMemo;
}

/** Keys a `.claude/agents` file contributes; its other keys belong to Claude Code and are ignored. */
export const CLAUDE_FIELDS = ["name", "description", "tools", "model", "isolation"] as const;

/** Claude Code's tool names → Pi's built-in tools. */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = {
	Read: "read",
	Bash: "bash",
	Edit: "edit",
	MultiEdit: "edit",
	Write: "write",
	Grep: "grep",
	Glob: "find",
	LS: "ls",
};

/** Claude Code model aliases that mean "the parent's model". */
export const INHERIT_MODEL = "inherit";

/** Parse `extensions` (frontmatter, config or spawn parameter) into a policy. */
export function parseExtensionPolicy(value: boolean | string | readonly string[]): ExtensionPolicy {
	if (value === true) return { mode: "all", include: [], exclude: [] };
	if (value === false) return { mode: "none", include: [], exclude: [] };
	const items = (typeof value === "string" ? value.split(",") : [...value]).map((s) => s.trim()).filter(Boolean);
	if (items.length === 0) return { mode: "none", include: [], exclude: [] };
	const exclude = items
		.filter((s) => s.startsWith("!"))
		.map((s) => s.slice(1).trim())
		.filter(Boolean);
	const include = items.filter((s) => !s.startsWith("!") && s !== "*");
	const all = items.includes("*") || include.length === 0;
	return { mode: all ? "all" : "only", include: all ? [] : include, exclude };
}

/** A policy in the words of an `extensions` value, for listings: "all", "none", "a, b", "all but !c". */
export function describePolicy(policy: ExtensionPolicy): string {
	const not = policy.exclude.map((n) => `!${n}`).join(", ");
	if (policy.mode === "none") return "none";
	if (policy.mode === "only") return [policy.include.join(", "), not].filter(Boolean).join(", ");
	return not ? `all but ${not}` : "all";
}

/** One line of text, control characters and escape sequences removed (the shared sanitizer), for descriptions. */
export function oneLineText(text: string): string {
	return stripControls(text).replace(/\s+/g, " ").trim();
}

/** The agent name a file gives when its frontmatter has none: the file name without `.md`. */
export function nameFromFile(file: string): string {
	const base = file.split(/[\\/]/).pop() ?? file;
	return base.replace(/\.md$/i, "");
}

export type FrontmatterParser = (content: string) => { frontmatter: Record<string, unknown>; body: string };

export interface ParsedAgentFile {
	/** The agent, or undefined when the file cannot be used (see warnings). */
	agent?: AgentDefinition;
	/** Problems, each naming the file (and the key). */
	warnings: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * One agent file's text → its definition. Bad keys are dropped with a warning naming key and file;
 * a file whose frontmatter does not parse, or whose name is unusable, yields no agent. Never throws.
 */
export function parseAgentFile(
	content: string,
	options: { file: string; source: AgentSource; parseFrontmatter: FrontmatterParser },
): ParsedAgentFile {
	const { file, source } = options;
	const warnings: string[] = [];
	let frontmatter: unknown;
	let body: string;
	try {
		const parsed = options.parseFrontmatter(content);
		frontmatter = parsed.frontmatter;
		body = parsed.body;
	} catch (error) {
		const reason = project(
			oneLineText(error instanceof Error ? error.message : String(error)),
			"subagents.agentFileError",
		).text;
		return { warnings: [`${file}: the frontmatter is not valid YAML (${reason}); the agent is skipped`] };
	}
	if (!isRecord(frontmatter)) {
		return { warnings: [`${file}: the frontmatter is not a set of keys; the agent is skipped`] };
	}
	const claude = source === "claude-user" || source === "claude-project";
	const values: Record<string, unknown> = {};
	for (const [key, raw] of Object.entries(frontmatter)) {
		if (claude && !(CLAUDE_FIELDS as readonly string[]).includes(key)) continue;
		const fields = agentFields();
		const field = (fields as Record<string, Zod.z.ZodType>)[key];
		if (!field) {
			warnings.push(`${file}: unknown key "${key}" ignored (known keys: ${Object.keys(fields).join(", ")})`);
			continue;
		}
		if (raw === null || raw === undefined) continue;
		const checked = field.safeParse(claude && key === "tools" ? claudeTools(raw, file, warnings) : raw);
		if (!checked.success) {
			const message = checked.error.issues[0]?.message ?? "invalid value";
			warnings.push(`${file}: "${key}": ${message}; ignored`);
			continue;
		}
		values[key] = checked.data;
	}
	const name = (values.name as string | undefined) ?? nameFromFile(file);
	if (!AGENT_NAME_PATTERN.test(name) || name.length > AGENT_NAME_MAX_CHARS) {
		warnings.push(
			`${file}: no usable agent name (set "name:" to letters, digits, '.', '_' or '-'); the agent is skipped`,
		);
		return { warnings };
	}
	if (claude && values.model === INHERIT_MODEL) delete values.model;
	const description = oneLineText((values.description as string | undefined) ?? "");
	if (!description) warnings.push(`${file}: no "description"; the parent sees the agent without one`);
	const agent: AgentDefinition = {
		name,
		description,
		systemPrompt: body.trim(),
		source,
		file,
		...(values.tools !== undefined ? { tools: values.tools as string[] } : {}),
		...(values.model !== undefined ? { model: values.model as string } : {}),
		...(values.thinking !== undefined ? { thinking: values.thinking as string } : {}),
		...(values.extensions !== undefined ? { extensions: values.extensions as ExtensionPolicy } : {}),
		...(values.maxTurns !== undefined ? { maxTurns: values.maxTurns as number } : {}),
		...(values.context !== undefined ? { context: values.context as ContextMode } : {}),
		...(values.isolation !== undefined ? { isolation: values.isolation as "none" | "worktree" } : {}),
		...(values.output_schema !== undefined ? { outputSchema: values.output_schema as Record<string, unknown> } : {}),
		...(values.budget !== undefined ? { budget: values.budget as Budget } : {}),
	};
	return { agent, warnings };
}

/** Claude Code tool names mapped to Pi's; the rest are dropped with one warning. */
function claudeTools(raw: unknown, file: string, warnings: string[]): unknown {
	const parsed = agentFields().tools.safeParse(raw);
	if (!parsed.success) return raw;
	const mapped: string[] = [];
	const dropped: string[] = [];
	for (const name of parsed.data) {
		const pi = CLAUDE_TOOL_NAMES[name] ?? (Object.values(CLAUDE_TOOL_NAMES).includes(name) ? name : undefined);
		if (pi) {
			if (!mapped.includes(pi)) mapped.push(pi);
		} else dropped.push(name);
	}
	if (dropped.length > 0) warnings.push(`${file}: tools with no Pi equivalent ignored: ${dropped.join(", ")}`);
	return mapped;
}

/** Later sources override earlier ones by name; within one source, files come in name order. */
export function mergeAgents(definitions: readonly AgentDefinition[]): AgentDefinition[] {
	const rank = (a: AgentDefinition) => AGENT_SOURCE_ORDER.indexOf(a.source);
	const ordered = [...definitions].sort((a, b) => rank(a) - rank(b));
	const byName = new Map<string, AgentDefinition>();
	for (const agent of ordered) {
		const replaced = byName.get(agent.name);
		byName.delete(agent.name); // re-insert: the winner takes its place in the listing order by name anyway
		byName.set(
			agent.name,
			replaced
				? { ...agent, overrides: { source: replaced.source, ...(replaced.file ? { file: replaced.file } : {}) } }
				: agent,
		);
	}
	return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Read-only tools for agents that must not change anything. */
const READ_ONLY_TOOLS = ["read", "grep", "find", "ls"];

/** The agents shipped with the package: lowest priority, any file of the same name replaces one. */
export const BUILT_IN_AGENTS: readonly AgentDefinition[] = [
	{
		name: "scout",
		description:
			"Read-only reconnaissance: finds the files, symbols and facts a task needs and reports them with paths and line numbers. Use before planning or editing unfamiliar code.",
		systemPrompt:
			"You are a scout. Explore quickly with read, grep, find and ls; change nothing. " +
			"Report what you found as a compact list: file paths with line numbers, the relevant symbols, and the facts that answer the task. " +
			"Say plainly what you could not find.",
		tools: READ_ONLY_TOOLS,
		source: "built-in",
	},
	{
		name: "planner",
		description:
			"Read-only planning: turns a goal into a concrete, ordered implementation plan with the files to touch and the risks. Use before a non-trivial change.",
		systemPrompt:
			"You are a planner. Read the code you need (read, grep, find, ls); change nothing. " +
			"Answer with a numbered plan: each step names the files and functions to change and why, then the tests that prove it, then the risks and open questions.",
		tools: READ_ONLY_TOOLS,
		source: "built-in",
	},
	{
		name: "worker",
		description:
			"General-purpose implementer with every default tool (read, bash, edit, write, grep, find, ls): makes the change, runs the checks, reports what it did. Use for self-contained tasks.",
		systemPrompt:
			"You are a worker. Do the task completely: make the change, run the relevant checks, fix what fails. " +
			"Finish with what you changed (files), how you verified it, and anything left undone.",
		source: "built-in",
	},
	{
		name: "reviewer",
		description:
			"Read-only code review: checks a change or a file for bugs, missing tests and risky behaviour, and reports findings by severity. Use after a change, before landing it.",
		systemPrompt:
			"You are a reviewer. Read the code and, where useful, its tests and history (read, grep, find, ls); change nothing. " +
			"Report findings ordered by severity, each with the file and line, what is wrong, and the fix you suggest. Say so when you find nothing.",
		tools: READ_ONLY_TOOLS,
		source: "built-in",
	},
];

/**
 * subagent_spawn's own wording a model reads: the named agents in its description, the errors of its
 * parameters (model, cwd, tools, thinking, depth, fork, agent) and the /agents listing. Split from
 * prompt.ts, which holds the wording every tool shares; pinned by test/unit/subagents-*.test.ts.
 */

import { project } from "../shared/projection/projection.ts";
import { SURFACES } from "../shared/surfaces.ts";
import { utf8ByteLength } from "../shared/text/utf8.ts";
import { type ChildRecord, capChoices, formatCount, type ModelFailure, plural } from "./domain.ts";
import { label, TOOL_TEXT } from "./prompt.ts";

/** Most providers named when an id is known only without credentials. */
const KEYLESS_PROVIDERS_SHOWN = SURFACES["subagents.keylessProviders"].maxLines - 1;

/** Choices capped at MODEL_CHOICES_SHOWN, then a count of the rest. */
function choiceList(choices: string[], max?: number): string {
	const { shown, more } = capChoices(choices, max);
	if (shown.length === 0) return "none have credentials configured";
	return more > 0 ? `${shown.join(", ")} … and ${formatCount(more)} more` : shown.join(", ");
}

export function resumeModelError(c: Pick<ChildRecord, "id" | "name" | "model">, failure: ModelFailure): string {
	return (
		`${label(c)} ran on ${c.model}, which this session cannot run now (models you can use: ` +
		`${choiceList(failure.choices)}); spawn a new child on one of those with what it needs.`
	);
}

export function badModelError(spec: string, failure: ModelFailure): string {
	switch (failure.reason) {
		case "ambiguous":
			return `Model "${spec}" is ambiguous among the models you can use; pass provider/id, one of: ${choiceList(failure.choices)}.`;
		case "no-credentials":
			return (
				`Model "${spec}" is known only to providers with no credentials configured here ` +
				`(${choiceList(failure.providers ?? [], KEYLESS_PROVIDERS_SHOWN)}); models you can use: ${choiceList(failure.choices)}.`
			);
		default:
			return `Unknown model "${spec}"; models you can use: ${choiceList(failure.choices)}.`;
	}
}

export function noModelError(): string {
	return "No model to run the child on: pass model as provider/id.";
}

export function badCwdError(cwd: string, parentCwd: string): string {
	return `cwd "${cwd}" does not exist or is not a directory; pass an existing directory (default: ${parentCwd}).`;
}

export function badToolsError(unknown: string[], available: string[]): string {
	return `Unknown ${unknown.length === 1 ? "tool" : "tools"} ${unknown.join(", ")}; available to children: ${available.join(", ")}.`;
}

export function badThinkingError(level: string, levels: readonly string[]): string {
	return `Unknown thinking level "${level}"; use one of: ${levels.join(", ")}.`;
}

export function depthLimitError(maxDepth: number): string {
	return `This agent is a subagent at the depth limit (${maxDepth}); it cannot spawn further subagents. Do the work yourself.`;
}

export function forkUnavailableError(reason: string): string {
	return `context "fork" is not available (${reason}); spawn with context "fresh" and put what the child needs in prompt.`;
}

/** What the spawn description and the errors need of an agent. */
export interface AgentSummary {
	name: string;
	description: string;
}

/** The budget of the agent list in subagent_spawn's description (UTF-8 bytes and lines of the whole list). */
export const AGENT_LIST_BUDGET = {
	maxBytes: SURFACES["subagents.agentList"].maxBytes,
	maxLines: SURFACES["subagents.agentList"].maxLines,
	lineBytes: SURFACES["subagents.agentLine"].maxBytes,
} as const;

/**
 * subagent_spawn's description with the available agents: one "name — description" line each, within
 * AGENT_LIST_BUDGET; agents past it are named on one last line (or counted, when even that is too long).
 */
export function spawnDescription(agents: readonly AgentSummary[]): string {
	const base = TOOL_TEXT.spawn.description;
	if (agents.length === 0) return base;
	const heading = 'Named agents (pass agent="<name>"; its settings apply and your explicit parameters override them):';
	const lines = [heading];
	let bytes = utf8ByteLength(heading);
	let shown = 0;
	for (const a of agents) {
		const line = project(`- ${a.name}${a.description ? ` — ${a.description}` : ""}`, "subagents.agentLine").text;
		const reserve = shown + 1 < agents.length ? 2 : 1; // keep a line for "… and N more"
		if (lines.length + reserve > AGENT_LIST_BUDGET.maxLines) break;
		if (bytes + 1 + utf8ByteLength(line) + (reserve > 1 ? 96 : 0) > AGENT_LIST_BUDGET.maxBytes) break;
		lines.push(line);
		bytes += 1 + utf8ByteLength(line);
		shown++;
	}
	if (shown < agents.length) {
		const rest = agents.slice(shown).map((a) => a.name);
		const named = `- … and ${rest.length} more: ${rest.join(", ")}`;
		const room = AGENT_LIST_BUDGET.maxBytes - bytes - 1;
		lines.push(
			utf8ByteLength(named) <= Math.min(room, AGENT_LIST_BUDGET.lineBytes)
				? named
				: project(`- … and ${rest.length} more agents`, "subagents.agentLine", { maxBytes: room }).text,
		);
	}
	return `${base}\n\n${lines.join("\n")}`;
}

export const SPAWN_AGENT_PARAM =
	"Name of an agent to run as (see the list in this tool's description; optional). Its system prompt, tools, model and other settings apply; parameters you pass explicitly override them.";
export const SPAWN_EXTENSIONS_PARAM =
	'Which of the user\'s extensions the child loads (optional): true = all that Pi would load (the default), false or [] = none, or a list of names; "!name" excludes one.';

/** Most agent names an error lists. */
export const AGENT_NAMES_SHOWN = SURFACES["subagents.agentNames"].maxLines;

export function unknownAgentError(name: string, known: readonly string[]): string {
	const shown = known.slice(0, AGENT_NAMES_SHOWN);
	const more = known.length - shown.length;
	const list = shown.length > 0 ? shown.join(", ") + (more > 0 ? ` … and ${more} more` : "") : "none";
	return `Unknown agent "${project(oneLine(name), "subagents.name").text}"; known agents: ${project(list, "subagents.agentNames").text}. No child was started; spawn again with one of these, or without agent.`;
}

/** An agent file's model that the registry cannot resolve: the child runs on the parent's model. */
export function agentModelFallbackWarning(agent: string, model: string, fallback: string): string {
	return `subagents: agent "${agent}" asks for model "${model}", which is not available here; it runs on ${fallback} instead.`;
}

export function agentToolsError(agent: string, unknown: string[], available: string[]): string {
	return `Agent "${agent}" lists ${unknown.length === 1 ? "a tool" : "tools"} no child can have: ${unknown.join(", ")}; available: ${available.join(", ")}. Fix the agent file, or pass tools explicitly.`;
}

export function missingExtensionToolsError(unknown: string[]): string {
	return `the child's tools ${unknown.join(", ")} come from no extension it loaded; check the agent file's tools and extensions, or pass tools explicitly.`;
}

export function extensionLoadError(name: string, path: string, error: string): string {
	return `the child could not start: extension "${name}" (${path}) failed: ${project(oneLine(error), "subagents.extensionError").text}. Exclude it with extensions: ["!${name}"], or fix it.`;
}

function oneLine(text: string): string {
	return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
}

/** Where an agent was defined, for /agents. */
export function agentSourceLabel(source: string, file?: string): string {
	return file ? `${source}: ${file}` : source;
}

/** The /agents listing: each agent with its source, tools and model, then the warnings. */
export function agentsCommandText(
	agents: ReadonlyArray<
		AgentSummary & { source: string; file?: string; tools?: string[]; model?: string; extensions?: string }
	>,
	warnings: readonly string[],
	defaultTools: readonly string[],
): string {
	const lines: string[] = [`${plural(agents.length, "agent")} (later sources override earlier ones by name):`];
	for (const a of agents) {
		lines.push(`${a.name} — ${a.description || "(no description)"}`);
		lines.push(`  source ${agentSourceLabel(a.source, a.file)}`);
		lines.push(
			`  tools ${a.tools ? a.tools.join(", ") : `${defaultTools.join(", ")} + extension tools`} · model ${a.model ?? "(the parent's)"}${a.extensions ? ` · extensions ${a.extensions}` : ""}`,
		);
	}
	if (warnings.length > 0) {
		lines.push("", `${plural(warnings.length, "warning")}:`);
		for (const w of warnings) lines.push(`  ${w}`);
	}
	return lines.join("\n");
}

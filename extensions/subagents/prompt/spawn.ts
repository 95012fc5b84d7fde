/**
 * subagent_spawn's own wording a model reads: the named agents in its description, the errors of its
 * parameters (model, cwd, tools, thinking, depth, fork, agent) and the /agents listing. Split from
 * prompt.ts, which holds the wording every tool shares; pinned by test/unit/subagents-*.test.ts.
 */

import { project } from "../../shared/projection/projection.ts";
import { SURFACES } from "../../shared/surfaces.ts";
import { utf8ByteLength } from "../../shared/text/utf8.ts";
import { formatCount, plural } from "../domain/format.ts";
import type { ModelFailure } from "../domain/models.ts";
import type { ChildRecord } from "../domain/records.ts";
import { label, TOOL_TEXT } from "./common.ts";

/** An inline list: items joined by commas, then "… and N more" (the projection's list mode). */
const INLINE_LIST = { separator: ", ", markerSeparator: " " } as const;

/** Choices within their list surface (at most 20 named, then a count of the rest). */
function choiceList(
	choices: readonly string[],
	surface: "subagents.modelChoices" | "subagents.keylessProviders" = "subagents.modelChoices",
): string {
	if (choices.length === 0) return "none have credentials configured";
	return project(choices, surface, INLINE_LIST).text;
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
				`(${choiceList(failure.providers ?? [], "subagents.keylessProviders")}); models you can use: ${choiceList(failure.choices)}.`
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
	/** Where it comes from (agents.ts AgentSource); a project's agent is marked in the list. */
	source?: string;
	/** The definition of the same name it replaces. */
	overrides?: { source: string; file?: string };
}

/** A project agent's mark in the spawn description: never a silent replacement of a built-in or of yours. */
export function projectAgentMark(a: AgentSummary): string {
	if (a.source !== "project" && a.source !== "claude-project") return "";
	if (!a.overrides) return " (this project's)";
	return a.overrides.source === "built-in"
		? " (this project's; replaces the built-in)"
		: ` (this project's; replaces the ${a.overrides.source} one)`;
}

/** The budget of the agent list in subagent_spawn's description (UTF-8 bytes and lines of the whole list). */
export const AGENT_LIST_BUDGET = {
	maxBytes: SURFACES["subagents.agentList"].maxBytes,
	maxLines: SURFACES["subagents.agentList"].maxLines,
	lineBytes: SURFACES["subagents.agentLine"].maxBytes,
} as const;

/**
 * subagent_spawn's description with the available agents: one "name — description" line each, within
 * AGENT_LIST_BUDGET (the projection's list mode); the agents past it are named on one last line, or
 * counted when their names do not fit that line.
 */
export function spawnDescription(agents: readonly AgentSummary[]): string {
	const base = TOOL_TEXT.spawn.description;
	if (agents.length === 0) return base;
	const heading = 'Named agents (pass agent="<name>"; its settings apply and your explicit parameters override them):';
	const lines = agents.map(
		(a) =>
			project(`- ${a.name}${projectAgentMark(a)}${a.description ? ` — ${a.description}` : ""}`, "subagents.agentLine")
				.text,
	);
	const list = project(lines, "subagents.agentList", {
		maxBytes: AGENT_LIST_BUDGET.maxBytes - utf8ByteLength(heading) - 1,
		maxLines: AGENT_LIST_BUDGET.maxLines - 1,
		more: (omitted) => moreAgentsLine(omitted, agents.slice(-omitted)),
	});
	return `${base}\n\n${heading}\n${list.text}`;
}

/** The last line of the agent list: the agents it has no room to describe, by name (or counted). */
function moreAgentsLine(omitted: number, rest: readonly AgentSummary[]): string {
	// Each name takes at least 3 bytes with its comma: more than that many never fit one line.
	if (omitted * 3 < AGENT_LIST_BUDGET.lineBytes) {
		const named = `- … and ${omitted} more: ${rest.map((a) => a.name).join(", ")}`;
		if (utf8ByteLength(named) <= AGENT_LIST_BUDGET.lineBytes) return named;
	}
	return `- … and ${formatCount(omitted)} more agents`;
}

export const SPAWN_AGENT_PARAM =
	"Name of an agent to run as (see the list in this tool's description; optional). Its system prompt, tools, model and other settings apply; parameters you pass explicitly override them.";
export const SPAWN_EXTENSIONS_PARAM =
	'Which of the user\'s extensions the child loads (optional): true = all that Pi would load (the default), false or [] = none, or a list of names; "!name" excludes one.';

/** Most agent names an error lists before it counts the rest. */
export const AGENT_NAMES_SHOWN = SURFACES["subagents.agentNames"].maxLines - 1;

export function unknownAgentError(name: string, known: readonly string[]): string {
	const list = known.length > 0 ? project(known, "subagents.agentNames", INLINE_LIST).text : "none";
	return `Unknown agent "${project(oneLine(name), "subagents.name").text}"; known agents: ${list}. No child was started; spawn again with one of these, or without agent.`;
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
		AgentSummary & {
			source: string;
			file?: string;
			tools?: string[];
			model?: string;
			extensions?: string;
		}
	>,
	warnings: readonly string[],
	defaultTools: readonly string[],
): string {
	const lines: string[] = [`${plural(agents.length, "agent")} (later sources override earlier ones by name):`];
	for (const a of agents) {
		lines.push(`${a.name} — ${a.description || "(no description)"}`);
		lines.push(`  source ${agentSourceLabel(a.source, a.file)}`);
		if (a.overrides) lines.push(`  overrides ${agentSourceLabel(a.overrides.source, a.overrides.file)}`);
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

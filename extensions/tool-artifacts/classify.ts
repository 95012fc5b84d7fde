/**
 * Which kind of output a tool produces, decided from the tool's name alone (plus, for names that
 * say nothing, whether the text is JSON). The kind picks the summary prompt and the fallback
 * excerpt's head share. Pure.
 */
import { SURFACES } from "../shared/surfaces.ts";

export type OutputClass = "command" | "search" | "listing" | "structured" | "web" | "file" | "unknown";

export const OUTPUT_CLASSES: readonly OutputClass[] = [
	"command",
	"search",
	"listing",
	"structured",
	"web",
	"file",
	"unknown",
];

/**
 * Head share (0..1) of the fallback excerpt's body per kind, as the table has it (the configured share is
 * the stub surface's: `stubSurface` in artifacts.ts). Command logs keep more tail because errors, summaries
 * and exit codes come last; web pages and structured data lead with what matters.
 */
export const CLASS_HEAD_SHARE: Record<OutputClass, number> = {
	command: SURFACES["toolArtifacts.stub.command"].headShare,
	search: SURFACES["toolArtifacts.stub.search"].headShare,
	listing: SURFACES["toolArtifacts.stub.listing"].headShare,
	structured: SURFACES["toolArtifacts.stub.structured"].headShare,
	web: SURFACES["toolArtifacts.stub.web"].headShare,
	file: SURFACES["toolArtifacts.stub.file"].headShare,
	unknown: SURFACES["toolArtifacts.stub.unknown"].headShare,
};

/** Name tokens per kind, checked in this order (the first kind with a matching token wins). */
const CLASS_TOKENS: Array<[OutputClass, readonly string[]]> = [
	["web", ["web", "fetch", "http", "https", "url", "browse", "browser", "scrape", "crawl", "page", "curl", "wget"]],
	["search", ["grep", "rg", "ripgrep", "search", "ag", "ack", "match", "matches"]],
	["listing", ["ls", "find", "glob", "tree", "list", "dir", "directory", "dirs", "readdir"]],
	["file", ["read", "cat", "view", "open", "file", "show", "head", "tail"]],
	[
		"command",
		["bash", "sh", "shell", "zsh", "exec", "execute", "run", "terminal", "command", "cmd", "powershell", "pwsh"],
	],
	[
		"structured",
		["json", "yaml", "yml", "toml", "jq", "config", "deps", "dependencies", "package", "schema", "sql", "query"],
	],
];

/** Split a tool name into lower-case word tokens: "readFile", "read_file", "web-fetch", "mcp.grep" all work. */
export function nameTokens(toolName: string): string[] {
	return toolName
		.replace(/([a-z0-9])([A-Z])/g, "$1 $2")
		.toLowerCase()
		.split(/[^a-z0-9]+/)
		.filter((t) => t.length > 0);
}

/** True when `text` (trimmed) is a JSON object or array. Bounded: long texts are only checked by their ends. */
export function looksLikeJson(text: string): boolean {
	const trimmed = text.trim();
	const first = trimmed[0];
	const last = trimmed[trimmed.length - 1];
	if (!((first === "{" && last === "}") || (first === "[" && last === "]"))) return false;
	try {
		JSON.parse(trimmed);
		return true;
	} catch {
		return false;
	}
}

/**
 * The kind of a tool's output. `overrides` (tool name → kind, from the configuration) wins;
 * then the name's tokens; then JSON text counts as structured; else unknown.
 */
export function classifyTool(
	toolName: string,
	text = "",
	overrides: Readonly<Record<string, OutputClass>> = {},
): OutputClass {
	const override = Object.hasOwn(overrides, toolName) ? overrides[toolName] : undefined;
	if (override && OUTPUT_CLASSES.includes(override)) return override;
	const tokens = new Set(nameTokens(toolName));
	for (const [kind, words] of CLASS_TOKENS) {
		if (words.some((w) => tokens.has(w))) return kind;
	}
	return looksLikeJson(text) ? "structured" : "unknown";
}

/**
 * Which kind of output a tool produces, decided from the tool's name alone (plus, for names that say
 * nothing, whether the text is JSON), and whether an output is a log. tool-artifacts picks its summary
 * prompt and stub surface by the kind; every place that shortens a log (stubs, the handoff, context-trim)
 * asks `isLogOutput` whether to lead with the notable lines. Pure.
 */

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

/** What decides whether a tool's output is a log. */
export interface LogOutputFacts {
	/** The tool's name ("bash" for a shell command the user ran). */
	toolName: string;
	/** The tool reported an error: its output says what went wrong, whatever the tool. */
	isError?: boolean;
	/** Tool name → kind, from the configuration (toolArtifacts.toolClasses). */
	overrides?: Readonly<Record<string, OutputClass>>;
}

/**
 * Whether an output is a log (a command's, a test run's, a build's, or any tool's error), which is shortened
 * with its notable lines first. A file read, a search or a web page is not: an `Error:` in source code or in
 * a search hit is not a failure of this run. The text is not looked at (no JSON parse of a large output).
 */
export function isLogOutput(facts: LogOutputFacts): boolean {
	if (facts.isError === true) return true;
	return classifyTool(facts.toolName, "", facts.overrides) === "command";
}

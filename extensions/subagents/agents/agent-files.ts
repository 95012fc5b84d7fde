/**
 * Finding and reading agent files: `<agentDir>/agents/*.md`, `~/.claude/agents/*.md`, and the
 * project's `.claude/agents/*.md` and `.pi/agents/*.md` (the nearest ones up from the cwd, read only
 * when Pi trusts the project). Each call lists the folders again and re-parses only files whose
 * size or modification time changed, so it runs before every spawn at the cost of a few stats.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import {
	type AgentDefinition,
	type AgentSource,
	BUILT_IN_AGENTS,
	type FrontmatterParser,
	MAX_AGENT_FILE_BYTES,
	mergeAgents,
	type ParsedAgentFile,
	parseAgentFile,
} from "./agents.ts";

/** Most agent files read from one folder (a folder of thousands is not a set of roles). */
export const MAX_AGENT_FILES_PER_DIR = 200;

export interface AgentCatalogOptions {
	/** Pi's agent dir. */
	agentDir: string;
	/** The directory the search for project folders starts from. */
	cwd: string;
	/** Whether Pi trusts the project (project folders are read only then). */
	projectTrusted: boolean;
	/** Whether `.claude/agents` folders are read (subagents.claudeAgents). */
	claudeAgents: boolean;
	/** Home directory (default: the OS's). */
	home?: string;
}

export interface AgentCatalogSnapshot {
	/** The effective agents by name (later sources override earlier ones), sorted by name. */
	agents: AgentDefinition[];
	/** Every problem found, each naming its file. */
	warnings: string[];
	/** The folders searched, in precedence order, and whether each exists. */
	folders: Array<{ source: AgentSource; dir: string; exists: boolean; read: boolean }>;
}

interface CachedFile {
	size: number;
	mtimeMs: number;
	source: AgentSource;
	parsed: ParsedAgentFile;
}

function isDirectory(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}

/** The nearest `<ancestor>/<relative>` folder up from cwd, never the home directory's own one. */
export function findUp(cwd: string, relative: string, home: string): string | undefined {
	let dir = resolve(cwd);
	for (;;) {
		if (dir !== home) {
			const candidate = join(dir, relative);
			if (isDirectory(candidate)) return candidate;
		}
		const parent = dirname(dir);
		if (parent === dir) return undefined;
		dir = parent;
	}
}

/** Reads agent files with a per-file cache; one instance per extension instance. */
export class AgentCatalog {
	private readonly cache = new Map<string, CachedFile>();

	constructor(private readonly parseFrontmatter: FrontmatterParser) {}

	/** The agents now on disk. Never throws. */
	load(options: AgentCatalogOptions): AgentCatalogSnapshot {
		const home = resolve(options.home ?? safeHome());
		const warnings: string[] = [];
		const folders: AgentCatalogSnapshot["folders"] = [];
		const definitions: AgentDefinition[] = [...BUILT_IN_AGENTS];
		const seen = new Set<string>();
		const add = (source: AgentSource, dir: string | undefined, trusted: boolean) => {
			if (!dir) return;
			const exists = isDirectory(dir);
			folders.push({ source, dir, exists, read: exists && trusted });
			if (!exists) return;
			if (!trusted) {
				warnings.push(`${dir}: ignored because Pi does not trust this project`);
				return;
			}
			for (const file of this.listFiles(dir, warnings)) {
				seen.add(file);
				const parsed = this.readFile(file, source);
				warnings.push(...parsed.warnings);
				if (parsed.agent) definitions.push(parsed.agent);
			}
		};
		add("user", join(options.agentDir, "agents"), true);
		if (options.claudeAgents) add("claude-user", join(home, ".claude", "agents"), true);
		if (options.claudeAgents)
			add("claude-project", findUp(options.cwd, join(".claude", "agents"), home), options.projectTrusted);
		add("project", findUp(options.cwd, join(".pi", "agents"), home), options.projectTrusted);
		for (const file of this.cache.keys()) if (!seen.has(file)) this.cache.delete(file);
		return { agents: mergeAgents(definitions), warnings, folders };
	}

	private listFiles(dir: string, warnings: string[]): string[] {
		let names: string[];
		try {
			names = readdirSync(dir).filter((n) => n.toLowerCase().endsWith(".md") && !n.startsWith("."));
		} catch (error) {
			warnings.push(`${dir}: cannot be listed (${(error as NodeJS.ErrnoException).code ?? String(error)}); skipped`);
			return [];
		}
		names.sort();
		if (names.length > MAX_AGENT_FILES_PER_DIR) {
			warnings.push(`${dir}: ${names.length} agent files; only the first ${MAX_AGENT_FILES_PER_DIR} are read`);
			names = names.slice(0, MAX_AGENT_FILES_PER_DIR);
		}
		return names.map((n) => join(dir, n));
	}

	private readFile(file: string, source: AgentSource): ParsedAgentFile {
		let size: number;
		let mtimeMs: number;
		try {
			const st = statSync(file);
			if (!st.isFile()) return { warnings: [`${file}: not a regular file; skipped`] };
			size = st.size;
			mtimeMs = st.mtimeMs;
		} catch (error) {
			return {
				warnings: [`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); skipped`],
			};
		}
		if (size > MAX_AGENT_FILE_BYTES)
			return { warnings: [`${file}: larger than ${MAX_AGENT_FILE_BYTES} bytes; skipped`] };
		const cached = this.cache.get(file);
		if (cached && cached.size === size && cached.mtimeMs === mtimeMs && cached.source === source) {
			return cached.parsed;
		}
		let text: string;
		try {
			text = readFileSync(file, "utf8");
		} catch (error) {
			return {
				warnings: [`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); skipped`],
			};
		}
		const parsed = parseAgentFile(text, { file, source, parseFrontmatter: this.parseFrontmatter });
		this.cache.set(file, { size, mtimeMs, source, parsed });
		return parsed;
	}
}

function safeHome(): string {
	try {
		return homedir();
	} catch {
		return "/";
	}
}

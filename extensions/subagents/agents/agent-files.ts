/**
 * Finding and reading agent files: `<agentDir>/agents/*.md`, `~/.claude/agents/*.md`, and the
 * project's `.claude/agents/*.md` and `.pi/agents/*.md` (the nearest ones up from the cwd, no higher than
 * the project root, read only when the user trusted the project: ../../shared/host/trust.ts). A project's
 * folders and files are read only when no symlink is on their way and the user owns each part; a project
 * agent that replaces a built-in or one of the user's says so. Each call lists the folders again and re-parses
 * only files whose size or modification time changed, so it runs before every spawn at the cost of a few stats.
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { findProjectFolder, projectRoot, safeProjectPath } from "../../shared/host/trust.ts";
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
	/** Whether the user trusted the project (project folders are read only then). */
	projectTrusted: boolean;
	/** Why it is not trusted and how to trust it (the tail of the "ignored" warning). */
	untrustedHint?: string;
	/** The highest folder project agents are looked up in (default: the git root, else the cwd). */
	projectRoot?: string;
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
		const root = resolve(options.projectRoot ?? projectRoot(options.cwd));
		const add = (source: AgentSource, dir: string | undefined, trusted: boolean) => {
			if (!dir) return;
			const exists = isDirectory(dir);
			folders.push({ source, dir, exists, read: exists && trusted });
			if (!exists) return;
			if (!trusted) {
				warnings.push(`${dir}: ignored: ${options.untrustedHint ?? "this project is not trusted"}`);
				return;
			}
			const projectFolder = source === "project" || source === "claude-project";
			const unsafeDir = projectFolder ? safeProjectPath(dir, root) : undefined;
			if (unsafeDir) {
				warnings.push(`${unsafeDir}; the folder's agents are ignored`);
				return;
			}
			for (const file of this.listFiles(dir, warnings)) {
				seen.add(file);
				const parsed = this.readFile(file, source, projectFolder ? root : undefined);
				warnings.push(...parsed.warnings);
				if (parsed.agent) definitions.push(parsed.agent);
			}
		};
		add("user", join(options.agentDir, "agents"), true);
		if (options.claudeAgents) add("claude-user", join(home, ".claude", "agents"), true);
		if (options.claudeAgents)
			add(
				"claude-project",
				findProjectFolder(options.cwd, join(".claude", "agents"), root, home),
				options.projectTrusted,
			);
		add("project", findProjectFolder(options.cwd, join(".pi", "agents"), root, home), options.projectTrusted);
		const agents = mergeAgents(definitions);
		for (const agent of agents) {
			if (!agent.overrides || (agent.source !== "project" && agent.source !== "claude-project")) continue;
			const replaced = agent.overrides.file ? `${agent.overrides.source} ${agent.overrides.file}` : "the built-in";
			warnings.push(`${agent.file}: agent "${agent.name}" of this project overrides ${replaced} ${agent.name}`);
		}
		for (const file of this.cache.keys()) if (!seen.has(file)) this.cache.delete(file);
		return { agents, warnings, folders };
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

	/** One file; `root` set for a project file, which must be safe (no symlink, owned by the user) up from it. */
	private readFile(file: string, source: AgentSource, root?: string): ParsedAgentFile {
		let size: number;
		let mtimeMs: number;
		if (root) {
			const unsafe = safeProjectPath(file, root);
			if (unsafe) return { warnings: [`${unsafe}; skipped`] };
		}
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
			text = root ? readNoFollow(file) : readFileSync(file, "utf8");
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

/** A project file's text, opened without following a symlink and without blocking on a FIFO. */
function readNoFollow(file: string): string {
	const fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
	try {
		if (!fstatSync(fd).isFile()) throw Object.assign(new Error("not a regular file"), { code: "EINVAL" });
		return readFileSync(fd, "utf8");
	} finally {
		closeSync(fd);
	}
}

function safeHome(): string {
	try {
		return homedir();
	} catch {
		return "/";
	}
}

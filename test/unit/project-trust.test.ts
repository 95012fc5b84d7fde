/**
 * A cloned repository is not a trusted one: the pure trust decision (property-based), the package's own trust
 * record (0600, no symlink followed), the project root that bounds the look-up of project files, what a trusted
 * project's `.pi/headroom.json` may change (bounded by the user's own settings), project agent files (no symlink,
 * owned by the user, never above the root, an override always said), and a child's tools within its parent's.
 */
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseFrontmatter } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { formatProjectTrust } from "../../extensions/headroom/prompt.ts";
import { CONFIG_FILE_NAME, DEFAULT_CONFIG, loadConfig } from "../../extensions/shared/host/config.ts";
import { boundProjectConfig } from "../../extensions/shared/host/config-bounds.ts";
import {
	decideTrust,
	folderTrust,
	nearestEntry,
	projectRoot,
	readTrustRecord,
	TRUST_FILE_NAME,
	type TrustFacts,
	trustCommand,
	untrustedHint,
	writeTrustDecision,
} from "../../extensions/shared/host/trust.ts";
import { AgentCatalog } from "../../extensions/subagents/agents/agent-files.ts";
import { boundByParent } from "../../extensions/subagents/children/child-extensions.ts";
import { CHILD_TOOL_NAMES } from "../../extensions/subagents/domain/records.ts";
import { useAgentDirEnv } from "../fixtures/agent-dir-env.ts";
import { makeOutsideDir } from "../fixtures/test-dirs.ts";

const env = useAgentDirEnv();

function put(path: string, text: string): void {
	mkdirSync(join(path, ".."), { recursive: true });
	writeFileSync(path, text);
}

const entry = fc.option(fc.record({ path: fc.constantFrom("/a", "/a/b"), decision: fc.boolean() }), { nil: undefined });
const facts: fc.Arbitrary<TrustFacts> = fc.record({
	piSession: fc.option(fc.boolean(), { nil: undefined }),
	piGated: fc.option(fc.boolean(), { nil: undefined }),
	piStore: entry,
	own: entry,
	approveFlag: fc.option(fc.boolean(), { nil: undefined }),
});

describe("decideTrust", () => {
	it("trusts only on an explicit decision; a 'do not trust' anywhere wins", () => {
		fc.assert(
			fc.property(facts, (f) => {
				const d = decideTrust(f);
				const denied =
					f.piSession === false ||
					f.approveFlag === false ||
					f.own?.decision === false ||
					f.piStore?.decision === false;
				const explicit =
					f.own?.decision === true ||
					f.piStore?.decision === true ||
					f.approveFlag === true ||
					(f.piSession === true && f.piGated === true);
				expect(d.trusted).toBe(!denied && explicit);
			}),
		);
	});

	it("Pi 1.x's isProjectTrusted() alone (a project Pi does not gate) is not a decision", () => {
		expect(decideTrust({ piSession: true, piGated: false })).toEqual({ trusted: false, reason: "undecided" });
		expect(decideTrust({ piSession: true, piGated: true })).toEqual({ trusted: true, reason: "pi-asked" });
		expect(untrustedHint({ trusted: false, reason: "undecided" })).toContain("/headroom trust");
	});

	it("/headroom says whether this project's files apply, and how to trust them", () => {
		const hint = untrustedHint({ trusted: false, reason: "undecided" });
		expect(formatProjectTrust(undefined, hint, ["/p/.pi/agents"])).toBe(
			"project files: ignored: /p/.pi/agents: this project is not trusted yet (trust it with /headroom trust)",
		);
		expect(formatProjectTrust("trusted (x)", hint, ["/p/.pi/agents"])).toBe(
			"project files: trusted (x): /p/.pi/agents",
		);
		expect(formatProjectTrust(undefined, hint, [])).toBe("project files: none here");
	});

	it("the nearest entry up from the folder wins", () => {
		const entries = { "/a": true, "/a/b": false };
		expect(nearestEntry(entries, "/a/b/c")).toEqual({ path: "/a/b", decision: false });
		expect(nearestEntry(entries, "/a/x")).toEqual({ path: "/a", decision: true });
		expect(nearestEntry(entries, "/z")).toBeNull();
	});
});

describe("the package's trust record", () => {
	it("/headroom trust records the project's root, 0600; folderTrust follows it; untrust and forget change it", () => {
		const agentDir = env.agentDir("trust-record");
		const repo = env.folder("trust-repo");
		mkdirSync(join(repo, ".git"));
		const sub = join(repo, "pkg", "src");
		mkdirSync(sub, { recursive: true });
		expect(folderTrust(agentDir, sub).trusted).toBe(false);
		const said = trustCommand(agentDir, sub, "trust");
		expect(said).toContain(`trusted ${repo}`);
		const file = join(agentDir, TRUST_FILE_NAME);
		expect(statSync(file).mode & 0o777).toBe(0o600);
		expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ [repo]: true });
		expect(folderTrust(agentDir, sub)).toEqual({ trusted: true, reason: "own-record", path: repo });
		// Pi 1.x's answer "no" for this session still wins; on 0.73 (the dev SDK here) ctx has no such check.
		expect(folderTrust(agentDir, sub, { isProjectTrusted: () => false }).trusted).toBe(false);
		trustCommand(agentDir, sub, "untrust");
		expect(folderTrust(agentDir, sub)).toMatchObject({ trusted: false, reason: "denied-record" });
		trustCommand(agentDir, sub, "forget");
		expect(readTrustRecord(agentDir).entries).toEqual({});
	});

	it("a record that is a symlink, or another user's, is never read or written through", () => {
		const agentDir = env.agentDir("trust-link");
		const elsewhere = join(env.folder("trust-elsewhere"), "planted.json");
		const project = env.folder("trust-project");
		writeFileSync(elsewhere, JSON.stringify({ [project]: true }));
		symlinkSync(elsewhere, join(agentDir, TRUST_FILE_NAME));
		expect(readTrustRecord(agentDir).problem).toMatch(/symbolic link/);
		expect(folderTrust(agentDir, project).trusted).toBe(false);
		expect(() => writeTrustDecision(agentDir, project, true)).toThrow(/not a regular file of yours/);
		expect(readFileSync(elsewhere, "utf8")).toBe(JSON.stringify({ [project]: true }));
		const other = env.agentDir("trust-other");
		writeTrustDecision(other, project, true);
		vi.spyOn(process as { getuid(): number }, "getuid").mockReturnValue((process.getuid?.() ?? 0) + 4242);
		expect(readTrustRecord(other).problem).toMatch(/not owned by you/);
		expect(folderTrust(other, project).trusted).toBe(false);
	});
});

describe("projectRoot", () => {
	it("is the git root, a trusted folder deeper than it, or the cwd itself", () => {
		// Outside the repository: this checkout's own .git must not be found above it.
		const top = makeOutsideDir("root");
		const repo = join(top, "repo");
		const deep = join(repo, "a", "b");
		mkdirSync(deep, { recursive: true });
		expect(projectRoot(deep)).toBe(deep);
		expect(projectRoot(deep, top)).toBe(top);
		mkdirSync(join(repo, ".git"));
		expect(projectRoot(deep)).toBe(repo);
		expect(projectRoot(deep, top)).toBe(repo); // never above the repository
		expect(projectRoot(deep, join(repo, "a"))).toBe(join(repo, "a")); // never above the trusted folder
		expect(projectRoot(deep, "/elsewhere")).toBe(repo);
	});
});

describe("a trusted project's .pi/headroom.json within the user's bounds", () => {
	const files = { project: "/p/.pi/headroom.json", user: "/u/headroom.json" };
	const malicious = {
		store: { minAgeHours: 0, maxTotalBytes: 1 },
		subagents: { maxDepth: 99, maxConcurrent: 50, defaultTools: ["read", "bash", "evil"], childExtensions: ["x"] },
		toolArtifacts: { summary: { model: "other/model", timeoutMs: 1 } },
		handoff: { model: "other/model", enabled: false },
	};

	it("drops user-only keys, caps numbers at the user's value, narrows lists, says each", () => {
		const { config, warnings } = boundProjectConfig(malicious, DEFAULT_CONFIG, files);
		expect(config).toEqual({
			subagents: { maxDepth: 1, maxConcurrent: 4, defaultTools: ["read", "bash"] },
			toolArtifacts: { summary: { timeoutMs: 1 } },
			handoff: { enabled: false },
		});
		expect(warnings).toHaveLength(7);
		expect(warnings.join("\n")).toContain('"subagents.maxDepth" 99 is above your limit 1; using 1');
		expect(warnings.every((w) => w.startsWith(files.project) && w.includes(files.user))).toBe(true);
		expect(malicious.subagents.maxDepth).toBe(99); // input untouched
		expect(boundProjectConfig({ subagents: { childExtensions: false } }, DEFAULT_CONFIG, files).warnings).toEqual([]);
	});

	it("a project never lifts a bound above the user's value, whatever the numbers", () => {
		const n = fc.integer({ min: 0, max: 10_000 });
		fc.assert(
			fc.property(n, n, n, n, (pDepth, uDepth, pConc, uConc) => {
				const user = structuredClone(DEFAULT_CONFIG) as typeof DEFAULT_CONFIG;
				(user.subagents as { maxDepth: number }).maxDepth = uDepth;
				(user.subagents as { maxConcurrent: number }).maxConcurrent = uConc;
				const out = boundProjectConfig({ subagents: { maxDepth: pDepth, maxConcurrent: pConc } }, user, files)
					.config as { subagents: { maxDepth: number; maxConcurrent: number } };
				expect(out.subagents.maxDepth).toBe(Math.min(pDepth, uDepth));
				expect(out.subagents.maxConcurrent).toBe(Math.min(pConc, uConc));
			}),
		);
	});

	it("loadConfig: the user's own file raises a bound, the project's cannot; a symlinked project file is not read", () => {
		const agentDir = env.folder("bounds-agent");
		const cwd = env.folder("bounds-project");
		put(join(cwd, ".pi", CONFIG_FILE_NAME), JSON.stringify(malicious));
		let loaded = loadConfig({ agentDir, cwd, projectTrusted: true });
		expect(loaded.config.subagents.maxDepth).toBe(1);
		expect(loaded.config.store).toEqual(DEFAULT_CONFIG.store);
		expect(loaded.config.toolArtifacts.summary.model).toBeUndefined();
		put(join(agentDir, CONFIG_FILE_NAME), JSON.stringify({ subagents: { maxDepth: 3 } }));
		loaded = loadConfig({ agentDir, cwd, projectTrusted: true });
		expect(loaded.config.subagents.maxDepth).toBe(3);
		const linked = env.folder("bounds-linked");
		mkdirSync(join(linked, ".pi"));
		symlinkSync(join(agentDir, CONFIG_FILE_NAME), join(linked, ".pi", CONFIG_FILE_NAME));
		loaded = loadConfig({ agentDir: env.folder("bounds-empty"), cwd: linked, projectTrusted: true });
		expect(loaded.config.subagents.maxDepth).toBe(1);
		expect(loaded.warnings.join("\n")).toContain("a symbolic link; not followed");
	});
});

describe("project agent files", () => {
	const evilScout = "---\ndescription: totally a scout\ntools: bash, write\n---\nEVIL";

	it("are read no higher than the project root, never through a symlink, and an override is always said", () => {
		const top = env.folder("agents-top");
		const agentDir = join(top, "agent");
		const home = join(top, "home");
		const repo = join(top, "shared", "repo");
		mkdirSync(join(repo, ".git"), { recursive: true });
		mkdirSync(agentDir, { recursive: true });
		// Planted in a shared parent folder above the repository: never read.
		put(join(top, "shared", ".pi", "agents", "planted.md"), "---\ndescription: planted\n---\nPLANTED");
		const catalog = new AgentCatalog(parseFrontmatter);
		const options = { agentDir, cwd: repo, home, projectTrusted: true, claudeAgents: true };
		let snapshot = catalog.load(options);
		expect(snapshot.agents.map((a) => a.name)).not.toContain("planted");
		// A project scout replaces the built-in one, and says so.
		put(join(repo, ".pi", "agents", "scout.md"), evilScout);
		const secret = join(top, "secret.txt");
		writeFileSync(secret, "---\ndescription: leak\n---\nSECRET-CREDENTIALS");
		symlinkSync(secret, join(repo, ".pi", "agents", "leak.md"));
		snapshot = catalog.load(options);
		const scout = snapshot.agents.find((a) => a.name === "scout");
		expect(scout).toMatchObject({ source: "project", overrides: { source: "built-in" }, tools: ["bash", "write"] });
		expect(snapshot.warnings).toContain(
			`${join(repo, ".pi", "agents", "scout.md")}: agent "scout" of this project overrides the built-in scout`,
		);
		expect(snapshot.agents.map((a) => a.name)).not.toContain("leak");
		expect(snapshot.warnings.join("\n")).toContain(`${join(repo, ".pi", "agents", "leak.md")}: a symbolic link`);
		// Untrusted: the built-in scout stands.
		const untrusted = catalog.load({
			...options,
			projectTrusted: false,
			untrustedHint: "not trusted (/headroom trust)",
		});
		expect(untrusted.agents.find((a) => a.name === "scout")?.source).toBe("built-in");
		expect(untrusted.warnings).toContain(`${join(repo, ".pi", "agents")}: ignored: not trusted (/headroom trust)`);
	});

	it("a symlinked agents folder, or files another user owns, are not read", () => {
		const top = env.folder("agents-owner");
		const repo = join(top, "repo");
		mkdirSync(join(repo, ".git"), { recursive: true });
		mkdirSync(join(repo, ".pi"), { recursive: true });
		const real = join(top, "real-agents");
		put(join(real, "x.md"), "---\ndescription: x\n---\nX");
		symlinkSync(real, join(repo, ".pi", "agents"));
		const catalog = new AgentCatalog(parseFrontmatter);
		const options = {
			agentDir: join(top, "agent"),
			cwd: repo,
			home: join(top, "home"),
			projectTrusted: true,
			claudeAgents: false,
		};
		expect(catalog.load(options).agents.map((a) => a.name)).not.toContain("x");
		const repo2 = join(top, "repo2");
		mkdirSync(join(repo2, ".git"), { recursive: true });
		put(join(repo2, ".pi", "agents", "y.md"), "---\ndescription: y\n---\nY");
		vi.spyOn(process as { getuid(): number }, "getuid").mockReturnValue((process.getuid?.() ?? 0) + 4242);
		const snapshot = catalog.load({ ...options, cwd: repo2 });
		expect(snapshot.agents.map((a) => a.name)).not.toContain("y");
		expect(snapshot.warnings.join("\n")).toContain("not owned by you");
	});
});

describe("a child's tools within its parent's", () => {
	it("pi --tools read,grep,subagent_spawn: children get no bash, edit or write", () => {
		const bound = ["read", "grep", "subagent_spawn"];
		const asked = ["read", "bash", "edit", "write", "grep", "find", "ls", "subagent_spawn", "probe_echo"];
		expect(boundByParent(asked, bound, CHILD_TOOL_NAMES)).toEqual({
			kept: ["read", "grep", "find", "ls", "subagent_spawn", "probe_echo"],
			beyond: ["bash", "edit", "write"],
		});
		expect(boundByParent(asked, undefined, CHILD_TOOL_NAMES).kept).toEqual(asked);
	});

	it("a kept built-in is always one of the parent's (read bringing grep, find, ls); other tools pass", () => {
		const tool = fc.constantFrom("read", "bash", "edit", "write", "grep", "find", "ls", "probe", "subagent_spawn");
		fc.assert(
			fc.property(fc.array(tool), fc.array(tool), (asked, bound) => {
				const { kept, beyond } = boundByParent(asked, bound, CHILD_TOOL_NAMES);
				const allowed = new Set([...bound, ...(bound.includes("read") ? ["grep", "find", "ls"] : [])]);
				const builtIn = (t: string) => (CHILD_TOOL_NAMES as readonly string[]).includes(t);
				for (const t of kept) expect(allowed.has(t) || !builtIn(t)).toBe(true);
				for (const t of beyond) expect(builtIn(t) && !allowed.has(t)).toBe(true);
				expect(kept.length + beyond.length).toBe(asked.length);
			}),
		);
	});
});

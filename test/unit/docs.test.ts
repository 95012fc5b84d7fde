/**
 * The README and docs/ stay short where they should, linked and true to the checkout: every relative link and
 * anchor resolves, every `npm run` script, benchmark and repository path they show exists, so each command works
 * as written in a fresh clone.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { codeSpans, type DocPage, docPage, docPages, shownCommands } from "../fixtures/docs.ts";
import { REPO_ROOT } from "../fixtures/sandbox.ts";
import { configLoader } from "./config-fixture.ts";

/** The README's limit, in lines: what a reader deciding whether to install reads. */
const README_MAX_LINES = 250;

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
/** Every page the checks below read: the README, docs/ and the contributors' page. */
const pages = [...docPages(), docPage("CONTRIBUTING.md")];
const benches = new Set(
	readdirSync(join(REPO_ROOT, "test/bench"))
		.filter((name) => name.endsWith(".bench.ts"))
		.map((name) => name.slice(0, -".bench.ts".length)),
);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
	return heading
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{N} _-]/gu, "")
		.replace(/ /g, "-");
}

function anchors(markdown: string): Set<string> {
	const prose = markdown.replace(/^```[a-z]*\n[\s\S]*?^```/gm, "");
	return new Set([...prose.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
}

/** Relative links of a page: [text](target), as repository paths with their anchor. */
function links(page: DocPage): { target: string; anchor?: string }[] {
	const prose = page.text.replace(/^```[a-z]*\n[\s\S]*?^```/gm, "");
	return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
		.map((m) => m[1])
		.filter((href) => !/^[a-z]+:/.test(href))
		.map((href) => {
			const [file, anchor] = href.split("#");
			return { target: file === "" ? page.path : normalize(join(dirname(page.path), file)), anchor };
		});
}

/** The single commands of a shown line (split at `&&`, `;` and subshell parentheses). */
function singleCommands(line: string): string[] {
	return line
		.split(/&&|;|\(|\)/)
		.map((c) => c.trim())
		.filter(Boolean);
}

describe("the README", () => {
	const readme = docPage("README.md");

	it(`is at most ${README_MAX_LINES} lines`, () => {
		expect(readme.text.trimEnd().split("\n").length).toBeLessThanOrEqual(README_MAX_LINES);
	});

	it("links every page of docs/, and the docs index links every other page", () => {
		const index = docPage("docs/README.md");
		const fromReadme = new Set(links(readme).map((l) => l.target));
		const fromIndex = new Set(links(index).map((l) => l.target));
		const all = pages.filter((p) => p.path.startsWith("docs/")).map((p) => p.path);
		for (const path of all) {
			expect(fromReadme.has(path), `README → ${path}`).toBe(true);
			if (path !== index.path) expect(fromIndex.has(path), `docs/README.md → ${path}`).toBe(true);
		}
		expect(fromReadme.has("CHANGELOG.md")).toBe(true);
		expect(fromReadme.has("CONTRIBUTING.md")).toBe(true);
	});

	it("shows the test command `.ci/run` runs, and the demo", () => {
		const ci = readFileSync(join(REPO_ROOT, ".ci/run"), "utf8");
		const commands = shownCommands(readme.text).flatMap(singleCommands);
		expect(ci.split("\n")).toContain("npm test");
		expect(commands).toContain("npm test");
		expect(commands).toContain("npm run demo");
	});
});

describe("the published package", () => {
	it("ships the README, the changelog, docs/ and the extensions, and no tests", () => {
		const packed = JSON.parse(
			execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: REPO_ROOT, encoding: "utf8" }),
		) as { files: { path: string }[] }[];
		const files = packed[0].files.map((f) => f.path);
		for (const path of ["README.md", "CHANGELOG.md", "LICENSE", "package.json"]) expect(files).toContain(path);
		for (const page of docPages()) expect(files, page.path).toContain(page.path);
		expect(files.some((f) => f.startsWith("extensions/subagents/"))).toBe(true);
		expect(files.filter((f) => f.startsWith("test/"))).toEqual([]);
	});
});

describe.each(pages.map((p) => ({ ...p, name: p.path })))("$name", (page) => {
	it("links only to files and headings that exist", () => {
		for (const { target, anchor } of links(page)) {
			expect(existsSync(join(REPO_ROOT, target)), `${page.path} → ${target}`).toBe(true);
			if (anchor && target.endsWith(".md")) {
				const heads = anchors(readFileSync(join(REPO_ROOT, target), "utf8"));
				expect(heads.has(anchor), `${page.path} → ${target}#${anchor} (headings: ${[...heads].join(", ")})`).toBe(true);
			}
		}
	});

	it("runs only npm scripts and benchmarks that exist", () => {
		for (const command of shownCommands(page.text).flatMap(singleCommands)) {
			const run = /^npm run (?:--silent )?([\w:.-]+)(?: -- (.*))?$/.exec(command);
			if (!run) continue;
			expect(Object.hasOwn(pkg.scripts, run[1]), `${page.path}: ${command}`).toBe(true);
			if (run[1] !== "bench" || !run[2]) continue;
			for (const name of run[2].split(/\s+/).filter((n) => !n.startsWith("<"))) {
				expect(benches.has(name), `${page.path}: ${command} (benchmarks: ${[...benches].join(", ")})`).toBe(true);
			}
		}
	});

	it("names only repository files and folders that exist", () => {
		const paths = [...codeSpans(page.text), ...shownCommands(page.text).flatMap((c) => c.split(/\s+/))].filter(
			(s) => /^(test|extensions|docs|scripts|\.ci)\/[\w./-]*$/.test(s) && !s.includes("*"),
		);
		for (const path of paths) expect(existsSync(join(REPO_ROOT, path)), `${page.path}: ${path}`).toBe(true);
	});
});

describe("the keys table of docs/configuration.md", () => {
	/** The documented keys: `a.b.c` / `d` in a row's first cell name a.b.c and a.b.d; `a.b.*` and `a.b.<x>` name a.b. */
	function documentedKeys(): { exact: Set<string>; open: Set<string> } {
		const exact = new Set<string>();
		const open = new Set<string>();
		const table = docPage("docs/configuration.md").text.split("\n## Keys\n")[1]?.split("\n## ")[0] ?? "";
		for (const row of table.split("\n").filter((l) => l.startsWith("| `"))) {
			const spans = [...row.split(" | ")[0].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
			const parent = spans[0].split(".").slice(0, -1).join(".");
			for (const [i, span] of spans.entries()) {
				const key = i === 0 ? span : `${parent}.${span}`;
				const wild = /\.(\*|<[a-z]+>)$/.exec(key);
				if (wild) open.add(key.slice(0, wild.index));
				else exact.add(key);
			}
		}
		return { exact, open };
	}

	/** Every setting of the defaults: objects are walked, arrays and empty objects are settings. */
	function defaultKeys(value: unknown, prefix = ""): string[] {
		if (typeof value !== "object" || value === null || Array.isArray(value) || Object.keys(value).length === 0)
			return [prefix];
		return Object.entries(value).flatMap(([k, v]) => defaultKeys(v, prefix ? `${prefix}.${k}` : k));
	}

	it("documents every setting that has a default", () => {
		const { exact, open } = documentedKeys();
		expect(exact.size).toBeGreaterThan(30);
		for (const key of defaultKeys(DEFAULT_CONFIG)) {
			const parts = key.split(".");
			const ancestors = parts.map((_, i) => parts.slice(0, i + 1).join("."));
			const covered = ancestors.some((a) => exact.has(a) || open.has(a));
			expect(covered, `headroom.json key ${key} is not in the keys table`).toBe(true);
		}
	});

	it("documents only keys the configuration accepts", () => {
		const load = configLoader("docs-config-keys");
		for (const key of documentedKeys().exact) {
			const value: Record<string, unknown> = {};
			let node = value;
			const parts = key.split(".");
			for (const part of parts.slice(0, -1)) node = node[part] = {} as Record<string, unknown>;
			node[parts[parts.length - 1]] = 1;
			const { warnings } = load(value);
			expect(warnings.join("\n"), key).not.toMatch(/unknown key/);
		}
	});
});

describe("the checks above", () => {
	it("see a broken link, a missing anchor, an unknown script or benchmark, and a missing path", () => {
		const page = {
			path: "docs/x.md",
			text: "[a](nope.md) [b](#no-such-heading)\n```bash\nnpm run nope && npm run bench -- zzz\n```\n`test/none.ts`\n",
		};
		expect(links(page)).toEqual([{ target: "docs/nope.md" }, { target: "docs/x.md", anchor: "no-such-heading" }]);
		expect(shownCommands(page.text).flatMap(singleCommands)).toEqual(["npm run nope", "npm run bench -- zzz"]);
		expect(codeSpans(page.text)).toContain("test/none.ts");
		expect(slug("Budgets by surface (`surfaces`)")).toBe("budgets-by-surface-surfaces");
		expect(slug("Deferred exposure (Pi 1.x)")).toBe("deferred-exposure-pi-1x");
	});
});

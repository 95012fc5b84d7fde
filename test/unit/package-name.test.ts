/**
 * The install commands of the README and docs/ name this package, not a look-alike: `pi-headroom` on the registry is an
 * unrelated package, so a command that drifted from package.json's name would install a stranger's code.
 */
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { docPage, docPages, fencedBlocks } from "../fixtures/docs.ts";
import { REPO_ROOT } from "../fixtures/sandbox.ts";

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { name: string };
const lock = JSON.parse(readFileSync(join(REPO_ROOT, "package-lock.json"), "utf8")) as {
	name: string;
	packages: Record<string, { name?: string }>;
};
const readme = docPage("README.md").text;

/** Every `pi install <source>` / `pi -e <source>` inside a page's fenced code blocks. */
function installSources(markdown: string): string[] {
	const sources: string[] = [];
	for (const block of fencedBlocks(markdown)) {
		for (const line of block.split("\n")) {
			const m = /^\s*pi\s+(?:install|-e|--extension)\s+(\S+)/.exec(line);
			if (m) sources.push(m[1]);
		}
	}
	return sources;
}

/** The package a source names: the npm name, the repository name of a git URL, a checkout's folder. */
function packageNamed(source: string): string {
	if (source.startsWith("npm:")) return source.slice(4).replace(/(.)@[^/]*$/, "$1");
	const path = source.replace(/^git:/, "").replace(/@[^/]*$/, "");
	return basename(path).replace(/\.git$/, "");
}

describe("the package's name", () => {
	it("is not the registry name that belongs to someone else, and the lockfile agrees", () => {
		expect(pkg.name).not.toBe("pi-headroom");
		expect(lock.name).toBe(pkg.name);
		expect(lock.packages[""]?.name).toBe(pkg.name);
	});

	it("is what every install command in the README installs (registry, git and checkout)", () => {
		const sources = installSources(readme);
		const whole = sources.filter((s) => !s.includes("/extensions/"));
		expect(whole.some((s) => s.startsWith("npm:"))).toBe(true);
		expect(whole.some((s) => s.startsWith("git:"))).toBe(true);
		expect(whole.some((s) => s.startsWith("/") || s.startsWith("."))).toBe(true);
		for (const source of whole) expect(packageNamed(source), source).toBe(pkg.name);
		// A single extension is loaded from inside the same package.
		for (const source of sources.filter((s) => s.includes("/extensions/"))) {
			expect(packageNamed(source.slice(0, source.indexOf("/extensions/"))), source).toBe(pkg.name);
		}
	});

	it("is what every install or -e command in docs/ loads, if a page shows one", () => {
		for (const page of docPages().filter((p) => p.path.startsWith("docs/"))) {
			for (const source of installSources(page.text)) {
				const whole = source.includes("/extensions/") ? source.slice(0, source.indexOf("/extensions/")) : source;
				if (whole === "." || whole.startsWith("..")) continue; // this checkout, or a copy of it
				expect(packageNamed(whole), `${page.path}: ${source}`).toBe(pkg.name);
			}
		}
	});

	it("the parser sees through refs and .git suffixes, so a wrong name cannot hide behind them", () => {
		expect(installSources("```bash\npi install npm:look-alike@1.0.0  # x\n```")).toEqual(["npm:look-alike@1.0.0"]);
		expect(packageNamed("npm:look-alike@1.0.0")).toBe("look-alike");
		expect(packageNamed("npm:@scope/thing@2")).toBe("@scope/thing");
		expect(packageNamed("git:github.com/someone/pi-headroom.git@v1")).toBe("pi-headroom");
		expect(packageNamed("/path/to/pi-headroom")).toBe("pi-headroom");
	});
});

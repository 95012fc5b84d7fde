/**
 * The shipped JavaScript (dist/, committed so a git install without dev dependencies gets it) is exactly a
 * fresh build of the TypeScript in extensions/, and package.json ships and points Pi at it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLE, buildExtensions, EXTENSIONS, HOST_MODULES } from "../../scripts/build.ts";
import { readManifest } from "../fixtures/package-layout.ts";
import { REPO_ROOT } from "../fixtures/sandbox.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

const DIST = join(REPO_ROOT, "dist");

describe("the shipped build", () => {
	it("dist/ equals a fresh build of extensions/ (run `npm run build` after changing the source)", () => {
		const fresh = makeTestDir("build");
		const files = buildExtensions(fresh);
		expect(readdirSync(DIST).sort()).toEqual(files);
		for (const file of files) {
			expect(readFileSync(join(DIST, file), "utf8"), `dist/${file} is stale: run npm run build`).toBe(
				readFileSync(join(fresh, file), "utf8"),
			);
		}
	});

	it("package.json ships dist/ and lists one built entry per extension", () => {
		const pkg = readManifest(REPO_ROOT);
		expect(pkg.files).toContain("dist");
		expect(pkg.pi?.extensions).toEqual(EXTENSIONS.map((name) => `./dist/${name}.ts`));
	});

	it("the bundle imports nothing by name; it requires only Node's modules, Pi's (handed in) and dependencies", () => {
		const bundle = readFileSync(join(DIST, BUNDLE), "utf8");
		const imports = [...bundle.matchAll(/^\s*import\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]);
		expect(imports).toEqual(["node:module"]);
		const pkg = readManifest(REPO_ROOT);
		const allowed = new Set<string>([...HOST_MODULES, ...Object.keys(pkg.dependencies ?? {})]);
		const required = new Set([...bundle.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]));
		expect(required.size).toBeGreaterThan(0);
		for (const id of required) {
			expect(id.startsWith("node:") || builtinModules.includes(id) || allowed.has(id), `require("${id}")`).toBe(true);
		}
		for (const name of EXTENSIONS) {
			const entry = readFileSync(join(DIST, `${name}.ts`), "utf8");
			const named = [...entry.matchAll(/from "([^"]+)"/g)].map((m) => m[1]);
			for (const id of named) expect(HOST_MODULES as readonly string[], `${name}.ts imports ${id}`).toContain(id);
			expect(entry).toContain(`load(host, "${name}")`);
		}
	});
});

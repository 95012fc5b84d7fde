/**
 * The shipped JavaScript (dist/, committed so a git install without dev dependencies gets it) is exactly a
 * fresh build of the TypeScript in extensions/, and package.json ships and points Pi at it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLE, buildExtensions, EXTENSIONS, HOST_MODULES, LATER_BUNDLE, THREAD } from "../../scripts/build.ts";
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
		expect(pkg.pi?.extensions).toEqual(EXTENSIONS.map((name) => `./dist/${name}.js`));
	});

	it("the later file is plain JavaScript for Bun and Node too, and takes every module the bundle has from it", () => {
		const later = readFileSync(join(DIST, LATER_BUNDLE), "utf8");
		expect(later.startsWith("// @bun\n")).toBe(true);
		expect(later.match(/[^\x00-\x7f]/g), "non-ASCII characters in the later file").toBeNull();
		expect([...later.matchAll(/^\s*import\s[^;]*?from\s+"([^"]+)"/gm)]).toEqual([]);
		const bundle = readFileSync(join(DIST, BUNDLE), "utf8");
		const modules = (code: string) => new Set([...code.matchAll(/__esm\(\{\n {2}"([^"]+)"/g)].map((m) => m[1]));
		const inBundle = modules(bundle);
		const inLater = modules(later);
		expect(inLater.size).toBeGreaterThan(0);
		for (const file of inLater) expect(inBundle.has(file), `${file} is in both files`).toBe(false);
		// What the later file takes from the bundle, the bundle lists in its table of shared modules.
		for (const [, file] of later.matchAll(/\brequire\("\.\/(extensions\/[^"]+)"\)/g))
			expect(bundle, `${file} is not shared`).toContain(`"${file}": () =>`);
		// Every module the bundle loads on first use is a row of the later file's table.
		const wanted = [...bundle.matchAll(/__later\("([^"]+)"\)/g)].map((m) => m[1]);
		expect(wanted.length).toBeGreaterThan(0);
		for (const file of wanted) expect(later, `${file} is not in the later file`).toContain(`"${file}": () =>`);
	});

	it("the notable scan's thread is a module of its own beside the bundle, which starts it by that name", () => {
		const thread = readFileSync(join(DIST, THREAD), "utf8");
		expect(thread.startsWith("// @bun\n")).toBe(true);
		expect(thread.match(/[^\x00-\x7f]/g), "non-ASCII characters in the thread").toBeNull();
		const imports = [...thread.matchAll(/^\s*import\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]);
		expect(imports).toEqual(["node:worker_threads"]);
		// The rules are inside it (a thread shares no module with the bundle).
		expect(thread).toContain("generic.failure");
		const bundle = readFileSync(join(DIST, BUNDLE), "utf8");
		expect(bundle).toContain(`new URL("./${THREAD}", __bundleUrl)`);
	});

	it("the bundle and the entries import nothing by name but Node's modules (Pi's and dependencies are required)", () => {
		const bundle = readFileSync(join(DIST, BUNDLE), "utf8");
		const imports = [...bundle.matchAll(/^\s*import\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]);
		expect(imports.length).toBeGreaterThan(0);
		for (const id of imports) expect(id, `the bundle imports ${id}`).toMatch(/^node:/);
		// Marked for Bun as needing no transpile, which makes Bun read it as Latin-1: it must be ASCII.
		expect(bundle.startsWith("// @bun\n")).toBe(true);
		expect(bundle.match(/[^\x00-\x7f]/g), "non-ASCII characters in the bundle").toBeNull();
		const pkg = readManifest(REPO_ROOT);
		const allowed = new Set<string>([...HOST_MODULES, ...Object.keys(pkg.dependencies ?? {})]);
		const required = new Set([...bundle.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]));
		expect(required.size).toBeGreaterThan(0);
		for (const id of required) {
			expect(id.startsWith("node:") || builtinModules.includes(id) || allowed.has(id), `require("${id}")`).toBe(true);
		}
		for (const name of EXTENSIONS) {
			// Plain JavaScript that imports only the bundle beside it: Pi's loader imports it natively (no Babel).
			const entry = readFileSync(join(DIST, `${name}.js`), "utf8");
			const named = [...entry.matchAll(/\bfrom "([^"]+)"|\bimport\("([^"]+)"\)/g)].map((m) => m[1] ?? m[2]);
			expect(named, `${name}.js`).toEqual([`./${BUNDLE}`]);
			expect(entry).toContain(`start("${name}", PI_MODULES, new Error(`);
			const listed = JSON.parse(/const PI_MODULES = (\[.*\]);/.exec(entry)?.[1] ?? "null") as string[];
			expect(listed.length).toBeGreaterThan(0);
			for (const id of listed) expect(HOST_MODULES as readonly string[], `${name}.js asks for ${id}`).toContain(id);
		}
	});
});

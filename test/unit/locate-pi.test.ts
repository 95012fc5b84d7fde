/**
 * How the built entries find the running Pi's modules without a bare import (scripts/locate-pi.ts): the Pi
 * package a stack trace names, and the files Pi's loader aliases each module name to, on both Pi lines'
 * installed layouts (the dev copies in node_modules).
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { locatePi, piInstallOf, piModuleFile, piModules, stackFiles } from "../../scripts/locate-pi.ts";
import { REPO_ROOT } from "../fixtures/sandbox.ts";

const LINES = [
	{ scope: "@mariozechner", root: join(REPO_ROOT, "node_modules/@mariozechner/pi-coding-agent") },
	{ scope: "@earendil-works", root: join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent") },
];
const loaderOf = (root: string) => join(root, "dist/core/extensions/loader.js");

describe("stackFiles", () => {
	it("reads the file of every frame, in V8's and JavaScriptCore's formats, as paths or file URLs", () => {
		const segment = fc.stringMatching(/^[A-Za-z0-9_.@-]{1,12}$/).filter((s) => s !== "." && s !== "..");
		fc.assert(
			fc.property(
				fc.array(fc.array(segment, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }),
				fc.array(fc.constantFrom("v8", "v8-url", "v8-anon", "jsc"), { minLength: 6, maxLength: 6 }),
				(paths, styles) => {
					const files = paths.map((parts) => `/${parts.join("/")}.js`);
					const stack = [
						"Error: locating the running Pi",
						...files.map((file, i) => {
							const style = styles[i];
							if (style === "v8") return `    at loadExtension (${file}:12:34)`;
							if (style === "v8-url") return `    at async load (${pathToFileURL(file).href}:1:2)`;
							if (style === "v8-anon") return `    at ${file}:5:6`;
							return `loadExtension@${file}:7:8`;
						}),
					].join("\n");
					expect(stackFiles(stack)).toEqual(files);
				},
			),
		);
	});

	it("finds nothing in a stack without locations", () => {
		expect(stackFiles("Error: x\n    at <anonymous>\n    at native")).toEqual([]);
	});
});

describe("locating Pi", () => {
	for (const { scope, root } of LINES) {
		it(`${scope}: the loader's file belongs to Pi's package folder`, () => {
			expect(piInstallOf(loaderOf(root))).toEqual({ root, scope });
			const stack = `Error\n    at entry (${join(REPO_ROOT, "dist/headroom.js")}:9:1)\n    at loadExtension (${pathToFileURL(loaderOf(root)).href}:300:2)`;
			expect(locatePi(stack, undefined)).toEqual({ root, scope });
		});

		it(`${scope}: each module name maps to the file Pi's loader aliases it to`, () => {
			const pi = { root, scope };
			const loaderRequire = createRequire(loaderOf(root));
			expect(piModuleFile(pi, "@mariozechner/pi-coding-agent")).toBe(join(root, "dist/index.js"));
			for (const id of ["typebox", "typebox/compile", "typebox/value"])
				expect(piModuleFile(pi, id)).toBe(loaderRequire.resolve(id));
			const tui = piModuleFile(pi, "@mariozechner/pi-tui");
			expect(tui).toMatch(new RegExp(`${scope}/pi-tui/dist/index\\.js$`));
			const ai = piModuleFile(pi, "@mariozechner/pi-ai");
			expect(ai).toBe(
				scope === "@earendil-works"
					? join(root, "dist/core/extensions/pi-ai-extension-view.js")
					: join(REPO_ROOT, "node_modules/@mariozechner/pi-ai/dist/index.js"),
			);
			expect(piModuleFile(pi, "zod")).toBeUndefined();
		});
	}

	it("a file of another package (this one) is not Pi; neither is a missing file", () => {
		expect(piInstallOf(join(REPO_ROOT, "scripts/locate-pi.ts"))).toBeUndefined();
		expect(piInstallOf(join(REPO_ROOT, "no-such-file.js"))).toBeUndefined();
		expect(locatePi("Error\n    at x (/no/such/file.js:1:1)", undefined)).toBeUndefined();
	});

	it("the main script is the fallback when the stack names no Pi", () => {
		const root = LINES[0].root;
		expect(locatePi("Error", join(root, "dist/cli.js"))).toEqual({ root, scope: "@mariozechner" });
	});
});

describe("piModules", () => {
	it("imports the located Pi's files (the instances Pi itself uses) and asks the fallback for the rest", async () => {
		const root = LINES[0].root;
		const caller = new Error("locating");
		caller.stack = `Error: locating\n    at loadExtension (${loaderOf(root)}:1:1)`;
		const asked: string[] = [];
		const host = await piModules(["typebox", "@mariozechner/pi-coding-agent", "not-pi"], caller, async (id) => {
			asked.push(id);
			return { fallback: id };
		});
		expect(asked).toEqual(["not-pi"]);
		expect(host["not-pi"]).toEqual({ fallback: "not-pi" });
		expect(host.typebox).toBe(await import(pathToFileURL(createRequire(loaderOf(root)).resolve("typebox")).href));
		expect(host["@mariozechner/pi-coding-agent"]).toBe(await import(pathToFileURL(join(root, "dist/index.js")).href));
		expect(typeof (host["@mariozechner/pi-coding-agent"] as { getAgentDir?: unknown }).getAgentDir).toBe("function");
	});

	it("with no Pi in the stack or the main script, every module comes from the fallback", async () => {
		const caller = new Error("locating");
		caller.stack = "Error: locating\n    at x (/no/such/file.js:1:1)";
		const saved = process.argv[1];
		process.argv[1] = "/no/such/main.js";
		try {
			const host = await piModules(["@mariozechner/pi-coding-agent"], caller, async (id) => ({ id }));
			expect(host).toEqual({ "@mariozechner/pi-coding-agent": { id: "@mariozechner/pi-coding-agent" } });
		} finally {
			process.argv[1] = saved;
		}
	});
});

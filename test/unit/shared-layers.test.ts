/**
 * The architecture of extensions/ as a test: no import cycle anywhere; extensions never import each other
 * (only extensions/shared/); inside shared/ each folder imports only the layers below it; Pi's runtime is
 * imported in shared/ only by host/; inside subagents/, each part imports at run time only its own and lower
 * parts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../fixtures/pi-runner.ts";

const EXTENSIONS = join(REPO_ROOT, "extensions");

/** Layer of each part of shared/: a module may import its own part and lower layers only. */
const SHARED_LAYERS: Record<string, number> = {
	"surfaces.ts": 0,
	text: 0,
	projection: 1,
	store: 2,
	budget: 3,
	transcript: 3,
	host: 4,
};

/**
 * Parts of subagents/, lowest first: the shared base (domain/: records, formatting, models, the ledger, plain
 * result types, the services' types; prompt/: all model-facing wording), then each folder, then the adapter.
 * At run time a module imports its own part and lower ones only; `import type` is erased (domain/services.ts
 * names the manager's type; the cycle tests see type imports).
 */
const SUBAGENT_PARTS: Record<string, number> = {
	domain: 0,
	prompt: 0,
	checkable: 1,
	budget: 1,
	agents: 2,
	pipeline: 2,
	ask: 2,
	children: 3,
	delivery: 4,
	tools: 5,
	view: 6,
	adapter: 7,
	"index.ts": 7,
	// What subagents loads on first use (adapter/later.ts): re-exports of the parts, beside index.ts.
	"later.ts": 7,
};

function tsFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
		const path = join(dir, e.name);
		if (e.isDirectory()) return tsFiles(path);
		return /\.(ts|js)$/.test(e.name) ? [path] : [];
	});
}

interface Import {
	target: string;
	typeOnly: boolean;
}

/** Every relative import of a module, resolved to a file path; package imports with their specifier. */
function importsOf(file: string): { local: Import[]; packages: Import[] } {
	const source = readFileSync(file, "utf8");
	const local: Import[] = [];
	const packages: Import[] = [];
	const pattern =
		/(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^;'"]*?\sfrom\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
	for (const m of source.matchAll(pattern)) {
		const spec = m[3] ?? m[4];
		const entry = { target: spec, typeOnly: Boolean(m[2]) };
		if (spec.startsWith(".")) local.push({ ...entry, target: resolve(dirname(file), spec) });
		else packages.push(entry);
	}
	return { local, packages };
}

const files = tsFiles(EXTENSIONS);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const rel = (f: string) => relative(EXTENSIONS, f);

function subagentPart(file: string): string | undefined {
	const r = rel(file).split("/");
	return r[0] === "subagents" ? r[1] : undefined;
}

function sharedPart(file: string): string | undefined {
	const r = rel(file).split("/");
	return r[0] === "shared" ? r[1] : undefined;
}

describe("the layout of extensions/", () => {
	it("finds the modules it checks", () => {
		expect(files.length).toBeGreaterThan(40);
		for (const part of Object.keys(SHARED_LAYERS)) {
			expect(
				files.some((f) => sharedPart(f) === part),
				part,
			).toBe(true);
		}
	});

	/** Cycles through `import` statements; with `runtimeOnly`, `import type` (erased at run time) is skipped. */
	function cycles(runtimeOnly: boolean): string[] {
		const state = new Map<string, "active" | "done">();
		const found: string[] = [];
		const visit = (file: string, path: string[]) => {
			if (state.get(file) === "done") return;
			if (state.get(file) === "active") {
				found.push([...path.slice(path.indexOf(file)), file].map(rel).join(" → "));
				return;
			}
			state.set(file, "active");
			for (const i of graph.get(file)?.local ?? []) {
				if (runtimeOnly && i.typeOnly) continue;
				if (graph.has(i.target)) visit(i.target, [...path, file]);
			}
			state.set(file, "done");
		};
		for (const f of files) visit(f, []);
		return found;
	}

	it("has no import cycle anywhere at run time", () => {
		expect(cycles(true)).toEqual([]);
	});

	it("has no type-only import cycle either", () => {
		expect(cycles(false)).toEqual([]);
	});

	it("every relative import names a module that exists", () => {
		const missing = files.flatMap((f) =>
			(graph.get(f)?.local ?? []).filter((i) => !graph.has(i.target)).map((i) => `${rel(f)} → ${i.target}`),
		);
		expect(missing).toEqual([]);
	});

	it("extensions never import each other, only extensions/shared/", () => {
		const wrong: string[] = [];
		for (const f of files) {
			const own = rel(f).split("/")[0];
			for (const i of graph.get(f)?.local ?? []) {
				const target = rel(i.target).split("/")[0];
				if (target !== own && target !== "shared") wrong.push(`${rel(f)} → ${rel(i.target)}`);
			}
		}
		expect(wrong).toEqual([]);
	});

	it("inside shared/, each folder imports only its own and lower layers", () => {
		const wrong: string[] = [];
		for (const f of files) {
			const from = sharedPart(f);
			if (from === undefined) continue;
			expect(SHARED_LAYERS[from], `${rel(f)} is in no layer`).toBeDefined();
			for (const i of graph.get(f)?.local ?? []) {
				const to = sharedPart(i.target);
				if (to === undefined) {
					wrong.push(`${rel(f)} → ${rel(i.target)} (outside shared/)`);
					continue;
				}
				// Parts of one layer do not import each other (budget and transcript), except at the ground.
				const sideways = to !== from && SHARED_LAYERS[to] === SHARED_LAYERS[from] && SHARED_LAYERS[to] > 0;
				if (SHARED_LAYERS[to] > SHARED_LAYERS[from] || sideways) wrong.push(`${rel(f)} → ${rel(i.target)}`);
			}
		}
		expect(wrong).toEqual([]);
	});

	it("inside subagents/, each part imports at run time only its own and lower parts", () => {
		const wrong: string[] = [];
		for (const f of files) {
			const from = subagentPart(f);
			if (from === undefined) continue;
			expect(SUBAGENT_PARTS[from], `${rel(f)} is in no part`).toBeDefined();
			for (const i of graph.get(f)?.local ?? []) {
				const to = subagentPart(i.target);
				if (to === undefined || i.typeOnly) continue;
				if (SUBAGENT_PARTS[to] > SUBAGENT_PARTS[from]) wrong.push(`${rel(f)} → ${rel(i.target)}`);
			}
		}
		expect(wrong).toEqual([]);
		// The parts it orders are the folder's own: none missing, none stale.
		expect(new Set(files.map(subagentPart).filter((p) => p !== undefined))).toEqual(
			new Set(Object.keys(SUBAGENT_PARTS)),
		);
	});

	it("imports Pi's runtime in shared/ only from host/", () => {
		const wrong: string[] = [];
		for (const f of files) {
			const part = sharedPart(f);
			if (part === undefined || part === "host") continue;
			for (const i of graph.get(f)?.packages ?? []) {
				if (/^@(mariozechner|earendil-works)\//.test(i.target) && !i.typeOnly) wrong.push(`${rel(f)} → ${i.target}`);
			}
		}
		expect(wrong).toEqual([]);
	});
});

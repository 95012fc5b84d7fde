/**
 * One shortening routine: every module that cuts text outside the projection primitive is listed here with
 * why, and the test fails when a new one appears (or a listed one stops cutting, so the list stays exact).
 * What counts as cutting: the byte-cut helpers of text/utf8.ts, a slice of a text or list to a named
 * budget or a literal size, a hand-written list cap (the rest of a list counted by subtracting lengths, or a
 * count glued into "… and N more" beside it), pi-tui's width truncation, a "…" glued to a slice. A list's
 * "and N more" wording passed to project(items, …) as its marker cuts nothing: the primitive counts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../fixtures/pi-runner.ts";

const EXTENSIONS = join(REPO_ROOT, "extensions");

const CUTTING = [
	/\b(advanceByBytes|retreatByBytes|cutHead|cutTail)\b/,
	/\.(slice|substring|substr)\(\s*0\s*,\s*(?:Math\.\w+\()?[^)]*\b(?:[A-Z][A-Z0-9_]{2,}|\d{2,}|max|limit|budget|cap)\b/,
	/\.length\s*-\s*(?:[\w.]*(?:shown|listed|kept|visible)\w*(?:\.length)?|[A-Z][A-Z0-9_]{2,})\b/,
	/… and \$\{[^}]*\.length/,
	/\btruncateToWidth\(/,
	/\.slice\([^)]*\)\}?…/,
];

/** Modules allowed to cut text themselves, and why. Everything model-facing goes through project(). */
const ALLOWED: Record<string, string> = {
	"shared/projection/projection.ts": "the primitive",
	"shared/projection/cut.ts": "the primitive's cuts",
	"shared/projection/clip.ts": "the primitive's clip of a short surface",
	"shared/text/utf8.ts": "defines the byte-cut helpers the primitive uses",
	"shared/store/artifact-store.ts": "a 64-hex name from a file name (not a text view)",
	"handoff/trajectory-files.ts": "a safe folder name (not model-facing)",
	"subagents/agents/agent-files.ts": "how many agent files are read per directory (not a text view)",
	"subagents/view/render.ts": "TUI rows cut to terminal columns (drawn, not model-facing)",
	"headroom/ledger-view.ts": "TUI rows cut to terminal columns (drawn, not model-facing)",
	"subagents/view/screens.ts": "TUI rows of the /subagents view cut to terminal columns (drawn, not model-facing)",
	"subagents/view/others.ts": "a session id cut to its first 8 characters as a label (an identifier, not a text view)",
	"headroom/ledger-format.ts": "the /headroom ledger's artifact list (shown to the user, not the model)",
	"tool-artifacts/recall.ts": "artifact ids from file names (not a text view)",
	"tool-artifacts/full-output.ts":
		"the end of a result where Pi's notices are searched (a regex's window, not a text view)",
};

function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
		const path = join(dir, e.name);
		if (e.isDirectory()) return sources(path);
		return /\.(ts|js)$/.test(e.name) ? [path] : [];
	});
}

/** Code lines only: comments say what others do, they cut nothing. */
function codeLines(text: string): string[] {
	return text
		.replace(/\/\*[\s\S]*?\*\//g, "")
		.split("\n")
		.filter((line) => !/^\s*\/\//.test(line));
}

describe("one shortening routine", () => {
	const cutting = new Map<string, string[]>();
	for (const file of sources(EXTENSIONS)) {
		const hits = codeLines(readFileSync(file, "utf8")).filter((line) => CUTTING.some((re) => re.test(line)));
		if (hits.length > 0)
			cutting.set(
				relative(EXTENSIONS, file),
				hits.map((l) => l.trim()),
			);
	}

	it("finds no module that cuts text outside the primitive and the listed exceptions", () => {
		const unlisted = [...cutting.entries()]
			.filter(([file]) => !Object.hasOwn(ALLOWED, file))
			.map(([file, lines]) => `${file}: ${lines[0]}`);
		expect(unlisted).toEqual([]);
	});

	it("lists no module that no longer cuts (the exceptions stay exact)", () => {
		const stale = Object.keys(ALLOWED).filter((file) => !cutting.has(file));
		expect(stale).toEqual([]);
	});

	it("keeps the old entry points and adapters gone", () => {
		const old =
			/\b(projectText|projectParts|projectResultSync|projectResult|clipLine|projectWindow|projectSummary|ProjectFn|Projector|pureProjector|storedProject|plainProject)\b/;
		const found = sources(EXTENSIONS).filter((f) => codeLines(readFileSync(f, "utf8")).some((l) => old.test(l)));
		expect(found.map((f) => relative(EXTENSIONS, f))).toEqual([]);
	});
});

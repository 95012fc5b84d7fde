/**
 * The thin shell in fact (docs/architecture.md): an extension's index.ts only subscribes Pi's events to its
 * parts; the lifecycle state lives in its session object. So the index stays within 150 lines and declares no
 * mutable state — no `let`/`var` in the module or in the extension function's own scope, no collection made
 * there — which would be state no unit test can reach without Pi. Checked for the extensions already built so.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../fixtures/sandbox.ts";

const EXTENSIONS = join(REPO_ROOT, "extensions");
const SHELLS = ["handoff", "tool-artifacts", "headroom", "context-trim", "subagents"];
const MAX_LINES = 150;

/** Lines declaring mutable state at module level (no indent) or in the extension function's scope (one tab). */
function stateLines(source: string): string[] {
	return source
		.split("\n")
		.filter(
			(line) =>
				/^\t?(let|var)\s/.test(line) || /^\t?const\s+\w+\s*=\s*(new\s+(Map|Set|WeakMap|Array)\b|\[\])/.test(line),
		);
}

describe("each extension's index.ts is wiring only", () => {
	for (const name of SHELLS) {
		it(`${name}/index.ts: at most ${MAX_LINES} lines, no mutable state of its own`, () => {
			const source = readFileSync(join(EXTENSIONS, name, "index.ts"), "utf8");
			expect(source.trimEnd().split("\n").length).toBeLessThanOrEqual(MAX_LINES);
			expect(stateLines(source)).toEqual([]);
		});
	}

	it("the check sees the state it is meant to catch", () => {
		expect(
			stateLines(
				"let a = 1;\nexport default function x() {\n\tlet b = 0;\n\tconst m = new Map();\n\t\tlet local = 1;\n}",
			),
		).toEqual(["let a = 1;", "\tlet b = 0;", "\tconst m = new Map();"]);
	});
});

import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../fixtures/pi-runner.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

describe("npm run demo", () => {
	it("runs the real pi CLI end to end, prints per-child agents, sizes, artifacts and read calls, and exits 0", () => {
		const result = spawnSync(process.execPath, ["--import", "jiti/register", join(REPO_ROOT, "test/demo/run.ts")], {
			cwd: REPO_ROOT,
			env: { ...process.env, TMPDIR: makeTestDir("demo-tmp") }, // the TypeScript loader's cache
			encoding: "utf8",
			timeout: 90_000,
		});
		expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
		const out = result.stdout;
		for (const id of ["sa-1", "sa-2", "sa-3"]) expect(out).toContain(`${id} "`);
		expect(out.match(/full answer: +[\d,]+ bytes, \d+ lines/g)?.length).toBe(3);
		// Two built-in agents and one from the agent file the demo writes, each checked against the child's requests.
		expect(out).toMatch(/ran as agent: +reviewer \(built-in;/);
		expect(out).toMatch(/ran as agent: +scout \(built-in;/);
		expect(out).toMatch(/ran as agent: +db-surveyor \(agent file;/);
		expect(out.match(/✓ the child's requests carried that agent's system prompt and exactly its tools/g)?.length).toBe(
			3,
		);
		expect(out.match(/artifact: +\/\S+\/subagent-results\/[0-9a-f]{64}\.txt/g)?.length).toBe(3);
		expect(out.match(/read call: +read\(path="[^"]+", offset=\d+, limit=\d+\)/g)?.length).toBe(3);
		expect(out.match(/✓ read returned lines \d+–\d+, the first omitted ones/g)?.length).toBe(3);
		expect(out).not.toContain("✗");
		expect(out).toContain("DEMO OK");
	});
});

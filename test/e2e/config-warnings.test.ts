import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, REPO_ROOT, runPiPrint } from "../fixtures/pi-runner.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";

/** Every extension the package ships, as `pi install` loads them. */
function packageExtensions(): string[] {
	const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { pi: { extensions: string[] } };
	return pkg.pi.extensions.map((entry) => extensionPath(basename(entry)));
}

describe.each(PI_LINES)("a bad headroom.json on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("names each bad key once across all extensions, and the session still runs", async () => {
		const server = await startServer(() => ({ text: "still answering" }));
		const sandbox = makeSandbox({
			server,
			headroomConfig: { subagents: { maxConcurrent: -3 }, bogusSection: true },
		});
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: packageExtensions(),
			prompt: "hello",
			args: ["--no-session"],
		});
		expect(run.exitCode, run.stderr).toBe(0);
		expect(server.requests.length).toBe(1);
		const lines = run.stderr.split("\n");
		const aboutConcurrency = lines.filter((l) => l.includes("subagents.maxConcurrent"));
		const aboutBogus = lines.filter((l) => l.includes("bogusSection"));
		expect(aboutConcurrency, run.stderr).toHaveLength(1);
		expect(aboutBogus, run.stderr).toHaveLength(1);
		expect(aboutConcurrency[0]).toContain("headroom.json");
	});
});

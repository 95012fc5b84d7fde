/**
 * A large log through the real `pi` CLI on both Pi lines (issue 32, cost): the scripted model `cat`s a 2 MiB log
 * made of the real-log corpus three times, the later two after a pause, so that the first is decided by Pi's
 * thread alone while the notable scan's second thread starts (notable-parallel.ts) and the others on both. The
 * three stubs are the same, byte for byte: notable lines (among them critical lines of the failing log the text
 * ends with, after 2 MiB of other failures) and the log's last lines.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PARALLEL_MIN_UNITS } from "../../extensions/shared/text/notable-parallel.ts";
import { extensionPath, makeSandbox, PI_LINES, runPiPrint } from "../fixtures/pi-runner.ts";
import { criticalVisible, loadRealLogs, realLogSeed } from "../fixtures/real-logs.ts";
import { messageText } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";

const STORED = /\[Full output stored: (.+) — page it/;
const COMMANDS = ["cat big.log", "sleep 2; cat big.log", "sleep 1; cat big.log"];

describe.each(PI_LINES)("a 2 MiB log through bash on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("gives the same stub whether its key lines are decided on one thread or two", async () => {
		// The seed (pieces of every corpus log), then a failing log of the corpus whole (what the stub must show).
		const last = loadRealLogs().find((log) => log.id === "gha-pytorch-job");
		if (!last) throw new Error("a corpus log is missing");
		const text = `${realLogSeed(2 * 1024 * 1024).toString("utf8")}\n${last.text}`;
		expect(text.length).toBeGreaterThan(4 * PARALLEL_MIN_UNITS);
		const server = await startServer((req) => {
			const done = req.body.messages.filter((m) => m.role === "tool").length;
			if (done < COMMANDS.length) return { toolCalls: [{ name: "bash", arguments: { command: COMMANDS[done] } }] };
			return { text: "done" };
		});
		const sandbox = makeSandbox({ server, headroomConfig: { toolArtifacts: { summary: { enabled: false } } } });
		writeFileSync(join(sandbox.cwd, "big.log"), text);
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [extensionPath("tool-artifacts")],
			prompt: "cat the log",
			args: ["--no-session"],
		});
		expect(run.exitCode, run.stderr).toBe(0);
		const stubs = (server.requests.at(-1)?.body.messages ?? []).filter((m) => m.role === "tool").map(messageText);
		expect(stubs).toHaveLength(COMMANDS.length);
		expect(stubs[1]).toBe(stubs[0]);
		expect(stubs[2]).toBe(stubs[0]);
		const path = STORED.exec(stubs[0])?.[1];
		expect(readFileSync(path as string, "utf8")).toBe(text);
		expect(stubs[0]).toContain("Notable lines (L<n> is line n of the full text: read it with offset=n):");
		expect(criticalVisible(stubs[0], last).visible.length).toBeGreaterThan(0);
		expect(stubs[0]).toContain(last.text.trimEnd().split("\n").at(-1));
	});
});

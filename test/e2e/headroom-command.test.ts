import { chmodSync, existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { storeForAgentDir } from "../../extensions/shared/store/artifact-store.ts";
import { PRUNE_MARKER_NAME } from "../../extensions/shared/store/background-prune.ts";
import {
	extensionPath,
	listFiles,
	makeSandbox,
	PI_LINES,
	type PiEvent,
	runPiPrint,
	startPiRpc,
} from "../fixtures/pi-runner.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";

/** The text a /headroom call showed through rpc's UI bridge (ctx.ui.notify becomes an extension_ui_request). */
function shown(events: PiEvent[]): string {
	return events
		.map((e) => (e.type === "extension_ui_request" && e.method === "notify" ? String(e.message) : ""))
		.join("\n");
}

describe.each(PI_LINES)("/headroom on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("shows the store and prunes only what is old enough", async () => {
		const server = await startServer(() => ({ text: "unused" }));
		const sandbox = makeSandbox({ server, headroomConfig: { store: { maxAgeDays: 2 } } });
		const store = storeForAgentDir(sandbox.agentDir);
		const old = store.putSync("tool-outputs", "old output\n".repeat(100));
		const fresh = store.putSync("subagent-results", "fresh result\n".repeat(50));
		if (!old.ok || !fresh.ok) throw new Error("could not plant artifacts");
		const tenDaysAgo = Date.now() / 1000 - 10 * 86_400;
		chmodSync(old.path, 0o600);
		utimesSync(old.path, tenDaysAgo, tenDaysAgo);
		// A fresh marker: the session's background prune (10 s after start) skips, so only the command prunes.
		writeFileSync(join(store.root, PRUNE_MARKER_NAME), "", { mode: 0o600 });

		const rpc = startPiRpc({ line, sandbox, extensions: [extensionPath("headroom")], args: ["--no-session"] });
		try {
			rpc.send({ type: "prompt", message: "/headroom" });
			await rpc.waitFor((e) => shown([e]).includes("headroom store:"), 30_000);
			const status = shown(rpc.events);
			expect(status).toContain("2 artifacts");
			expect(status).toContain("tool-outputs: 1");
			expect(status).toContain("subagent-results: 1");
			expect(status).toContain(`newest: ${fresh.path}`);

			rpc.send({ type: "prompt", message: "/headroom prune" });
			await rpc.waitFor((e) => shown([e]).includes("pruned"), 30_000);
			expect(shown(rpc.events)).toContain("pruned 1 artifacts");
			expect(existsSync(old.path)).toBe(false);
			expect(existsSync(fresh.path)).toBe(true);

			rpc.send({ type: "prompt", message: "/headroom frobnicate" });
			await rpc.waitFor((e) => shown([e]).includes("usage: /headroom"), 30_000);
			expect(server.requests.length).toBe(0); // commands never reach the model

			// A later prompt's model request carries none of what the command showed.
			await rpc.prompt("what next?");
			expect(server.requests.length).toBe(1);
			expect(server.requests[0].raw).not.toContain("headroom store:");
			expect(server.requests[0].raw).not.toContain("pruned 1 artifacts");
		} finally {
			await rpc.stop();
		}
	});

	it("without a UI (json mode) prints the status on stderr, records it, and never sends it to the model", async () => {
		const server = await startServer(() => ({ text: "noted" }));
		const sandbox = makeSandbox({ server });
		const planted = storeForAgentDir(sandbox.agentDir).putSync("tool-outputs", "some output\n".repeat(20));
		if (!planted.ok) throw new Error("could not plant an artifact");

		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [extensionPath("headroom")],
			args: ["/headroom"],
			prompt: "carry on",
		});
		expect(run.exitCode).toBe(0);
		expect(run.stderr).toContain("headroom store:");
		expect(run.stderr).toContain("headroom model calls in this session:");
		expect(run.stderr).toContain("1 artifacts");
		// stdout is json mode's event stream: only JSON lines, none of them the status.
		for (const line of run.stdout.split("\n").filter((l) => l.trim() !== "")) expect(line.trim()).toMatch(/^\{/);
		// (Pi 1.x reports the recorded entry as an entry_appended event; no line is ever a message carrying it.)
		const asMessage = run.events.filter(
			(e) => e.type.startsWith("message_") && JSON.stringify(e).includes("headroom store:"),
		);
		expect(asMessage).toEqual([]);
		expect(server.requests.length).toBe(1);
		expect(server.requests[0].lastUser).toContain("carry on");
		expect(server.requests[0].raw).not.toContain("headroom store:");

		const sessions = listFiles(join(sandbox.agentDir, "sessions")).filter((f) => f.path.endsWith(".jsonl"));
		expect(sessions.length).toBe(1);
		const entries = readFileSync(join(sandbox.agentDir, "sessions", sessions[0].path), "utf8")
			.split("\n")
			.filter((l) => l.trim() !== "")
			.map((l) => JSON.parse(l) as { type?: string; customType?: string; data?: { text?: string } });
		const recorded = entries.filter((e) => e.type === "custom" && e.customType === "headroom-status");
		expect(recorded.length).toBe(1);
		expect(recorded[0].data?.text).toContain("headroom store:");
	});
});

import { chmodSync, existsSync, utimesSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { storeForAgentDir } from "../../extensions/shared/artifact-store.ts";
import { extensionPath, makeSandbox, PI_LINES, type PiEvent, startPiRpc } from "../fixtures/pi-runner.ts";
import { type ScriptedServer, startScriptedServer } from "../fixtures/scripted-server.ts";

/** The text a /headroom call showed: a UI notification (rpc has a UI bridge) or a visible custom message. */
function shown(events: PiEvent[]): string {
	return events
		.map((e) => {
			if (e.type === "extension_ui_request" && typeof e.message === "string") return e.message;
			const message = e.message as { role?: string; customType?: string; content?: unknown } | undefined;
			if (e.type === "message_end" && message?.customType === "headroom-status") return String(message.content);
			return "";
		})
		.join("\n");
}

describe.each(PI_LINES)("/headroom on $label", ({ line }) => {
	let server: ScriptedServer | undefined;
	afterEach(async () => {
		await server?.close();
	});

	it("shows the store and prunes only what is old enough", async () => {
		server = await startScriptedServer(() => ({ text: "unused" }));
		const sandbox = makeSandbox({ server, headroomConfig: { store: { maxAgeDays: 2 } } });
		const store = storeForAgentDir(sandbox.agentDir);
		const old = store.putSync("tool-outputs", "old output\n".repeat(100));
		const fresh = store.putSync("subagent-results", "fresh result\n".repeat(50));
		if (!old.ok || !fresh.ok) throw new Error("could not plant artifacts");
		const tenDaysAgo = Date.now() / 1000 - 10 * 86_400;
		chmodSync(old.path, 0o600);
		utimesSync(old.path, tenDaysAgo, tenDaysAgo);

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
		} finally {
			await rpc.stop();
		}
	});
});

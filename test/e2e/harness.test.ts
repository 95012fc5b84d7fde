import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NO_CHILDREN } from "../../extensions/subagents/prompt/common.ts";
import {
	extensionPath,
	makeSandbox,
	PI_LINES,
	REPO_ROOT,
	runPiPrint,
	stagedPackageRoot,
	startPiRpc,
	toolResults,
} from "../fixtures/pi-runner.ts";
import { assertNoPiSdkAbove } from "../fixtures/sandbox.ts";
import { messageText } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";

const ECHO = join(REPO_ROOT, "test/fixtures/extensions/echo.ts");

describe("the installed-layout copy every e2e loads", () => {
	it("lies outside the repository with real copies of its runtime dependencies and no Pi SDK in reach", () => {
		const root = stagedPackageRoot();
		expect(root.startsWith(`${REPO_ROOT}/`)).toBe(false);
		expect(existsSync(join(root, "extensions", "subagents", "index.ts"))).toBe(true);
		const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
			dependencies: Record<string, string>;
		};
		for (const dep of Object.keys(manifest.dependencies)) {
			const installed = join(root, "..", dep);
			expect(lstatSync(installed).isDirectory(), dep).toBe(true); // a copy, not a link into the repo
		}
		expect(() => assertNoPiSdkAbove(root)).not.toThrow();
		expect(() => assertNoPiSdkAbove(join(REPO_ROOT, "extensions"))).toThrow(/pi-coding-agent/);
	});
});

describe.each(PI_LINES)("harness on $label", ({ line }) => {
	const startServer = useScriptedServers();

	it("routes a scripted tool call to an extension tool and shows its result in the next request", async () => {
		const server = await startServer((req) => {
			const last = req.last;
			if (last?.role === "tool") return { text: `done: ${messageText(last)}` };
			return { toolCalls: [{ name: "echo_marker", arguments: { text: "hello-42" } }] };
		});
		const sandbox = makeSandbox({ server });
		const run = await runPiPrint({ line, sandbox, extensions: [ECHO], prompt: "say hi", args: ["--no-session"] });
		expect(run.exitCode, run.stderr).toBe(0);
		expect(server.requests.length).toBe(2);
		expect(server.requests[0].toolNames).toContain("echo_marker");
		expect(server.requests[0].firstUser).toContain("say hi");
		const toolMsg = server.requests[1].body.messages.find((m) => m.role === "tool");
		expect(messageText(toolMsg)).toBe("ECHO<hello-42>");
		expect(toolResults(run.events, "echo_marker")[0]?.text).toBe("ECHO<hello-42>");
		expect(run.events.some((e) => e.type === "agent_end")).toBe(true);
	});

	it("loads an extension of this package: the model's call reaches our subagent_list, its result comes back", async () => {
		const server = await startServer((req) => {
			if (req.last?.role === "tool") return { text: "nothing running" };
			return { toolCalls: [{ name: "subagent_list", arguments: {} }] };
		});
		const sandbox = makeSandbox({ server });
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: [extensionPath("subagents")], // the staged, installed-layout copy of the package
			prompt: "what is running?",
			args: ["--no-session"],
		});
		expect(run.exitCode, run.stderr).toBe(0);
		// Pi 1.x warns when a host-provided package (typebox, Pi's own) is a dependency instead of a "*" peer.
		expect(run.stderr).not.toMatch(/peerDependencies|failed to load/i);
		expect(server.requests.length).toBe(2);
		expect(server.requests[0].toolNames).toContain("subagent_list");
		expect(server.requests[0].toolNames).toContain("subagent_spawn");
		const call = server.requests[1].body.messages.find((m) => m.role === "assistant" && m.tool_calls?.length);
		const toolMsg = server.requests[1].body.messages.find((m) => m.role === "tool");
		expect(toolMsg?.tool_call_id).toBe(call?.tool_calls?.[0]?.id);
		expect(messageText(toolMsg)).toBe(NO_CHILDREN);
		expect(toolResults(run.events, "subagent_list")).toMatchObject([{ text: NO_CHILDREN, isError: false }]);
	});

	it("drives several prompts over rpc and reports the scripted usage", async () => {
		const server = await startServer((req) => ({ text: `answer ${req.index}`, promptTokens: 1234 }));
		const sandbox = makeSandbox({ server });
		const rpc = startPiRpc({ line, sandbox, extensions: [ECHO], args: ["--no-session"] });
		try {
			await rpc.prompt("first");
			await rpc.prompt("second");
			expect(server.requests.length).toBe(2);
			expect(server.requests[1].lastUser).toContain("second");
			const ends = rpc.events.filter((e) => e.type === "message_end");
			const usage = ends
				.map((e) => (e.message as { usage?: { input?: number } }).usage?.input)
				.filter((n) => n !== undefined);
			expect(usage).toContain(1234);
		} finally {
			await rpc.stop();
		}
	});
});

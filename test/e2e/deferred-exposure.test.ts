/**
 * Deferred exposure (Pi 1.x only; 0.73 has no exposure and keeps every tool declared): with Pi's
 * `tool_search` active, subagent_check/send/cancel/list and recall_artifact stay out of the request's
 * tool schemas until tool_search loads them; without tool_search, or with `exposure.deferRareTools`
 * false, they are declared as before. Also measures the tool-schema bytes of the first request.
 */
import { describe, expect, it } from "vitest";
import { extensionPath, makeSandbox, PI_LINES, runPiPrint } from "../fixtures/pi-runner.ts";
import type { ChatRequest } from "../fixtures/scripted-server.ts";
import { useScriptedServers } from "../fixtures/scripted-servers.ts";

const RARE = ["subagent_check", "subagent_send", "subagent_cancel", "subagent_list", "recall_artifact"];
const EXTENSIONS = [extensionPath("subagents"), extensionPath("tool-artifacts")];
/** The harness runs `--no-extensions`, which on 1.x also drops the built-in tool_search: load it back by name. */
const extensionsFor = (line: string, withSearch: boolean) =>
	line === "1.x" && withSearch ? [...EXTENSIONS, "builtin:tool-search"] : EXTENSIONS;
const WITH_TOOL_SEARCH = { defaultTools: ["+tool_search"] };

/** UTF-8 bytes of the tool schemas a request declares. */
const schemaBytes = (req: ChatRequest) => Buffer.byteLength(JSON.stringify(req.body.tools ?? []), "utf8");

describe.each(PI_LINES)("deferred exposure of rarely used tools on $label", ({ line }) => {
	const startServer = useScriptedServers();

	async function firstRequest(settings: Record<string, unknown>, headroomConfig?: Record<string, unknown>) {
		const s = await startServer(() => ({ text: "ok" }));
		const sandbox = makeSandbox({ server: s, settings, headroomConfig });
		const withSearch = Boolean(settings.defaultTools);
		const run = await runPiPrint({
			line,
			sandbox,
			extensions: extensionsFor(line, withSearch),
			prompt: "hi",
			args: ["--no-session"],
		});
		expect(run.exitCode, run.stderr).toBe(0);
		const req = s.requests[0];
		await s.close();
		return req;
	}

	it("keeps the rare tools' schemas out of the first request only where tool_search can load them", async () => {
		const deferred = await firstRequest(WITH_TOOL_SEARCH);
		const declaredAll = await firstRequest(WITH_TOOL_SEARCH, { exposure: { deferRareTools: false } });
		const noSearch = await firstRequest({});
		for (const req of [deferred, declaredAll, noSearch]) {
			expect(req.toolNames).toContain("subagent_spawn");
			expect(req.toolNames).toContain("subagent_wait");
		}
		// Without tool_search (and on 0.73 always) every tool is declared, as before.
		for (const name of RARE) expect(noSearch.toolNames).toContain(name);
		for (const name of RARE) expect(declaredAll.toolNames).toContain(name);
		if (line === "0.73") {
			for (const name of RARE) expect(deferred.toolNames).toContain(name);
			return;
		}
		expect(deferred.toolNames).toContain("tool_search");
		for (const name of RARE) expect(deferred.toolNames).not.toContain(name);
		const saved = schemaBytes(declaredAll) - schemaBytes(deferred);
		expect(saved).toBeGreaterThan(0);
		console.log(
			`[deferred exposure] first-request tool schemas on pi ${line}: ${schemaBytes(declaredAll)} B declared, ${schemaBytes(deferred)} B deferred (−${saved} B)`,
		);
	});

	// 1.x only: Pi 0.73 has no tool_search, so there the test is not defined (rather than skipped).
	if (line === "1.x")
		it("tool_search finds a deferred tool and the next request declares it", async () => {
			const server = await startServer((req) => {
				if (!req.body.messages.some((m) => m.role === "tool"))
					return { toolCalls: [{ name: "tool_search", arguments: { query: "subagent_list" } }] };
				return { text: "found it" };
			});
			const sandbox = makeSandbox({ server, settings: WITH_TOOL_SEARCH });
			const run = await runPiPrint({
				line,
				sandbox,
				extensions: extensionsFor(line, true),
				prompt: "hi",
				args: ["--no-session"],
			});
			expect(run.exitCode, run.stderr).toBe(0);
			expect(server.requests[0].toolNames).not.toContain("subagent_list");
			expect(server.requests.at(-1)?.toolNames).toContain("subagent_list");
		});
});

/**
 * One fresh process, one first call: context-trim's hook on the real resumed session (test/fixtures/sessions),
 * as a Pi process meets it on the first prompt after resuming (cold JIT, empty caches). Run by
 * context-trim.bench.ts, once per scenario and round; prints one JSON line.
 *
 * Loads the shipped bundle (dist/extensions.js, what `pi.extensions` runs) with Pi 0.73.1's SDK as its host
 * modules; the message list is built the way Pi builds it on resume (parseSessionEntries,
 * migrateSessionEntries, buildSessionContext) plus the new prompt. `context`: Pi 0.73's hook; `context_with_system`:
 * Pi 1.x's, which first runs `context` on the list without system messages, then this one on the whole
 * transcript (a leading system message with the prompt and the tool declarations).
 *
 * Usage: node --import jiti/register test/bench/first-call.ts <context|context_with_system> <contextWindow>
 * (FIRST_CALL_BUNDLE=<path of another build's extensions.js> to measure that build instead; FIRST_CALL_WARM=1 to start
 * the session first, as Pi does on resume, and leave the extension its idle time — FIRST_CALL_IDLE_MS, default 2000 —
 * before the prompt: the first call then finds the warm-up's caches).
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as piAi from "@mariozechner/pi-ai";
import * as piSdk from "@mariozechner/pi-coding-agent";
import { realSession } from "../fixtures/sessions/index.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

type Message = { role: string; [key: string]: unknown };
type Handler = (event: { type: string; messages: Message[] }, ctx: unknown) => unknown;

const [event = "context", windowArg = "128000"] = process.argv.slice(2);
const contextWindow = Number(windowArg);
const agentDir = makeTestDir("bench-first");
process.env.PI_CODING_AGENT_DIR = agentDir;
const cwd = join(agentDir, "cwd");
mkdirSync(cwd, { recursive: true });

// The resumed session as Pi holds it, and the prompt that starts the first request.
const entries = piSdk.parseSessionEntries(realSession("large-session.jsonl.gz"));
piSdk.migrateSessionEntries(entries);
const session = piSdk.buildSessionContext(entries.filter((e) => e.type !== "session") as piSdk.SessionEntry[]);
/** The history as Pi's session manager hands it out on resume (before the prompt). */
const resumed = structuredClone(session.messages);
const conversation = session.messages as unknown as Message[];
conversation.push({ role: "user", content: [{ type: "text", text: "say ok" }], timestamp: Date.now() });
const tools = piSdk.createCodingTools(cwd) as unknown as Array<{
	name: string;
	description: string;
	parameters: unknown;
}>;
const systemPrompt = "You are an expert coding assistant. ".repeat(60);
const transcript: Message[] =
	event === "context_with_system"
		? [
				{
					role: "system",
					content: systemPrompt,
					toolsAdded: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
					timestamp: 1,
				},
				...conversation,
			]
		: conversation;

const handlers = new Map<string, Handler>();
/** Every session_start handler (the bootstrap's and the extension's own), in order. */
const starts: Handler[] = [];
const pi = {
	on: (name: string, handler: Handler) =>
		name === "session_start" ? starts.push(handler) : handlers.set(name, handler),
	appendEntry: () => undefined,
	registerTool: () => undefined,
	registerCommand: () => undefined,
	registerMessageRenderer: () => undefined,
	getActiveTools: () => tools.map((t) => t.name),
	getAllTools: () => tools,
};
// FIRST_CALL_BUNDLE: another build to compare (an earlier commit's dist/extensions.js), as a file URL or path.
const bundle = process.env.FIRST_CALL_BUNDLE
	? pathToFileURL(process.env.FIRST_CALL_BUNDLE).href
	: "../../dist/extensions.js";
const { load } = (await import(bundle)) as {
	load: (host: Record<string, unknown>, name: string) => Promise<(pi: unknown) => unknown>;
};
const factory = await load({ "@mariozechner/pi-coding-agent": piSdk, "@mariozechner/pi-ai": piAi }, "context-trim");
await factory(pi);
const onePointX = event === "context_with_system";
const ctx = {
	cwd,
	hasUI: false,
	model: { contextWindow, maxTokens: 4096 },
	getSystemPrompt: () => systemPrompt,
	getContextUsage: () => undefined,
	sessionManager: onePointX
		? {
				getSessionFile: () => "/sessions/resumed.jsonl",
				appendContextEdit: () => undefined,
				buildSessionProjection: () => ({ messages: resumed }),
			}
		: { getSessionFile: () => "/sessions/resumed.jsonl", buildSessionContext: () => ({ messages: resumed }) },
};
const registered = [handlers.get("context"), handlers.get("context_with_system")];
if (!registered[0] || !registered[1]) throw new Error("the extension registered no context handlers");
const [context, withSystem] = registered as [Handler, Handler];
// Pi is ready some time before the first prompt: the extension's start-up work (the hasher) has run.
if (process.env.FIRST_CALL_WARM === "1") {
	for (const start of starts) await start({ type: "session_start", messages: [] }, ctx);
	await new Promise((resolve) => setTimeout(resolve, Number(process.env.FIRST_CALL_IDLE_MS ?? 2000)));
} else await new Promise((resolve) => setTimeout(resolve, 100));

/** One request: Pi's deep copy (untimed, Pi pays it alone too), then the hook(s), timed until settled. */
async function request(): Promise<{ ms: number; sent: number }> {
	const copy = structuredClone(transcript);
	const prepared = onePointX ? copy.filter((m) => m.role !== "system") : copy;
	const t0 = performance.now();
	let out = (await context({ type: "context", messages: prepared }, ctx)) as { messages?: Message[] } | undefined;
	if (onePointX) out = (await withSystem({ type: "context_with_system", messages: copy }, ctx)) as typeof out;
	return { ms: performance.now() - t0, sent: (out?.messages ?? copy).length };
}

const first = await request();
// JSON.stringify of the same list, in the same cold process: a cost Pi pays anyway to send the request.
const copy = structuredClone(transcript);
const t0 = performance.now();
const bytes = JSON.stringify(copy).length;
const stringifyMs = performance.now() - t0;
// The model answers; keying and the JIT catch up meanwhile.
await new Promise((resolve) => setTimeout(resolve, 400));
const second = await request();
rmSync(agentDir, { recursive: true, force: true });
console.log(
	JSON.stringify({
		messages: transcript.length,
		sent: first.sent,
		firstMs: first.ms,
		secondMs: second.ms,
		stringifyMs,
		bytes,
	}),
);
process.exit(0);

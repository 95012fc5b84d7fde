/**
 * context-trim: the `context` hook's added latency on a 1,000-message, ~200k-token history and on a
 * long session (5,000 messages, ~1M tokens), side by side with JSON.stringify of the same messages
 * (a cost Pi pays anyway to send them), and the prompt-prefix stability across 50 growing calls.
 * Run: node --import jiti/register test/bench/context-trim.bench.ts   (or: npm run bench -- context-trim)
 * Exits 1 when a goal is missed: p50 ≤ 2 ms and ≤ 0.5 × JSON.stringify's p50 (1,000 messages,
 * trimming), and ≤ 0.25 × JSON.stringify's p50 (long session, trimming, on Pi 0.73's `context` and on Pi
 * 1.x's `context_with_system` with system messages). The long session's absolute goals (p50 ≤ 2 ms, first
 * call ≤ 100 ms) are printed with the figures measured.
 *
 * The real extension runs: its default export is given a stand-in for Pi's extension API and the
 * handler it registers is called with a fresh deep copy of the history each time, as Pi does.
 *
 * Last, the first call on the real resumed session (test/fixtures/sessions, 1,019 entries), each in a fresh
 * process (first-call.ts: the shipped bundle, cold JIT), beside JSON.stringify of the same list in that process:
 * what the first prompt after resuming pays. FIRST_CALL_ROUNDS (default 3) processes per scenario; medians.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import contextTrim from "../../extensions/context-trim/index.ts";
import { MARKER_CUSTOM_TYPE } from "../../extensions/context-trim/prompt.ts";
import { fingerprintReady, fingerprintText } from "../../extensions/shared/text/fingerprint.ts";
import { estimateMessageTokens, type TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";
import { filler, HistoryBuilder } from "../unit/transcript-history.ts";

/** Goals from the issue. */
const MAX_P50_MS = 2;
const MAX_SHARE_OF_STRINGIFY = 0.5;
/** Timed calls per scenario (after warm-up). */
const CALLS = 200;
const WARMUP_CALLS = 20;
const GROWING_CALLS = 50;
/** The long session (issue goals): 5,000 messages, ~1M tokens; p50 ≤ 2 ms and ≤ 0.25× JSON.stringify, cold ≤ 100 ms. */
const LONG_MESSAGES = 5000;
const LONG_CALLS = 60;
const LONG_MAX_SHARE_OF_STRINGIFY = 0.25;
const LONG_MAX_COLD_MS = 100;
/** Pause after the first call, standing for the model's answer (Pi's event loop runs meanwhile). */
const AFTER_CALL_PAUSE_MS = 400;

/** Agent dirs the run created, removed at the end. */
const agentDirs: string[] = [];

type Handler = (event: { type: string; messages: TranscriptMessage[] }, ctx: unknown) => unknown;

/** A loaded extension, called the way one Pi line calls it before a model request. */
interface Hook {
	/** What Pi itself does first, untimed: on 1.x, the `context` phase's list without system messages. */
	prepare: (messages: TranscriptMessage[]) => TranscriptMessage[] | undefined;
	/** The extension's handlers for one request: on 1.x `context` (on the prepared list), then `context_with_system`. */
	call: (messages: TranscriptMessage[], prepared?: TranscriptMessage[]) => unknown;
}

/**
 * Loads the extension against a minimal stand-in of Pi's API. `context`: Pi 0.73, which calls the
 * `context` handler with the list. `context_with_system`: Pi 1.x, which first filters the system
 * messages out for every `context` handler (ours then leaves the trim to the second phase) and then
 * calls `context_with_system` with the whole transcript.
 */
function loadHook(
	contextWindow: number,
	cutStepTokens?: number,
	event: "context" | "context_with_system" = "context",
): Hook {
	const agentDir = makeTestDir("bench-ct");
	process.env.PI_CODING_AGENT_DIR = agentDir;
	mkdirSync(join(agentDir, "cwd"), { recursive: true });
	agentDirs.push(agentDir);
	if (cutStepTokens) {
		writeFileSync(join(agentDir, "headroom.json"), JSON.stringify({ contextTrim: { cutStepTokens } }));
	}
	const handlers = new Map<string, Handler>();
	const pi = {
		on: (name: string, h: Handler) => {
			handlers.set(name, h);
		},
		appendEntry: () => undefined,
		getActiveTools: () => ["read", "bash"],
		getAllTools: () => [
			{
				name: "read",
				description: "Read a file",
				parameters: { type: "object", properties: { path: { type: "string" } } },
			},
			{
				name: "bash",
				description: "Run a command",
				parameters: { type: "object", properties: { command: { type: "string" } } },
			},
		],
	};
	contextTrim(pi as never);
	const onePointX = event === "context_with_system";
	const ctx = {
		cwd: join(agentDir, "cwd"),
		hasUI: false,
		model: { contextWindow, maxTokens: 16_000 },
		getSystemPrompt: () => "You are a coding agent. ".repeat(100),
		getContextUsage: () => undefined,
		// Pi 1.x's session manager records context edits (how the extension tells the lines apart)
		sessionManager: onePointX
			? { getSessionFile: () => "/sessions/bench.jsonl", appendContextEdit: () => undefined }
			: { getSessionFile: () => "/sessions/bench.jsonl" },
	};
	const context = handlers.get("context");
	const withSystem = handlers.get("context_with_system");
	if (!context || !withSystem) throw new Error("the extension registered no context handlers");
	if (!onePointX) return { prepare: () => undefined, call: (messages) => context({ type: "context", messages }, ctx) };
	return {
		prepare: (messages) => messages.filter((m) => m.role !== "system"),
		call: (messages, prepared) => {
			context({ type: "context", messages: prepared ?? [] }, ctx);
			return withSystem({ type: "context_with_system", messages }, ctx);
		},
	};
}

/** ~1,000 messages, ~200k tokens: a task, a plan, then turns of reads, test runs and edits. */
function buildHistory(messageCount: number): HistoryBuilder {
	const b = new HistoryBuilder().user(`TASK: ${filler("refactor the storage layer", 1200)}`);
	let i = 0;
	while (b.messages.length < messageCount) {
		const kind = i % 4;
		if (kind === 3 && i % 20 === 3) b.user(filler(`follow-up ${i}`, 300));
		const call =
			kind === 0
				? { name: "bash", arguments: { command: `npm test -- --grep case${i}` }, result: filler(`test ${i}`, 1000) }
				: { name: "read", arguments: { path: `src/storage/module-${i % 37}.ts` }, result: filler(`src ${i}`, 1350) };
		b.assistant(filler(`thinking about step ${i}`, 180), [call]);
		i++;
	}
	return b;
}

/** A Pi 1.x system message: prompt text (or a section patch) and the tools it declares. */
function systemMessage(n: number, chars: number, tools: string[]): TranscriptMessage {
	const toolsAdded = tools.map((name) => ({
		name,
		description: filler(`${name} tool`, 300),
		parameters: { type: "object", properties: { path: { type: "string" } } },
	}));
	return n === 0
		? { role: "system", content: filler("You are a coding agent", chars), toolsAdded, timestamp: 1 }
		: { role: "system", content: "", sections: { tools: filler(`patch ${n}`, chars) }, toolsAdded, timestamp: 2 };
}

const tokensOf = (messages: TranscriptMessage[]) => messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
const percentile = (xs: number[], p: number) =>
	[...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const fmt = (ms: number) => ms.toFixed(3);

async function timeScenario(
	label: string,
	contextWindow: number,
	history: TranscriptMessage[],
	calls = CALLS,
	event: "context" | "context_with_system" = "context",
) {
	const hook = loadHook(contextWindow, undefined, event);
	const gc = (globalThis as { gc?: () => void }).gc;
	// Each timed call gets a deep copy made just before it, as Pi clones the history right before it calls the
	// context handlers (the copy is fresh in memory); the heap is collected before the copy, so GC noise from
	// earlier calls hits neither side. JSON.stringify is timed the same way on its own fresh copy.
	const fresh = () => {
		gc?.();
		return structuredClone(history);
	};
	const cold = fresh();
	const coldPrepared = hook.prepare(cold);
	const t0 = performance.now();
	const first = hook.call(cold, coldPrepared) as { messages?: TranscriptMessage[] } | undefined;
	const coldMs = performance.now() - t0;
	// Pi waits for the model between calls: the hook's after-call work (keying new messages) runs then.
	await new Promise((resolve) => setTimeout(resolve, AFTER_CALL_PAUSE_MS));
	const hookMs: number[] = [];
	const jsonMs: number[] = [];
	let sink = 0;
	for (let k = 1; k <= calls + WARMUP_CALLS; k++) {
		const copy = fresh();
		const prepared = hook.prepare(copy);
		const a = performance.now();
		const out = hook.call(copy, prepared) as { messages?: TranscriptMessage[] } | undefined;
		const b = performance.now();
		sink += out?.messages?.length ?? 0;
		const other = fresh();
		const c = performance.now();
		sink += JSON.stringify(other).length;
		const d = performance.now();
		if (k > WARMUP_CALLS) {
			hookMs.push(b - a);
			jsonMs.push(d - c);
		}
	}
	if (sink < 0) console.log(sink);
	const p50 = percentile(hookMs, 0.5);
	const j50 = percentile(jsonMs, 0.5);
	const trimmed = Boolean(first?.messages);
	console.log(
		`| ${label} | ${trimmed ? `yes → ${first?.messages?.length} msgs, ~${tokensOf(first?.messages ?? []).toLocaleString("en-US")} tok` : "no"} | ${fmt(coldMs)} | ${fmt(p50)} | ${fmt(percentile(hookMs, 0.9))} | ${fmt(j50)} | ${(p50 / j50).toFixed(2)}× |`,
	);
	return { p50, j50, trimmed, coldMs };
}

function stability(label: string, cutStepTokens: number | undefined, base: HistoryBuilder) {
	const hook = loadHook(128_000, cutStepTokens);
	const b = new HistoryBuilder();
	b.messages.push(...structuredClone(base.messages));
	let previous: Array<number | undefined> | undefined;
	let kept = 0;
	let sent = 0;
	for (let call = 0; call < GROWING_CALLS; call++) {
		b.assistant(filler(`grow ${call}`, 200), [
			{ name: "bash", arguments: { command: `make step-${call}` }, result: filler(`grow result ${call}`, 1500) },
		]);
		const out = (hook.call(structuredClone(b.messages)) as { messages?: TranscriptMessage[] } | undefined)?.messages;
		const request = (out ?? b.messages).map((m) => fingerprintText(JSON.stringify(m)));
		if (previous) {
			sent++;
			if (previous.every((m, i) => request[i] === m)) kept++;
		}
		previous = request;
		if (out && !out.some((m) => m.role === "custom" && m.customType === MARKER_CUSTOM_TYPE))
			throw new Error("no marker");
	}
	console.log(`| ${label} | ${sent} | ${kept} | ${((kept / sent) * 100).toFixed(0)}% |`);
	return kept / sent;
}

// The hook keys its size cache by xxHash fingerprints (WebAssembly, started asynchronously): wait for it
// once, as the hook's first call in a Pi process does, so every timed call is the synchronous path.
if (!(await fingerprintReady())) throw new Error("the xxhash-wasm fingerprint did not start");
const history = buildHistory(1000).messages;
console.log(
	`History: ${history.length} messages, ~${tokensOf(history).toLocaleString("en-US")} tokens (own estimate), ${(JSON.stringify(history).length / 1e6).toFixed(2)} MB as JSON\n`,
);
console.log(
	"| scenario | trimmed | first call ms (cold) | hook p50 ms | hook p90 ms | JSON.stringify p50 ms | hook ÷ stringify |",
);
console.log("|---|---|---:|---:|---:|---:|---:|");
const over = await timeScenario("128k window (over budget)", 128_000, history);
await timeScenario("1M window (within budget)", 1_000_000, history);

// The long session: 5,000 messages, ~1M tokens, in a 1M window (1M-token windows are common now).
const longHistory = buildHistory(LONG_MESSAGES).messages;
console.log(
	`\nLong session: ${longHistory.length} messages, ~${tokensOf(longHistory).toLocaleString("en-US")} tokens (own estimate), ${(JSON.stringify(longHistory).length / 1e6).toFixed(2)} MB as JSON\n`,
);
console.log(
	"| scenario | trimmed | first call ms (cold) | hook p50 ms | hook p90 ms | JSON.stringify p50 ms | hook ÷ stringify |",
);
console.log("|---|---|---:|---:|---:|---:|---:|");
const long = await timeScenario("1M window (over budget)", 1_000_000, longHistory, LONG_CALLS);
await timeScenario("2M window (within budget)", 2_000_000, longHistory, LONG_CALLS);
// Pi 1.x: the transcript with its system messages (prompt + tool declarations first, a tool change later).
const withSystem = [systemMessage(0, 8000, ["read", "bash"]), ...longHistory];
withSystem.splice(LONG_MESSAGES / 2, 0, systemMessage(1, 400, ["grep"]));
const long1x = await timeScenario(
	"1M window (over budget), Pi 1.x `context_with_system`",
	1_000_000,
	withSystem,
	LONG_CALLS,
	"context_with_system",
);

console.log(
	"\nPrompt-prefix stability over 50 growing calls (share of calls whose request starts with the previous request)\n",
);
console.log("| cut step | calls compared | prefix kept | share |");
console.log("|---|---:|---:|---:|");
const base = buildHistory(1000);
stability("16,384 tokens (default)", undefined, base);
stability("4,096 tokens", 4096, base);
stability("1 token (no quantisation, for contrast)", 1, base);

// The first call on the real resumed session, each in a fresh process (cold JIT, as after `pi --session`).
const FIRST_CALL_ROUNDS = Number(process.env.FIRST_CALL_ROUNDS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const firstCallScript = join(dirname(fileURLToPath(import.meta.url)), "first-call.ts");
console.log(
	`\nFirst call on the real resumed session (1,019 entries; a fresh process each, the shipped bundle), medians of ${FIRST_CALL_ROUNDS}\n`,
);
console.log("| scenario | sent | first call ms | JSON.stringify ms | first ÷ stringify | second call ms |");
console.log("|---|---|---:|---:|---:|---:|");
for (const [label, hook, window] of [
	["128k window (over budget), 0.73 `context`", "context", 128_000],
	["1M window (within budget), 0.73 `context`", "context", 1_000_000],
	["128k window (over budget), 1.x `context_with_system`", "context_with_system", 128_000],
	["1M window (within budget), 1.x `context_with_system`", "context_with_system", 1_000_000],
] as const) {
	const runs: Array<{ messages: number; sent: number; firstMs: number; secondMs: number; stringifyMs: number }> = [];
	for (let round = 0; round < FIRST_CALL_ROUNDS; round++) {
		const child = spawnSync(process.execPath, ["--import", "jiti/register", firstCallScript, hook, String(window)], {
			encoding: "utf8",
		});
		if (child.status !== 0) throw new Error(`first-call.ts ${hook} ${window} failed: ${child.stderr}`);
		runs.push(JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}"));
	}
	const first = median(runs.map((r) => r.firstMs));
	const json = median(runs.map((r) => r.stringifyMs));
	const { messages, sent } = runs[0];
	console.log(
		`| ${label} | ${sent < messages ? `${sent} of ${messages} msgs (trimmed)` : `all ${messages} (untouched)`} | ${fmt(first)} | ${fmt(json)} | ${(first / json).toFixed(2)}× | ${fmt(median(runs.map((r) => r.secondMs)))} |`,
	);
}

for (const dir of agentDirs) rmSync(dir, { recursive: true, force: true });
const ok = over.trimmed && over.p50 <= MAX_P50_MS && over.p50 <= MAX_SHARE_OF_STRINGIFY * over.j50;
console.log(
	`\nGoal (trimming case): p50 ≤ ${MAX_P50_MS} ms and ≤ ${MAX_SHARE_OF_STRINGIFY}× JSON.stringify — ${ok ? "met" : "MISSED"}`,
);
// The ratio is measured side by side in one run, so it holds on a loaded machine too: it decides the exit
// code. The absolute goals (p50 ≤ 2 ms, first call ≤ 100 ms) depend on the machine and are reported.
const longRatioOk = [long, long1x].every((r) => r.trimmed && r.p50 <= LONG_MAX_SHARE_OF_STRINGIFY * r.j50);
const longAbsoluteOk = [long, long1x].every((r) => r.p50 <= MAX_P50_MS && r.coldMs <= LONG_MAX_COLD_MS);
console.log(
	`Goal (long session, trimming, both hooks): ≤ ${LONG_MAX_SHARE_OF_STRINGIFY}× JSON.stringify — ${longRatioOk ? "met" : "MISSED"}; on this machine now: p50 ${fmt(long.p50)} / ${fmt(long1x.p50)} ms (goal ≤ ${MAX_P50_MS}), first call ${fmt(long.coldMs)} / ${fmt(long1x.coldMs)} ms (goal ≤ ${LONG_MAX_COLD_MS}) — ${longAbsoluteOk ? "met" : "not met"}`,
);
if (!ok || !longRatioOk) process.exit(1);

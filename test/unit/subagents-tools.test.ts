/**
 * The tool handlers with a controlled backend: a fork's oversized parent result reaches the child
 * exactly as the parent's own trimmed view shows it (stored artifact, read call); the configured
 * head share shapes every projected result; subagent_send validates its text and resumes children
 * from an earlier process on their own session files.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { trimMessages } from "../../extensions/context-trim/trim.ts";
import { DEFAULT_CONFIG, type HeadroomConfig, projectionHeadShare } from "../../extensions/shared/host/config.ts";
import { messageBudget, TokenSizer, type TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";
import { ownerFraming } from "../../extensions/shared/transcript/prompt.ts";
import { storedShortening } from "../../extensions/shared/transcript/view.ts";
import { deliverPending } from "../../extensions/subagents/delivery/delivery.ts";
import {
	persistSettled,
	restoreFromSession,
	SETTLED_ENTRY,
	SETTLED_PROMPT_MAX_BYTES,
} from "../../extensions/subagents/delivery/persistence.ts";
import * as P from "../../extensions/subagents/prompt/common.ts";
import { consumeResults } from "../../extensions/subagents/tools/consume.ts";
import { sendTool } from "../../extensions/subagents/tools/send.ts";
import { parentMessages, spawnTool } from "../../extensions/subagents/tools/spawn.ts";
import {
	deliveredSession,
	type FakeWorld,
	onSettled,
	parentSession,
	spawnChild,
	tempRoot,
	until,
	useFakeWorlds,
} from "./subagents-fakes.ts";

const world = useFakeWorlds();

const READ_PATH = /read\(path="([^"]+)"/g;
const paths = (text: string) => [...text.matchAll(READ_PATH)].map((m) => m[1]);

/** A 120 KB log with distinct first and last lines. */
const BIG = ["LOG-FIRST", ...Array.from({ length: 1500 }, (_, i) => `log ${i} ${"z".repeat(70)}`), "LOG-LAST"].join(
	"\n",
);

/** The parent inspected BIG with bash before it spawned. */
const bigLogTurn = {
	task: "PARENT-TASK inspect the log",
	tool: "bash",
	args: { command: "cat big.log" },
	output: BIG,
	answer: "The log is long.",
};

describe("fork parity: an oversized parent tool result", () => {
	it.each([undefined, 0.3])(
		"reaches the child as head + tail with a stored artifact and the read call, as in the parent's view (head share %s)",
		async (share) => {
			const root = tempRoot("subagents-fork-");
			const sm = parentSession(root, bigLogTurn);
			// A small window: the 120 KB result cannot fit, so both views must shorten it.
			const model = { provider: "mock", id: "mock-model", contextWindow: 16_000, maxTokens: 2_000 };
			const w = world({
				root,
				models: [model],
				sessionManager: sm,
				config: share === undefined ? undefined : withHeadShare(share),
			});
			await spawnTool(w.services, { prompt: "CHILD-TASK summarise the log", context: "fork" }, w.ctx);
			await until(() => w.backend.prompts.length === 1);
			const first = w.backend.prompts[0].text;
			expect(first).toContain("LOG-FIRST");
			expect(first).toContain("LOG-LAST");
			expect(first).not.toContain("NOT saved");
			const [childPath] = paths(first);
			expect(childPath).toBeDefined();
			expect(existsSync(childPath)).toBe(true);
			expect(readFileSync(childPath, "utf8")).toBe(BIG);
			expect(basename(childPath)).toContain(createHash("sha256").update(BIG).digest("hex"));
			expect(childPath.startsWith(w.store.dirFor("transcripts"))).toBe(true);

			// The parent's own trimmed view of the same history, as context-trim builds it.
			const budgetTokens = messageBudget({
				contextWindow: model.contextWindow,
				maxTokens: model.maxTokens,
				reserveTokens: DEFAULT_CONFIG.contextTrim.reserveTokens,
				safetyMarginTokens: DEFAULT_CONFIG.contextTrim.safetyMarginTokens,
				overheadTokens: 0,
			});
			const view = trimMessages(parentMessages(w.ctx) as TranscriptMessage[], {
				budgetTokens,
				cutStepTokens: 1,
				sizer: new TokenSizer(),
				shorten: storedShortening(w.store, projectionHeadShare(w.config)),
			});
			expect(view.trimmed).toBe(true);
			const shownResult = view.messages
				.filter((m) => m.role === "toolResult")
				.map((m) => (m.content as Array<{ text: string }>).map((c) => c.text).join(""))
				.join("");
			expect(paths(shownResult)).toEqual([childPath]);
			// The child reads the very text the parent's view shows: same head, same tail, same footer.
			expect(first).toContain(shownResult);
		},
	);
});

/** A config whose projection head share is `share`. */
function withHeadShare(share: number): HeadroomConfig {
	const config = structuredClone(DEFAULT_CONFIG) as HeadroomConfig;
	config.projection.headShare = share;
	return config;
}

const NUMBERED = Array.from({ length: 600 }, (_, i) => `row ${String(i + 1).padStart(4, "0")} ${"q".repeat(60)}`).join(
	"\n",
);

/** Shown lines before and after the omission marker of a projected result. */
function headAndTail(text: string): { head: number; tail: number } {
	const rows = text.split("\n");
	const marker = rows.findIndex((r) => r.includes("omitted"));
	const isRow = (r: string) => /^row \d{4} /.test(r);
	return { head: rows.slice(0, marker).filter(isRow).length, tail: rows.slice(marker + 1).filter(isRow).length };
}

describe("projection.headShare from the configuration", () => {
	it.each([0.2, 0.75])("shapes waits and automatic deliveries (head share %s)", async (share) => {
		const shapes: Array<{ head: number; tail: number }> = [];
		for (const surface of ["wait", "auto"] as const) {
			const w = world({ config: withHeadShare(share) });
			const child = spawnChild(w, { prompt: "numbers" });
			await until(() => w.backend.started(child.id));
			w.backend.finish(child.id, NUMBERED);
			await w.manager.waitFor([child.id], { mode: "all" });
			let text: string;
			if (surface === "wait") {
				text = (await consumeResults(w.services, w.ctx, [child.id], { timedOut: false, aborted: false }, "wait"))
					.content[0].text;
			} else {
				await deliverPending(w.services, "trigger");
				text = w.sent[0].message.content;
			}
			shapes.push(headAndTail(text));
		}
		for (const { head, tail } of shapes) {
			expect(head + tail).toBeGreaterThan(20);
			const share_ = head / (head + tail);
			expect(Math.abs(share_ - share)).toBeLessThan(0.1);
		}
	});
});

describe("subagent_send", () => {
	it("refuses empty or blank text and says what to pass", async () => {
		const w = world();
		const spawned = await spawnTool(w.services, { prompt: "x" }, w.ctx);
		const id = spawned.details.id as string;
		for (const text of ["", "  \n "]) {
			await expect(sendTool(w.services, { id, text }, w.ctx)).rejects.toThrow(P.EMPTY_SEND_TEXT_ERROR);
		}
		await expect(sendTool(w.services, { id, text: undefined as never }, w.ctx)).rejects.toThrow(
			"text must not be empty",
		);
	});

	function restoredWorld(entry: { key: string }): FakeWorld {
		const root = tempRoot("subagents-restore-");
		const w = world({ root, sessionManager: deliveredSession(root, entry) });
		expect(restoreFromSession(w.services, w.ctx)).toBe(0);
		onSettled(w, (result, child) => persistSettled(w.services, result, child));
		return w;
	}

	const entry = (sessionFile: string, extra: Record<string, unknown> = {}) => ({
		key: "sa-1#1",
		id: "sa-1",
		run: 1,
		state: "completed",
		name: "old",
		model: "mock/mock-model",
		prompt: "old task",
		turns: 1,
		createdAt: 1,
		sessionFile,
		tools: ["read", "grep"],
		cwd: process.cwd(),
		context: "fork",
		bytes: 3,
		text: "old",
		...extra,
	});

	it("resumes a child from an earlier process on its own session file, model, tools and framing", async () => {
		const file = join(tempRoot("subagents-file-"), "child.jsonl");
		writeFileSync(file, "{}\n");
		const w = restoredWorld(entry(file));
		const out = await sendTool(w.services, { id: "sa-1", text: "continue with the tests" }, w.ctx);
		expect(out.content[0].text).toContain("started run 2");
		await until(() => w.backend.prompts.length === 1);
		const spec = w.backend.created[0];
		expect(spec.sessionFile).toBe(file);
		expect(spec.model).toBe((w.ctx as { model: unknown }).model);
		expect(spec.tools).toEqual(["read", "grep"]);
		expect(spec.cwd).toBe(process.cwd());
		expect(spec.systemAppend).toEqual([P.CHILD_SYSTEM_APPEND, ownerFraming({ forked: true })]);
		expect(w.backend.prompts[0].text).toBe("continue with the tests");
		w.backend.finish("sa-1", "second answer");
		await w.manager.waitFor(["sa-1"], { mode: "all" });
		expect(w.manager.ledger.latest("sa-1")).toMatchObject({
			key: "sa-1#2",
			text: "second answer",
			delivery: "pending",
		});
		const settled = w.entries.filter((e) => e.type === SETTLED_ENTRY).map((e) => e.data as Record<string, unknown>);
		// The next process can resume it again: run 2 is recorded with everything a resume needs.
		expect(settled).toEqual([
			expect.objectContaining({
				key: "sa-1#2",
				run: 2,
				sessionFile: file,
				tools: ["read", "grep"],
				cwd: process.cwd(),
				context: "fork",
			}),
		]);
	});

	it("refuses plainly when the session file, the model or the working directory is gone", async () => {
		const gone = join(tempRoot("subagents-gone-"), "missing.jsonl");
		const w1 = restoredWorld(entry(gone));
		await expect(sendTool(w1.services, { id: "sa-1", text: "more" }, w1.ctx)).rejects.toThrow(
			P.missingSessionFileError({ id: "sa-1", name: "old" }, gone),
		);
		const file = join(tempRoot("subagents-file-"), "child.jsonl");
		writeFileSync(file, "{}\n");
		const w2 = restoredWorld(entry(file, { model: "gone/model" }));
		await expect(sendTool(w2.services, { id: "sa-1", text: "more" }, w2.ctx)).rejects.toThrow(
			'sa-1 "old" ran on gone/model, which this session cannot run now (models you can use: mock/mock-model)',
		);
		const w3 = restoredWorld(entry(file, { cwd: join(w2.root, "no-such-dir") }));
		await expect(sendTool(w3.services, { id: "sa-1", text: "more" }, w3.ctx)).rejects.toThrow(
			`its working directory ${join(w2.root, "no-such-dir")} is gone`,
		);
		expect(w1.backend.created.length + w2.backend.created.length + w3.backend.created.length).toBe(0);
	});
});

describe("the settled entry", () => {
	it("keeps the task clipped by UTF-8 bytes with whole characters, and what a resume needs", async () => {
		const w = world();
		onSettled(w, (result, child) => persistSettled(w.services, result, child));
		const prompt = `x${"😀".repeat(400)}`;
		const child = spawnChild(w, { prompt, tools: ["read"], thinking: "low", context: "fork" });
		await until(() => w.backend.started(child.id));
		w.backend.finish(child.id, "ok");
		await w.manager.waitFor([child.id], { mode: "all" });
		const data = w.entries.find((e) => e.type === SETTLED_ENTRY)!.data as Record<string, unknown>;
		const kept = data.prompt as string;
		expect(Buffer.byteLength(kept, "utf8")).toBeLessThanOrEqual(SETTLED_PROMPT_MAX_BYTES);
		expect(kept.endsWith("😀…")).toBe(true);
		expect(prompt.startsWith(kept.slice(0, -1))).toBe(true);
		expect(data).toMatchObject({ tools: ["read"], cwd: w.root, thinking: "low", context: "fork", text: "ok" });
	});
});

/**
 * The /subagents view's pure parts: transcript items from session entries, the reader following a
 * growing (torn, replaced, vanished) session file, picker rows and the state line within their columns.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { visibleWidth } from "@mariozechner/pi-tui";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
	newestFirst,
	pickerHeader,
	pickerRow,
	stateLine,
	transcriptLines,
	transcriptProblem,
} from "../../extensions/subagents/view/screens.ts";
import { briefArgs, itemsOfEntry, TranscriptReader } from "../../extensions/subagents/view/transcript.ts";
import { childRecord } from "./subagents-fakes.ts";

const dir = mkdtempSync(join(tmpdir(), "headroom-view-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const msg = (message: unknown) => ({ type: "message", id: "x", message });
const user = (text: string) => msg({ role: "user", content: [{ type: "text", text }] });
const call = (name: string, args: unknown) =>
	msg({
		role: "assistant",
		content: [
			{ type: "text", text: "let me look" },
			{ type: "toolCall", id: "c1", name, arguments: args },
		],
	});
const result = (text: string, isError = false) =>
	msg({ role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text }], isError });

describe("transcript items", () => {
	it("turn entries into task, assistant text, tool calls with brief arguments and results", () => {
		expect(itemsOfEntry(user("do it"), false)).toEqual([{ kind: "task", text: "do it" }]);
		expect(itemsOfEntry(user("steer"), true)).toEqual([{ kind: "message", text: "steer" }]);
		expect(itemsOfEntry(call("bash", { command: "ls -la", timeout: 5 }), true)).toEqual([
			{ kind: "assistant", text: "let me look" },
			{ kind: "toolCall", id: "c1", name: "bash", args: 'command="ls -la" timeout=5' },
		]);
		expect(itemsOfEntry(result("out", true), true)).toEqual([
			{ kind: "toolResult", id: "c1", name: "bash", text: "out", isError: true },
		]);
		expect(itemsOfEntry({ type: "session" }, false)).toEqual([]);
		expect(itemsOfEntry(null, false)).toEqual([]);
		expect(briefArgs({ text: "a\nb" })).toBe('text="a\\nb"');
	});

	it("the reader follows the file as it grows, keeps a torn line for later, and says when it is gone", () => {
		const file = join(dir, "child.jsonl");
		const reader = new TranscriptReader(file);
		reader.poll();
		expect(reader.state).toMatchObject({ ok: false, reason: "no-file" });
		writeFileSync(file, `${JSON.stringify({ type: "session", id: "s" })}\n${JSON.stringify(user("task"))}\n`);
		expect(reader.poll()).toBe(true);
		expect(reader.items).toEqual([{ kind: "task", text: "task" }]);
		const line = JSON.stringify(call("bash", { command: "echo MARK" }));
		appendFileSync(file, line.slice(0, 20));
		expect(reader.poll()).toBe(false);
		appendFileSync(file, `${line.slice(20)}\n`);
		expect(reader.poll()).toBe(true);
		expect(reader.items.at(-1)).toMatchObject({ kind: "toolCall", args: 'command="echo MARK"' });
		rmSync(file);
		reader.poll();
		expect(reader.state).toMatchObject({ ok: false, reason: "gone" });
		expect(transcriptProblem(reader.state, childRecord({ state: "completed" }))).toMatch(
			/^Transcript gone: .+child\.jsonl no longer exists\.$/,
		);
		// A replaced file is read from its start again.
		writeFileSync(file, `${JSON.stringify(user("new task"))}\n`);
		reader.poll();
		expect(reader.items).toEqual([{ kind: "task", text: "new task" }]);
	});

	it("draws items sanitized, tool results through the given projection", () => {
		const lines = transcriptLines(
			[
				{ kind: "task", text: "t\u001b[31mred" },
				{ kind: "toolResult", id: "1", name: "bash", text: "long", isError: false },
			],
			(t) => `projected(${t})`,
			(_c, t) => t,
		);
		expect(lines).toEqual(["task ›", "tred", "", "← bash", "  projected(long)", ""]);
	});
});

describe("picker rows and the state line", () => {
	it("keep their columns for any name, model and state, and never hold a control character", () => {
		fc.assert(
			fc.property(
				fc.string({ maxLength: 60 }),
				fc.string({ maxLength: 40 }),
				fc.constantFrom("queued", "running", "completed", "failed", "cancelled"),
				(name, model, state) => {
					const c = childRecord({
						id: "sa-12",
						name,
						model,
						state: state as never,
						turns: 3,
						outputTokens: 1234,
						contextTokens: 900,
						contextWindow: 32000,
						startedAt: 1000,
					});
					const row = pickerRow(c, [c], 5000);
					expect(visibleWidth(row)).toBe(visibleWidth(pickerHeader()));
					expect(row).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
					expect(stateLine(c, [c], 5000)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
				},
			),
		);
	});

	it("lists the newest first and shows queue positions, turns, tokens and context use", () => {
		const a = childRecord({
			id: "sa-1",
			createdAt: 1,
			state: "running",
			startedAt: 1000,
			turns: 2,
			outputTokens: 50,
			contextTokens: 3200,
			contextWindow: 32000,
		});
		const b = childRecord({ id: "sa-2", createdAt: 2, state: "queued", queuedAt: 5 });
		expect(newestFirst([a, b]).map((c) => c.id)).toEqual(["sa-2", "sa-1"]);
		expect(pickerRow(b, [a, b], 2000)).toMatch(/queued #1 +waiting/);
		expect(stateLine(a, [a, b], 3500)).toBe(
			"● sa-1 t · p/m · running 2.5 s · 2 turns · 50 tok out · context 3,200 (10.0%)",
		);
	});
});

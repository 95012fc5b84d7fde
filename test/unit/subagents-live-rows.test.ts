/**
 * Rows that stay true: a row recorded while a child started or queued shows the child's current
 * state when drawn again; settled rows keep their result and gain the reason they lacked.
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChildState } from "../../extensions/subagents/domain/records.ts";
import { currentRow, currentRows, LiveResultComponent } from "../../extensions/subagents/view/live-rows.ts";
import { rowText, WIDGET_QUESTION_COLUMNS } from "../../extensions/subagents/view/render.ts";
import { childRecord } from "./subagents-fakes.ts";

const STATES: ChildState[] = ["queued", "starting", "running", "completed", "failed", "cancelled"];

const QUESTION = "Which colour\nshould the banner use?";
const question = (text: string) => ({ seq: 1, text, options: [], run: 1, askedAt: 0, delivered: true });

describe("currentRow", () => {
	it("a spawn row recorded 'starting' shows the final state and the failure's reason in one line", () => {
		const children = [childRecord({ id: "sa-4", name: "omega", state: "failed", error: "provider said 500\nretry" })];
		const row = currentRow({ id: "sa-4", name: "omega", state: "starting" }, children);
		expect(row.state).toBe("failed");
		expect(rowText(row)).toBe("✗ sa-4 omega failed — provider said 500 retry");
	});

	it("a queued row says its position in the queue", () => {
		const children = [
			childRecord({ id: "sa-1", state: "running", queuedAt: 1 }),
			childRecord({ id: "sa-2", state: "queued", queuedAt: 3 }),
			childRecord({ id: "sa-3", state: "queued", queuedAt: 2 }),
		];
		expect(rowText(currentRow({ id: "sa-2", name: "b", state: "queued", note: "queued" }, children))).toBe(
			"◷ sa-2 t queued #2",
		);
		expect(rowText(currentRow({ id: "sa-3", name: "c", state: "starting" }, children))).toBe("◷ sa-3 t queued #1");
	});

	it("a row recorded with a final state keeps it, and only gains a missing reason of that same state", () => {
		const children = [childRecord({ id: "sa-1", state: "running", error: undefined })];
		const done = { id: "sa-1", name: "a", state: "completed" as const, fullBytes: 10 };
		expect(currentRow(done, children)).toEqual(done);
		const cancelled = [childRecord({ id: "sa-1", state: "cancelled", error: "cancelled by the parent" })];
		expect(currentRow({ id: "sa-1", name: "a", state: "cancelled" }, cancelled).reason).toBe("cancelled by the parent");
		expect(currentRow({ id: "sa-1", name: "a", state: "failed" }, cancelled).reason).toBeUndefined();
	});

	it("for any recorded and current state: unsettled rows follow the child, settled rows never change state", () => {
		fc.assert(
			fc.property(fc.constantFrom(...STATES), fc.constantFrom(...STATES), (recorded, now) => {
				const children = [childRecord({ id: "sa-1", state: now, error: now === "completed" ? undefined : "why" })];
				const row = currentRow({ id: "sa-1", name: "x", state: recorded }, children);
				const settled = ["completed", "failed", "cancelled"].includes(recorded);
				expect(row.state).toBe(settled ? recorded : now);
				expect(rowText(row)).not.toContain("\n");
			}),
		);
	});

	it("a child waiting for the parent's answer is marked ? with the question's start until it is answered", () => {
		const child = childRecord({ id: "sa-1", name: "painter", state: "running", question: question(QUESTION) });
		const spawned = { id: "sa-1", name: "painter", state: "starting" as const };
		const asking = currentRow(spawned, [child]);
		expect(asking.question).toBe("Which colour should the banner use?");
		expect(rowText(asking)).toBe("? sa-1 painter asks you: Which colour should the banner use?");
		// A row recorded while it asked (subagent_list, check) drops the mark once the answer came.
		const answered = currentRow(asking, [{ ...child, question: undefined }]);
		expect(answered.question).toBeUndefined();
		expect(rowText(answered)).toBe("● sa-1 painter running");
		// An older row that carried the state word as a note loses it too.
		expect(
			rowText(currentRow({ ...spawned, state: "running", note: "asks you" }, [{ ...child, question: undefined }])),
		).toBe("● sa-1 painter running");
	});

	it("a settled row never gains a question, and loses the one it showed once it is answered", () => {
		const asking = childRecord({ id: "sa-1", name: "a", state: "interrupted", question: question(QUESTION) });
		const done = { id: "sa-1", name: "a", state: "completed" as const, fullBytes: 10 };
		expect(currentRow(done, [asking])).toEqual(done);
		const stopped = { id: "sa-1", name: "a", state: "interrupted" as const, question: "Which colour?" };
		expect(rowText(currentRow(stopped, [asking]))).toBe("? sa-1 a interrupted, asks you: Which colour?");
		expect(currentRow(stopped, [{ ...asking, question: undefined }])).toEqual({
			id: "sa-1",
			name: "a",
			state: "interrupted",
		});
	});

	it("for any question and state: the row stays one line, marked exactly while the child asks", () => {
		fc.assert(
			fc.property(fc.constantFrom(...STATES), fc.string({ maxLength: 400 }), fc.boolean(), (now, text, open) => {
				const children = [childRecord({ id: "sa-1", state: now, question: open ? question(text) : undefined })];
				const row = currentRow({ id: "sa-1", name: "x", state: "starting" }, children);
				const drawn = rowText(row);
				expect(drawn).not.toContain("\n");
				expect(drawn.startsWith("? ")).toBe(open);
				expect(drawn.includes("asks you: ")).toBe(open);
				if (open) {
					const brief = drawn.slice(drawn.indexOf("asks you: ") + "asks you: ".length);
					expect(visibleWidth(brief)).toBeLessThanOrEqual(WIDGET_QUESTION_COLUMNS);
				}
			}),
		);
	});

	it("unknown children and an empty manager leave rows as recorded", () => {
		const rows = [{ id: "sa-9", name: "z", state: "running" as const }];
		expect(currentRows(rows, undefined)).toEqual(rows);
		expect(currentRows(rows, [childRecord({ id: "sa-1" })])).toEqual(rows);
	});
});

describe("LiveResultComponent", () => {
	it("draws the current state on every render, within the width", () => {
		const child = childRecord({ id: "sa-1", name: "alpha", state: "running" });
		const component = new LiveResultComponent(
			[{ id: "sa-1", name: "alpha", state: "starting" }],
			"",
			false,
			(_c, t) => t,
			() => [child],
		);
		expect(component.render(80).join("\n")).toContain("● sa-1 alpha running");
		child.state = "completed";
		expect(component.render(80).join("\n")).toContain("✓ sa-1 alpha completed");
		child.state = "running";
		child.question = question(QUESTION);
		expect(component.render(80).join("\n")).toContain("? sa-1 alpha asks you: Which colour should the banner use?");
		child.question = undefined;
		expect(component.render(80).join("\n")).toContain("● sa-1 alpha running");
		child.state = "failed";
		child.error = "x".repeat(300);
		for (const line of component.render(40)) expect(visibleWidth(line)).toBeLessThanOrEqual(40);
	});
});

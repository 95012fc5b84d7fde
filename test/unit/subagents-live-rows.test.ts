/**
 * Rows that stay true: a row recorded while a child started or queued shows the child's current
 * state when drawn again; settled rows keep their result and gain the reason they lacked.
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChildState } from "../../extensions/subagents/domain/records.ts";
import { currentRow, currentRows, LiveResultComponent } from "../../extensions/subagents/view/live-rows.ts";
import { rowText } from "../../extensions/subagents/view/render.ts";
import { childRecord } from "./subagents-fakes.ts";

const STATES: ChildState[] = ["queued", "starting", "running", "completed", "failed", "cancelled"];

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
		child.state = "failed";
		child.error = "x".repeat(300);
		for (const line of component.render(40)) expect(visibleWidth(line)).toBeLessThanOrEqual(40);
	});
});

/**
 * The /subagents screen's keys with a recording host: Enter opens the selected child, a typed line and
 * Enter steer it, ctrl+x asks before cancelling (only `y` cancels), Esc goes back and then closes.
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import { describe, expect, it } from "vitest";
import type { ChildRecord } from "../../extensions/subagents/domain/records.ts";
import { SubagentsScreen, type ViewHost } from "../../extensions/subagents/view/screens.ts";
import { childRecord } from "./subagents-fakes.ts";

const ENTER = "\r";
const ESC = "\u001b";
const CTRL_X = "\u0018";

function host(children: ChildRecord[]) {
	const calls: string[] = [];
	const h: ViewHost = {
		children: () => children,
		transcript: () => ({
			items: [{ kind: "toolCall", id: "1", name: "bash", args: 'command="echo MARK"' }],
			state: { ok: true },
		}),
		project: (t) => t,
		send: async (id, text) => {
			calls.push(`send ${id} ${text}`);
			return "steered";
		},
		cancel: async (id) => {
			calls.push(`cancel ${id}`);
		},
		rows: () => 30,
		requestRender: () => undefined,
		paint: (_c, t) => t,
		close: () => calls.push("close"),
	};
	return { h, calls };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("SubagentsScreen", () => {
	it("opens the newest child, steers it, asks before cancelling, and goes back", async () => {
		const children = [
			childRecord({ id: "sa-1", name: "alpha", createdAt: 1 }),
			childRecord({ id: "sa-2", name: "beta", createdAt: 2 }),
		];
		const { h, calls } = host(children);
		const screen = new SubagentsScreen(h);
		expect(screen.render(100).join("\n")).toContain("subagents of this session: 2");
		screen.handleInput(ENTER);
		const view = screen.render(100).join("\n");
		expect(view).toContain("● sa-2 beta");
		expect(view).toContain('→ bash command="echo MARK"');
		for (const ch of "go on") screen.handleInput(ch);
		screen.handleInput(ENTER);
		await flush();
		expect(calls).toEqual(["send sa-2 go on"]);
		screen.handleInput(CTRL_X);
		expect(screen.render(100).join("\n")).toContain("cancel sa-2? press y");
		screen.handleInput("n");
		await flush();
		expect(calls).not.toContain("cancel sa-2");
		screen.handleInput(CTRL_X);
		screen.handleInput("y");
		await flush();
		expect(calls).toContain("cancel sa-2");
		screen.handleInput(ESC);
		expect(screen.render(100).join("\n")).toContain("subagents of this session: 2");
		screen.handleInput(ESC);
		expect(calls.at(-1)).toBe("close");
	});

	it("never draws a line wider than the terminal", () => {
		const children = [childRecord({ id: "sa-1", name: "漢字".repeat(40), model: "p/".padEnd(90, "m") })];
		const { h } = host(children);
		const screen = new SubagentsScreen(h);
		for (const width of [20, 40, 80]) {
			for (const line of screen.render(width)) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
		}
		screen.handleInput(ENTER);
		for (const width of [20, 40, 80]) {
			for (const line of screen.render(width)) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
		}
	});
});

/**
 * Children of other sessions of this process, as the widget and /subagents show them: only those still to
 * settle, marked with their session's sanitized short name, never the active session's own; cancelling one
 * settles it in its own home (its record waits there for its session), nothing reaches the active session.
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createSessionHome, type SessionHome, sessionHomes } from "../../extensions/subagents/children/home.ts";
import { SubagentManager } from "../../extensions/subagents/children/manager.ts";
import type { ChildRecord } from "../../extensions/subagents/domain/records.ts";
import { plainList } from "../../extensions/subagents/view/command.ts";
import {
	cancelOther,
	type OtherChild,
	otherSessionChildren,
	othersWidgetLine,
	SESSION_LABEL_COLUMNS,
	sessionLabel,
} from "../../extensions/subagents/view/others.ts";
import { SubagentsScreen, type ViewHost } from "../../extensions/subagents/view/screens.ts";
import { StatusLine } from "../../extensions/subagents/view/status.ts";
import { ControlledBackend, childRecord, FAKE_LIMITS, until } from "./subagents-fakes.ts";

afterEach(() => sessionHomes().clear());

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** A home whose manager lists fixed children and records what it was asked to cancel. */
function fixedHome(key: string, name: string | undefined, children: ChildRecord[], cancelled: string[] = []) {
	return {
		key,
		name,
		manager: {
			list: () => children,
			cancel: async (ids: string[]) => {
				cancelled.push(...ids.map((id) => `${key} ${id}`));
			},
		},
	};
}

describe("other sessions' children (read model)", () => {
	it("lists only still-to-settle children of other sessions, session by session, newest first", () => {
		const own = fixedHome("/s/active.jsonl", "me", [childRecord({ id: "sa-1", createdAt: 9 })]);
		const b = fixedHome("/s/2026-12-01T10-00-00-000Z_0123abcd-ef45-6789.jsonl", undefined, [
			childRecord({ id: "sa-1", state: "running", createdAt: 1 }),
			childRecord({ id: "sa-2", state: "completed", createdAt: 2 }),
			childRecord({ id: "sa-3", state: "queued", createdAt: 3 }),
		]);
		const c = fixedHome("id:fedcba98-7654", "review", [
			childRecord({ id: "sa-1", state: "waiting", after: ["sa-0"], createdAt: 2 }),
			childRecord({ id: "sa-4", state: "cancelled", createdAt: 5 }),
		]);
		const listed = otherSessionChildren([own, b, c], own.key);
		expect(listed.map((o) => `${o.label} ${o.child.id} ${o.child.state}`)).toEqual([
			"0123abcd sa-3 queued",
			"0123abcd sa-1 running",
			"review sa-1 waiting",
		]);
		expect(listed.every((o) => o.session !== own.key)).toBe(true);
		// The active instance's own manager is skipped even under another key (e.g. a context whose key moved).
		expect(otherSessionChildren([own, b], "elsewhere", own.manager).map((o) => o.session)).toEqual([b.key, b.key]);
	});

	it("draws a hostile session name as one safe, bounded line", () => {
		const label = sessionLabel({ key: "k", name: "\u001b[2J\u001b]0;pwned\u0007evil\nname\r\t" + "漢".repeat(40) });
		expect(label).not.toMatch(CONTROL);
		expect(label).not.toContain("\n");
		expect(label.startsWith("evil name")).toBe(true);
		expect(visibleWidth(label)).toBeLessThanOrEqual(SESSION_LABEL_COLUMNS);
		// A name that is nothing but control text falls back to the short id.
		expect(sessionLabel({ key: "id:abcdef0123456789", name: "\u001b[31m\u0007" })).toBe("abcdef01");
	});

	it("any session name or key gives a label without control characters, within its columns", () => {
		fc.assert(
			fc.property(fc.string({ unit: "binary" }), fc.option(fc.string({ unit: "binary" })), (key, name) => {
				const label = sessionLabel({ key, name: name ?? undefined });
				expect(label).not.toMatch(CONTROL);
				expect(label).not.toContain("\n");
				expect(visibleWidth(label)).toBeLessThanOrEqual(SESSION_LABEL_COLUMNS);
			}),
		);
	});

	it("counts other sessions' children on one widget line, apart from this session's", () => {
		const others = otherSessionChildren(
			[
				fixedHome("id:aaaaaaaa1", "one", [
					childRecord({ id: "sa-1", state: "running" }),
					childRecord({ id: "sa-2", state: "queued" }),
				]),
			],
			undefined,
		);
		expect(othersWidgetLine(others)).toBe("○ other session: one: 1 running, 1 queued · /subagents");
		const two = [...others, { ...others[0], session: "id:b", label: "b" } as OtherChild];
		expect(othersWidgetLine(two)).toBe("○ 2 other sessions: 2 running, 1 queued · /subagents");
		expect(othersWidgetLine([])).toBeUndefined();
	});

	it("counts other sessions' children that wait for their parent's answer apart, as asking their own session", () => {
		const question = { seq: 1, text: "Which colour?", options: [], run: 1, askedAt: 0, delivered: true };
		const others = otherSessionChildren(
			[
				fixedHome("id:aaaaaaaa1", "one", [
					childRecord({ id: "sa-1", state: "running", question }),
					childRecord({ id: "sa-2", state: "running" }),
					childRecord({ id: "sa-3", state: "running", question }),
				]),
			],
			undefined,
		);
		expect(othersWidgetLine(others)).toBe("○ other session: one: 1 running, 2 ask their sessions · /subagents");
		expect(othersWidgetLine(others.slice(0, 2))).toBe(
			"○ other session: one: 1 running, 1 asks its session · /subagents",
		);
		// Plain /subagents: the row says whose question it is, never that it asks this session's user.
		const text = plainList([], 2000, others);
		expect(text).toMatch(/^\?\s+sa-1 .*asks session .* other session: one$/m);
		expect(text).not.toContain("asks you");
	});

	it("the status widget shows this session's rows and the other sessions' line; none when nothing runs", () => {
		const widgets: Array<string[] | undefined> = [];
		const ctx = {
			hasUI: true,
			ui: {
				theme: undefined,
				setStatus: () => undefined,
				setWidget: (_k: string, lines: string[] | undefined) => widgets.push(lines),
			},
		};
		let others: OtherChild[] = otherSessionChildren(
			[fixedHome("id:bbbbbbbbb", "other", [childRecord({ id: "sa-1", state: "running" })])],
			undefined,
		);
		const status = new StatusLine(
			() => ctx as never,
			() => undefined, // this session has made no children
			() => others,
		);
		status.refresh();
		expect(widgets.at(-1)).toEqual(["○ other session: other: 1 running · /subagents"]);
		others = [];
		status.refresh(); // the other child settled: the widget goes away
		expect(widgets.at(-1)).toBeUndefined();
		status.stop();
	});

	it("plain /subagents lists other sessions' children under their own heading, marked", () => {
		const others = otherSessionChildren([fixedHome("id:ccccccccc", "night\u001b[31m run", [childRecord()])], "x");
		const text = plainList([], 2000, others);
		expect(text.split("\n")[0]).toBe("subagents: none in this session yet");
		expect(text).toContain("running in other sessions of this process: 1 (cancel only)");
		expect(text).toMatch(/sa-1 .* other session: night run$/m);
		expect(text).not.toMatch(CONTROL);
	});
});

describe("cancelling another session's child", () => {
	it("settles it as cancelled in its own home: recorded there once, nothing in the active session", async () => {
		const backend = new ControlledBackend();
		const away = new SubagentManager(backend, FAKE_LIMITS);
		const home: SessionHome = createSessionHome("/s/away.jsonl", "/s/away.jsonl", away);
		away.subscribe((event) => {
			if (event.type === "settled")
				home.record("subagent-settled", { key: event.result.key, state: event.child.state });
		});
		sessionHomes().set(home.key, home);
		const activeEntries: unknown[] = [];
		const active = createSessionHome("/s/active.jsonl", "/s/active.jsonl", new SubagentManager(backend, FAKE_LIMITS));
		active.attach((type, data) => activeEntries.push([type, data]));
		sessionHomes().set(active.key, active);
		home.attach(() => {
			throw new Error("the away session has no instance");
		});
		home.detach(); // its session was switched away from

		const child = away.spawn({
			prompt: "long task",
			modelLabel: "mock/mock-model",
			model: {},
			tools: [],
			cwd: "/",
			context: "fresh",
			systemAppend: [],
		});
		await until(() => backend.started(child.id));
		const listed = otherSessionChildren(sessionHomes().values(), active.key, active.manager);
		expect(listed.map((o) => [o.session, o.child.id, o.child.state])).toEqual([[home.key, child.id, "running"]]);

		await cancelOther(sessionHomes().values(), home.key, child.id, "cancelled in the view");
		await until(() => away.list()[0].state === "cancelled");
		expect(away.list()[0].error).toBe("cancelled in the view");
		expect(otherSessionChildren(sessionHomes().values(), active.key, active.manager)).toEqual([]);
		expect(activeEntries).toEqual([]);
		expect(home.waiting()).toBe(1);

		// Its session is active again: the record is written through its instance, once.
		const back: unknown[] = [];
		home.attach((type, data) => back.push([type, data]));
		home.detach();
		home.attach((type, data) => back.push([type, data]));
		expect(back).toEqual([["subagent-settled", { key: `${child.id}#1`, state: "cancelled" }]]);

		await expect(cancelOther(sessionHomes().values(), home.key, "sa-99")).rejects.toThrow("no longer known");
		await expect(cancelOther(sessionHomes().values(), "/s/gone.jsonl", child.id)).rejects.toThrow("no longer known");
	});
});

describe("/subagents with other sessions' children", () => {
	const ENTER = "\r";
	const ESC = "\u001b";
	const CTRL_X = "\u0018";
	const DOWN = "\u001b[B";
	const flush = () => new Promise((r) => setTimeout(r, 0));

	function screenWith(own: ChildRecord[], others: OtherChild[]) {
		const calls: string[] = [];
		const h: ViewHost = {
			children: () => own,
			transcript: (c) => ({
				items: [{ kind: "assistant", text: `transcript of ${c.sessionFile}` }],
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
			others: () => others,
			cancelOther: async (session, id) => {
				calls.push(`cancelOther ${session} ${id}`);
			},
			rows: () => 30,
			requestRender: () => undefined,
			paint: (_c, t) => t,
			close: () => calls.push("close"),
		};
		return { screen: new SubagentsScreen(h), calls };
	}

	it("lists them under their own heading, opens the right one of two equal ids, refuses steering, cancels it there", async () => {
		const own = [childRecord({ id: "sa-1", name: "mine", sessionFile: "/own/sa-1.jsonl" })];
		const others = otherSessionChildren(
			[
				fixedHome("id:0badf00d99", "other\u001b[1m one", [
					childRecord({ id: "sa-1", name: "theirs", sessionFile: "/other/sa-1.jsonl" }),
				]),
			],
			undefined,
		);
		const { screen, calls } = screenWith(own, others);
		const picker = screen.render(120).join("\n");
		expect(picker).toContain("subagents of this session: 1");
		expect(picker).toContain("running in other sessions of this process: 1 (cancel only)");
		const lines = picker.split("\n");
		const heading = lines.findIndex((l) => l.includes("running in other sessions"));
		expect(lines.findIndex((l) => /sa-1 +mine/.test(l))).toBeLessThan(heading);
		expect(lines[heading + 1].trim()).toBe("other session: other one");
		expect(lines[heading + 2]).toMatch(/sa-1 +theirs/);
		expect(picker).not.toContain("\u001b[1m"); // the name's own control sequence is gone

		screen.handleInput(DOWN);
		screen.handleInput(ENTER);
		const view = screen.render(120).join("\n");
		expect(view).toContain("theirs");
		expect(view).toContain("transcript of /other/sa-1.jsonl");
		expect(view).toContain("other session: other one · its result goes to that session");
		expect(view).not.toContain("enter steer");

		for (const ch of "go on") screen.handleInput(ch);
		screen.handleInput(ENTER);
		await flush();
		expect(screen.render(120).join("\n")).toContain("steer it from its own session");
		screen.handleInput(CTRL_X);
		screen.handleInput("y");
		await flush();
		expect(calls).toEqual(["cancelOther id:0badf00d99 sa-1"]);

		screen.handleInput(ESC);
		screen.handleInput(ENTER); // the selection stays on the other child; the first row is this session's
		screen.handleInput(ESC);
		screen.handleInput("\u001b[A");
		screen.handleInput(ENTER);
		expect(screen.render(120).join("\n")).toContain("transcript of /own/sa-1.jsonl");
		screen.handleInput(CTRL_X);
		screen.handleInput("y");
		await flush();
		expect(calls.at(-1)).toBe("cancel sa-1");
	});

	it("an asking child of another session asks its session, not you: no answer prompt, steering refused", async () => {
		const question = { seq: 1, text: "Which colour?", options: [], run: 1, askedAt: 0, delivered: true };
		const own = [childRecord({ id: "sa-1", name: "mine", sessionFile: "/own/sa-1.jsonl", question })];
		const others = otherSessionChildren(
			[fixedHome("id:0badf00d99", "other", [childRecord({ id: "sa-1", name: "theirs", question })])],
			undefined,
		);
		const { screen, calls } = screenWith(own, others);
		const lines = screen.render(120);
		expect(lines.find((l) => /sa-1 +mine/.test(l))).toMatch(/asks you/);
		const theirs = lines.find((l) => /sa-1 +theirs/.test(l));
		expect(theirs).toMatch(/asks session/);
		expect(theirs).not.toMatch(/asks you/);
		screen.handleInput(DOWN);
		screen.handleInput(ENTER);
		const view = screen.render(120).join("\n");
		expect(view).toMatch(/\? sa-1 theirs · .* · asks its session /);
		expect(view).not.toContain("asks you");
		expect(view).not.toContain("question ›");
		expect(view).not.toContain("enter answer");
		for (const ch of "blue") screen.handleInput(ch);
		screen.handleInput(ENTER);
		await flush();
		expect(screen.render(120).join("\n")).toContain("steer it from its own session");
		expect(calls).toEqual([]);
	});

	it("says so when the other child it shows has settled, and never draws wider than the terminal", () => {
		let others = otherSessionChildren(
			[fixedHome("id:1", "漢".repeat(30), [childRecord({ id: "sa-7", name: "x".repeat(80) })])],
			undefined,
		);
		const { screen } = screenWith([], others);
		const h = screen as unknown as { host: ViewHost };
		h.host.others = () => others;
		for (const width of [20, 40, 80]) {
			for (const line of screen.render(width)) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
		}
		screen.handleInput(ENTER);
		for (const width of [20, 40, 80]) {
			for (const line of screen.render(width)) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
		}
		others = [];
		expect(screen.render(100).join("\n")).toContain("sa-7 of another session has settled");
	});
});

/**
 * The subagents renderers as the terminal gets them: safe text, compact rows, the bounded widget and
 * the delivered-results box at any width. Complements the row tests in subagents-adapter.test.ts.
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChildRecord, ChildRow, ChildState } from "../../extensions/subagents/domain/records.ts";
import {
	deliveredComponent,
	deliveredLabel,
	displayText,
	oneLine,
	rowText,
	SHORT_HASH_CHARS,
	shortPath,
	WIDGET_MAX_ROWS,
	widgetLines,
} from "../../extensions/subagents/view/render.ts";
import { childRecord } from "./subagents-fakes.ts";

const ACTIVE: ChildState[] = ["queued", "starting", "running"];
const ALL: ChildState[] = [...ACTIVE, "completed", "failed", "cancelled"];

function child(id: string, state: ChildState, name = `task ${id}`): ChildRecord {
	return childRecord({ id, name, state });
}

/** True when a string holds a character a terminal would act on (other than a line feed). */
const hasControl = (s: string) => [...s].some((ch) => ch !== "\n" && /[\u0000-\u001f\u007f-\u009f]/u.test(ch));

describe("displayText / oneLine", () => {
	it("drop every control character but line feeds, and keep printable text as it is", () => {
		fc.assert(
			fc.property(fc.string({ unit: "binary" }), (text) => {
				const shown = displayText(text);
				expect(hasControl(shown)).toBe(false);
				expect(displayText(shown)).toBe(shown);
				expect(oneLine(text)).not.toContain("\n");
			}),
		);
		fc.assert(
			fc.property(fc.string({ unit: "grapheme" }), (text) => {
				fc.pre(!hasControl(text) && !text.includes("\r") && !/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/u.test(text));
				expect(displayText(text)).toBe(text);
			}),
		);
		// Tabs go to the next tab stop; an escape sequence goes whole, not only its ESC byte.
		expect(displayText("a\tb\r\nc\u001b[2Jd")).toBe("a       b\ncd");
	});
});

describe("compact rows", () => {
	it("a note that repeats the state is not shown twice; other notes are", () => {
		expect(rowText({ id: "sa-3", name: "c", state: "queued", note: "queued" })).toBe("◷ sa-3 c queued");
		expect(rowText({ id: "sa-3", name: "c", state: "completed", note: "no room: path only" })).toBe(
			"✓ sa-3 c completed no room: path only",
		);
	});

	it("a name with escape sequences or line breaks stays one safe line", () => {
		const row = rowText({ id: "sa-1", name: "evil\u001b[2J\nname", state: "running" });
		expect(row).toBe("● sa-1 evil name running");
	});

	it("shortPath keeps two segments and cuts a SHA-256 file name to its first hex digits", () => {
		fc.assert(
			fc.property(
				fc.array(fc.stringMatching(/^[a-z-]{1,12}$/), { minLength: 1, maxLength: 6 }),
				fc.stringMatching(/^[0-9a-f]{64}$/),
				(dirs, sha) => {
					const short = shortPath(`/${dirs.join("/")}/${sha}.txt`);
					expect(short.endsWith(`/${sha.slice(0, SHORT_HASH_CHARS)}….txt`)).toBe(true);
					expect(short).toContain(dirs[dirs.length - 1]);
					expect(short.length).toBeLessThanOrEqual(2 + 12 + 1 + SHORT_HASH_CHARS + 5);
				},
			),
		);
		expect(shortPath("/x/y/z.txt")).toBe("…/y/z.txt");
		expect(shortPath("z.txt")).toBe("z.txt");
	});
});

describe("widget", () => {
	it("shows every active child up to the cap, then one '+N more' row; settled children never", () => {
		fc.assert(
			fc.property(fc.array(fc.constantFrom(...ALL), { maxLength: 30 }), (states) => {
				const children = states.map((s, i) => child(`sa-${i + 1}`, s));
				const active = children.filter((c) => ACTIVE.includes(c.state)).length;
				const lines = widgetLines(children, 5000);
				if (active <= WIDGET_MAX_ROWS + 1) expect(lines.length).toBe(active);
				else {
					expect(lines.length).toBe(WIDGET_MAX_ROWS + 1);
					expect(lines[WIDGET_MAX_ROWS]).toBe(`+${active - WIDGET_MAX_ROWS} more`);
				}
				for (const line of lines.slice(0, WIDGET_MAX_ROWS)) expect(line).toMatch(/^[●◷] sa-\d+ /);
			}),
		);
	});
});

describe("delivered-results message", () => {
	const theme = {
		fg: (_c: string, t: string) => t,
		bg: (_c: string, t: string) => t,
		bold: (t: string) => t,
	};
	const rows: ChildRow[] = [
		{ id: "sa-1", name: "long-report", state: "completed", fullBytes: 37_000, shownBytes: 16_000 },
		{ id: "sa-2", name: "quick", state: "failed" },
	];

	it("labels what it is, hints the expand key when collapsed, and shows the text only when expanded", () => {
		expect(deliveredLabel(1, false, "ctrl+o")).toBe("subagent result delivered (ctrl+o for the full text)");
		expect(deliveredLabel(2, true, "ctrl+o")).toBe("2 subagent results delivered");
		const collapsed = deliveredComponent(rows, "FULL\nTEXT", { expanded: false, expandKey: "ctrl+o" }, theme)
			.render(80)
			.join("\n");
		expect(collapsed).toContain("2 subagent results delivered (ctrl+o for the full text)");
		expect(collapsed).toContain("✓ sa-1 long-report completed 37,000 B → 16,000 B");
		expect(collapsed).not.toContain("FULL");
		const expanded = deliveredComponent(rows, "FULL\nTEXT", { expanded: true, expandKey: "ctrl+o" }, theme)
			.render(80)
			.join("\n");
		expect(expanded).toMatch(/FULL\s*\n\s*TEXT/);
	});

	it("never draws a line wider than the terminal", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 8, max: 200 }),
				fc.string({ unit: "grapheme", maxLength: 80 }),
				fc.string({ unit: "binary", maxLength: 400 }),
				fc.boolean(),
				(width, name, content, expanded) => {
					const r: ChildRow[] = [{ id: "sa-1", name, state: "completed", fullBytes: 10, artifactPath: "/a/b/c.txt" }];
					const lines = deliveredComponent(r, content, { expanded, expandKey: "ctrl+o" }, theme).render(width);
					for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
				},
			),
			{ numRuns: 200 },
		);
	});
});

/**
 * The one terminal-text sanitizer: control sequences go whole (no `[31m` or `]0;title` debris),
 * plain text stays as it is, tabs land on tab stops in pi-tui's own column count, and rows stay one line.
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	approximateWidth,
	sanitizeLine,
	sanitizeTerminalText,
	stripControls,
	TAB_STOP_COLUMNS,
} from "../../extensions/shared/text/sanitize.ts";

const ESC = "\u001b";
/** Anything a terminal would act on: C0 but LF, DEL, C1, bidi overrides and isolates. */
const ACTIVE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** Plain printable text: no controls, no CR, no bidi controls; any script, emoji included. */
const plain = fc.string({ unit: "grapheme", maxLength: 30 }).filter((s) => !ACTIVE.test(s) && !s.includes("\r"));

const params = fc.array(fc.integer({ min: 0, max: 999 }), { maxLength: 4 }).map((n) => n.join(";"));
const payload = fc
	.string({ maxLength: 20 })
	.map((s) => s.replace(/[\u0000-\u001f\u007f-\u009f]/gu, ""))
	.filter((s) => !s.includes("\\"));
const terminator = fc.constantFrom("\u0007", `${ESC}\\`, "\u009c");

/** Every kind of control sequence a hostile child might print, well-formed. */
const sequence = fc.oneof(
	fc
		.tuple(fc.constantFrom("", "?", ">"), params, fc.constantFrom("m", "J", "H", "K", "h", "l", "q"))
		.map(([lead, p, final]) => `${ESC}[${lead}${p}${final}`),
	fc.tuple(params, fc.constantFrom("m", "J", "H")).map(([p, final]) => `\u009b${p}${final}`),
	fc.tuple(fc.constantFrom("0;", "2;", "8;;", "52;c;"), payload, terminator).map(([k, p, t]) => `${ESC}]${k}${p}${t}`),
	fc
		.tuple(fc.constantFrom("P", "X", "^", "_"), payload, fc.constantFrom(`${ESC}\\`, "\u009c"))
		.map(([k, p, t]) => `${ESC}${k}${p}${t}`),
	fc
		.tuple(fc.constantFrom("\u0090", "\u0098", "\u009d", "\u009e", "\u009f"), payload, terminator)
		.map(([k, p, t]) => `${k}${p}${t}`),
	fc.constantFrom(`${ESC}(B`, `${ESC})0`, `${ESC}7`, `${ESC}8`, `${ESC}c`, `${ESC}=`, `${ESC}M`),
	fc.constantFrom("\u0007", "\u0008", "\u0000", "\u007f", "\u0085", "\u202e", "\u2066"),
);

describe("stripControls / sanitizeTerminalText", () => {
	it("removes every control sequence whole: hostile text shows exactly its plain parts", () => {
		fc.assert(
			fc.property(fc.array(fc.tuple(plain, sequence), { maxLength: 8 }), plain, (pairs, last) => {
				const hostile = pairs.map(([p, s]) => p + s).join("") + last;
				const expected = pairs.map(([p]) => p).join("") + last;
				expect(stripControls(hostile)).toBe(expected);
			}),
			{ numRuns: 500 },
		);
	});

	it("leaves nothing a terminal acts on, whatever the input, and is idempotent", () => {
		fc.assert(
			fc.property(fc.string({ unit: "binary", maxLength: 80 }), (text) => {
				const shown = sanitizeTerminalText(text);
				expect(ACTIVE.test(shown)).toBe(false);
				expect(shown).not.toContain("\r");
				expect(shown).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
				expect(sanitizeTerminalText(shown)).toBe(shown);
				expect(sanitizeLine(text)).not.toContain("\n");
			}),
			{ numRuns: 500 },
		);
	});

	it("keeps plain text byte for byte", () => {
		fc.assert(
			fc.property(fc.array(plain, { maxLength: 5 }), (lines) => {
				const text = lines.join("\n");
				expect(sanitizeTerminalText(text)).toBe(text);
			}),
		);
	});

	it("the screenshots of the issue: no fragment of the sequences is left", () => {
		expect(sanitizeLine(`evil${ESC}[31mRED${ESC}[0mbell\u0007${ESC}]0;PWNED-TITLE\u0007name`)).toBe("evilREDbellname");
		expect(sanitizeTerminalText(`${ESC}[2J${ESC}[H cleared?`)).toBe(" cleared?");
		expect(sanitizeTerminalText(`a${ESC}]8;;http://x${ESC}\\link${ESC}]8;;${ESC}\\b`)).toBe("alinkb");
		expect(sanitizeTerminalText(`x${ESC}P1$r0m${ESC}\\y`)).toBe("xy");
	});

	it("an unterminated string sequence hides the rest of its own line only", () => {
		expect(sanitizeTerminalText(`keep${ESC}]0;never ended\nnext line`)).toBe("keep\nnext line");
		expect(sanitizeTerminalText(`a${ESC}_apc${ESC}[31mred`)).toBe("ared");
		expect(sanitizeTerminalText(`tail${ESC}`)).toBe("tail");
		expect(sanitizeTerminalText(`cut${ESC}[12`)).toBe("cut");
	});

	it("CR LF and lone CR become one line feed; lone surrogates become U+FFFD", () => {
		expect(sanitizeTerminalText("a\r\nb\rc")).toBe("a\nb\nc");
		expect(sanitizeTerminalText("x\ud800y\udc00z😀")).toBe("x\uFFFDy\uFFFDz😀");
	});

	it("one-line rows fold line breaks to single spaces", () => {
		expect(sanitizeLine("a\n\n\nb\nc")).toBe("a b c");
	});
});

describe("tabs and wide characters", () => {
	/** Cells of a line: one grapheme each, wide ones included. */
	const cell = fc.oneof(
		fc.constantFrom("a", "Z", "~", "é", "漢", "字", "한", "😀", "👍🏽", "ｱ", "e\u0301"),
		fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }).filter((s) => !ACTIVE.test(s)),
	);

	it("every tab ends on a tab stop, counted in pi-tui's columns, at any tab width", () => {
		fc.assert(
			fc.property(
				fc.array(
					fc.array(cell, { maxLength: 12 }).map((c) => c.join("")),
					{ minLength: 1, maxLength: 6 },
				),
				fc.integer({ min: 1, max: 12 }),
				(fields, tabStop) => {
					const out = sanitizeTerminalText(fields.join("\t"), { widthOf: visibleWidth, tabStop });
					expect(out).not.toContain("\t");
					// Independently: after each field, spaces up to the next stop of pi-tui's width of the whole prefix.
					let expected = "";
					for (const [i, field] of fields.entries()) {
						expected += field;
						if (i < fields.length - 1) expected += " ".repeat(tabStop - (visibleWidth(expected) % tabStop));
					}
					expect(out).toBe(expected);
					if (fields.length > 1)
						expect(visibleWidth(out) - visibleWidth(fields.at(-1) ?? "")).toSatisfy((n: number) => n % tabStop === 0);
				},
			),
			{ numRuns: 300 },
		);
	});

	it("the default width agrees with pi-tui on common scripts and emoji", () => {
		for (const g of ["a", "é", "e\u0301", "漢", "한", "ｱ", "😀", "\u200b", "\u0301"]) {
			expect(approximateWidth(g)).toBe(visibleWidth(g));
		}
		expect(sanitizeTerminalText("漢\tx")).toBe(`漢${" ".repeat(TAB_STOP_COLUMNS - 2)}x`);
	});
});

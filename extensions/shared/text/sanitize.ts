/**
 * The one sanitizer for terminal text: anything a child, a model or a name produced is made safe
 * and tidy to draw before this package puts it on screen. Control sequences are removed WHOLE —
 * CSI (`ESC [ … final`), OSC (`ESC ] … BEL|ST`), DCS, SOS, PM and APC strings (`ESC P|X|^|_ … ST`),
 * their 8-bit C1 forms, and two- or three-byte escapes (`ESC ( B`, `ESC 7`) — so no `[31m` or
 * `]0;title` debris is left behind when only the ESC byte goes. Other C0/C1 controls, DEL and
 * bidirectional overrides are dropped; CR LF and lone CR become LF; tabs become spaces up to the
 * next tab stop, counted in terminal columns (wide characters count two), so columns line up at
 * any width. Display only: what the model sees is never touched. Pure, no imports.
 */

/** Columns between tab stops, as terminals set them. */
export const TAB_STOP_COLUMNS = 8;

/** Terminal columns of one grapheme (pi-tui's visibleWidth fits; the default approximates it). */
export type WidthOf = (grapheme: string) => number;

export interface SanitizeOptions {
	/** Keep line breaks (true) or turn each run of them into one space (false, for one-line rows). */
	multiline?: boolean;
	/** Width of a grapheme in columns, for tab stops (default: an East-Asian-width approximation). */
	widthOf?: WidthOf;
	/** Columns between tab stops (default TAB_STOP_COLUMNS). */
	tabStop?: number;
}

const ESC = 0x1b;
const BEL = 0x07;
/** 8-bit introducers: CSI, OSC, DCS, SOS, PM, APC, and the string terminator. */
const C1_CSI = 0x9b;
const C1_OSC = 0x9d;
const C1_DCS = 0x90;
const C1_SOS = 0x98;
const C1_PM = 0x9e;
const C1_APC = 0x9f;
const C1_ST = 0x9c;

/** Final byte of the sequence that starts at `i` (exclusive end index), for CSI bodies. */
function csiEnd(text: string, i: number): number {
	let j = i;
	// Parameter bytes 0x30–0x3F, then intermediates 0x20–0x2F, then one final byte 0x40–0x7E.
	while (j < text.length) {
		const c = text.charCodeAt(j);
		if (c >= 0x30 && c <= 0x3f) j++;
		else break;
	}
	while (j < text.length) {
		const c = text.charCodeAt(j);
		if (c >= 0x20 && c <= 0x2f) j++;
		else break;
	}
	if (j < text.length) {
		const c = text.charCodeAt(j);
		if (c >= 0x40 && c <= 0x7e) return j + 1;
	}
	// Malformed or cut short: the sequence ends where its well-formed part ends (nothing of it is shown).
	return j;
}

/**
 * End of a control string (OSC, DCS, SOS, PM, APC) whose body starts at `i`: after BEL (OSC's short
 * form), ST (`ESC \` or 0x9C), or — for a string never terminated — at the next line break (kept), so
 * a stray introducer can hide at most the rest of its own line, never the rest of the text.
 */
function stringEnd(text: string, i: number): number {
	for (let j = i; j < text.length; j++) {
		const c = text.charCodeAt(j);
		if (c === BEL || c === C1_ST) return j + 1;
		if (c === ESC) {
			if (text.charCodeAt(j + 1) === 0x5c) return j + 2;
			return j; // another escape starts: this string was never terminated
		}
		if (c === 0x0a || c === 0x0d) return j;
	}
	return text.length;
}

/** End index of the escape sequence starting with ESC at `i`. */
function escapeEnd(text: string, i: number): number {
	const next = text.charCodeAt(i + 1);
	if (Number.isNaN(next)) return i + 1;
	if (next === 0x5b) return csiEnd(text, i + 2); // [
	if (next === 0x5d || next === 0x50 || next === 0x58 || next === 0x5e || next === 0x5f) return stringEnd(text, i + 2); // ] P X ^ _
	// nF escapes: intermediates 0x20–0x2F then a final 0x30–0x7E (ESC ( B); Fp/Fe/Fs: one byte 0x30–0x7E.
	let j = i + 1;
	while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x2f) j++;
	if (j < text.length) {
		const c = text.charCodeAt(j);
		if (c >= 0x30 && c <= 0x7e) return j + 1;
	}
	return j;
}

/** Bidirectional embeddings, overrides and isolates: they reorder what follows them on screen. */
function isBidiControl(code: number): boolean {
	return (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069) || code === 0x200e || code === 0x200f;
}

/**
 * Text with every control sequence and control character removed (escape sequences whole), CR LF /
 * CR as LF, lone surrogates as U+FFFD. Tabs are kept here; `sanitizeTerminalText` expands them.
 */
export function stripControls(text: string): string {
	let out = "";
	let start = 0; // start of the pending run of plain characters
	const flush = (end: number) => {
		if (end > start) out += text.slice(start, end);
	};
	for (let i = 0; i < text.length; ) {
		const c = text.charCodeAt(i);
		if (c >= 0x20 && c < 0x7f) {
			i++;
			continue;
		}
		if (c === 0x0a || c === 0x09) {
			i++;
			continue;
		}
		if (c >= 0xa0 && !(c >= 0xd800 && c <= 0xdfff) && !isBidiControl(c)) {
			i++;
			continue;
		}
		flush(i);
		let next = i + 1;
		if (c === ESC) next = escapeEnd(text, i);
		else if (c === C1_CSI) next = csiEnd(text, i + 1);
		else if (c === C1_OSC || c === C1_DCS || c === C1_SOS || c === C1_PM || c === C1_APC) next = stringEnd(text, i + 1);
		else if (c === 0x0d) {
			if (text.charCodeAt(i + 1) !== 0x0a) out += "\n"; // a lone CR; CR LF keeps the LF that follows
		} else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
			const low = text.charCodeAt(i + 1);
			if (low >= 0xdc00 && low <= 0xdfff) {
				out += text.slice(i, i + 2);
				next = i + 2;
			} else out += "\uFFFD";
		} else if (c >= 0xd800 && c <= 0xdfff) out += "\uFFFD";
		// Everything else here (C0 controls, DEL, C1 controls, bidi controls) is dropped.
		i = Math.max(next, i + 1);
		start = i;
	}
	flush(text.length);
	return out;
}

/** East-Asian wide and fullwidth ranges, and emoji pictographs: two columns in a terminal. */
function isWideCodePoint(cp: number): boolean {
	return (
		(cp >= 0x1100 && cp <= 0x115f) ||
		(cp >= 0x2e80 && cp <= 0x303e) ||
		(cp >= 0x3041 && cp <= 0x33ff) ||
		(cp >= 0x3400 && cp <= 0x4dbf) ||
		(cp >= 0x4e00 && cp <= 0x9fff) ||
		(cp >= 0xa000 && cp <= 0xa4cf) ||
		(cp >= 0xac00 && cp <= 0xd7a3) ||
		(cp >= 0xf900 && cp <= 0xfaff) ||
		(cp >= 0xfe30 && cp <= 0xfe4f) ||
		(cp >= 0xff00 && cp <= 0xff60) ||
		(cp >= 0xffe0 && cp <= 0xffe6) ||
		(cp >= 0x1f300 && cp <= 0x1f64f) ||
		(cp >= 0x1f900 && cp <= 0x1f9ff) ||
		(cp >= 0x20000 && cp <= 0x3fffd)
	);
}

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;

/** Default grapheme width: 0 for marks and format characters, 2 for wide ones, else 1. */
export const approximateWidth: WidthOf = (grapheme) => {
	if (grapheme.length === 0 || ZERO_WIDTH.test(grapheme)) return 0;
	return isWideCodePoint(grapheme.codePointAt(0) ?? 0) ? 2 : 1;
};

let segmenter: Intl.Segmenter | undefined;

/** Graphemes of a line (a user-perceived character each). */
function graphemes(line: string): Iterable<string> {
	segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
	const it = segmenter.segment(line);
	return {
		*[Symbol.iterator]() {
			for (const s of it) yield s.segment;
		},
	};
}

/** One line's tabs as spaces up to the next tab stop, counted in columns. */
function expandTabs(line: string, widthOf: WidthOf, tabStop: number): string {
	if (!line.includes("\t")) return line;
	let out = "";
	let column = 0;
	for (const g of graphemes(line)) {
		if (g === "\t") {
			const spaces = tabStop - (column % tabStop);
			out += " ".repeat(spaces);
			column += spaces;
		} else {
			out += g;
			column += widthOf(g);
		}
	}
	return out;
}

/**
 * Text safe to draw: control sequences removed whole, control characters dropped, line breaks kept
 * (or folded to single spaces with `multiline: false`), tabs expanded to tab stops.
 */
export function sanitizeTerminalText(text: string, options: SanitizeOptions = {}): string {
	const widthOf = options.widthOf ?? approximateWidth;
	const tabStop = Math.max(1, Math.floor(options.tabStop ?? TAB_STOP_COLUMNS));
	const clean = stripControls(typeof text === "string" ? text : String(text));
	const lines = clean.split("\n").map((line) => expandTabs(line, widthOf, tabStop));
	if (options.multiline === false) return lines.filter((l, i) => l.length > 0 || i === 0).join(" ");
	return lines.join("\n");
}

/** sanitizeTerminalText on one line: names, ids, notes and briefs in compact rows. */
export function sanitizeLine(text: string, options: Omit<SanitizeOptions, "multiline"> = {}): string {
	return sanitizeTerminalText(text, { ...options, multiline: false });
}

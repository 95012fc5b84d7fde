/**
 * The window option of the projection: a file read's result shown as a window of its lines, each numbered
 * with its file line, and a heading that says where the window lies. Which lines: all of them when the read
 * asked for a range (the result is that range), else the middle third (head and tail of a file are rarely
 * what a reader lacks). Pure layout; projection.ts then projects the numbered window within what the
 * heading leaves of the budget, its footer in the stored text's line numbers.
 */
import { utf8ByteLength } from "../text/utf8.ts";

/** Where the window lies in the file, for the caller's heading. */
export interface WindowPlace {
	/** File lines of the first and last line shown. */
	firstShown: number;
	lastShown: number;
	/** File lines of the text's first and last line. */
	firstLine: number;
	lastLine: number;
	/** UTF-8 bytes of the lines before and after the window (without the newline next to it). */
	beforeBytes: number;
	afterBytes: number;
}

/** The window option: which lines of the text to show, numbered how, under which heading. */
export interface WindowOption {
	/** File line number of the text's first line (a read's offset; default 1). */
	firstNumber?: number;
	/** "all": every line (the read asked for a range); "middle": the middle third. */
	span: "all" | "middle";
	/** Heading above the window (one or more lines, counted in the budget), from where the window lies. */
	heading?: (place: WindowPlace) => string;
}

/** The numbered window of `text` and where it lies. */
export interface WindowLayout {
	/** The window's lines, each prefixed with its file line number and a tab. */
	numbered: string;
	/** 1-based line of `text` where the window starts. */
	firstTextLine: number;
	place: WindowPlace;
}

export function layoutWindow(text: string, option: WindowOption): WindowLayout {
	const firstLine = Math.max(1, Math.floor(Number(option.firstNumber) || 1));
	const lines = text.split("\n");
	const n = lines.length;
	const all = option.span === "all";
	const from = all ? 0 : Math.floor(n / 3);
	const to = all ? n : Math.max(from + 1, Math.ceil((2 * n) / 3));
	const width = String(firstLine + n - 1).length;
	const numbered = lines
		.slice(from, to)
		.map((line, i) => `${String(firstLine + from + i).padStart(width, " ")}\t${line}`)
		.join("\n");
	const bytesOf = (part: string[]) => (part.length === 0 ? 0 : utf8ByteLength(part.join("\n")));
	return {
		numbered,
		firstTextLine: from + 1,
		place: {
			firstShown: firstLine + from,
			lastShown: firstLine + to - 1,
			firstLine,
			lastLine: firstLine + n - 1,
			beforeBytes: bytesOf(lines.slice(0, from)),
			afterBytes: bytesOf(lines.slice(to)),
		},
	};
}

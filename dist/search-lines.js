// @ts-check
/**
 * The recall search's line scan, as a plain JavaScript module (type-checked by tsc through these
 * JSDoc types, linted by Biome). It is JavaScript because it runs in a worker thread
 * (search-thread.js): Pi loads extensions through jiti on Node and natively under Bun, and a worker
 * started from a .ts file loads under only one of them; a .js module loads under both. It imports
 * nothing but Node's own modules, so the worker needs no transpiler.
 */
import { readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";

/**
 * One search: which stored file, and the pattern as a compiled RegExp's source and flags.
 * @typedef {object} SearchJob
 * @property {string} path Absolute path of the artifact, as the store resolved it (never from model text).
 * @property {string} source RegExp source (already compiled once on the main thread, so known valid).
 * @property {string} flags RegExp flags.
 * @property {number} context Context lines around each match.
 * @property {number} maxMatches Matches listed at most.
 * @property {string} separator Row between non-adjacent groups.
 * @property {number} start 1-based line the search starts at.
 */

/**
 * What a search found.
 * @typedef {object} SearchHit
 * @property {string[]} rows Output rows: "N:line" for a match, "N-line" for context, or the separator.
 * @property {number} matches Matching lines listed.
 * @property {boolean} capped True when the search stopped at maxMatches with lines left after the last match.
 * @property {number} total Lines of the text (split on "\n", as Pi's read counts them).
 * @property {number} lastMatch Line of the last match (0 when none).
 * @property {number} [longLines] Lines longer than LINE_MAX_CHARS, searched and shown in their first part.
 */

/** Bytes read from an artifact at a time (reading and searching never hold a whole file). */
export const READ_CHUNK_BYTES = 1024 * 1024;
/** Longest part of one line kept, in characters: a longer line is searched and shown in its first this many. */
export const LINE_MAX_CHARS = 64 * 1024;
/** Characters of rows one search lists at most; past them it stops as capped (offset= goes on). */
export const ROWS_MAX_CHARS = 4 * 1024 * 1024;

/**
 * A failed match that took this long, in milliseconds, is taken as the engine giving up. V8 backtracks on a
 * pattern like ^(a+)+$ until the worker is stopped, but JavaScriptCore (Bun) abandons a match after a step limit
 * (~0.5 s) and reports "no match": without this, such a pattern would quietly find nothing, or not, depending on
 * the number of lines. No honest match of one line of at most LINE_MAX_CHARS takes this long.
 */
export const MATCH_GAVE_UP_MS = 150;

/** Thrown by a line scan whose pattern made the engine give up (or nearly). */
export class PatternGaveUp extends Error {}

/**
 * A line scan fed one line at a time (see searchLines for what it finds). `line` is the line as read (at most
 * LINE_MAX_CHARS characters of it); `push` returns false once nothing more is listed (then only counting is left).
 *
 * @param {string} source RegExp source
 * @param {string} flags RegExp flags
 * @param {number} context context lines around each match
 * @param {number} maxMatches matches listed at most
 * @param {string} separator row between groups that are not adjacent
 * @param {number} start 1-based line the search starts at
 * @param {number} [maxRowChars] characters of rows listed at most
 */
export function lineSearch(source, flags, context, maxMatches, separator, start, maxRowChars = ROWS_MAX_CHARS) {
	const regex = new RegExp(source, flags);
	const first = Math.max(1, start || 1);
	/** @type {string[]} */
	const rows = [];
	/** @type {Array<[number, string]>} */
	let before = [];
	let matches = 0;
	let lastMatch = 0;
	let lastPrinted = 0;
	let afterLeft = 0;
	let lineNo = 0;
	let rowChars = 0;
	let capped = false;
	let longLines = 0;
	/** @param {string} row */
	const add = (row) => {
		rows.push(row);
		rowChars += row.length;
	};
	/** @param {string} line */
	const test = (line) => {
		const started = performance.now();
		const matched = regex.test(line);
		if (!matched && performance.now() - started >= MATCH_GAVE_UP_MS) throw new PatternGaveUp();
		return matched;
	};
	return {
		/**
		 * @param {string} line
		 * @param {number} [fullLength] the line's whole length when `line` is its first part
		 */
		push(line, fullLength = line.length) {
			lineNo++;
			if (capped || lineNo < first) return !capped;
			if (fullLength > line.length) longLines++;
			regex.lastIndex = 0;
			if (matches < maxMatches && rowChars + line.length <= maxRowChars && test(line)) {
				const firstShown = before.length > 0 ? before[0][0] : lineNo;
				if (lastPrinted > 0 && firstShown > lastPrinted + 1) add(separator);
				for (const [n, seen] of before) add(`${n}-${seen}`);
				before = [];
				add(`${lineNo}:${line}`);
				lastPrinted = lineNo;
				lastMatch = lineNo;
				matches++;
				afterLeft = context;
			} else if (afterLeft > 0 && rowChars + line.length <= maxRowChars) {
				add(`${lineNo}-${line}`);
				lastPrinted = lineNo;
				afterLeft--;
			} else if (matches >= maxMatches || rowChars + line.length > maxRowChars) {
				capped = true;
			} else if (context > 0) {
				before.push([lineNo, line]);
				if (before.length > context) before.shift();
			}
			return !capped;
		},
		/**
		 * @param {number} [rest] lines after the last one pushed (counted without being pushed)
		 * @returns {SearchHit}
		 */
		finish(rest = 0) {
			const total = lineNo + rest;
			if (first > total) return { rows: [], matches: 0, capped: false, total, lastMatch: 0, longLines: 0 };
			const isCapped = capped || (matches >= maxMatches && lastMatch < total);
			return { rows, matches, capped: isCapped, total, lastMatch, longLines };
		},
	};
}

/**
 * The lines of `text` from line `start` on (split on "\n", 1-based as Pi's read counts) matching the
 * regular expression, grep -n style: "N:line" for a match, "N-line" for context (never before
 * `start`), `separator` between groups that are not adjacent. Stops testing after `maxMatches`
 * matches (the last match still gets its context lines). Linear in the text: no line array is built.
 *
 * @param {string} text the artifact's text
 * @param {string} source RegExp source (compiled once on the main thread, so known valid)
 * @param {string} flags RegExp flags
 * @param {number} context context lines around each match
 * @param {number} maxMatches matches listed at most
 * @param {string} separator row between groups that are not adjacent
 * @param {number} start 1-based line the search starts at
 * @returns {SearchHit}
 */
export function searchLines(text, source, flags, context, maxMatches, separator, start) {
	const scan = lineSearch(source, flags, context, maxMatches, separator, start, Number.POSITIVE_INFINITY);
	let pos = 0;
	for (;;) {
		const newline = text.indexOf("\n", pos);
		if (!scan.push(text.slice(pos, newline === -1 ? text.length : newline))) {
			let rest = 0;
			for (let at = newline; at !== -1; at = text.indexOf("\n", at + 1)) rest++;
			return strip(scan.finish(rest));
		}
		if (newline === -1) break;
		pos = newline + 1;
	}
	return strip(scan.finish());
}

/** @param {SearchHit} hit */
function strip(hit) {
	const { longLines: _longLines, ...rest } = hit;
	return rest;
}

/**
 * Read the open file `fd` line by line in chunks of READ_CHUNK_BYTES (split on "\n", as Pi's read counts), never
 * holding more than a chunk and one line's first `maxLineChars` characters. `onLine(line, fullLength)` gets each
 * line (cut to maxLineChars; fullLength is its whole length); when it returns false, the lines after it are only
 * counted, and their number is returned.
 *
 * @param {number} fd
 * @param {number} maxLineChars
 * @param {(line: string, fullLength: number) => boolean} onLine
 * @returns {number} lines after the one onLine stopped at (0 when it never stopped)
 */
export function readLines(fd, maxLineChars, onLine) {
	const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
	const decoder = new StringDecoder("utf8");
	let carry = "";
	let carryLength = 0;
	for (;;) {
		const n = readSync(fd, buffer, 0, buffer.length, null);
		const text = n > 0 ? decoder.write(buffer.subarray(0, n)) : decoder.end();
		let pos = 0;
		for (;;) {
			const newline = text.indexOf("\n", pos);
			const end = newline === -1 ? text.length : newline;
			if (carry.length < maxLineChars) carry += text.slice(pos, Math.min(end, pos + maxLineChars - carry.length));
			carryLength += end - pos;
			if (newline === -1) break;
			if (!onLine(carry, carryLength)) {
				let rest = 1; // the line after this newline, however short
				for (let at = text.indexOf("\n", newline + 1); at !== -1; at = text.indexOf("\n", at + 1)) rest++;
				return rest + countNewlines(fd, buffer);
			}
			carry = "";
			carryLength = 0;
			pos = newline + 1;
		}
		if (n === 0) break;
	}
	onLine(carry, carryLength);
	return 0;
}

/**
 * @param {number} fd
 * @param {Buffer} buffer
 */
function countNewlines(fd, buffer) {
	let count = 0;
	for (let n = readSync(fd, buffer, 0, buffer.length, null); n > 0; n = readSync(fd, buffer, 0, buffer.length, null)) {
		for (let at = buffer.indexOf(10, 0); at !== -1 && at < n; at = buffer.indexOf(10, at + 1)) count++;
	}
	return count;
}

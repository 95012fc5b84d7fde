/**
 * UTF-8 measurements over index ranges of one string.
 *
 * A text is treated as what its UTF-8 encoding stores: a valid surrogate pair is one 4-byte character and
 * a lone surrogate is 3 bytes, because encoding replaces it with U+FFFD. Nothing here splits a text into
 * lines or copies more than a small window of it, so a 64 MiB input costs no 64 MiB of extra memory.
 */

/** Pi's read splits lines on this character only ("\r" stays part of the line). */
const NEWLINE = "\n";
/** The character UTF-8 encoding stores in place of a lone surrogate. */
export const REPLACEMENT_CHARACTER = "\uFFFD";
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** True for the first UTF-16 unit of a surrogate pair. */
export function isHighSurrogate(code: number): boolean {
	return code >= 0xd800 && code <= 0xdbff;
}

/** True for the second UTF-16 unit of a surrogate pair. */
export function isLowSurrogate(code: number): boolean {
	return code >= 0xdc00 && code <= 0xdfff;
}

/** Node's and Bun's native UTF-8 length (allocates nothing); absent in other runtimes. */
const nativeByteLength: ((text: string) => number) | undefined =
	typeof globalThis.Buffer?.byteLength === "function" ? (text) => Buffer.byteLength(text, "utf8") : undefined;

/**
 * UTF-8 byte length of `text` without encoding it: native where the runtime has it, else a
 * loop over UTF-16 code units. A lone surrogate counts 3 bytes (it is encoded as U+FFFD).
 */
export function utf8ByteLength(text: string): number {
	return nativeByteLength ? nativeByteLength(text) : utf8LengthPortable(text);
}

/** The portable loop behind utf8ByteLength (exported so tests can compare it with the native count). */
export function utf8LengthPortable(text: string): number {
	let bytes = text.length;
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (c < 0x80) continue;
		if (c < 0x800) bytes += 1;
		else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
			bytes += 2; // the pair is 2 code units and 4 bytes
			i++;
		} else bytes += 2; // 3 bytes, lone surrogates included
	}
	return bytes;
}

/** True when index `i` lies between the two halves of a valid surrogate pair. */
export function splitsSurrogatePair(text: string, i: number): boolean {
	return i > 0 && i < text.length && isHighSurrogate(text.charCodeAt(i - 1)) && isLowSurrogate(text.charCodeAt(i));
}

/**
 * UTF-8 bytes of text[start, end), measured natively on a slice (O(1) to make for a flat string in V8).
 * A surrogate pair split by the range counts as lone surrogates, 3 bytes each, as it would encode.
 */
export function rangeByteLength(text: string, start: number, end: number): number {
	return end > start ? Buffer.byteLength(text.slice(start, end), "utf8") : 0;
}

/**
 * The longest prefix of text[start, limit) within `maxBytes`, never ending inside a surrogate pair.
 * Starts from maxBytes units (a unit is at least one byte) and, while over budget, drops
 * ceil(excess / 3) units: a unit frees at most 3 bytes, so a drop never frees more than 2 bytes beyond
 * the excess, and a character that small would not have been dropped (1 or 2 bytes; the arithmetic
 * leaves no room). So the result is maximal after a few native measurements instead of a JS loop.
 */
export function advanceByBytes(
	text: string,
	start: number,
	maxBytes: number,
	limit = text.length,
): { end: number; bytes: number } {
	let end = Math.min(limit, start + Math.max(0, maxBytes));
	if (end > start && splitsSurrogatePair(text, end)) end--;
	let bytes = rangeByteLength(text, start, end);
	while (bytes > maxBytes) {
		// Dropping k units frees between k and 3k bytes: never more than the excess needs.
		end = Math.max(start, end - Math.ceil((bytes - maxBytes) / 3));
		if (end > start && splitsSurrogatePair(text, end)) end--;
		bytes = rangeByteLength(text, start, end);
	}
	return { end, bytes };
}

/** The longest suffix of text[floor, end) within `maxBytes`, never starting inside a surrogate pair (as above). */
export function retreatByBytes(
	text: string,
	end: number,
	maxBytes: number,
	floor = 0,
): { start: number; bytes: number } {
	let start = Math.max(floor, end - Math.max(0, maxBytes));
	if (start < end && splitsSurrogatePair(text, start)) start++;
	let bytes = rangeByteLength(text, start, end);
	while (bytes > maxBytes) {
		start = Math.min(end, start + Math.ceil((bytes - maxBytes) / 3));
		if (start < end && splitsSurrogatePair(text, start)) start++;
		bytes = rangeByteLength(text, start, end);
	}
	return { start, bytes };
}

/**
 * Count "\n" in text[start, end). A bounded range is searched in a slice (O(1) for a flat string in V8)
 * so indexOf never runs on past `end` through the rest of a huge text.
 */
export function countNewlines(text: string, start = 0, end = text.length): number {
	const s = start === 0 && end === text.length ? text : text.slice(start, end);
	let count = 0;
	let at = s.indexOf(NEWLINE);
	while (at !== -1) {
		count++;
		at = s.indexOf(NEWLINE, at + 1);
	}
	return count;
}

/** Lines as Pi's read counts them: text.split("\n").length, without the split. */
export function countLines(text: string): number {
	return countNewlines(text) + 1;
}

/** Newlines in the whole text and the longest line in UTF-16 units, in one indexOf pass. */
export function lineStats(text: string): { newlines: number; longestLineUnits: number } {
	let newlines = 0;
	let longest = 0;
	let lineStart = 0;
	let at = text.indexOf(NEWLINE);
	while (at !== -1) {
		if (at - lineStart > longest) longest = at - lineStart;
		newlines++;
		lineStart = at + 1;
		at = text.indexOf(NEWLINE, lineStart);
	}
	return { newlines, longestLineUnits: Math.max(longest, text.length - lineStart) };
}

/** Lines as Pi's read counts them (text.split("\n").length), but stops once the count passes `cap`. */
export function countLinesUpTo(text: string, cap: number): number {
	let lines = 1;
	let at = text.indexOf(NEWLINE);
	while (at !== -1 && lines <= cap) {
		lines++;
		at = text.indexOf(NEWLINE, at + 1);
	}
	return lines;
}

/** Index just past the `n`-th "\n" in text[start, end) (n >= 1), or -1 when there are fewer. */
export function afterNthNewline(text: string, n: number, start: number, end: number): number {
	const s = text.slice(start, end);
	let at = -1;
	for (let k = 0; k < n; k++) {
		at = s.indexOf(NEWLINE, at + 1);
		if (at === -1) return -1;
	}
	return start + at + 1;
}

/**
 * Index just past the `n`-th "\n" counted backwards from `end` within text[start, end) (n >= 1), or -1.
 * Two forward indexOf passes: V8 searches forward much faster than lastIndexOf searches backward.
 */
export function afterNthNewlineFromEnd(text: string, n: number, start: number, end: number): number {
	const count = countNewlines(text, start, end);
	return count < n ? -1 : afterNthNewline(text, count - n + 1, start, end);
}

/** String.prototype.toWellFormed (ES2024; Node 20 and Bun have it), typed here for the ES2023 lib. */
const nativeToWellFormed = (String.prototype as { toWellFormed?: (this: string) => string }).toWellFormed;

/** Lone surrogates replaced by U+FFFD with a regular expression: the fallback without the native method. */
export function replaceLoneSurrogates(text: string): string {
	return text.replace(LONE_SURROGATE, REPLACEMENT_CHARACTER);
}

/** The string UTF-8 encoding actually stores: each lone surrogate becomes U+FFFD. */
export function toWellFormed(text: string): string {
	return nativeToWellFormed ? nativeToWellFormed.call(text) : replaceLoneSurrogates(text);
}

/**
 * A copy of `text` that holds no reference to a longer string it was cut from. A slice of a long string (a
 * kept line of a 64 MiB log) points into that string and keeps all of it alive while the slice lives; a kept
 * result copies its texts once with this, so that holding the result does not hold the log. The copy is a join cut
 * again: a join of two strings is a fresh flat string on both engines, and the cut points into that. (A
 * concatenation cut again is a copy under V8 only: JavaScriptCore cuts the part of the concatenation it falls in,
 * which is the slice itself, so under Bun the log stayed alive.) About a microsecond for 16 KB.
 */
export function detached(text: string): string {
	return [" ", text].join("").slice(1);
}

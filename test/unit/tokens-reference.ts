/**
 * The token estimator as it was before its run-at-a-time rewrite, kept verbatim (only the export's
 * name differs) as the reference that tokens-reference.property.test.ts compares the package's
 * estimateTokens against, and that test/bench/tokens.bench.ts times beside it. Test code only: the
 * package has one estimator, in extensions/shared/text/tokens.ts.
 */

/** Letters per token in a letter run (ASCII letters count 1, two-byte letters count 2): most words are one token. */
const LETTER_BYTES_PER_TOKEN = 7;
/** Digits per token: BPE tokenizers of this family group numbers into runs of at most three digits. */
const DIGITS_PER_TOKEN = 3;
/** Punctuation characters per token: common pairs such as `",` or `);` merge. */
const PUNCT_PER_TOKEN = 1.5;
/** Spaces per token inside a long run of spaces or tabs. */
const SPACES_PER_TOKEN = 64;
/** Newlines per token inside a run of blank lines. */
const NEWLINES_PER_TOKEN = 8;
/** Tokens per CJK, kana, hangul or full-width character (o200k often merges pairs; rare characters do not). */
const TOKENS_PER_CJK_CHAR = 1;
/** Tokens per UTF-8 byte for other non-ASCII characters (symbols, emoji, other scripts). */
const TOKENS_PER_OTHER_BYTE = 0.4;

// Character classes of the pre-tokenizer split. NONE closes any open run.
const NONE = 0;
const LETTER = 1;
const DIGIT = 2;
const SPACE = 3;
const NEWLINE = 4;
const PUNCT = 5;

/** Class of each ASCII code unit. */
const ASCII_CLASS = (() => {
	const table = new Uint8Array(128).fill(PUNCT);
	for (let c = 65; c <= 90; c++) table[c] = LETTER;
	for (let c = 97; c <= 122; c++) table[c] = LETTER;
	for (let c = 48; c <= 57; c++) table[c] = DIGIT;
	table[32] = SPACE;
	table[9] = SPACE;
	table[10] = NEWLINE;
	table[13] = NEWLINE;
	return table;
})();

function isCjk(c: number): boolean {
	return (
		(c >= 0x2e80 && c <= 0x9fff) || // CJK radicals, punctuation, kana, unified ideographs
		(c >= 0xac00 && c <= 0xd7af) || // hangul syllables
		(c >= 0xf900 && c <= 0xfaff) || // CJK compatibility ideographs
		(c >= 0xfe30 && c <= 0xfe4f) || // CJK compatibility forms
		(c >= 0xff00 && c <= 0xffef) // full-width and half-width forms
	);
}

/**
 * Tokens for one run of a single class. `next` is the class that follows it, since a single
 * leading space or punctuation character joins the next word in the tokenizer's split.
 */
function runCost(cls: number, length: number, bytes: number, next: number): number {
	switch (cls) {
		case LETTER:
			return Math.ceil(bytes / LETTER_BYTES_PER_TOKEN);
		case DIGIT:
			return Math.ceil(length / DIGITS_PER_TOKEN);
		case PUNCT: {
			const alone = next === LETTER ? length - 1 : length;
			return alone > 0 ? Math.ceil(alone / PUNCT_PER_TOKEN) : 0;
		}
		case SPACE:
			if (length >= 2) return 1 + Math.floor(length / SPACES_PER_TOKEN);
			return next === LETTER || next === PUNCT ? 0 : 1;
		case NEWLINE:
			return Math.ceil(length / NEWLINES_PER_TOKEN);
		default:
			return 0;
	}
}

/** Tokens for a character of three or more UTF-8 bytes (`pair`: a valid surrogate pair, 4 bytes). */
function wideCharCost(c: number, pair: boolean): number {
	if (pair) return 4 * TOKENS_PER_OTHER_BYTE;
	return isCjk(c) ? TOKENS_PER_CJK_CHAR : 3 * TOKENS_PER_OTHER_BYTE; // lone surrogates are 3 bytes (U+FFFD)
}

/**
 * Estimated o200k-style token count of `text`, rounded up. Linear time, no allocation.
 * Never more than the text's UTF-8 byte length (a byte-level BPE token holds at least one byte).
 */
export function referenceEstimateTokens(text: string): number {
	let tokens = 0;
	let runClass = NONE;
	let runLength = 0; // code units in the open run
	let runBytes = 0; // UTF-8 bytes in the open run
	let upperRun = 0; // consecutive capitals at the end of the open letter run
	let prevLower = false;
	const n = text.length;

	for (let i = 0; i < n; i++) {
		const c = text.charCodeAt(i);
		let cls: number;
		// Two-byte code points from U+00C0 are letters (Latin, Greek, Cyrillic, Hebrew, Arabic, …).
		if (c < 0x80) cls = ASCII_CLASS[c];
		else if (c < 0x800) cls = c >= 0xc0 ? LETTER : PUNCT;
		else {
			if (runLength > 0) tokens += runCost(runClass, runLength, runBytes, NONE);
			runClass = NONE;
			runLength = 0;
			runBytes = 0;
			upperRun = 0;
			prevLower = false;
			const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < n && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
			tokens += wideCharCost(c, pair);
			if (pair) i++;
			continue;
		}

		// camelCase and ACRONYMWord boundaries start a new piece, as the tokenizer's split does.
		const upper = c >= 65 && c <= 90;
		let boundary = cls !== runClass;
		if (!boundary && cls === LETTER) boundary = upper ? prevLower : upperRun >= 2;
		if (boundary) {
			if (runLength > 0) tokens += runCost(runClass, runLength, runBytes, cls);
			runClass = cls;
			runLength = 0;
			runBytes = 0;
		}
		runLength++;
		runBytes += c < 0x80 ? 1 : 2;
		if (cls === LETTER) {
			upperRun = upper ? upperRun + 1 : 0;
			prevLower = !upper;
		} else {
			upperRun = 0;
			prevLower = false;
		}
	}
	if (runLength > 0) tokens += runCost(runClass, runLength, runBytes, NONE);
	return Math.ceil(tokens);
}

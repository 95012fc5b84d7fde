/**
 * A conservative token estimate without a tokenizer.
 *
 * Dividing bytes by 4 under-counts code, JSON and CJK text. Instead, one linear pass splits the
 * text the way BPE pre-tokenizers do (letter runs, digit runs, punctuation runs, whitespace,
 * CJK characters) and charges each piece by class and length. Calibrated against o200k_base on
 * the four corpora in test/fixtures/corpora (English, TypeScript, JSON, Chinese): it never
 * under-counts there by more than 10% (test/unit/tokens.test.ts asserts it; the table comes
 * from test/bench/tokens.bench.ts).
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

/**
 * Bytes of UTF-8 that are assumed to make one token when only a byte count is known.
 * It is the densest ratio the estimator reports on its calibration corpora (JSON, ≈2.6 bytes per
 * estimated token; o200k itself gives ≈2.9), rounded down. Denser text exists (base64 or hex
 * blobs reach ≈1.5–1.8 bytes per token); callers that budget from bytes keep a share of the
 * headroom in reserve for it (the batch allocator uses at most half).
 */
export const CONSERVATIVE_BYTES_PER_TOKEN = 2.5;

// Character classes of the pre-tokenizer split. NONE is what follows a run at the end of the text
// or before a code unit from U+0800 (those are charged one character at a time and close any run).
const NONE = 0;
const LETTER = 1;
const DIGIT = 2;
const SPACE = 3;
const NEWLINE = 4;
const PUNCT = 5;

/**
 * Class of each code unit below U+0800. Two-byte code points from U+00C0 are letters (Latin,
 * Greek, Cyrillic, Hebrew, Arabic, …); U+0080–U+00BF, controls and NUL count as punctuation.
 */
const CLASS = (() => {
	const table = new Uint8Array(0x800).fill(PUNCT);
	for (let c = 65; c <= 90; c++) table[c] = LETTER;
	for (let c = 97; c <= 122; c++) table[c] = LETTER;
	for (let c = 0xc0; c < 0x800; c++) table[c] = LETTER;
	for (let c = 48; c <= 57; c++) table[c] = DIGIT;
	table[32] = SPACE;
	table[9] = SPACE;
	table[10] = NEWLINE;
	table[13] = NEWLINE;
	return table;
})();

/**
 * Stands for the code unit past the end of the text. It is read as a code unit from U+0800: in no
 * run's class, so every scanning loop stops at it, and NONE to the run before it, as the end is.
 */
const END = 0x800;

/** Class of code unit `c` as the run before it sees it. */
function classOf(c: number): number {
	return c < 0x800 ? CLASS[c] : NONE;
}

function isCjk(c: number): boolean {
	return (
		(c >= 0x2e80 && c <= 0x9fff) || // CJK radicals, punctuation, kana, unified ideographs
		(c >= 0xac00 && c <= 0xd7af) || // hangul syllables
		(c >= 0xf900 && c <= 0xfaff) || // CJK compatibility ideographs
		(c >= 0xfe30 && c <= 0xfe4f) || // CJK compatibility forms
		(c >= 0xff00 && c <= 0xffef) // full-width and half-width forms
	);
}

/** Tokens for one letter piece of `bytes` UTF-8 bytes (a word, or one part of a camelCase word). */
function letterCost(bytes: number): number {
	return Math.ceil(bytes / LETTER_BYTES_PER_TOKEN);
}

/**
 * Tokens for one run of `length` code units of DIGIT, SPACE, NEWLINE or PUNCT. `next` is the class
 * that follows it, since a single leading space or punctuation character joins the next word in
 * the tokenizer's split.
 */
function runCost(cls: number, length: number, next: number): number {
	switch (cls) {
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
 *
 * The text is read one run at a time: a tight loop per run reads each code unit once, the run is
 * charged once from where its loop stopped, and the code unit that stopped it starts the next
 * run. Costs are added in text order, so the sum (which holds fractions for wide characters) is
 * the one a character-at-a-time reading gives.
 */
export function estimateTokens(text: string): number {
	let tokens = 0;
	const n = text.length;
	let i = 0;
	let c = n > 0 ? text.charCodeAt(0) : END; // always the code unit at i
	while (i < n) {
		if (c >= 0x800) {
			// Characters of three or four UTF-8 bytes, each charged on its own; they close any run.
			do {
				if (c >= 0x4e00 && c <= 0x9fff) {
					tokens += TOKENS_PER_CJK_CHAR; // the unified ideographs, most of any CJK text
				} else {
					const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < n && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
					tokens += wideCharCost(c, pair);
					if (pair) i++;
				}
				c = ++i < n ? text.charCodeAt(i) : END;
			} while (c >= 0x800 && i < n);
			continue;
		}
		const cls = CLASS[c];
		if (cls !== LETTER) {
			// Digits, blanks, newlines or punctuation: one loop to the run's end, one charge.
			const start = i;
			do c = ++i < n ? text.charCodeAt(i) : END;
			while (c < 0x800 && CLASS[c] === cls);
			tokens += runCost(cls, i - start, classOf(c));
			continue;
		}
		// A word, split into pieces at camelCase (`fooBar` → foo|Bar) as the tokenizer's split does,
		// and before a lowercase letter that follows two or more capitals (`HTMLParser` →
		// HTMLP|arser, the split the estimate is calibrated with). So a piece is a run of capitals,
		// then the other letters after it unless two or more capitals came first.
		for (;;) {
			let bytes = 0;
			while (c >= 65 && c <= 90) {
				bytes++;
				c = ++i < n ? text.charCodeAt(i) : END;
			}
			if (bytes >= 2 && ((c >= 97 && c <= 122) || (c >= 0xc0 && c < 0x800))) {
				tokens += letterCost(bytes);
				bytes = 0;
			}
			for (;;) {
				if (c >= 97 && c <= 122) bytes += 1;
				else if (c >= 0xc0 && c < 0x800) bytes += 2;
				else break;
				c = ++i < n ? text.charCodeAt(i) : END;
			}
			tokens += letterCost(bytes);
			if (c >= 65 && c <= 90) continue; // a capital starts the word's next piece
			// Prose: a single space before a lowercase word joins it and costs nothing, so step over
			// it and go on with that word here.
			if (c !== 32 || i + 1 >= n) break;
			const d = text.charCodeAt(i + 1);
			if (d < 97 || d > 122) break;
			i++;
			c = d;
		}
	}
	return Math.ceil(tokens);
}

/**
 * An upper bound of `estimateTokens(text)` from `text.length` alone (UTF-16 code units), with no
 * character read: ⌊1.2 × length⌋ + 1. Each code unit adds at most 1.2 to the estimate: a run of L ≥ 1
 * letters, digits, spaces, newlines or punctuation costs at most L (a two-byte letter counts 2 bytes,
 * ⌈2L/7⌉ ≤ L), a CJK character 1, another character of three bytes 1.2, a surrogate pair 1.6 for two
 * units; the + 1 covers the rounding up and the floating-point sum of the 0.4 fractions. Lets a caller
 * see that a history is far within a budget without estimating it.
 */
export function estimateTokensUpperBound(length: number): number {
	if (!(length > 0)) return 0;
	return Math.floor((length * 6) / 5) + 1;
}

/** Conservative token estimate when only the UTF-8 byte count is known. */
export function estimateTokensFromBytes(bytes: number): number {
	if (!Number.isFinite(bytes) || bytes <= 0) return 0;
	return Math.ceil(bytes / CONSERVATIVE_BYTES_PER_TOKEN);
}

/**
 * UTF-8 bytes that fit within `tokens` at the conservative ratio (the inverse of
 * estimateTokensFromBytes, rounded down). Invalid or negative input gives 0.
 */
export function bytesForTokens(tokens: number): number {
	if (Number.isNaN(tokens) || tokens <= 0) return 0;
	if (tokens === Number.POSITIVE_INFINITY) return Number.MAX_SAFE_INTEGER;
	return Math.min(Number.MAX_SAFE_INTEGER, Math.floor(tokens * CONSERVATIVE_BYTES_PER_TOKEN));
}

/** UTF-8 byte length of a text (one implementation, in utf8.ts). */
export { utf8ByteLength as utf8Length, utf8LengthPortable } from "./utf8.ts";

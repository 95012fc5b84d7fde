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
export function estimateTokens(text: string): number {
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

/** Node's and Bun's native UTF-8 length (allocates nothing); absent in other runtimes. */
const nativeByteLength: ((text: string) => number) | undefined =
	typeof globalThis.Buffer?.byteLength === "function" ? (text) => Buffer.byteLength(text, "utf8") : undefined;

/**
 * UTF-8 byte length of `text` without encoding it: native where the runtime has it, else a
 * loop over UTF-16 code units. A lone surrogate counts 3 bytes (it is encoded as U+FFFD).
 */
export function utf8Length(text: string): number {
	return nativeByteLength ? nativeByteLength(text) : utf8LengthPortable(text);
}

/** The portable loop behind utf8Length (exported so tests can compare it with the native count). */
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

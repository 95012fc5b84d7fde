/**
 * A case-insensitive search for many words at once (an Aho–Corasick automaton over UTF-16 units): one pass,
 * one table lookup per character, whatever the number of words. The notable-line scan (notable.ts) uses it
 * to jump between lines that hold a rule's key; a regular expression alternation of as many words costs
 * time in proportion to the number of words at every position.
 *
 * Case folding is per UTF-16 unit (`toLowerCase` of one unit); a unit that no word holds, "\n" included,
 * sends the automaton back to its start, so a match never spans lines.
 */

/** Units whose class is looked up in a table; every unit fits (UTF-16). */
const UNITS = 0x10000;
/** Sign bit of a table entry: the state it leads to ends a word. */
const ACCEPT = 0x80000000 | 0;
/** The row offset of a table entry. */
const ROW = 0x7fffffff;

/** The escape character that starts an ANSI sequence. */
const ESC = 0x1b;
/** Pi's read splits lines on this unit. */
const NEWLINE = 0x0a;
/**
 * [unit, its lower case] for the units whose lower case is another single unit whose upper case is not them
 * (title-case digraphs, Greek capitals with prosgegrammeni, the Kelvin, Ohm and Angstrom signs, capital sharp
 * s, …). Any other unit that folds into a word's unit is that unit's upper case. A test checks every unit;
 * Node and Bun agree.
 */
export const FOLD_EXCEPTIONS: ReadonlyArray<readonly [number, number]> = [
	[0x1c5, 0x1c6],
	[0x1c8, 0x1c9],
	[0x1cb, 0x1cc],
	[0x1f2, 0x1f3],
	[0x3f4, 0x3b8],
	[0x1e9e, 0xdf],
	[0x1f88, 0x1f80],
	[0x1f89, 0x1f81],
	[0x1f8a, 0x1f82],
	[0x1f8b, 0x1f83],
	[0x1f8c, 0x1f84],
	[0x1f8d, 0x1f85],
	[0x1f8e, 0x1f86],
	[0x1f8f, 0x1f87],
	[0x1f98, 0x1f90],
	[0x1f99, 0x1f91],
	[0x1f9a, 0x1f92],
	[0x1f9b, 0x1f93],
	[0x1f9c, 0x1f94],
	[0x1f9d, 0x1f95],
	[0x1f9e, 0x1f96],
	[0x1f9f, 0x1f97],
	[0x1fa8, 0x1fa0],
	[0x1fa9, 0x1fa1],
	[0x1faa, 0x1fa2],
	[0x1fab, 0x1fa3],
	[0x1fac, 0x1fa4],
	[0x1fad, 0x1fa5],
	[0x1fae, 0x1fa6],
	[0x1faf, 0x1fa7],
	[0x1fbc, 0x1fb3],
	[0x1fcc, 0x1fc3],
	[0x1ffc, 0x1ff3],
	[0x2126, 0x3c9],
	[0x212a, 0x6b],
	[0x212b, 0xe5],
];

/**
 * Index of the last unit of the ANSI sequence starting at `i` (a CSI "ESC [ … final", else ESC and one unit);
 * a "\n" is never part of one (a bare ESC at a line's end is the sequence alone), so no line is stepped over.
 */
function ansiEnd(text: string, i: number, stop: number): number {
	const next = text.charCodeAt(i + 1);
	if (next === NEWLINE) return i;
	if (next !== 0x5b) return Math.min(i + 1, stop - 1);
	let j = i + 2;
	while (j < stop) {
		const c = text.charCodeAt(j);
		if (c >= 0x40 && c <= 0x7e) return j; // the final byte
		if (c < 0x20 || c > 0x3f) return j - 1; // not a CSI parameter: stop before it
		j++;
	}
	return stop - 1;
}

/** A built automaton for a fixed list of words. */
export interface WordAutomaton {
	/** The words, lower case, in the order given (duplicates removed). */
	readonly words: readonly string[];
	/** Index of the last unit of the first match that ends at or after `from`, before `end`; -1 when none. */
	next(text: string, from: number, end?: number): number;
	/** The "\n" units the last `next` passed before its match (or the end): how many, and the index of the last (-1: none); one object the next call rewrites. */
	passed(): Readonly<{ newlines: number; lastNewline: number }>;
	/**
	 * Indices of the words ending at `at` (the index the last `next` returned) or after it, before `end`: the
	 * search goes on from where `next` stopped, so a line's words cost no second pass over its start.
	 */
	wordsAfter(text: string, at: number, end: number): number[];
	/** The words that occur in text[start, end). */
	wordsIn(text: string, start?: number, end?: number): Set<string>;
	/** Indices (into `words`) of the words that occur in text[start, end), each once, in no set order. */
	indicesIn(text: string, start?: number, end?: number): number[];
	/**
	 * The lines of `text` that hold a word, in order, found by several interleaved searches at once (see
	 * KeyLines); the same lines and first matches as `next` called from each line start, and their words in
	 * the first `window` units of each (from its start) as `wordsAfter` gives them. `block` (tests): units per
	 * block, at most BLOCK.
	 */
	lines(text: string, window?: number, block?: number): KeyLines;
}

/**
 * A walk over the lines of one text that hold a word. `next(from)` (from: a line start, never smaller than
 * the previous call's) is what the automaton's `next(text, from)` gives, the index of the last unit of the
 * first match at or after `from` (-1: none); and it sets `lineStart` and `line` (1-based) of the line that
 * match is in, and what `wordsAfter` goes on from, as `next` does; and `words`, what `wordsAfter(text,
 * match, windowEnd)` gives with windowEnd = min(the line's end, lineStart + window) — the search collected
 * them on its way, so a found line costs no second pass — or [] when the match ends at or after windowEnd;
 * a fresh array per line, the caller's to keep.
 * Once it gives -1, `line` is the text's line count (1 + its newlines).
 */
export interface KeyLines {
	next(from: number): number;
	/**
	 * The words of the line that starts at `lineStart` (a line start) in its window, what `indicesIn(text,
	 * lineStart, windowEnd)` gives (the line's `words` for a line with a word, else []), when the walk's
	 * search has been over that line and not yet further (the scan visits the lines after a found one while it
	 * carries context, before the next `next`); else undefined.
	 */
	keysAt(lineStart: number): number[] | undefined;
	readonly lineStart: number;
	readonly line: number;
	readonly words: number[];
}

/** The largest window of a found line whose words `lines` collects (any line shorter than it: all its words). */
const MAX_WINDOW = 0x3fffffff;
/** Units of text searched per block (a block ends at a line start; a longer line is searched alone). */
const BLOCK = 1 << 16;
/** Independent searches run side by side over a block's parts (each starts at a line start). */
const STREAMS = 4;
/**
 * The block's units, copied at once (one native copy instead of a `charCodeAt` per unit), then BLOCK units
 * of U+0000, where a search whose part is done steps on (see `searchBlock`); shared, reused.
 */
let blockUnits: Uint16Array | undefined;
let blockBytes: { write(text: string, offset: number, encoding: "utf16le"): number } | undefined;
/** Copies text[start, end) into the block's units (the start of `blockUnits`). */
function copyBlock(text: string, start: number, end: number): Uint16Array {
	if (!blockUnits) {
		const B = (globalThis as { Buffer?: { allocUnsafeSlow(size: number): Uint8Array } }).Buffer;
		const probe = new Uint16Array([1]);
		const little = new Uint8Array(probe.buffer)[0] === 1;
		if (B && little) {
			const bytes = B.allocUnsafeSlow(BLOCK * 4);
			blockBytes = bytes as unknown as typeof blockBytes;
			blockUnits = new Uint16Array(bytes.buffer, bytes.byteOffset, 2 * BLOCK).fill(0, BLOCK);
		} else blockUnits = new Uint16Array(2 * BLOCK);
	}
	if (blockBytes) blockBytes.write(text.slice(start, end), 0, "utf16le");
	else for (let i = start; i < end; i++) blockUnits[i - start] = text.charCodeAt(i);
	return blockUnits;
}

/** Build the automaton of `words` (matched case-insensitively). */
export function buildWordAutomaton(input: readonly string[]): WordAutomaton {
	const words = [...new Set(input.map((w) => w.toLowerCase()).filter((w) => w.length > 0))];
	let lastRow = 0;
	/** What the last `next` passed: one object, rewritten by each call (read before the next). */
	const passed = { newlines: 0, lastNewline: -1 };
	// Character classes: 0 for every unit no word holds, then one per distinct (lower-case) unit.
	const classOf = new Map<number, number>();
	for (const w of words) {
		for (let i = 0; i < w.length; i++)
			if (!classOf.has(w.charCodeAt(i))) classOf.set(w.charCodeAt(i), classOf.size + 1);
	}
	// The escape character gets a class of its own: an ANSI sequence (colours) is stepped over, so a word
	// split by one ("FAILED\u001b[0m tests") is still found.
	const escClass = classOf.size + 1;
	// "\n" too: it sends the automaton back to its start, and `next` counts the lines it passes.
	const nlClass = classOf.size + 2;
	const k = classOf.size + 3;
	const fold = new Uint8Array(UNITS);
	if (k > 255) throw new RangeError("buildWordAutomaton: too many distinct characters");
	const foldUnit = (c: number) => {
		const lower = String.fromCharCode(c).toLowerCase();
		fold[c] = lower.length === 1 ? (classOf.get(lower.charCodeAt(0)) ?? 0) : 0;
	};
	// Folding every unit costs ~0.1 s (a string per unit), at every start of every extension that scans logs.
	// Only a word's own units, their upper cases and FOLD_EXCEPTIONS can fold into a class; all others stay 0.
	for (const unit of classOf.keys()) {
		foldUnit(unit);
		const upper = String.fromCharCode(unit).toUpperCase();
		if (upper.length === 1) foldUnit(upper.charCodeAt(0));
	}
	for (const [unit, lower] of FOLD_EXCEPTIONS) if (classOf.has(lower)) foldUnit(unit);
	fold[ESC] = escClass;
	fold[NEWLINE] = nlClass;
	// The trie.
	const children: number[][] = [new Array(k).fill(-1)];
	const ends: number[][] = [[]];
	words.forEach((w, index) => {
		let s = 0;
		for (let i = 0; i < w.length; i++) {
			const a = classOf.get(w.charCodeAt(i)) as number;
			if (children[s][a] === -1) {
				children[s][a] = children.length;
				children.push(new Array(k).fill(-1));
				ends.push([]);
			}
			s = children[s][a];
		}
		ends[s].push(index);
	});
	// Failure links, breadth first, turning the trie into a full transition table.
	const states = children.length;
	const delta = new Uint32Array(states * k);
	const fail = new Int32Array(states);
	const output: number[][] = ends.map((e) => [...e]);
	const queue: number[] = [];
	for (let a = 0; a < k; a++) {
		const t = children[0][a];
		if (a !== 0 && t !== -1) {
			delta[a] = t;
			fail[t] = 0;
			queue.push(t);
		} else delta[a] = 0;
	}
	for (let qi = 0; qi < queue.length; qi++) {
		const s = queue[qi];
		output[s].push(...output[fail[s]]);
		for (let a = 0; a < k; a++) {
			const t = children[s][a];
			if (a !== 0 && t !== -1) {
				fail[t] = delta[fail[s] * k + a];
				delta[s * k + a] = t;
				queue.push(t);
			} else delta[s * k + a] = a === 0 ? 0 : delta[fail[s] * k + a];
		}
	}
	// States renumbered breadth first (the root, then the states one unit deep, …): the few shallow states a
	// search spends most steps in share a few cache lines of the tables.
	const order = new Int32Array(states);
	queue.forEach((s, j) => {
		order[s] = j + 1;
	});
	/** The words a state ends, by its new number. */
	const wordsAt: number[][] = new Array(states);
	for (let s = 0; s < states; s++) wordsAt[order[s]] = output[s];
	// The hot table: each entry is the next state's row offset (state * k), with the sign bit set when that
	// state ends a word, so a step is one lookup and an accepting state one sign test.
	const table = new Int32Array(states * k);
	// The line search's table (KeyLines): the same steps, but every entry that needs more than the lookup is
	// negative — a state that ends a word (~its row), the escape character (~the row it leaves: the search
	// steps over the sequence and resumes there) and "\n" (~0) — so that a step is one lookup and nothing is
	// tested per unit but the sign of the states of all the searches at once.
	const search = new Int32Array(states * k);
	for (let s = 0; s < states; s++) {
		const row = order[s] * k;
		for (let a = 0; a < k; a++) {
			const t = delta[s * k + a];
			const to = order[t] * k;
			const accepts = output[t].length > 0;
			table[row + a] = to | (accepts ? ACCEPT : 0);
			search[row + a] = a === escClass ? ~row : a === nlClass ? ~0 : accepts ? ~to : to;
		}
	}
	/** Collects the words ending at offsets visited from row `row` over text[from, stop) into `found`. */
	const collect = (text: string, from: number, stop: number, row: number, found: number[]): void => {
		let r = row;
		for (let i = from; i < stop; i++) {
			const a = fold[text.charCodeAt(i)];
			if (a >= escClass) {
				if (a === nlClass) r = 0;
				else i = ansiEnd(text, i, stop);
				continue;
			}
			r = table[(r & ROW) + a];
			if (r < 0) for (const w of wordsAt[(r & ROW) / k]) if (!found.includes(w)) found.push(w);
		}
	};

	// The line search (KeyLines). Each of STREAMS searches walks its own part of a block, all in one loop: a
	// step's lookup waits for the one before it (the state), so one search alone is bound by the latency of a
	// load; the parts' steps are independent and overlap. Per search: its state, position, end, the offset it
	// steps up to before it must stop (its part's end, or while it collects a found line's words the end of
	// that line's window), newlines passed and its line's start (block offsets), and the lines it found:
	// [first match's end, line start, newlines before the line (in its part), the matching state's row] each,
	// with their words.
	const states4 = new Int32Array(STREAMS);
	const ats = new Int32Array(STREAMS);
	const stops = new Int32Array(STREAMS);
	const limits4 = new Int32Array(STREAMS);
	const newlines4 = new Int32Array(STREAMS);
	const starts4 = new Int32Array(STREAMS);
	const found4: number[][] = Array.from({ length: STREAMS }, () => []);
	const words4: number[][][] = Array.from({ length: STREAMS }, () => []);
	/** The words of the line search `j` is collecting (the last of `words4[j]`), or undefined. */
	const collecting4: (number[] | undefined)[] = new Array(STREAMS).fill(undefined);
	/** U+0000 keeps every state at the start (no word holds it): a done search can step on it. */
	const parkable = fold[0] === 0;
	/** Newlines in the block the last `searchBlock` searched. */
	let blockNewlines = 0;
	/** Units of a found line, from its start, whose words the search collects (see `lines`). */
	let lineWindow = 0;
	/** Searches of the current block not parked yet. */
	let live = 0;
	/**
	 * What search `j` does at block offset `p` (block = text[base, end)) where its step gave the negative
	 * `step`: a newline (which ends the window of a line being collected), else `rare`. Returns the offset it
	 * goes on from. Small, so that the loop's calls are inlined: newlines are most of the events.
	 */
	const event = (text: string, units: Uint16Array, base: number, end: number, j: number, p: number, step: number) => {
		if (units[p] !== NEWLINE) return rare(text, units, base, end, j, p, step);
		if (collecting4[j]) {
			collecting4[j] = undefined;
			limits4[j] = stops[j];
		}
		newlines4[j]++;
		starts4[j] = p + 1;
		states4[j] = 0;
		return p + 1;
	};
	/**
	 * An escape sequence stepped over, or a word's end — the first of its line: the line is found, and the
	 * search goes on collecting the line's words in its window (as `wordsAfter`); a later one: its words are
	 * added (see `event`).
	 */
	const rare = (text: string, units: Uint16Array, base: number, end: number, j: number, p: number, step: number) => {
		if (units[p] === ESC) {
			states4[j] = ~step;
			return ansiEnd(text, base + p, end) - base + 1;
		}
		const row = ~step;
		const words = collecting4[j];
		if (words) {
			for (const w of wordsAt[row / k]) if (!words.includes(w)) words.push(w);
			states4[j] = row;
			return p + 1;
		}
		found4[j].push(base + p, base + starts4[j], newlines4[j], row);
		const windowEnd = starts4[j] + lineWindow;
		if (p < windowEnd) {
			const list = [...wordsAt[row / k]];
			words4[j].push(list);
			collecting4[j] = list;
			if (windowEnd < limits4[j]) limits4[j] = windowEnd;
			states4[j] = row;
			return p + 1;
		}
		words4[j].push([]);
		states4[j] = 0;
		const eol = text.indexOf("\n", base + p + 1);
		return eol === -1 || eol >= end ? stops[j] : eol - base;
	};
	/**
	 * Search `j` has reached its limit at `p`: the end of the window of the line it collects (it goes on at
	 * the line's end), or its part's end (it is parked on the U+0000 after the block, when it can be). Returns
	 * the offset it goes on from; sets its limit and state.
	 */
	const reach = (text: string, base: number, end: number, j: number, p: number): number => {
		let at = p;
		if (collecting4[j]) {
			collecting4[j] = undefined;
			limits4[j] = stops[j];
			states4[j] = 0;
			const eol = text.indexOf("\n", base + at);
			at = eol === -1 || eol >= end ? stops[j] : eol - base;
		}
		if (at >= stops[j] && parkable) {
			ats[j] = at;
			limits4[j] = 2 * BLOCK;
			live--;
			return BLOCK;
		}
		return at;
	};
	/**
	 * Searches the block of text that starts at `base` (a line start of line `line`) and ends at a line start
	 * (or the text's end): pushes [first match's end, line start, line, row] of each line with a word to `out`
	 * and its words to `outWords`, sets blockNewlines, returns the block's end.
	 */
	const searchBlock = (
		text: string,
		base: number,
		line: number,
		out: number[],
		outWords: number[][],
		size: number,
	): number => {
		const n = text.length;
		let end = Math.min(n, base + size);
		if (end < n) {
			const eol = text.lastIndexOf("\n", end - 1);
			if (eol < base) return searchLongLine(text, base, line, out, outWords, size);
			end = eol + 1;
		}
		const length = end - base;
		const units = copyBlock(text, base, end);
		// The parts: about equal, each starting at a line start (a part may be empty).
		let from = 0;
		for (let j = 0; j < STREAMS; j++) {
			let to = length;
			if (j < STREAMS - 1) {
				const q = Math.floor((length * (j + 1)) / STREAMS);
				if (q <= from) to = from;
				else {
					const eol = text.indexOf("\n", base + q - 1);
					to = eol === -1 || eol >= end ? length : eol + 1 - base;
				}
			}
			states4[j] = 0;
			ats[j] = from;
			stops[j] = to;
			limits4[j] = to;
			newlines4[j] = 0;
			starts4[j] = from;
			found4[j].length = 0;
			words4[j].length = 0;
			collecting4[j] = undefined;
			from = to;
		}
		const t = search;
		const f = fold;
		let p0 = ats[0];
		let p1 = ats[1];
		let p2 = ats[2];
		let p3 = ats[3];
		let e0 = limits4[0];
		let e1 = limits4[1];
		let e2 = limits4[2];
		let e3 = limits4[3];
		let r0 = 0;
		let r1 = 0;
		let r2 = 0;
		let r3 = 0;
		// A search whose part is done steps on the U+0000 after the block (they stay at the start state, and
		// the lockstep never takes more steps than a part has units) until the last part is done.
		live = STREAMS;
		for (;;) {
			if (p0 >= e0 && e0 <= length) {
				states4[0] = r0;
				p0 = reach(text, base, end, 0, p0);
				e0 = limits4[0];
				r0 = states4[0];
			}
			if (p1 >= e1 && e1 <= length) {
				states4[1] = r1;
				p1 = reach(text, base, end, 1, p1);
				e1 = limits4[1];
				r1 = states4[1];
			}
			if (p2 >= e2 && e2 <= length) {
				states4[2] = r2;
				p2 = reach(text, base, end, 2, p2);
				e2 = limits4[2];
				r2 = states4[2];
			}
			if (p3 >= e3 && e3 <= length) {
				states4[3] = r3;
				p3 = reach(text, base, end, 3, p3);
				e3 = limits4[3];
				r3 = states4[3];
			}
			let m = e0 - p0;
			if (e1 - p1 < m) m = e1 - p1;
			if (e2 - p2 < m) m = e2 - p2;
			if (e3 - p3 < m) m = e3 - p3;
			if (m <= 0 || live === 0) break;
			let s = 0;
			for (; s < m; s++) {
				r0 = t[r0 + f[units[p0 + s]]];
				r1 = t[r1 + f[units[p1 + s]]];
				r2 = t[r2 + f[units[p2 + s]]];
				r3 = t[r3 + f[units[p3 + s]]];
				if ((r0 | r1 | r2 | r3) < 0) break;
			}
			if (s === m) {
				p0 += m;
				p1 += m;
				p2 += m;
				p3 += m;
				continue;
			}
			p0 += s;
			p1 += s;
			p2 += s;
			p3 += s;
			if (r0 < 0) {
				p0 = event(text, units, base, end, 0, p0, r0);
				r0 = states4[0];
				e0 = limits4[0];
			} else p0++;
			if (r1 < 0) {
				p1 = event(text, units, base, end, 1, p1, r1);
				r1 = states4[1];
				e1 = limits4[1];
			} else p1++;
			if (r2 < 0) {
				p2 = event(text, units, base, end, 2, p2, r2);
				r2 = states4[2];
				e2 = limits4[2];
			} else p2++;
			if (r3 < 0) {
				p3 = event(text, units, base, end, 3, p3, r3);
				r3 = states4[3];
				e3 = limits4[3];
			} else p3++;
		}
		if (e0 <= length) {
			states4[0] = r0;
			ats[0] = p0;
		}
		if (e1 <= length) {
			states4[1] = r1;
			ats[1] = p1;
		}
		if (e2 <= length) {
			states4[2] = r2;
			ats[2] = p2;
		}
		if (e3 <= length) {
			states4[3] = r3;
			ats[3] = p3;
		}
		// What is left of the parts once the first is done: each alone.
		let newlines = 0;
		for (let j = 0; j < STREAMS; j++) {
			let p = ats[j];
			let r = states4[j];
			const stop = stops[j];
			while (p < stop) {
				if (p >= limits4[j]) {
					states4[j] = r;
					p = reach(text, base, end, j, p);
					if (p === BLOCK && limits4[j] > length) break;
					r = states4[j];
					continue;
				}
				r = t[r + f[units[p]]];
				if (r < 0) {
					p = event(text, units, base, end, j, p, r);
					r = states4[j];
				} else p++;
			}
			collecting4[j] = undefined;
			const hits = found4[j];
			const words = words4[j];
			for (let h = 0; h < hits.length; h += 4) {
				out.push(hits[h], hits[h + 1], line + newlines + hits[h + 2], hits[h + 3]);
				outWords.push(words[h >> 2]);
			}
			newlines += newlines4[j];
		}
		blockNewlines = newlines;
		return end;
	};
	/** The longest word's units: a match ends at most this many units after it starts. */
	const longest = words.reduce((most, w) => Math.max(most, w.length), 1);
	/** The row of the match the last `firstInLine` found. */
	let longRow = 0;
	/**
	 * The first match in text[start, end), which holds no ESC and no "\n" (-1: none; `longRow`: its row), by
	 * STREAMS searches side by side over the parts of `span` units at a time. A search from the start state
	 * `longest - 1` units before its part finds every match that ends in its part, and only matches (it reads
	 * all of a match's units): the first part with a match holds the line's first match, and the state there
	 * is the one a search from `start` reaches (a state depends on the last `longest` units only).
	 */
	const firstInLine = (text: string, start: number, end: number, span: number): number => {
		const back = longest - 1;
		const t = search;
		const f = fold;
		for (let c = start; c < end; c += span) {
			const stop = Math.min(end, c + span);
			const from = Math.max(start, c - back);
			const units = copyBlock(text, from, stop);
			const length = stop - from;
			const b1 = c + Math.floor((stop - c) / 4) - from;
			const b2 = c + Math.floor((stop - c) / 2) - from;
			const b3 = c + Math.floor((3 * (stop - c)) / 4) - from;
			let p0 = 0;
			let p1 = Math.max(0, b1 - back);
			let p2 = Math.max(0, b2 - back);
			let p3 = Math.max(0, b3 - back);
			let e0 = b1;
			let e1 = b2;
			let e2 = b3;
			let e3 = length;
			let r0 = 0;
			let r1 = 0;
			let r2 = 0;
			let r3 = 0;
			// Where the first search with a match found it (-1: none) and its row. A search that is done (its
			// part's end; a match, which ends every later one too) steps on the U+0000 after the block.
			let hit = -1;
			let row = 0;
			for (;;) {
				if (p0 >= e0 && e0 <= length) {
					p0 = BLOCK;
					e0 = 2 * BLOCK;
				}
				if (p1 >= e1 && e1 <= length) {
					p1 = BLOCK;
					e1 = 2 * BLOCK;
				}
				if (p2 >= e2 && e2 <= length) {
					p2 = BLOCK;
					e2 = 2 * BLOCK;
				}
				if (p3 >= e3 && e3 <= length) {
					p3 = BLOCK;
					e3 = 2 * BLOCK;
				}
				if (e0 > length && e1 > length && e2 > length && e3 > length) break;
				let m = e0 - p0;
				if (e1 - p1 < m) m = e1 - p1;
				if (e2 - p2 < m) m = e2 - p2;
				if (e3 - p3 < m) m = e3 - p3;
				let s = 0;
				for (; s < m; s++) {
					r0 = t[r0 + f[units[p0 + s]]];
					r1 = t[r1 + f[units[p1 + s]]];
					r2 = t[r2 + f[units[p2 + s]]];
					r3 = t[r3 + f[units[p3 + s]]];
					if ((r0 | r1 | r2 | r3) < 0) break;
				}
				if (s === m) {
					p0 += m;
					p1 += m;
					p2 += m;
					p3 += m;
					continue;
				}
				p0 += s;
				p1 += s;
				p2 += s;
				p3 += s;
				// Only a search no earlier one has found a match before can step on one (the later are parked).
				if (r0 < 0) {
					hit = p0;
					row = ~r0;
					e0 = 0;
					if (e1 <= length) e1 = 0;
					if (e2 <= length) e2 = 0;
					if (e3 <= length) e3 = 0;
				} else if (r1 < 0) {
					hit = p1;
					row = ~r1;
					e1 = 0;
					if (e2 <= length) e2 = 0;
					if (e3 <= length) e3 = 0;
				} else if (r2 < 0) {
					hit = p2;
					row = ~r2;
					e2 = 0;
					if (e3 <= length) e3 = 0;
				} else if (r3 < 0) {
					hit = p3;
					row = ~r3;
					e3 = 0;
				}
				r0 = Math.max(r0, 0);
				r1 = Math.max(r1, 0);
				r2 = Math.max(r2, 0);
				r3 = Math.max(r3, 0);
				p0++;
				p1++;
				p2++;
				p3++;
			}
			if (hit !== -1) {
				longRow = row;
				return from + hit;
			}
		}
		return -1;
	};
	/**
	 * A line longer than a block, from `base` (its start): its first match as `next` finds it — by
	 * `firstInLine` when the line holds no escape sequence, else unit by unit — and its words.
	 */
	const searchLongLine = (
		text: string,
		base: number,
		line: number,
		out: number[],
		outWords: number[][],
		size: number,
	): number => {
		const eol = text.indexOf("\n", base);
		const end = eol === -1 ? text.length : eol + 1;
		const lineEnd = eol === -1 ? text.length : eol;
		let first = -1;
		let row = 0;
		const esc = text.indexOf("\u001b", base);
		if (parkable && (esc === -1 || esc >= lineEnd)) {
			first = firstInLine(text, base, lineEnd, Math.max(1, Math.min(size, BLOCK - longest)));
			row = longRow;
		} else {
			let r = 0;
			for (let i = base; i < lineEnd; i++) {
				const a = fold[text.charCodeAt(i)];
				if (a === escClass) {
					i = ansiEnd(text, i, end);
					continue;
				}
				r = table[(r & ROW) + a];
				if (r < 0) {
					first = i;
					row = r & ROW;
					break;
				}
			}
		}
		if (first !== -1) {
			out.push(first, base, line, row);
			const windowEnd = Math.min(lineEnd, base + lineWindow);
			const words: number[] = [];
			if (first < windowEnd) {
				words.push(...wordsAt[row / k]);
				collect(text, first + 1, windowEnd, row, words);
			}
			outWords.push(words);
		}
		blockNewlines = eol === -1 ? 0 : 1;
		return end;
	};

	return {
		words,
		next(text, from, end = text.length) {
			let r = 0;
			let newlines = 0;
			let lastNewline = -1;
			const stop = Math.min(end, text.length);
			for (let i = Math.max(0, from); i < stop; i++) {
				const a = fold[text.charCodeAt(i)];
				if (a >= escClass) {
					if (a === nlClass) {
						r = 0;
						newlines++;
						lastNewline = i;
					} else i = ansiEnd(text, i, stop);
					continue;
				}
				r = table[(r & ROW) + a];
				if (r < 0) {
					lastRow = r;
					passed.newlines = newlines;
					passed.lastNewline = lastNewline;
					return i;
				}
			}
			passed.newlines = newlines;
			passed.lastNewline = lastNewline;
			return -1;
		},
		passed() {
			return passed;
		},
		wordsAfter(text, at, end) {
			const found = [...wordsAt[(lastRow & ROW) / k]];
			collect(text, at + 1, Math.min(end, text.length), lastRow, found);
			return found;
		},
		wordsIn(text, start = 0, end = text.length) {
			return new Set(this.indicesIn(text, start, end).map((w) => words[w]));
		},
		indicesIn(text, start = 0, end = text.length) {
			const found: number[] = [];
			collect(text, Math.max(0, start), Math.min(end, text.length), 0, found);
			return found;
		},
		lines(text, window = MAX_WINDOW, block = BLOCK) {
			const n = text.length;
			const size = block >= 1 && block < BLOCK ? Math.floor(block) : BLOCK;
			const units = Math.max(0, Math.min(MAX_WINDOW, Math.floor(window)));
			// The searched block's lines with a word ([first match's end, line start, line, row] each) and their
			// words, the next one to give, and where the next block starts (and its line).
			const found: number[] = [];
			const foundWords: number[][] = [];
			let at = 0;
			let searched = 0;
			let start = 0;
			let blockLine = 1;
			const walk = {
				lineStart: 0,
				line: 1,
				words: [] as number[],
				next(from: number): number {
					for (;;) {
						while (at < found.length && found[at + 1] < from) at += 4;
						if (at < found.length) {
							walk.lineStart = found[at + 1];
							walk.line = found[at + 2];
							walk.words = foundWords[at >> 2];
							lastRow = found[at + 3] | ACCEPT;
							at += 4;
							return found[at - 4];
						}
						if (start >= n) {
							walk.line = blockLine; // every block searched: 1 + the text's newlines
							return -1;
						}
						found.length = 0;
						foundWords.length = 0;
						at = 0;
						searched = start;
						lineWindow = units;
						start = searchBlock(text, start, blockLine, found, foundWords, size);
						blockLine += blockNewlines;
					}
				},
				keysAt(lineStart: number): number[] | undefined {
					if (lineStart < searched || lineStart >= start) return undefined;
					let lo = 0;
					let hi = found.length >> 2;
					while (lo < hi) {
						const mid = (lo + hi) >> 1;
						if (found[4 * mid + 1] < lineStart) lo = mid + 1;
						else hi = mid;
					}
					return 4 * lo < found.length && found[4 * lo + 1] === lineStart ? foundWords[lo] : [];
				},
			};
			return walk;
		},
	};
}

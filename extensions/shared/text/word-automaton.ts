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
	// The hot table: each entry is the next state's row offset (state * k), with the sign bit set when that
	// state ends a word, so a step is one lookup and an accepting state one sign test.
	const table = new Int32Array(states * k);
	for (let i = 0; i < table.length; i++) {
		const t = delta[i];
		table[i] = (t * k) | (output[t].length > 0 ? ACCEPT : 0);
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
			if (r < 0) for (const w of output[(r & ROW) / k]) if (!found.includes(w)) found.push(w);
		}
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
			const found = [...output[(lastRow & ROW) / k]];
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
	};
}

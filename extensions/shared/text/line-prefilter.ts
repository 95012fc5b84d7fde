/**
 * A native-speed prefilter for the notable-line scan (notable.ts): which lines of a text may hold one of a
 * list of words (case-insensitively, as the word automaton matches them), found by a byte automaton in a
 * small WebAssembly function over the text's UTF-8, 64 Ki units at a time, so no per-character JavaScript
 * loop runs over the whole text. It flags a superset of the lines the word automaton finds words on: a
 * word that holds a non-ASCII unit flags every line holding a unit that lower-cases to it, an ASCII letter
 * with a non-ASCII upper-case form (the Kelvin sign for k) flags lines holding that form, and an ESC flags
 * its line (an ANSI sequence may split a word). The caller checks each flagged line with the automaton.
 *
 * Memory: one table (states × 256 entries) and one 192 KiB buffer, allocated once; no copy of the text
 * beyond the chunk being encoded.
 */

/** UTF-16 units encoded and searched at a time. */
const CHUNK = 64 * 1024;
const ACCEPT = 0x80000000 | 0;

/** Unsigned LEB128. */
function leb(n: number): number[] {
	const out: number[] = [];
	do {
		let b = n & 0x7f;
		n >>>= 7;
		if (n !== 0) b |= 0x80;
		out.push(b);
	} while (n !== 0);
	return out;
}

/** Streams stepped together: their table loads overlap, where one stream waits for each load in turn. */
const STREAMS = 4;
/** Per stream, four i32 slots at 16 × stream: input index, state, "\n" count, output address. */
const SLOT_BYTES = 16;

/**
 * The module: run4(base, count) and run1(base, count) step 4 streams (slots from `base`) or 1 stream
 * `count` bytes each: state = table[state + byte] (the sign bit marks a state that ends a word), counting
 * "\n" bytes, and writing the count at every byte where a word ends to the stream's output (so the output
 * holds the line, relative to the segment, of each word's end).
 */
function moduleBytes(table: number, input: number): Uint8Array {
	const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
	const str = (s: string) => [s.length, ...[...s].map((c) => c.charCodeAt(0))];
	const MASK = [0x41, 0xff, 0xff, 0xff, 0xff, 0x07, 0x71]; // i32.const 0x7fffffff; i32.and
	const fn = (k: number): number[] => {
		// params: base = 0, count = 1; per stream j: p, s, n, o, b = locals 2 + 5j …
		const l = (j: number, f: number) => 2 + 5 * j + f;
		const code: number[] = [1, 5 * k, 0x7f];
		for (let j = 0; j < k; j++)
			for (let f = 0; f < 4; f++) code.push(0x20, 0, 0x28, 2, ...leb(SLOT_BYTES * j + 4 * f), 0x21, l(j, f));
		code.push(0x02, 0x40, 0x03, 0x40, 0x20, 1, 0x45, 0x0d, 1); // block loop; if count == 0 break
		for (let j = 0; j < k; j++) {
			const [p, st, n, o, b] = [0, 1, 2, 3, 4].map((f) => l(j, f));
			code.push(0x20, p, 0x2d, 0, ...leb(input), 0x21, b); // b = input[p]
			code.push(0x20, st, ...MASK, 0x20, b, 0x6a, 0x41, 2, 0x74, 0x28, 2, ...leb(table), 0x21, st); // s = table[s + b]
			code.push(0x20, n, 0x20, b, 0x41, 10, 0x46, 0x6a, 0x21, n); // n += b == "\n"
			code.push(0x20, o, 0x20, n, 0x36, 2, 0); // *o = n
			code.push(0x20, o, 0x20, st, 0x41, 31, 0x76, 0x41, 2, 0x74, 0x6a, 0x21, o); // o += 4 if s ends a word
			code.push(0x20, p, 0x41, 1, 0x6a, 0x21, p); // p++
		}
		code.push(0x20, 1, 0x41, 1, 0x6b, 0x21, 1, 0x0c, 0, 0x0b, 0x0b); // count--; continue
		for (let j = 0; j < k; j++)
			for (let f = 0; f < 4; f++) {
				code.push(0x20, 0, 0x20, l(j, f));
				if (f === 1) code.push(...MASK);
				code.push(0x36, 2, ...leb(SLOT_BYTES * j + 4 * f));
			}
		code.push(0x0b);
		return [...leb(code.length), ...code];
	};
	return new Uint8Array([
		...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
		...section(1, [1, 0x60, 2, 0x7f, 0x7f, 0]),
		...section(2, [1, ...str("e"), ...str("m"), 0x02, 0x00, 1]),
		...section(3, [2, 0, 0]),
		...section(7, [2, ...str("run4"), 0x00, 0, ...str("run1"), 0x00, 1]),
		...section(10, [2, ...fn(STREAMS), ...fn(1)]),
	]);
}

/** Flagged lines of one text, in order. */
export interface LineCandidates {
	/** The first flagged line (1-based) at or after `line`, or -1 when none is left. */
	next(line: number): number;
}

/** A prefilter for `words` (lower case); `fold(unit)` is the word automaton's lower-casing of one unit. */
export interface LinePrefilter {
	candidates(text: string): LineCandidates;
}

/** The byte words whose presence flags a line: see the module comment. */
function byteWords(words: readonly string[]): number[][] {
	const enc = new TextEncoder();
	const preimages = new Map<number, number[]>(); // lower-case unit -> units lowering to it
	for (let u = 0; u < 0x10000; u++) {
		if (u >= 0xd800 && u <= 0xdfff) continue;
		const lower = String.fromCharCode(u).toLowerCase();
		if (lower.length !== 1) continue;
		const l = lower.charCodeAt(0);
		const list = preimages.get(l);
		if (list) list.push(u);
		else preimages.set(l, [u]);
	}
	const out = new Set<string>();
	const flag = (u: number) => out.add(String.fromCharCode(u));
	flag(0x1b);
	for (const w of words) {
		const nonAscii = [...w].find((c) => c.charCodeAt(0) >= 0x80);
		if (nonAscii !== undefined) {
			for (const u of preimages.get(nonAscii.charCodeAt(0)) ?? []) flag(u);
			continue;
		}
		out.add(w);
		for (let i = 0; i < w.length; i++) for (const u of preimages.get(w.charCodeAt(i)) ?? []) if (u >= 0x80) flag(u);
	}
	return [...out].map((s) => [...enc.encode(s)]);
}

/** Build the prefilter, or undefined where WebAssembly is not available. */
export function buildLinePrefilter(words: readonly string[]): LinePrefilter | undefined {
	if (typeof WebAssembly === "undefined") return undefined;
	// Aho–Corasick over bytes, ASCII letters folded to lower case.
	const bytes = byteWords(words);
	const goto: Int32Array[] = [new Int32Array(256).fill(-1)];
	const accepts: boolean[] = [false];
	for (const w of bytes) {
		let s = 0;
		for (const b of w) {
			if (goto[s][b] === -1) {
				goto[s][b] = goto.length;
				goto.push(new Int32Array(256).fill(-1));
				accepts.push(false);
			}
			s = goto[s][b];
		}
		accepts[s] = true;
	}
	const states = goto.length;
	const delta = new Int32Array(states * 256);
	const fail = new Int32Array(states);
	const queue: number[] = [];
	for (let b = 0; b < 256; b++) {
		const t = goto[0][b];
		delta[b] = t === -1 ? 0 : t;
		if (t !== -1) queue.push(t);
	}
	for (let qi = 0; qi < queue.length; qi++) {
		const s = queue[qi];
		if (accepts[fail[s]]) accepts[s] = true;
		for (let b = 0; b < 256; b++) {
			const t = goto[s][b];
			if (t !== -1) {
				fail[t] = delta[fail[s] * 256 + b];
				delta[s * 256 + b] = t;
				queue.push(t);
			} else delta[s * 256 + b] = delta[fail[s] * 256 + b];
		}
	}
	const tableAt = STREAMS * SLOT_BYTES;
	const inputAt = tableAt + states * 256 * 4;
	const inputBytes = 3 * CHUNK; // UTF-8 of CHUNK units at most
	const outAt = inputAt + inputBytes;
	const pages = Math.ceil((outAt + STREAMS * inputBytes * 4) / 65536);
	const memory = new WebAssembly.Memory({ initial: pages });
	const i32 = new Int32Array(memory.buffer);
	for (let s = 0; s < states; s++) {
		for (let b = 0; b < 256; b++) {
			const folded = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
			const t = delta[s * 256 + folded];
			i32[tableAt / 4 + s * 256 + b] = (t * 256) | (accepts[t] ? ACCEPT : 0);
		}
	}
	const instance = new WebAssembly.Instance(new WebAssembly.Module(moduleBytes(tableAt, inputAt)), {
		e: { m: memory },
	});
	const run4 = instance.exports.run4 as (base: number, count: number) => void;
	const run1 = instance.exports.run1 as (base: number, count: number) => void;
	const input = new Uint8Array(memory.buffer, inputAt, inputBytes);
	const encoder = new TextEncoder();
	const starts = new Int32Array(STREAMS + 1);

	return {
		candidates(text: string): LineCandidates {
			let chunk = 0; // UTF-16 index of the next chunk
			let carried = 0; // the automaton's state at the end of the last chunk
			let linesBefore = 0; // "\n" units before the next chunk
			let queue: number[] = []; // flagged lines of the chunk searched last, in order
			let qi = 0;
			/** Search the next chunk: its segments (cut after a "\n") are stepped together. */
			const fill = (): boolean => {
				queue = [];
				qi = 0;
				while (queue.length === 0) {
					if (chunk >= text.length) return false;
					const end = Math.min(text.length, chunk + CHUNK);
					const written = encoder.encodeInto(text.slice(chunk, end), input).written;
					chunk = end;
					starts[0] = 0;
					starts[STREAMS] = written;
					for (let j = 1; j < STREAMS; j++) {
						const nl = input.indexOf(10, Math.max(starts[j - 1], Math.floor((written * j) / STREAMS)));
						starts[j] = nl === -1 || nl >= written ? written : nl + 1;
					}
					let common = written;
					for (let j = 0; j < STREAMS; j++) {
						const slot = (SLOT_BYTES * j) / 4;
						i32[slot] = starts[j];
						i32[slot + 1] = j === 0 ? carried : 0; // a later segment starts a line
						i32[slot + 2] = 0;
						i32[slot + 3] = outAt + j * inputBytes * 4;
						common = Math.min(common, starts[j + 1] - starts[j]);
					}
					run4(0, common);
					for (let j = 0; j < STREAMS; j++) run1(SLOT_BYTES * j, starts[j + 1] - starts[j] - common);
					for (let j = 0; j < STREAMS; j++) {
						const slot = (SLOT_BYTES * j) / 4;
						if (starts[j + 1] > starts[j]) carried = i32[slot + 1];
						const from = (outAt + j * inputBytes * 4) / 4;
						let last = -1;
						for (let e = from; e < i32[slot + 3] / 4; e++) {
							const line = linesBefore + i32[e] + 1;
							if (line !== last) queue.push(line);
							last = line;
						}
						linesBefore += i32[slot + 2];
					}
				}
				return true;
			};
			return {
				next(line: number): number {
					for (;;) {
						while (qi < queue.length) {
							if (queue[qi] >= line) return queue[qi];
							qi++;
						}
						if (!fill()) return -1;
					}
				},
			};
		},
	};
}

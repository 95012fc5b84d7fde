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
/** Where the state slots, the table and the input live in the module's memory. */
const SLOTS = 16;
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

/**
 * The module: scan(p, end) steps the automaton over input bytes [p, end) from the state in slot 0, counting
 * "\n" bytes into slot 1, and stops after a byte that ends a word (slot 2 < 0) or at `end`; returns where
 * it stopped.
 */
function moduleBytes(table: number, input: number): Uint8Array {
	const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
	const str = (s: string) => [s.length, ...[...s].map((c) => c.charCodeAt(0))];
	// prettier-ignore
	const code = [
		1,
		0x03,
		0x7f, // locals: s, b, n (i32); params p = 0, end = 1
		0x41,
		0,
		0x28,
		2,
		0,
		0x21,
		2, // s = mem[0]
		0x41,
		0,
		0x28,
		2,
		4,
		0x21,
		4, // n = mem[4]
		0x02,
		0x40,
		0x03,
		0x40, // block loop
		0x20,
		0,
		0x20,
		1,
		0x4f,
		0x0d,
		1, // if p >= end break
		0x20,
		0,
		0x2d,
		0,
		...leb(input),
		0x21,
		3, // b = input[p]
		0x20,
		2,
		0x20,
		3,
		0x6a,
		0x41,
		2,
		0x74,
		0x28,
		2,
		...leb(table),
		0x21,
		2, // s = table[s + b]
		0x20,
		4,
		0x20,
		3,
		0x41,
		10,
		0x46,
		0x6a,
		0x21,
		4, // n += b == "\n"
		0x20,
		0,
		0x41,
		1,
		0x6a,
		0x21,
		0, // p++
		0x20,
		2,
		0x41,
		0,
		0x48,
		0x0d,
		1, // if s < 0 break
		0x0c,
		0,
		0x0b,
		0x0b, // continue; end loop; end block
		0x41,
		0,
		0x20,
		2,
		0x41,
		...[0xff, 0xff, 0xff, 0xff, 0x07],
		0x71,
		0x36,
		2,
		0, // mem[0] = s & 0x7fffffff
		0x41,
		0,
		0x20,
		4,
		0x36,
		2,
		4, // mem[4] = n
		0x41,
		0,
		0x20,
		2,
		0x36,
		2,
		8, // mem[8] = s
		0x20,
		0,
		0x0b, // return p
	];
	return new Uint8Array([
		0x00,
		0x61,
		0x73,
		0x6d,
		0x01,
		0x00,
		0x00,
		0x00,
		...section(1, [1, 0x60, 2, 0x7f, 0x7f, 1, 0x7f]),
		...section(2, [1, ...str("e"), ...str("m"), 0x02, 0x00, 1]),
		...section(3, [1, 0]),
		...section(7, [1, ...str("scan"), 0x00, 0]),
		...section(10, [1, ...leb(code.length), ...code]),
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
	const tableAt = SLOTS;
	const inputAt = tableAt + states * 256 * 4;
	const pages = Math.ceil((inputAt + 3 * CHUNK) / 65536);
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
	const scan = instance.exports.scan as (p: number, end: number) => number;
	const input = new Uint8Array(memory.buffer, inputAt, 3 * CHUNK);
	const encoder = new TextEncoder();

	return {
		candidates(text: string): LineCandidates {
			i32[0] = 0;
			i32[1] = 0;
			let chunk = 0; // UTF-16 index of the next chunk
			let p = 0;
			let written = 0;
			let last = 0; // the last flagged line found
			return {
				next(line: number): number {
					if (last >= line) return last;
					for (;;) {
						if (p >= written) {
							if (chunk >= text.length) return -1;
							const end = Math.min(text.length, chunk + CHUNK);
							// 3 bytes per unit at most: the whole slice always fits
							written = encoder.encodeInto(text.slice(chunk, end), input).written;
							chunk = end;
							p = 0;
							i32[2] = 0;
							continue;
						}
						p = scan(p, written);
						if (i32[2] < 0) {
							last = i32[1] + 1;
							if (last >= line) return last;
						}
					}
				},
			};
		},
	};
}

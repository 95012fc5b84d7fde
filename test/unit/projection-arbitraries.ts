/**
 * Random texts, limits and artifact refs for the projection's property tests, and independent
 * (split-based, deliberately naive) re-derivations of what the projection promises.
 */
import fc from "fast-check";
import type { ArtifactRef } from "../../extensions/shared/projection/projection.ts";

/** Pieces that break naive cutters: line endings, control bytes, escapes, wide and combining characters. */
export const NASTY_PIECES = [
	"\n",
	"\r\n",
	"\r",
	"\0",
	"\t",
	"\x1b[31m",
	"\x1b[0m",
	"中文字符",
	"日本語",
	"한국어",
	"😀",
	"👨‍👩‍👧",
	"🇺🇳",
	"e\u0301",
	"\u0301",
	"\u0308\u0301",
	"\ud800",
	"\udc00",
	"\udbff",
	"\ufeff",
	"\u2028",
	"é",
	"€",
];

const piece = fc.oneof(
	{ weight: 5, arbitrary: fc.constantFrom(...NASTY_PIECES) },
	{ weight: 4, arbitrary: fc.string({ unit: "grapheme-ascii", maxLength: 40 }) },
	{ weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
	{
		weight: 2,
		arbitrary: fc
			.tuple(
				fc.constantFrom("x", "é", "中", "😀", "ab\n", "\ud800", "\r\n", "e\u0301"),
				fc.integer({ min: 1, max: 3000 }),
			)
			.map(([p, k]) => p.repeat(k)),
	},
	{
		// Now and then one line longer than a single read returns (50 KiB).
		weight: 1,
		arbitrary: fc
			.tuple(fc.constantFrom("x", "中", "😀", "\ud800"), fc.integer({ min: 18_000, max: 60_000 }))
			.map(([p, k]) => p.repeat(k)),
	},
);

/** Lines of very different lengths, so cuts often fall inside a long line just after a short one. */
const linesText = fc
	.tuple(
		fc.array(
			fc.tuple(
				fc.constantFrom("x", "é", "中", "😀", "\ud800", "e\u0301", "\x1b[1m"),
				fc.integer({ min: 0, max: 2500 }),
			),
			{ maxLength: 40 },
		),
		fc.constantFrom("\n", "\r\n"),
		fc.boolean(),
	)
	.map(([lines, eol, trailing]) => lines.map(([c, k]) => c.repeat(k)).join(eol) + (trailing ? eol : ""));

/** Texts of every shape, from empty to a few hundred KiB, well-formed or not. */
export const textArb = fc.oneof(
	fc.array(piece, { maxLength: 120 }).map((pieces) => pieces.join("")),
	linesText,
);

/** Limits from far below the minimum window to above most texts. */
export const limitsArb = fc.record({
	maxBytes: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 20_000 })),
	maxLines: fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 300 })),
	headShare: fc.option(
		fc.oneof(
			fc.constantFrom(0, 0.4, 0.75, 1),
			fc.integer({ min: 0, max: 1000 }).map((n) => n / 1000),
		),
		{ nil: undefined },
	),
});

/** Stored (with odd characters in the path), failed (any reason) or no artifact. */
export const artifactArb: fc.Arbitrary<ArtifactRef | undefined> = fc.oneof(
	{
		weight: 3,
		arbitrary: fc
			.record({ dir: fc.string({ maxLength: 60 }), sha: fc.stringMatching(/^[0-9a-f]{64}$/) })
			.map(({ dir, sha }) => ({ ok: true as const, path: `/agent-dir/${dir}/tool-outputs/${sha}.txt`, sha256: sha })),
	},
	{ weight: 1, arbitrary: fc.string({ maxLength: 300 }).map((error) => ({ ok: false as const, error })) },
	{ weight: 1, arbitrary: fc.constant(undefined) },
);

/** What UTF-8 encoding stores for `s` (lone surrogates become U+FFFD), by round trip. */
export function stored(s: string): string {
	return Buffer.from(s, "utf8").toString("utf8");
}

export function bytesOf(s: string): number {
	return Buffer.byteLength(s, "utf8");
}

/** Lines as Pi's read counts them. */
export function linesOf(s: string): number {
	return s.split("\n").length;
}

/** Lines a piece occupies when printed before more text: a final "\n" opens no new line. */
export function displayLines(s: string): number {
	if (s === "") return 0;
	return s.split("\n").length - (s.endsWith("\n") ? 1 : 0);
}

export function isWellFormed(s: string): boolean {
	return stored(s) === s;
}

/**
 * The documented reconstruction: head up to its last "\n", then the omitted lines (as read returns them,
 * joined by "\n"), then the tail from its first "\n" — or "\n" + the whole tail when it starts a line.
 */
export function reconstruct(head: string, pages: string, tail: string, tailStartsLine: boolean): string {
	const headFull = head.slice(0, head.lastIndexOf("\n") + 1);
	const newline = tail.indexOf("\n");
	const tailRest = tailStartsLine ? `\n${tail}` : newline === -1 ? "" : tail.slice(newline);
	return headFull + pages + tailRest;
}

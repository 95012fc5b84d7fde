/**
 * Budgets bound everything, always: every surface of the table, fed texts of any shape (one giant line,
 * CRLF, NUL, CJK, emoji and combining marks at every cut, lone surrogates), with or without an artifact
 * and with the call narrowing its limits, gives an output within the surface's bytes and lines.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	type ArtifactRef,
	fitsSurface,
	MIN_WINDOW_BYTES,
	MIN_WINDOW_LINES,
	project,
} from "../../extensions/shared/projection/projection.ts";
import { SURFACE_NAMES, type SurfaceName, surface } from "../../extensions/shared/surfaces.ts";
import { artifactArb, bytesOf, linesOf, textArb } from "./projection-arbitraries.ts";

/** Texts that break naive cutters, besides the random ones. */
const giantLine = fc
	.tuple(fc.constantFrom("x", "中", "😀", "e\u0301", "\ud800", "\0"), fc.integer({ min: 1, max: 70_000 }))
	.map(([c, k]) => c.repeat(k));
const crlfLines = fc
	.array(fc.string({ unit: "grapheme", maxLength: 80 }), { maxLength: 400 })
	.map((lines) => lines.join("\r\n"));
const anyText = fc.oneof(
	{ weight: 4, arbitrary: textArb },
	{ weight: 1, arbitrary: giantLine },
	{ weight: 1, arbitrary: crlfLines },
);

/** Bytes and lines the output may use: the table's, narrowed by the call; a projected surface never under the window. */
function bound(name: SurfaceName, call: { maxBytes?: number; maxLines?: number }) {
	const s = surface(name);
	const callLines =
		call.maxLines ??
		(call.maxBytes !== undefined && s.bytesPerLine ? Math.ceil(call.maxBytes / s.bytesPerLine) : undefined);
	const bytes = Math.min(s.maxBytes, call.maxBytes ?? s.maxBytes);
	const lines = Math.min(s.maxLines, callLines ?? s.maxLines);
	if (s.clip) return { bytes, lines: Math.max(1, lines) };
	return { bytes: Math.max(MIN_WINDOW_BYTES, bytes), lines: Math.max(MIN_WINDOW_LINES, lines) };
}

/** A store path as ours are (the limits stay exact only when the footer leaves the minimum body). */
const typicalArtifact: fc.Arbitrary<ArtifactRef | undefined> = fc.oneof(
	artifactArb.filter((a) => a === undefined || !a.ok || a.path.length < 200),
	fc.constant({ ok: false as const, error: "EACCES: permission denied, open '/agent/cache/headroom'" }),
);

describe("every surface of the table", () => {
	it("is never below the projection's minimum window unless it is a clipped surface", () => {
		for (const name of SURFACE_NAMES) {
			const s = surface(name);
			if (s.clip) continue;
			expect(s.maxBytes, name).toBeGreaterThanOrEqual(MIN_WINDOW_BYTES);
			expect(s.maxLines, name).toBeGreaterThanOrEqual(MIN_WINDOW_LINES);
		}
	});

	it("property: the output never exceeds the surface's bytes and lines, and fits verbatim exactly when it may", () => {
		fc.assert(
			fc.property(
				fc.constantFrom(...SURFACE_NAMES),
				anyText,
				typicalArtifact,
				fc.option(fc.integer({ min: 0, max: 200_000 }), { nil: undefined }),
				(name, text, artifact, narrower) => {
					const s = surface(name);
					// A surface decided per call always gets the call's bytes; others now and then a narrower budget.
					const call = s.bytesPerLine
						? { maxBytes: narrower ?? 64 * 1024 }
						: narrower === undefined
							? {}
							: { maxBytes: narrower };
					const p = project(text, name, { ...call, stored: artifact });
					const limit = bound(name, call);
					expect(bytesOf(p.text)).toBeLessThanOrEqual(limit.bytes);
					expect(linesOf(p.text)).toBeLessThanOrEqual(limit.lines);
					expect(p.maxBytes).toBeLessThanOrEqual(limit.bytes);
					const fits = bytesOf(text) <= limit.bytes && linesOf(text) <= limit.lines;
					expect(p.truncated).toBe(!fits);
					expect(fitsSurface(text, name, call)).toBe(fits);
					if (fits) expect(p.text).toBe(text);
					else if (!s.clip) expect(p.text).toContain(p.marker);
				},
			),
			{ numRuns: 300 },
		);
	});

	it("property: a store that fails gives head + tail and says NOT saved on every projected surface", () => {
		const projected = SURFACE_NAMES.filter((n) => !surface(n).clip);
		fc.assert(
			fc.property(fc.constantFrom(...projected), giantLine, fc.string({ maxLength: 400 }), (name, text, reason) => {
				const s = surface(name);
				const call = s.bytesPerLine ? { maxBytes: 8 * 1024 } : {};
				const failing = { put: () => ({ ok: false as const, error: reason }) };
				const p = project(text, name, { ...call, sink: failing });
				const limit = bound(name, call);
				if (!p.truncated) return;
				expect(bytesOf(p.text)).toBeLessThanOrEqual(limit.bytes);
				expect(linesOf(p.text)).toBeLessThanOrEqual(limit.lines);
				expect(p.footer).toContain("NOT saved");
				expect(p.text).not.toContain("read(");
			}),
			{ numRuns: 100 },
		);
	});
});

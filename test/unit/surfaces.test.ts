import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SURFACE_NAMES, SURFACES, surface } from "../../extensions/shared/surfaces.ts";

describe("the table of named surfaces", () => {
	it("gives every surface whole positive limits, a head share within 0..1 and a one-line doc", () => {
		expect(SURFACE_NAMES.length).toBeGreaterThan(20);
		for (const name of SURFACE_NAMES) {
			const s = surface(name);
			expect(Number.isSafeInteger(s.maxBytes) && s.maxBytes > 0, name).toBe(true);
			expect(Number.isSafeInteger(s.maxLines) && s.maxLines > 0, name).toBe(true);
			if (s.headShare !== undefined) expect(s.headShare >= 0 && s.headShare <= 1, name).toBe(true);
			if (s.batchBytes !== undefined) expect(s.batchBytes >= s.maxBytes, name).toBe(true);
			if (s.bytesPerLine !== undefined) expect(s.bytesPerLine > 0, name).toBe(true);
			expect(s.doc.length > 0 && !s.doc.includes("\n"), name).toBe(true);
		}
	});

	it("names surfaces as <extension or area>.<place>, one name per entry", () => {
		for (const name of SURFACE_NAMES) expect(name).toMatch(/^[a-z][A-Za-z]*(\.[a-z][A-Za-z]*)+$/);
		expect(new Set(SURFACE_NAMES).size).toBe(Object.keys(SURFACES).length);
	});

	it("is frozen: a budget changes in the table's source, never at run time", () => {
		expect(Object.isFrozen(SURFACES)).toBe(true);
		for (const name of SURFACE_NAMES) expect(Object.isFrozen(SURFACES[name]), name).toBe(true);
	});

	it("is the README's budget table: every surface with its default figures, and no other", () => {
		const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
		const fig = (v: number) => (v === Number.MAX_SAFE_INTEGER ? "per call" : String(v));
		const rows = new Map<string, string[]>();
		for (const line of readme.split("\n")) {
			const m = /^\| `([a-z][A-Za-z]*(?:\.[A-Za-z]+)+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|/.exec(line);
			if (m && Object.hasOwn(SURFACES, m[1])) rows.set(m[1], [m[2].trim(), m[3].trim(), m[4].trim()]);
		}
		for (const name of SURFACE_NAMES) {
			const s = surface(name);
			expect(rows.get(name), `README row of ${name}`).toEqual([
				fig(s.maxBytes),
				fig(s.maxLines),
				s.headShare === undefined ? "—" : String(s.headShare),
			]);
		}
		expect(rows.size).toBe(SURFACE_NAMES.length);
	});
});

import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { CONFIGURABLE_SURFACES, SURFACE_ALIASES } from "../../extensions/shared/host/config-surfaces.ts";
import { overridableFields, SURFACE_NAMES, SURFACES, surface } from "../../extensions/shared/surfaces.ts";
import { docPage } from "../fixtures/docs.ts";

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

	it("is the budget table of docs/configuration.md: every surface with its default figures, and no other", () => {
		const page = docPage("docs/configuration.md").text;
		const fig = (v: number) => (v === Number.MAX_SAFE_INTEGER ? "per call" : String(v));
		const rows = new Map<string, string[]>();
		for (const line of page.split("\n")) {
			const m = /^\| `([a-z][A-Za-z]*(?:\.[A-Za-z]+)+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|/.exec(line);
			if (m && Object.hasOwn(SURFACES, m[1])) rows.set(m[1], [m[2].trim(), m[3].trim(), m[4].trim()]);
		}
		for (const name of SURFACE_NAMES) {
			const s = surface(name);
			expect(rows.get(name), `docs/configuration.md row of ${name}`).toEqual([
				fig(s.maxBytes),
				fig(s.maxLines),
				s.headShare === undefined ? "—" : String(s.headShare),
			]);
		}
		expect(rows.size).toBe(SURFACE_NAMES.length);
	});

	it("is the table of docs/configuration.md in full: per surface its batch cap, what may be overridden, its aliases and what it bounds", () => {
		const page = docPage("docs/configuration.md").text;
		const fig = (v: number) => (v === Number.MAX_SAFE_INTEGER ? "per call" : String(v));
		const rows = new Map<string, string>();
		for (const line of page.split("\n")) {
			const m = /^\| `([a-z][A-Za-z]*(?:\.[A-Za-z]+)+)` \|/.exec(line);
			if (m && Object.hasOwn(SURFACES, m[1])) rows.set(m[1], line);
		}
		for (const name of SURFACE_NAMES) {
			const s = surface(name);
			const fields = overridableFields(name);
			const byKey = new Map<string, string[]>();
			for (const [field, key] of Object.entries(SURFACE_ALIASES[name] ?? {}))
				byKey.set(key, [...(byKey.get(key) ?? []), field]);
			const aliases = [...byKey].map(([key, fs]) => `\`${key}\` (${fs.join(", ")})`).join(", ") || "—";
			const cells = [
				`\`${name}\``,
				fig(s.maxBytes),
				fig(s.maxLines),
				s.headShare === undefined ? "—" : String(s.headShare),
				s.batchBytes === undefined ? "—" : String(s.batchBytes),
				fields.length === 0 ? "fixed" : fields.join(", "),
				aliases,
				s.doc,
			];
			expect(rows.get(name), `docs/configuration.md row of ${name}`).toBe(`| ${cells.join(" | ")} |`);
		}
	});

	it("lets every surface with a budget of its own be overridden; clipped and fixed ones stay as they are", () => {
		for (const name of SURFACE_NAMES) {
			const s = surface(name);
			const configurable = CONFIGURABLE_SURFACES.includes(name);
			expect(configurable, name).toBe(!s.clip && !s.fixed);
			if (configurable) expect(overridableFields(name).includes("batchBytes"), name).toBe(s.batchBytes !== undefined);
		}
		// Every alias names a field the surface may override, and a key the configuration has.
		for (const [name, aliases] of Object.entries(SURFACE_ALIASES)) {
			for (const [field, key] of Object.entries(aliases ?? {})) {
				expect(overridableFields(name as keyof typeof SURFACES), `${name}.${field}`).toContain(field);
				const value = key
					.split(".")
					.reduce<unknown>((node, k) => (node as Record<string, unknown>)?.[k], DEFAULT_CONFIG);
				expect(typeof value, key).toBe("number");
			}
		}
	});
});

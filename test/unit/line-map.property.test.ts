/**
 * LineMap (the scan's fold of repeated lines, issue 32 item 4) behaves as a Map<string, V> under any sequence of
 * get/set/delete, with keys that share lengths a lot (so buckets fill past BUCKET_MAX and move to hashing, and
 * empty again) and keys that are equal strings made separately (a line sliced twice is two string objects).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BUCKET_MAX, LineMap } from "../../extensions/shared/text/line-map.ts";

/** Keys of few lengths over a small alphabet: many collide in length, some are equal. */
const key = fc.string({ unit: fc.constantFrom("a", "b", "é", "\uD83D", "\uDE00", " "), minLength: 0, maxLength: 4 });

const op = fc.oneof(
	fc.record({ kind: fc.constant("set" as const), key, value: fc.integer() }),
	fc.record({ kind: fc.constant("get" as const), key }),
	fc.record({ kind: fc.constant("delete" as const), key }),
);

/** The same text as a string object of its own (not the interned literal). */
const fresh = (s: string) => `#${s}`.slice(1);

describe("LineMap (property)", () => {
	it("answers get, set, delete and size as a Map does", () => {
		fc.assert(
			fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
				const model = new Map<string, number>();
				const map = new LineMap<number>();
				for (const o of ops) {
					const k = fresh(o.key);
					if (o.kind === "set") {
						expect(map.set(k, o.value)).toBe(map);
						model.set(o.key, o.value);
					} else if (o.kind === "get") expect(map.get(k)).toBe(model.get(o.key));
					else expect(map.delete(k)).toBe(model.delete(o.key));
					expect(map.size).toBe(model.size);
				}
				for (const [k, v] of model) expect(map.get(fresh(k))).toBe(v);
			}),
			{ numRuns: 500 },
		);
	});

	it("keeps every key of one length past BUCKET_MAX, and forgets each deleted one", () => {
		const keys = Array.from({ length: BUCKET_MAX * 3 }, (_, i) => `line ${String(i).padStart(3, "0")}`);
		const map = new LineMap<string>();
		for (const k of keys) map.set(k, k.toUpperCase());
		expect(map.size).toBe(keys.length);
		for (const k of keys) expect(map.get(fresh(k))).toBe(k.toUpperCase());
		expect(map.get("line 999")).toBeUndefined();
		for (const k of keys.filter((_, i) => i % 2 === 0)) expect(map.delete(fresh(k))).toBe(true);
		expect(map.delete(keys[0])).toBe(false);
		expect(map.size).toBe(keys.length / 2);
		for (const [i, k] of keys.entries()) expect(map.get(k)).toBe(i % 2 === 0 ? undefined : k.toUpperCase());
	});
});

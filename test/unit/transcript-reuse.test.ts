/**
 * The hook's steady state: a long-lived TokenSizer re-cuts only what changed (segmentMessages reuses the
 * segments of its previous pass up to the last turn before the first changed message). Whatever happens
 * between two calls — growth, truncation, a message removed or inserted anywhere, a tool result that
 * arrives late behind another message — the segments must equal a fresh cut; after an old message is
 * rewritten in place (same role and timestamp), within SHAPE_CHECK_STRIDE calls.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { fingerprintReady } from "../../extensions/shared/text/fingerprint.ts";
import { segmentMessages, TokenSizer, type TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";
import { SHAPE_CHECK_STRIDE } from "../../extensions/shared/transcript/size.ts";
import { buildHistory, filler, historyArb } from "./transcript-history.ts";

beforeAll(async () => {
	await fingerprintReady();
});

type Edit =
	| { kind: "grow"; count: number }
	| { kind: "truncate"; at: number }
	| { kind: "remove"; at: number }
	| { kind: "insert"; at: number; chars: number }
	| { kind: "delay"; at: number }
	| { kind: "rewrite"; at: number; chars: number }
	| { kind: "same" };

const editArb: fc.Arbitrary<Edit> = fc.oneof(
	fc.record({ kind: fc.constant("grow" as const), count: fc.integer({ min: 1, max: 12 }) }),
	fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
	fc.record({ kind: fc.constant("remove" as const), at: fc.nat() }),
	fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), chars: fc.integer({ min: 1, max: 900 }) }),
	fc.record({ kind: fc.constant("delay" as const), at: fc.nat() }),
	fc.record({ kind: fc.constant("rewrite" as const), at: fc.nat(), chars: fc.integer({ min: 1, max: 900 }) }),
	fc.constant({ kind: "same" as const }),
);

/** Apply one edit to `list`, drawing new messages from `source` (the longer history it grows into). */
function apply(list: TranscriptMessage[], edit: Edit, source: TranscriptMessage[], serial: number) {
	const next = [...list];
	const at = list.length === 0 ? 0 : ("at" in edit ? edit.at : 0) % list.length;
	switch (edit.kind) {
		case "grow":
			return [...next, ...source.slice(next.length, next.length + edit.count)];
		case "truncate":
			return next.slice(0, at);
		case "remove":
			next.splice(at, 1);
			return next;
		case "insert":
			next.splice(at, 0, {
				role: "user",
				content: [{ type: "text", text: filler(`inserted ${serial}`, edit.chars) }],
				timestamp: 2_000_000_000_000 + serial,
			});
			return next;
		case "delay": {
			// a tool result moved behind the next message: its turn must reach over that message
			const from = next.findIndex((m, i) => i >= at && m.role === "toolResult");
			if (from < 0 || from + 1 >= next.length || next[from + 1].role === "assistant") return next;
			const [result] = next.splice(from, 1);
			next.splice(from + 1, 0, result);
			return next;
		}
		case "rewrite": {
			// in place: same role and timestamp, a text grown by `chars` (the shape the sizer verifies is lengths;
			// a rewrite that keeps every length is outside what it can notice, and says so)
			const m = next[at];
			if (!m) return next;
			const extra = filler(`rewritten ${serial}`, edit.chars);
			if (typeof m.summary === "string") next[at] = { ...m, summary: m.summary + extra };
			else if (typeof m.content === "string") next[at] = { ...m, content: m.content + extra };
			else if (Array.isArray(m.content)) {
				const parts = [...m.content] as Array<Record<string, unknown>>;
				const k = parts.findIndex((part) => typeof part.text === "string");
				if (k < 0) return next;
				parts[k] = { ...parts[k], text: String(parts[k].text) + extra };
				next[at] = { ...m, content: parts };
			}
			return next;
		}
		case "same":
			return next;
	}
}

describe("segment reuse across calls", () => {
	it("cuts every call's deep copy exactly as a fresh, uncached cut does (property)", () => {
		fc.assert(
			fc.property(
				historyArb,
				fc.array(fc.nat(), { maxLength: 4 }),
				fc.array(editArb, { minLength: 1, maxLength: 12 }),
				(h, late, edits) => {
					// results that arrive behind a later message, so growth can stop between a call and its result
					let source = buildHistory(h.steps, { summary: h.summary });
					for (const at of late) source = apply(source, { kind: "delay", at }, source, 0);
					const sizer = new TokenSizer();
					let list = source.slice(0, Math.ceil(source.length / 2));
					let serial = 0;
					for (const edit of [{ kind: "same" as const }, ...edits]) {
						list = apply(list, edit, source, serial++);
						const fresh = segmentMessages(list);
						// an old message rewritten in place (same role and timestamp) is noticed within the stride
						let cached = segmentMessages(structuredClone(list), sizer);
						for (let pass = 1; edit.kind === "rewrite" && pass < SHAPE_CHECK_STRIDE; pass++)
							cached = segmentMessages(structuredClone(list), sizer);
						expect(cached).toEqual(fresh);
					}
				},
			),
			{ numRuns: 300 },
		);
	});

	it("notices an old message rewritten in place within SHAPE_CHECK_STRIDE calls, and the newest at once", () => {
		const source = buildHistory(Array.from({ length: 60 }, () => ({ kind: "user" as const, chars: 400 })));
		const rewrite = (list: TranscriptMessage[], at: number, chars: number) =>
			list.map((m, i) => (i === at ? { ...m, content: [{ type: "text", text: filler("rewritten", chars) }] } : m));
		const sizer = new TokenSizer();
		segmentMessages(structuredClone(source), sizer);
		// the newest messages are verified on every call
		const newest = rewrite(source, source.length - 1, 3000);
		expect(segmentMessages(structuredClone(newest), sizer)).toEqual(segmentMessages(newest));
		// an old one within the stride: every position is verified once in SHAPE_CHECK_STRIDE passes
		const old = rewrite(newest, 5, 3000);
		const right: boolean[] = [];
		for (let pass = 1; pass <= SHAPE_CHECK_STRIDE; pass++) {
			const cut = segmentMessages(structuredClone(old), sizer);
			right.push(JSON.stringify(cut) === JSON.stringify(segmentMessages(old)));
		}
		// noticed at some pass, and right from then on
		expect(right.at(-1)).toBe(true);
		expect(right.slice(right.indexOf(true)).every(Boolean)).toBe(true);
	});

	it("keys a session's first sighting after the call, so a later shift finds every size by key", async () => {
		const source = buildHistory(Array.from({ length: 80 }, () => ({ kind: "user" as const, chars: 300 })));
		const sizer = new TokenSizer();
		segmentMessages(structuredClone(source), sizer);
		expect(sizer.estimated).toBe(source.length);
		// nothing was hashed during the call: the keys are made after it, off the request's path
		expect(sizer.pendingKeys).toBe(source.length);
		// not even right after it: the request is still being sent then
		await new Promise((resolve) => setImmediate(resolve));
		expect(sizer.pendingKeys).toBe(source.length);
		while (sizer.pendingKeys > 0) await new Promise((resolve) => setTimeout(resolve, 20));
		// the oldest message dropped: every later one moves down a position and is found by its key
		const shifted = source.slice(1);
		expect(segmentMessages(structuredClone(shifted), sizer)).toEqual(segmentMessages(shifted));
		expect(sizer.estimated).toBe(source.length);
	});

	it("re-cuts only the newest segments of a long history that grew", () => {
		const source = buildHistory(
			Array.from({ length: 300 }, (_, i) => ({
				kind: "assistant" as const,
				chars: 50,
				calls: [{ tool: i % 5, resultChars: 100 }],
			})),
		);
		const sizer = new TokenSizer();
		const first = segmentMessages(structuredClone(source.slice(0, 500)), sizer);
		const second = segmentMessages(structuredClone(source), sizer);
		expect(second).toEqual(segmentMessages(source));
		// the unchanged segments before the last turn of the first call are the very same objects
		const reused = second.filter((s, i) => first[i] === s).length;
		expect(reused).toBe(first.length - 1);
	});
});

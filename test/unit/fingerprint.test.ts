import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
	FingerprintBuilder,
	fingerprintAvailable,
	fingerprintError,
	fingerprintReady,
	fingerprintText,
} from "../../extensions/shared/text/fingerprint.ts";
import { messageKey, type TranscriptMessage } from "../../extensions/shared/transcript/plan.ts";

beforeAll(async () => {
	expect(await fingerprintReady()).toBe(true);
});

describe("fingerprint (xxhash-wasm)", () => {
	it("runs after fingerprintReady, with no error", () => {
		expect(fingerprintAvailable()).toBe(true);
		expect(fingerprintError()).toBeUndefined();
	});

	it("is xxHash64 cut to 53 bits (reference vectors of the xxHash spec)", () => {
		// XXH64("", seed 0) = 0xEF46DB3751D8E999; XXH64("a", 0) = 0xD24EC4F1A98C6E5B.
		expect(fingerprintText("")).toBe(Number(0xef46db3751d8e999n & ((1n << 53n) - 1n)));
		expect(fingerprintText("a")).toBe(Number(0xd24ec4f1a98c6e5bn & ((1n << 53n) - 1n)));
	});

	it("is a safe integer, equal for equal texts and different for different ones (property)", () => {
		fc.assert(
			fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => {
				const fa = fingerprintText(a);
				expect(Number.isSafeInteger(fa)).toBe(true);
				expect(fingerprintText(`${a}`)).toBe(fa);
				if (a !== b) expect(fingerprintText(b)).not.toBe(fa);
			}),
		);
	});

	it("keeps part boundaries, order and types apart", () => {
		const of = (...parts: unknown[]) => {
			const builder = new FingerprintBuilder();
			expect(builder.begin()).toBe(true);
			for (const part of parts) builder.add(part);
			return builder.digest();
		};
		expect(of("ab", "c")).not.toBe(of("a", "bc"));
		expect(of("a", "b")).not.toBe(of("b", "a"));
		expect(of(5)).not.toBe(of("5"));
		expect(of(undefined)).not.toBe(of("undefined"));
		expect(of("x", 1, true)).toBe(of("x", 1, true));
	});
});

describe("message size keys", () => {
	const message = (text: string): TranscriptMessage => ({
		role: "toolResult",
		toolCallId: "call-1",
		timestamp: 1_700_000_000_000,
		content: [{ type: "text", text }],
	});

	it("are equal for a deep copy and differ when any character of the text changes", () => {
		const text = "x".repeat(10_000);
		const key = messageKey(message(text));
		expect(key).toBeTypeOf("number");
		expect(messageKey(structuredClone(message(text)))).toBe(key);
		// Same length, same ends: only the middle differs (a sampled key could miss it).
		const changed = `${text.slice(0, 5_001)}y${text.slice(5_002)}`;
		expect(messageKey(message(changed))).not.toBe(key);
	});
});

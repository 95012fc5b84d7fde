import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { projectResult, projectResultSync, projectText } from "../../extensions/shared/projection/projection.ts";
import { ArtifactStore, type PutFailure, type PutResult } from "../../extensions/shared/store/artifact-store.ts";
import { limitsArb, textArb } from "./projection-arbitraries.ts";

const agentDir = mkdtempSync(join(tmpdir(), "headroom-result-"));
const store = new ArtifactStore({ agentDir });
afterAll(() => rmSync(agentDir, { recursive: true, force: true }));

describe("projectResult measures once and agrees with projectText", () => {
	it("gives exactly projectText's answer for the artifact it stored (sync and async)", async () => {
		await fc.assert(
			fc.asyncProperty(textArb, limitsArb, async (text, limits) => {
				const sink = { store, kind: "tool-outputs" as const };
				const sync = projectResultSync(text, limits, sink);
				const ref = sync.artifact?.ok ? sync.artifact : undefined;
				expect(sync).toEqual(projectText(text, limits, ref));
				expect(await projectResult(text, limits, sink)).toEqual(sync);
			}),
			{ numRuns: 150 },
		);
	});

	it("measures anew rather than trust another store's byte count", async () => {
		const text = "é".repeat(3000); // 6,000 bytes
		const lying = {
			put: async (): Promise<PutResult | PutFailure> => ({
				ok: true,
				path: "/x/a.txt",
				sha256: "a".repeat(64),
				bytes: 12,
				reused: false,
			}),
			putSync: (): PutResult | PutFailure => ({
				ok: true,
				path: "/x/a.txt",
				sha256: "a".repeat(64),
				bytes: 3000, // as many as units: would wrongly mean all-ASCII
				reused: false,
			}),
		} as unknown as ArtifactStore;
		const limits = { maxBytes: 2048, maxLines: 40 };
		const sink = { store: lying, kind: "tool-outputs" as const };
		const a = await projectResult(text, limits, sink);
		expect(a.totalBytes).toBe(6000);
		const b = projectResultSync(text, limits, sink);
		expect(b.totalBytes).toBe(6000);
		for (const p of [a, b]) expect(Buffer.byteLength(p.text)).toBeLessThanOrEqual(2048);
	});
});

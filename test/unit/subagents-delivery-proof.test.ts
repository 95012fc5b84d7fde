/**
 * A result counts as received exactly when the message that carried it is in the parent's session: the
 * automatic delivery's message and the subagent_wait / subagent_cancel result say in their details which
 * results they carry, and nothing else is written for it. So a process that ends after a delivery was decided
 * but before Pi wrote its message (Pi 1.x defers a message sent as its run settles; a SIGTERM then ends the
 * process) leaves the result owed to the next start, never marked received and lost.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deliverPending, RESULT_MESSAGE_TYPE } from "../../extensions/subagents/delivery/delivery.ts";
import {
	DELIVERED_ENTRY,
	provenDelivered,
	restoreFromSession,
	SETTLED_ENTRY,
} from "../../extensions/subagents/delivery/persistence.ts";
import { consumeResults } from "../../extensions/subagents/tools/consume.ts";
import { type FakeWorld, recordAll, spawnChild, tempRoot, until, useFakeWorlds } from "./subagents-fakes.ts";

const world = useFakeWorlds();

/** Three children settled; sa-1 delivered automatically, sa-2 by subagent_wait, sa-3 owed. */
async function deliveredWorld(): Promise<{ a: FakeWorld; messages: BranchEntry[] }> {
	const a = world();
	recordAll(a);
	const ids = ["one", "two", "three"].map((name) => spawnChild(a, { prompt: `task ${name}`, name }).id);
	await until(() => ids.every((id) => a.backend.started(id)));
	a.backend.finish(ids[0], "ANSWER-ONE");
	await until(() => a.manager.ledger.latest(ids[0]) !== undefined);
	expect(await deliverPending(a.services, "trigger")).toBe(true);
	a.backend.finish(ids[1], "ANSWER-TWO");
	await until(() => a.manager.ledger.latest(ids[1]) !== undefined);
	const wait = await consumeResults(a.services, a.ctx, [ids[1]], { timedOut: false, aborted: false }, "wait");
	a.backend.finish(ids[2], "ANSWER-THREE");
	await until(() => a.manager.ledger.latest(ids[2]) !== undefined);
	// Nothing recorded apart from the messages that carry the results.
	expect(a.entries.filter((e) => e.type === DELIVERED_ENTRY)).toEqual([]);
	const auto = a.sent[0].message;
	const messages: BranchEntry[] = [
		{ type: "custom_message", customType: auto.customType, content: auto.content, details: auto.details },
		{ type: "message", message: { role: "toolResult", toolName: "subagent_wait", details: wait.details } },
	];
	return { a, messages };
}

type BranchEntry = Record<string, unknown>;

/** A world started on `branch` (what an earlier process left in the parent's session file). */
function resumedOn(branch: BranchEntry[]): FakeWorld {
	const root = tempRoot("subagents-proof-");
	return world({
		root,
		sessionManager: { getSessionDir: () => `${root}/s`, getBranch: () => branch, getSessionFile: () => undefined },
	});
}

const customs = (a: FakeWorld): BranchEntry[] =>
	a.entries.map((e) => ({ type: "custom", customType: e.type, data: structuredClone(e.data) }));

describe("the message that carries a result is the record of its delivery", () => {
	it("says which results it carries, and restore reads that back", async () => {
		const { a, messages } = await deliveredWorld();
		expect(provenDelivered(messages[0].details)).toEqual([{ keys: ["sa-1#1"], by: "auto" }]);
		const b = resumedOn([...customs(a), ...messages]);
		expect(restoreFromSession(b.services, b.ctx)).toBe(1);
		expect(b.manager.ledger.pending().map((r) => r.key)).toEqual(["sa-3#1"]);
		expect(b.manager.ledger.latest("sa-1")?.delivery).toBe("auto");
		expect(b.manager.ledger.latest("sa-2")?.delivery).toBe("wait");
	});

	it("a delivery whose message never reached the file is owed again (the SIGTERM case on Pi 1.x)", async () => {
		const { a } = await deliveredWorld();
		const b = resumedOn(customs(a));
		expect(restoreFromSession(b.services, b.ctx)).toBe(3);
		expect(b.manager.ledger.pending().map((r) => r.text)).toEqual(["ANSWER-ONE", "ANSWER-TWO", "ANSWER-THREE"]);
	});

	it("proofs from elsewhere or malformed ones deliver nothing", async () => {
		const { a, messages } = await deliveredWorld();
		const forged: BranchEntry[] = [
			// Another extension's message, another tool's result: not this extension's carriers.
			{ type: "custom_message", customType: "other", details: { delivered: [{ keys: ["sa-3#1"], by: "auto" }] } },
			{
				type: "message",
				message: { role: "toolResult", toolName: "bash", details: { delivered: [{ keys: ["sa-3#1"] }] } },
			},
			{ type: "message", message: { role: "user", details: { delivered: [{ keys: ["sa-3#1"] }] } } },
			// Malformed details of a real carrier.
			{ type: "custom_message", customType: RESULT_MESSAGE_TYPE, details: { delivered: "sa-3#1" } },
			{
				type: "custom_message",
				customType: RESULT_MESSAGE_TYPE,
				details: { delivered: [{ keys: "sa-3#1" }, null, 7] },
			},
			{ type: "custom_message", customType: RESULT_MESSAGE_TYPE, details: null },
		];
		const b = resumedOn([...customs(a), ...forged, ...messages]);
		expect(restoreFromSession(b.services, b.ctx)).toBe(1);
		expect(b.manager.ledger.pending().map((r) => r.key)).toEqual(["sa-3#1"]);
	});

	it("property: whatever subset of carrying messages reached the file, exactly the rest is owed", async () => {
		const { a, messages } = await deliveredWorld();
		const base = customs(a);
		const settledKeys = base
			.filter((e) => e.customType === SETTLED_ENTRY)
			.map((e) => (e.data as { key: string }).key)
			.sort();
		await fc.assert(
			fc.asyncProperty(fc.subarray(messages), fc.boolean(), async (kept, legacy) => {
				// Older sessions recorded deliveries in separate entries: still honoured.
				const legacyEntry: BranchEntry[] = legacy
					? [{ type: "custom", customType: DELIVERED_ENTRY, data: { keys: ["sa-3#1"], by: "wait" } }]
					: [];
				const b = resumedOn([...base, ...kept, ...legacyEntry]);
				try {
					restoreFromSession(b.services, b.ctx);
					const received = new Set([
						...kept.flatMap((m) =>
							provenDelivered(m.details ?? (m.message as { details?: unknown }).details).flatMap((g) => g.keys),
						),
						...(legacy ? ["sa-3#1"] : []),
					]);
					const owed = b.manager.ledger
						.pending()
						.map((r) => r.key)
						.sort();
					expect(owed).toEqual(settledKeys.filter((k) => !received.has(k)));
				} finally {
					await b.manager.shutdown();
				}
			}),
			{ numRuns: 30 },
		);
	});
});

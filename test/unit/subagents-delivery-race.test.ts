/**
 * Exactly-once delivery under a forced race: a child settles while a subagent_wait is claiming
 * its result and an automatic flush starts in the same tick, in both orders. The full result
 * must reach the parent once; the other path must say it was already delivered and name an
 * artifact that exists and holds the full text.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { deliverPending } from "../../extensions/subagents/delivery/delivery.ts";
import { DELIVERED_ENTRY, provenDelivered } from "../../extensions/subagents/delivery/persistence.ts";
import { consumeResults } from "../../extensions/subagents/tools/consume.ts";
import { waitTool } from "../../extensions/subagents/tools/wait.ts";
import { type FakeWorld, onSettled, spawnChild, until, useFakeWorlds } from "./subagents-fakes.ts";

/** About 40 KB: over every per-result cap, so whoever delivers it stores an artifact. */
const LONG = [
	"BEGIN-RACE",
	...Array.from({ length: 400 }, (_, i) => `line ${i + 1} ${"y".repeat(90)}`),
	"END-RACE",
].join("\n");
const FOOTER_PATH = /read\(path="([^"]+)"/;
const ALREADY_PATH = /full text: (\S+)\.$/m;

const newWorld = useFakeWorlds();

async function spawnedWorld(): Promise<{ world: FakeWorld; id: string }> {
	const world = newWorld();
	const child = spawnChild(world, { prompt: "long task", tools: ["read"] });
	await until(() => world.backend.started(child.id));
	return { world, id: child.id };
}

/** Every text the parent received: automatic messages and tool results. */
function occurrences(texts: string[], marker: string): number {
	return texts.reduce((n, t) => n + t.split(marker).length - 1, 0);
}

/** Keys recorded as delivered: by separate entries, or by the messages and tool results that carried them. */
function deliveredKeys(world: FakeWorld, toolDetails: unknown[]): string[] {
	return [
		...world.entries.filter((e) => e.type === DELIVERED_ENTRY).flatMap((e) => (e.data as { keys: string[] }).keys),
		...[...world.sent.map((s) => s.message.details), ...toolDetails].flatMap((d) =>
			provenDelivered(d).flatMap((g) => g.keys),
		),
	];
}

describe.each(["flush first", "wait first"] as const)("settle while wait and flush race (%s)", (order) => {
	it("delivers the full result once; the loser reports it as already delivered with a real artifact", async () => {
		const { world, id } = await spawnedWorld();
		const { services, ctx } = world;
		let waitRun: Promise<{ content: Array<{ text: string }>; details: unknown }> | undefined;
		let flushRun: Promise<boolean> | undefined;
		// Both paths start inside the settle itself, in one tick, in the order under test.
		onSettled(world, () => {
			const startWait = () => {
				waitRun = consumeResults(services, ctx, [id], { timedOut: false, aborted: false }, "wait");
			};
			const startFlush = () => {
				flushRun = deliverPending(services, "trigger");
			};
			if (order === "wait first") {
				startWait();
				startFlush();
			} else {
				startFlush();
				startWait();
			}
		});
		world.backend.finish(id, LONG);
		await until(() => waitRun !== undefined && flushRun !== undefined);
		const waitResult = await waitRun!;
		const waitText = waitResult.content[0].text;
		expect(await flushRun!).toBe(true);
		const autoTexts = world.sent.map((s) => s.message.content);
		const all = [waitText, ...autoTexts];
		expect(occurrences(all, "BEGIN-RACE")).toBe(1);
		expect(occurrences(all, "END-RACE")).toBe(1);
		// Recorded once, by whichever carried it: nothing is recorded apart from the text that delivers it.
		expect(world.entries.filter((e) => e.type === DELIVERED_ENTRY)).toEqual([]);
		expect(deliveredKeys(world, [waitResult.details])).toEqual([`${id}#1`]);

		let winnerText: string;
		let loserLine: string;
		if (order === "wait first") {
			expect(world.sent).toHaveLength(0);
			winnerText = waitText;
			// The automatic path stays silent; a later wait is the one that reports it.
			const again = await consumeResults(services, ctx, [id], { timedOut: false, aborted: false }, "wait");
			loserLine = again.content[0].text;
			expect(loserLine).toContain("returned by an earlier subagent_wait");
		} else {
			expect(world.sent).toHaveLength(1);
			winnerText = autoTexts[0];
			loserLine = waitText;
			expect(loserLine).toContain("delivered to you automatically earlier");
		}
		expect(loserLine).not.toContain("BEGIN-RACE");
		const winnerPath = FOOTER_PATH.exec(winnerText)?.[1];
		const loserPath = ALREADY_PATH.exec(loserLine)?.[1];
		expect(winnerPath).toBeDefined();
		expect(loserPath).toBe(winnerPath);
		expect(existsSync(loserPath!)).toBe(true);
		expect(readFileSync(loserPath!, "utf8")).toBe(LONG);
	});
});

describe("a wait blocked on the child while the flush runs from the settle hook", () => {
	it("the wait reports the automatic delivery and its artifact, even before the flush recorded it", async () => {
		const { world, id } = await spawnedWorld();
		const { services, ctx } = world;
		let flushRun: Promise<boolean> | undefined;
		onSettled(world, () => {
			flushRun = deliverPending(services, "trigger");
		});
		const waiting = waitTool(services, { ids: [id] }, undefined, undefined, ctx);
		world.backend.finish(id, LONG);
		const waitText = (await waiting).content[0].text;
		await flushRun;
		expect(world.sent).toHaveLength(1);
		const autoText = world.sent[0].message.content;
		expect(occurrences([waitText, autoText], "BEGIN-RACE")).toBe(1);
		expect(waitText).toContain(`${id} "long task": completed — delivered to you automatically earlier; full text: `);
		const path = ALREADY_PATH.exec(waitText)?.[1];
		expect(path).toBe(FOOTER_PATH.exec(autoText)?.[1]);
		expect(readFileSync(path!, "utf8")).toBe(LONG);
	});
});

/**
 * A large log's key lines decided on two threads (notable-parallel.ts, issue 32 cost), with the real second
 * thread (a worker running notable-thread.ts): the decisions, and the stub built from them, are exactly what one
 * thread makes — with the parts shared between the threads, with the thread stopped in the middle of a job, with
 * the job cancelled, with lines longer than a part of the ring, lone surrogates, and the rules of an evaluation.
 * The thread starts once, is shared, never keeps a process alive, is not started on one core, and a process
 * whose thread cannot start stops trying.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../extensions/shared/host/config.ts";
import { ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";
import {
	type DecidedLines,
	DecisionCache,
	decidePart,
	decisionsOf,
	isTableRule,
	joinDecided,
	type NotableEvaluation,
	withNotableEvaluation,
} from "../../extensions/shared/text/notable.ts";
import {
	decideAhead,
	notableThreadStats,
	PARALLEL_MIN_UNITS,
	stopNotableThread,
} from "../../extensions/shared/text/notable-parallel.ts";
import { SLOT_UNITS } from "../../extensions/shared/text/notable-ring.ts";
import { buildStub, type ToolResultFacts } from "../../extensions/tool-artifacts/artifacts.ts";
import { flatDecided } from "../fixtures/notable-decided.ts";
import { realLogSeed } from "../fixtures/real-logs.ts";
import { REPO_ROOT } from "../fixtures/sandbox.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

/** The decisions one thread makes of `text` (the whole text as one part). */
function oneThread(text: string, evaluation?: NotableEvaluation): DecidedLines {
	const { enabled, steps } = decisionsOf({ evaluation });
	const at: number[] = [];
	const newlines = decidePart(text, new DecisionCache(enabled, steps, text.length), at);
	return joinDecided([{ units: text.length, newlines, at }], enabled, steps);
}

/** Decisions as plain data, to compare. */
const plain = (d: DecidedLines) => flatDecided(d);

/** A job on a ready thread: waits for the thread to start and get ready if it is not. */
async function ahead(text: string, evaluation?: NotableEvaluation) {
	for (let tries = 0; tries < 200; tries++) {
		const job = decideAhead(text, { evaluation });
		if (job) return job;
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	throw new Error("the notable thread never got ready");
}

const SEED = realLogSeed(1024 * 1024).toString("utf8");
const CHILD = join(REPO_ROOT, "test/fixtures/notable-thread-exit.ts");

describe("decisions on two threads", () => {
	beforeAll(async () => {
		await stopNotableThread();
	});
	afterAll(async () => {
		await stopNotableThread();
	});

	it("leaves a small text to the scan, and starts the thread once for large ones", async () => {
		const starts = notableThreadStats().starts;
		expect(decideAhead("error: small\n".repeat(10))).toBeUndefined();
		expect(notableThreadStats().starts).toBe(starts);
		expect(SEED.length).toBeGreaterThanOrEqual(PARALLEL_MIN_UNITS);
		const job = await ahead(SEED);
		expect(notableThreadStats().starts).toBe(starts + 1);
		// One job at a time: a second text meanwhile is decided by the scan alone.
		expect(decideAhead(SEED)).toBeUndefined();
		expect(plain(await job.finish())).toEqual(plain(oneThread(SEED)));
		expect(notableThreadStats().starts).toBe(starts + 1);
	});

	it("makes exactly one thread's decisions, whichever thread decides which part", async () => {
		const texts = [
			SEED,
			// Lines longer than a slot of the ring (decided by the calling thread), lone surrogates and CRLF.
			`${"x".repeat(SLOT_UNITS + 5)} error: one long line\n${SEED.slice(0, 400_000)}\r\nerror \ud800 here\r\n${"y".repeat(3 * SLOT_UNITS)}`,
			// Several such lines among the parts the second thread takes: this thread decides them first.
			[0, 1, 2, 3]
				.map((k) => `${SEED.slice(k * 90_000, (k + 1) * 90_000)}${"z".repeat(SLOT_UNITS * (k + 1))} failed ${k}\n`)
				.join(""),
			SEED.replaceAll("\n", "\r\n").slice(0, 700_000),
		];
		for (const text of texts) {
			const job = await ahead(text);
			job.feed();
			// Some time for the second thread to take parts before this one takes the rest from the back.
			await new Promise((resolve) => setTimeout(resolve, 2));
			expect(plain(await job.finish())).toEqual(plain(oneThread(text)));
		}
	});

	it("decides with the rules and steps of the scan's evaluation", async () => {
		const evaluation = { rules: isTableRule, steps: false };
		const job = await ahead(SEED, evaluation);
		const decided = await job.finish();
		expect(plain(decided)).toEqual(plain(oneThread(SEED, evaluation)));
		expect(plain(decided)).not.toEqual(plain(oneThread(SEED)));
		// Inside withNotableEvaluation the job takes the evaluation it sets.
		const inside = await withNotableEvaluation(evaluation, async () => (await ahead(SEED)).finish());
		expect(plain(inside)).toEqual(plain(decided));
	});

	it("loses nothing when the thread is stopped in the middle of a job, and starts a new one after", async () => {
		const starts = notableThreadStats().starts;
		const job = await ahead(SEED);
		await stopNotableThread();
		expect(plain(await job.finish())).toEqual(plain(oneThread(SEED)));
		const next = await ahead(SEED);
		expect(notableThreadStats().starts).toBe(starts + 1);
		expect(plain(await next.finish())).toEqual(plain(oneThread(SEED)));
	});

	it("frees the thread for the next text when a job is cancelled", async () => {
		const job = await ahead(SEED);
		job.cancel();
		const next = await ahead(SEED);
		expect(plain(await next.finish())).toEqual(plain(oneThread(SEED)));
	});

	it("builds the same stub as one thread does", async () => {
		const root = makeTestDir("notable-parallel-stub");
		const config = {
			...DEFAULT_CONFIG.toolArtifacts,
			summary: { ...DEFAULT_CONFIG.toolArtifacts.summary, enabled: false },
		};
		const fact: ToolResultFacts = {
			toolName: "bash",
			toolCallId: "call_1",
			input: { command: "cat build.log" },
			content: [{ type: "text", text: SEED }],
			details: undefined,
			isError: false,
		};
		// Stores whose paths have the same length (the header names the artifact's path).
		const store = (name: "one" | "two") => new ArtifactStore({ agentDir: join(root, name) });
		await (await ahead(SEED)).finish(); // the thread is ready and free
		const { starts, jobs } = notableThreadStats();
		const two = await buildStub(fact, SEED, { store: store("two"), config });
		expect(notableThreadStats()).toEqual({ starts, jobs: jobs + 1 });
		await stopNotableThread();
		const one = await buildStub(fact, SEED, { store: store("one"), config }); // the thread is starting: one thread
		expect(notableThreadStats()).toEqual({ starts: starts + 1, jobs: jobs + 1 });
		const strip = (text: string) =>
			text.replaceAll(join(root, "one"), "<agent>").replaceAll(join(root, "two"), "<agent>");
		expect(strip(two.text)).toEqual(strip(one.text));
		expect(two.text).toMatch(/error|fail/i);
	});

	it("never keeps a process alive, starts no thread on one core, and stops trying when it cannot start", () => {
		const started = Date.now();
		const run = spawnSync(process.execPath, ["--import", "jiti/register", CHILD], {
			cwd: REPO_ROOT,
			encoding: "utf8",
			timeout: 30_000,
			env: { ...process.env, JITI_FS_CACHE: "false" },
		});
		expect(run.stderr).toBe("");
		expect(run.stdout.trim()).toBe("finished");
		expect(run.status).toBe(0);
		// The thread's idle timer (a minute) did not hold the process.
		expect(Date.now() - started).toBeLessThan(20_000);
	});
});

import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COPIED_METRICS_NOTE, COPIED_SUMMARY_NOTE } from "../../extensions/handoff/prompt.ts";
import { buildTrajectories, markCopied } from "../../extensions/handoff/trajectory.ts";
import {
	highestIndex,
	highestIndexIn,
	safeName,
	type TrajectoryTarget,
	trajectoryDir,
	trajectoryTarget,
	writeTrajectories,
} from "../../extensions/handoff/trajectory-files.ts";
import { ctx, outcome } from "../fixtures/handoff-trajectory-data.ts";
import { makeTestDir } from "../fixtures/test-dirs.ts";

describe("buildTrajectories", () => {
	it("one file per call with ids, agent, model, parent, index, steps and metrics", () => {
		const files = buildTrajectories(ctx, outcome("full"));
		expect(files.map((f) => f.fileName)).toEqual([
			"trajectory.summarization-2-summary.json",
			"trajectory.summarization-2-questions.json",
			"trajectory.summarization-2-answers.json",
		]);
		for (const f of files) {
			const t = f.trajectory;
			expect(t.session_id).toBe(`sess-1-summarization-2-${f.step}`);
			expect(t.parent_session_id).toBe("sess-1");
			expect(t.summarization_index).toBe(2);
			expect(t.agent).toEqual({ name: `pi-context-headroom-handoff-${f.step}`, model_name: "mock/mock-model" });
			expect(t.steps.map((s) => s.step_id)).toEqual(t.steps.map((_, i) => i + 1));
			// Only this call's own reply counts.
			expect(t.final_metrics).toEqual({
				total_prompt_tokens: 110,
				total_completion_tokens: 20,
				total_cached_tokens: 10,
				total_cost_usd: 0.5,
			});
			expect(f.label).toMatch(/^Handoff 2: /);
		}
		const [summary, questions, answers] = files.map((f) => f.trajectory);
		const copied = summary.steps.filter((s) => s.is_copied_context);
		expect(copied.map((s) => s.message)).toEqual(ctx.copiedBlocks);
		expect(copied.every((s) => s.metrics === undefined)).toBe(true);
		expect(copied.find((s) => s.source === "agent")?.extra?.note).toBe(COPIED_METRICS_NOTE);
		expect(summary.steps.at(-1)).toMatchObject({ source: "agent", message: "SUMMARY", reasoning_content: "WHY" });
		expect(questions.steps.some((s) => s.is_copied_context)).toBe(false);
		expect(questions.steps.map((s) => s.source)).toEqual(["system", "user", "agent"]);
		const summaryCopy = answers.steps.find((s) => s.is_copied_context && s.message === "SUMMARY");
		expect(summaryCopy).toMatchObject({ reasoning_content: "WHY", extra: { note: COPIED_SUMMARY_NOTE } });
		expect(summaryCopy?.metrics).toBeUndefined();
		expect(answers.steps.at(-2)?.message).toBe("A-PROMPT");
	});

	it("records a failed call with its error and no response step", () => {
		const files = buildTrajectories(ctx, outcome("summary-only"));
		expect(files).toHaveLength(2);
		expect(files[1].trajectory.extra?.error).toBe("HTTP 500");
		expect(files[1].trajectory.steps.map((s) => s.source)).toEqual(["system", "user"]);
	});

	it("markCopied removes metrics with a note and marks every step", () => {
		const out = markCopied([
			{
				step_id: 1,
				source: "agent",
				message: "a",
				metrics: { prompt_tokens: 1, completion_tokens: 1, cached_tokens: 0, cost_usd: 0 },
			},
			{ step_id: 2, source: "user", message: "b" },
		]);
		expect(out.every((s) => s.is_copied_context)).toBe(true);
		expect(out[0].metrics).toBeUndefined();
		expect(out[0].extra?.note).toBe(COPIED_METRICS_NOTE);
		expect(out[1].extra).toBeUndefined();
	});
});

describe("files", () => {
	const base = () => makeTestDir("traj");

	/** The per-session folder `name` inside an existing `parent`. */
	const inside = (parent: string, name: string): TrajectoryTarget => ({
		parent: () => ({ ok: true, dir: parent }),
		name,
	});

	it("writes 0600 files in a 0700 folder and never overwrites", () => {
		const root = base();
		const dir = join(root, "s.handoffs");
		const files = buildTrajectories(ctx, outcome("full"));
		const first = writeTrajectories(inside(root, "s.handoffs"), files);
		expect(first.every((r) => r.ok)).toBe(true);
		expect(statSync(dir).mode & 0o777).toBe(0o700);
		for (const r of first) {
			if (!r.ok) continue;
			expect(statSync(r.path).mode & 0o777).toBe(0o600);
			expect(JSON.parse(readFileSync(r.path, "utf8")).step).toBe(r.step);
		}
		const again = writeTrajectories(inside(root, "s.handoffs"), files);
		expect(again.every((r) => !r.ok)).toBe(true);
		expect(highestIndex(files.map((f) => f.fileName))).toBe(2);
		expect(highestIndexIn(dir)).toBe(2);
	});

	it("refuses a symlinked folder or file instead of following it", () => {
		const root = base();
		const real = join(root, "real");
		mkdirSync(real);
		symlinkSync(real, join(root, "link"));
		const files = buildTrajectories(ctx, outcome("full"));
		const viaLink = writeTrajectories(inside(root, "link"), files);
		expect(viaLink.every((r) => !r.ok && r.error.includes("symlink"))).toBe(true);
		expect(readdirSync(real)).toEqual([]);
		expect(highestIndexIn(join(root, "link"))).toBe(0);
		const dir = join(root, "d");
		mkdirSync(dir, { mode: 0o700 });
		writeFileSync(join(root, "target"), "keep");
		symlinkSync(join(root, "target"), join(dir, files[0].fileName));
		const res = writeTrajectories(inside(root, "d"), files);
		expect(res[0].ok).toBe(false);
		expect(readFileSync(join(root, "target"), "utf8")).toBe("keep");
	});

	it("refuses a beside-the-session folder that is a symlink: nothing is written through it", () => {
		const root = base();
		const elsewhere = join(root, "elsewhere");
		mkdirSync(elsewhere);
		const sessionFile = join(root, "2026_s.jsonl");
		writeFileSync(sessionFile, "");
		symlinkSync(elsewhere, join(root, "2026_s.handoffs"));
		const target = trajectoryTarget(sessionFile, "sid", () => ({ ok: false, error: "cache not used" }));
		const res = writeTrajectories(target, buildTrajectories(ctx, outcome("full")));
		expect(res.every((r) => !r.ok && r.error.includes("symlink"))).toBe(true);
		expect(readdirSync(elsewhere)).toEqual([]);
	});

	it("reports the parent's failure without writing anything", () => {
		const target = trajectoryTarget(undefined, "sid", () => ({ ok: false, error: "PARENT-REFUSED" }));
		const res = writeTrajectories(target, buildTrajectories(ctx, outcome("full")));
		expect(res).toHaveLength(3);
		expect(res.every((r) => !r.ok && r.error === "PARENT-REFUSED")).toBe(true);
	});

	it("places trajectories beside the session file, else under the cache by a safe session id", () => {
		expect(trajectoryDir("/a/b/2026_x.jsonl", "/c/handoffs", "id")).toBe("/a/b/2026_x.handoffs");
		expect(trajectoryDir(undefined, "/c/handoffs", "abc-123")).toBe("/c/handoffs/abc-123");
		expect(trajectoryTarget("/a/b/2026_x.jsonl", "id", () => ({ ok: false, error: "" })).name).toBe("2026_x.handoffs");
		expect(trajectoryTarget(undefined, "../x", () => ({ ok: false, error: "" })).name).not.toContain("/");
		expect(safeName("../../etc")).not.toContain("/");
		expect(safeName("..")).not.toBe("..");
	});
});

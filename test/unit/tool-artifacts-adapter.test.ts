// The adapter (index.ts) driven by a fake `pi`: event order as Pi produces it, no model, no CLI.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useAgentDirEnv } from "../fixtures/agent-dir-env.ts";

const env = useAgentDirEnv("file");
const dir = env.folder("ta-adapter");
const agentDir = join(dir, "agent");
mkdirSync(agentDir, { recursive: true });
writeFileSync(
	join(agentDir, "headroom.json"),
	JSON.stringify({ toolArtifacts: { turnCapChars: 30_000, summary: { enabled: false } } }),
);

type Handler = (event: Record<string, unknown>, ctx: unknown) => unknown;
interface Tool {
	execute: (
		id: string,
		params: Record<string, unknown>,
		signal: unknown,
		onUpdate: unknown,
		ctx: unknown,
	) => Promise<{
		content: Array<{ text: string }>;
		details: Record<string, unknown>;
	}>;
}

const handlers = new Map<string, Handler[]>();
const tools = new Map<string, Tool>();
const fakePi = {
	on(name: string, handler: Handler) {
		handlers.set(name, [...(handlers.get(name) ?? []), handler]);
	},
	registerTool(tool: Tool & { name: string }) {
		tools.set(tool.name, tool);
	},
};
const ctx = { cwd: dir, hasUI: false, signal: undefined, model: undefined, modelRegistry: { getAvailable: () => [] } };
const emit = (name: string, event: Record<string, unknown>) =>
	Promise.all((handlers.get(name) ?? []).map((h) => h({ type: name, ...event }, ctx)));
const result = (id: string, toolName: string, text: string, details?: unknown) =>
	emit("tool_result", {
		toolCallId: id,
		toolName,
		input: {},
		content: [{ type: "text", text }],
		details,
		isError: false,
	}).then((r) => r[0] as { content: Array<{ text: string }>; details: Record<string, unknown> } | undefined);

beforeAll(async () => {
	env.point(agentDir);
	const mod = await import("../../extensions/tool-artifacts/index.ts");
	mod.default(fakePi as never);
	await emit("session_start", { reason: "startup" });
});

describe("tool-artifacts adapter", () => {
	it("leaves small results alone and stubs large ones; a repeated event gets the same stub", async () => {
		await emit("turn_start", { turnIndex: 0 });
		await emit("tool_call", { toolCallId: "t1", toolName: "bash", input: {} });
		expect(await result("t1", "bash", "small output")).toBeUndefined();
		await emit("turn_start", { turnIndex: 1 });
		await emit("tool_call", { toolCallId: "t2", toolName: "bash", input: {} });
		const big = "x".repeat(13_000);
		const first = await result("t2", "bash", big);
		expect(first?.content[0].text.startsWith("[Artifact ")).toBe(true);
		expect(first?.details.headroom).toMatchObject({ projected: true });
		const again = await result("t2", "bash", big);
		expect(again?.content[0].text).toBe(first?.content[0].text);
	});

	it("passes through projected results, stubs and nested calls", async () => {
		await emit("turn_start", { turnIndex: 2 });
		const big = "y".repeat(20_000);
		expect(await result("p1", "subagent_wait", big, { headroom: { projected: true } })).toBeUndefined();
		const stub = await result("p2", "bash", big);
		expect(await result("p3", "bash", stub?.content[0].text ?? "")).toBeUndefined();
		const nested = await emit("tool_result", {
			toolCallId: "n1",
			parentToolCallId: "p2",
			toolName: "bash",
			input: {},
			content: [{ type: "text", text: big }],
			isError: false,
		});
		expect(nested[0]).toBeUndefined();
	});

	it("parallel batch: waits for every sibling, then moves the largest first", async () => {
		await emit("turn_start", { turnIndex: 3 });
		for (const id of ["a", "b", "c"]) await emit("tool_call", { toolCallId: id, toolName: "bash", input: {} });
		const settled: string[] = [];
		const track = (id: string, size: number) =>
			result(id, "bash", id.repeat(size)).then((r) => {
				settled.push(id);
				return r;
			});
		const pa = track("a", 9_000);
		const pb = track("b", 11_000);
		await new Promise((r) => setTimeout(r, 20));
		expect(settled).toEqual([]);
		const pc = result("c", "bash", "c".repeat(11_500));
		const [a, b, c] = await Promise.all([pa, pb, pc]);
		expect(a).toBeUndefined();
		expect(b).toBeUndefined();
		expect(c?.content[0].text.startsWith("[Artifact ")).toBe(true);
	});

	it("a blocked sibling (tool_execution_end without tool_result) does not hold the batch", async () => {
		await emit("turn_start", { turnIndex: 4 });
		await emit("tool_call", { toolCallId: "ok", toolName: "bash", input: {} });
		await emit("tool_call", { toolCallId: "blocked", toolName: "bash", input: {} });
		const pending = result("ok", "bash", "short");
		await emit("tool_execution_end", {
			toolCallId: "blocked",
			toolName: "bash",
			result: { content: [] },
			isError: true,
		});
		expect(await pending).toBeUndefined();
	});

	it("recall_artifact pages and searches by id, and rejects bad ids and patterns clearly", {
		timeout: 20_000,
	}, async () => {
		await emit("turn_start", { turnIndex: 5 });
		const text = Array.from({ length: 5000 }, (_, i) => `row ${i + 1}`).join("\n");
		const stub = await result("r1", "bash", text);
		const id = /^\[Artifact ([0-9a-f]{12})/.exec(stub?.content[0].text ?? "")?.[1] ?? "";
		const path = /\[Full output stored: (.+) — page it/.exec(stub?.content[0].text ?? "")?.[1] ?? "";
		expect(readFileSync(path, "utf8")).toBe(text);
		const recall = tools.get("recall_artifact")!;
		const found = await recall.execute("q1", { id, pattern: "^row 4321$", context: 1 }, undefined, undefined, ctx);
		expect(found.content[0].text.split("\n").slice(1)).toEqual(["4320-row 4320", "4321:row 4321", "4322-row 4322"]);
		expect(found.details.headroom).toMatchObject({ projected: true });
		const page = await recall.execute("q2", { id: id.slice(0, 8), offset: 10, limit: 2 }, undefined, undefined, ctx);
		expect(page.content[0].text).toBe(
			`[Artifact ${id.slice(0, 8)}: lines 10-11 of 5000]\nrow 10\nrow 11\n[4989 more lines. Use offset=12 to continue.]`,
		);
		await expect(recall.execute("q3", { id: "../../etc/passwd" }, undefined, undefined, ctx)).rejects.toThrow(
			/^Invalid artifact id/,
		);
		// The store's own wording never reaches the model: ours names the id form and recent ids.
		const unknown = recall.execute("q4", { id: "deadbeefdead" }, undefined, undefined, ctx);
		await expect(unknown).rejects.toThrow(
			/^Unknown artifact id "deadbeefdead"; ids are the 12-hex ids in stub headers/,
		);
		await expect(unknown).rejects.toThrow(new RegExp(`Most recent ids: .*${id}`));
		await expect(recall.execute("q5", { id, pattern: "([" }, undefined, undefined, ctx)).rejects.toThrow(
			/Invalid regular expression/,
		);
		// A pattern that backtracks without end is stopped (in its worker) with advice, and Pi stays responsive.
		const slow = await result("r2", "bash", `${"a".repeat(30_000)}b`);
		const slowId = /^\[Artifact ([0-9a-f]{12})/.exec(slow?.content[0].text ?? "")?.[1] ?? "";
		let ticks = 0;
		const ticker = setInterval(() => ticks++, 50);
		await expect(
			recall
				.execute("q7", { id: slowId, pattern: "^(a+)+$" }, undefined, undefined, ctx)
				.finally(() => clearInterval(ticker)),
		).rejects.toThrow(/stopped after 5 s: the pattern takes too long.*Simplify it/);
		expect(ticks).toBeGreaterThan(0);
		const wide = await recall.execute("q6", { id, offset: 1, limit: 5000 }, undefined, undefined, ctx);
		expect(Buffer.byteLength(wide.content[0].text)).toBeLessThanOrEqual(24 * 1024);
		expect(wide.content[0].text).toMatch(/omitted/);
	});
});

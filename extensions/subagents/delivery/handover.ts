/**
 * Handing over: a child spawned with `after` opens its task with its inputs' final results, as one batch
 * through the shared allocator and projection (surface subagents.handover). The budget comes from the
 * CHILD's window: its model's context window, less its system prompt and tools and its answer, of which
 * HANDOVER_SHARE goes to the inputs and the rest stays for its own work. Each input's exact full text is
 * stored and named, so it is one `read` away; a structured input passes as its validated JSON (whole when it
 * fits, else named by its artifact); an isolated input's branch and patch are named.
 */

import type { ArtifactStore } from "../../shared/store/artifact-store.ts";
import type { SurfaceBudget } from "../../shared/surfaces.ts";
import { estimateTokens, utf8Length } from "../../shared/text/tokens.ts";
import type { HandoverInput } from "../children/requests.ts";
import { noRoomLine, noRoomUnsavedLine } from "../prompt/common.ts";
import {
	inputHeader,
	inputsIntro,
	inputWorktreeLine,
	structuredTooLargeLine,
	TASK_HEADING,
} from "../prompt/pipeline.ts";
import { type BatchInput, type BatchOutput, projectBatch } from "./batch.ts";

/** Share of the child's free window (after its system prompt, tools and answer) its inputs may take. */
export const HANDOVER_SHARE = 0.5;

/** Window of a context assumed when the child's model does not say (tokens). */
export const UNKNOWN_CONTEXT_WINDOW = 128_000;

/** The child's window as the budget needs it. */
export interface ChildWindow {
	/** Its model's context window, tokens. */
	contextWindow: number;
	/** Its model's output limit (kept free for its answer), tokens. */
	maxTokens?: number;
	/** Its system prompt and tool schemas, estimated in tokens. */
	overheadTokens: number;
}

/** The child's window from its model and the texts of its system prompt and tool schemas. */
export function childWindow(model: unknown, overheadTexts: string[]): ChildWindow {
	const m = (model ?? {}) as { contextWindow?: unknown; maxTokens?: unknown };
	const contextWindow =
		typeof m.contextWindow === "number" && m.contextWindow > 0 ? m.contextWindow : UNKNOWN_CONTEXT_WINDOW;
	const maxTokens = typeof m.maxTokens === "number" && m.maxTokens > 0 ? m.maxTokens : undefined;
	const overheadTokens = overheadTexts.reduce((sum, t) => sum + estimateTokens(t), 0);
	return { contextWindow, ...(maxTokens ? { maxTokens } : {}), overheadTokens };
}

export interface HandoverOptions {
	store: ArtifactStore;
	/** subagents.handover as configured. */
	budget: SurfaceBudget;
	window: ChildWindow;
}

/** The text an input passes on: its validated JSON when structured, else its final answer (or error + partial output). */
function passedText(input: HandoverInput): { text: string; json: boolean } {
	const structured = input.result?.extras?.structured;
	if (structured?.status === "valid") return { text: JSON.stringify(structured.value, null, 2), json: true };
	return { text: input.result?.text ?? "", json: false };
}

/** The dependent's first message: its inputs, then its own task; and the batch (for details and tests). */
export async function composeHandover(
	inputs: HandoverInput[],
	base: string,
	options: HandoverOptions,
): Promise<{ text: string; batch: BatchOutput }> {
	const prepared = await Promise.all(
		inputs.map(async (input) => {
			const passed = passedText(input);
			const put = await options.store.put("subagent-results", passed.text);
			const path = put.ok ? put.path : undefined;
			if (path && input.result && !passed.json) input.result.artifactPath ??= path;
			const changes = input.result?.extras?.changes;
			const extra = changes ? [inputWorktreeLine(changes.branch, changes.patchPath)] : [];
			return { input, passed, path, extra, bytes: utf8Length(passed.text) };
		}),
	);
	const batchInputs = (tooLarge: Set<number>): BatchInput[] =>
		prepared.map((p, i) => ({
			id: p.input.child.id,
			run: p.input.result?.run ?? p.input.child.run,
			header: inputHeader(p.input.child, p.bytes, p.path, p.extra),
			text: tooLarge.has(i) ? structuredTooLargeLine(p.bytes, p.path) : p.passed.text,
			noRoom: (stored, bytes, lines) =>
				stored.ok
					? noRoomLine(p.input.child, bytes, lines, stored.path)
					: noRoomUnsavedLine(p.input.child, bytes, stored.error),
		}));
	const batchOptions = {
		surface: "handover" as const,
		store: options.store,
		budget: options.budget,
		headShare: options.budget.headShare,
		usage: { tokens: options.window.overheadTokens, contextWindow: options.window.contextWindow },
		reservedOutputTokens: options.window.maxTokens,
		headroomShare: HANDOVER_SHARE,
	};
	let batch = await projectBatch(batchInputs(new Set()), batchOptions);
	// JSON cut in the middle is no JSON: a structured input that does not fit whole is named by its artifact.
	const tooLarge = new Set(prepared.flatMap((p, i) => (p.passed.json && batch.items[i].truncated ? [i] : [])));
	if (tooLarge.size > 0) batch = await projectBatch(batchInputs(tooLarge), batchOptions);
	const text = [inputsIntro(inputs.length), batch.text, TASK_HEADING, base].join("\n\n");
	return { text, batch };
}

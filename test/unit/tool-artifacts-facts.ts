/** Fixtures shared by the tool-artifacts unit tests: a tool result's facts and a numbered text. */
import type { ToolResultFacts } from "../../extensions/tool-artifacts/artifacts.ts";

/** A bash result of `make` whose only content is `over.text`; any other field can be overridden. */
export const fact = (over: Partial<ToolResultFacts> & { text: string }): ToolResultFacts => ({
	toolName: "bash",
	toolCallId: "call_1",
	input: { command: "make" },
	content: [{ type: "text", text: over.text }],
	details: undefined,
	isError: false,
	...over,
});

/** `n` lines `<prefix> 1` … `<prefix> n`, joined with "\n" (no trailing newline). */
export const numbered = (n: number, prefix = "line") =>
	Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join("\n");

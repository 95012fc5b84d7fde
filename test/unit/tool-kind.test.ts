/** Which outputs are logs: a command's (by name or by the configured kind), a user's shell command, any tool's error. */
import { describe, expect, it } from "vitest";
import { classifyTool, isLogOutput } from "../../extensions/shared/text/tool-kind.ts";
import { classifyTool as fromToolArtifacts } from "../../extensions/tool-artifacts/classify.ts";

describe("isLogOutput", () => {
	it("a command tool's output is a log; a read, a search, a listing or a web page is not", () => {
		for (const toolName of ["bash", "run_tests", "execCommand", "mcp.shell", "powershell"])
			expect(isLogOutput({ toolName })).toBe(true);
		for (const toolName of ["read", "grep", "ls", "web_fetch", "edit", "write", "mystery"])
			expect(isLogOutput({ toolName })).toBe(false);
	});

	it("any tool's error is a log", () => {
		expect(isLogOutput({ toolName: "read", isError: true })).toBe(true);
		expect(isLogOutput({ toolName: "read", isError: false })).toBe(false);
	});

	it("the configured kind wins over the name", () => {
		expect(isLogOutput({ toolName: "go_runner" })).toBe(false);
		expect(isLogOutput({ toolName: "go_runner", overrides: { go_runner: "command" } })).toBe(true);
		expect(isLogOutput({ toolName: "bash", overrides: { bash: "file" } })).toBe(false);
	});

	it("tool-artifacts classifies with the same table", () => {
		expect(fromToolArtifacts).toBe(classifyTool);
	});
});

/**
 * Helpers shared by the subagents end-to-end tests and the demo: long numbered answers, request
 * classification (parent vs child share one scripted server) and footer parsing.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import { ASK_TOOL_TEXT } from "../../extensions/subagents/prompt/ask.ts";
import { CHILD_SYSTEM_APPEND } from "../../extensions/subagents/prompt/common.ts";
import { type ChatRequest, messageText } from "../fixtures/scripted-server.ts";

/** `BEGIN-<tag>` (or `BEGIN`), `lines` numbered lines, `END-<tag>`, padded to exactly `totalBytes` (ASCII). */
export function numberedAnswer(tag: string, lines: number, totalBytes: number): string {
	const begin = tag ? `BEGIN-${tag}` : "BEGIN";
	const end = tag ? `END-${tag}` : "END";
	const fixed = begin.length + 1 + end.length + lines; // newlines after BEGIN and after each numbered line
	const perLine = Math.floor((totalBytes - fixed) / lines);
	let extra = totalBytes - fixed - perLine * lines;
	const out: string[] = [begin];
	for (let i = 1; i <= lines; i++) {
		const label = `${tag}${String(i).padStart(4, "0")} `;
		const width = perLine + (extra > 0 ? 1 : 0);
		if (extra > 0) extra--;
		out.push(label + "x".repeat(Math.max(0, width - label.length)));
	}
	out.push(end);
	return out.join("\n");
}

/** The child's requests carry the system-prompt addition of the subagents extension. */
export function isChild(req: ChatRequest): boolean {
	return req.system.includes(CHILD_SYSTEM_APPEND);
}

/** Text of the last message when it is a tool result, "" otherwise. */
export function lastToolText(req: ChatRequest): string {
	return req.last?.role === "tool" ? messageText(req.last) : "";
}

/** Names of the tools the assistant called so far in this request's history. */
export function calledTools(req: ChatRequest): string[] {
	return req.body.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.function.name));
}

/** Tool result texts of the request's history, in order. */
export function toolTexts(req: ChatRequest): string[] {
	return req.body.messages.filter((m) => m.role === "tool").map((m) => messageText(m));
}

/** User-role texts of the request (custom messages reach the model as user messages). */
export function userTexts(req: ChatRequest): string[] {
	return req.body.messages.filter((m) => m.role === "user").map((m) => messageText(m));
}

export interface FooterRead {
	path: string;
	offset: number;
	limit: number;
}

const READ_CALL = /read\(path="([^"]+)", offset=(\d+), limit=(\d+)\)/g;

/** Every read call printed in projection footers, in order. */
export function footerReads(text: string): FooterRead[] {
	return [...text.matchAll(READ_CALL)].map((m) => ({ path: m[1], offset: Number(m[2]), limit: Number(m[3]) }));
}

export function utf8Bytes(text: string): number {
	return Buffer.byteLength(text, "utf8");
}

export function sha256(text: string): string {
	return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Facts about an artifact on disk, for assertions. */
export function artifactFacts(path: string): { content: string; mode: number; name: string } {
	return { content: readFileSync(path, "utf8"), mode: statSync(path).mode & 0o777, name: basename(path) };
}

/** Lines `offset`…`offset+limit-1` (1-based) as Pi's read counts them. */
export function linesOf(text: string, offset: number, limit: number): string[] {
	return text.split("\n").slice(offset - 1, offset - 1 + limit);
}

/** How many of the BEGIN-/END- pairs of `tags` a text keeps. */
export function pairsKept(text: string, tags: string[]): number {
	return tags.filter((t) => text.includes(`BEGIN-${t}`) && text.includes(`END-${t}`)).length;
}

/**
 * The tools a child's requests carry, sorted: its own `tools` plus the package's channel to its parent
 * (ask_parent), which every child has while `subagents.maxQuestions` is above 0 (the default).
 */
export function childTools(own: readonly string[]): string[] {
	return [...own, ASK_TOOL_TEXT.name].sort();
}

/**
 * A child's transcript for the live view, read from its session file (the ground truth, for a child
 * of this process and for one from an earlier process alike). The reader follows the file as Pi
 * appends to it: only the new bytes are read on each poll, whole lines parsed, a torn last line kept
 * for the next poll. Items are plain data; tool results are shortened through the one projection
 * (named surface `subagents.viewToolResult`), with the full text one `read` away.
 */
import { closeSync, fstatSync, lstatSync, openSync, readSync } from "node:fs";
import { contentText } from "../../shared/text/content.ts";

/** One thing the child did or was told, in order. */
export type TranscriptItem =
	| { kind: "task" | "message"; text: string }
	| { kind: "assistant"; text: string }
	| { kind: "toolCall"; id: string; name: string; args: string }
	| { kind: "toolResult"; id: string; name: string; text: string; isError: boolean };

/** Where the transcript stands: still following the file, or why it cannot be read. */
export type TranscriptState = { ok: true } | { ok: false; reason: "no-file" | "gone" | "unreadable"; detail: string };

/** Bytes read per poll at most (a huge session is followed in steps, never read at once). */
export const READ_STEP_BYTES = 4 * 1024 * 1024;

type SessionLine = {
	type?: string;
	message?: { role?: string; content?: unknown; toolName?: string; toolCallId?: string; isError?: boolean };
};

/** One line of arguments for a tool call row: `key=value` pairs, values on one line. */
export function briefArgs(args: unknown): string {
	if (!args || typeof args !== "object") return typeof args === "string" ? args : "";
	const parts: string[] = [];
	for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
		let shown: string;
		if (typeof value === "string") shown = JSON.stringify(value);
		else {
			try {
				shown = JSON.stringify(value) ?? String(value);
			} catch {
				shown = String(value);
			}
		}
		parts.push(`${key}=${shown}`);
	}
	return parts.join(" ").replace(/\s+/g, " ");
}

/** The items of one session entry (pure). The first user message is the task; later ones are messages. */
export function itemsOfEntry(entry: unknown, seenTask: boolean): TranscriptItem[] {
	const e = (entry ?? {}) as SessionLine;
	if (e.type !== "message" || !e.message) return [];
	const m = e.message;
	switch (m.role) {
		case "user": {
			const text = contentText(m.content, "omitted");
			return [{ kind: seenTask ? "message" : "task", text }];
		}
		case "assistant": {
			const out: TranscriptItem[] = [];
			for (const part of Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : []) {
				if (part?.type === "text" && typeof part.text === "string" && part.text.trim()) {
					out.push({ kind: "assistant", text: part.text });
				} else if (part?.type === "toolCall") {
					out.push({
						kind: "toolCall",
						id: String(part.id ?? ""),
						name: String(part.name ?? "tool"),
						args: briefArgs(part.arguments),
					});
				}
			}
			return out;
		}
		case "toolResult":
			return [
				{
					kind: "toolResult",
					id: String(m.toolCallId ?? ""),
					name: String(m.toolName ?? "tool"),
					text: contentText(m.content, "omitted"),
					isError: Boolean(m.isError),
				},
			];
		case "custom":
			return [{ kind: "message", text: contentText(m.content, "omitted") }];
		default:
			return [];
	}
}

/** Follows one session file. */
export class TranscriptReader {
	readonly items: TranscriptItem[] = [];
	state: TranscriptState = { ok: true };
	private offset = 0;
	private rest = "";
	private seenTask = false;
	private identity: { dev: number; ino: number } | undefined;

	constructor(readonly path: string | undefined) {
		if (!path) this.state = { ok: false, reason: "no-file", detail: "this child has no session file yet" };
	}

	/** Read what was appended since the last poll; true when something new arrived. */
	poll(): boolean {
		if (!this.path) return false;
		let st: ReturnType<typeof lstatSync> | undefined;
		try {
			st = lstatSync(this.path, { throwIfNoEntry: false });
		} catch (error) {
			this.state = { ok: false, reason: "unreadable", detail: String((error as Error).message ?? error) };
			return false;
		}
		if (!st) {
			// Before its first reply Pi has not written a new child's file yet; a known one that vanished is gone.
			this.state =
				this.items.length > 0 || this.offset > 0
					? { ok: false, reason: "gone", detail: this.path }
					: { ok: false, reason: "no-file", detail: this.path };
			return false;
		}
		if (!st.isFile()) {
			this.state = { ok: false, reason: "unreadable", detail: `${this.path} is not a regular file` };
			return false;
		}
		const same = this.identity && this.identity.dev === st.dev && this.identity.ino === st.ino;
		if (!same || st.size < this.offset) this.reset();
		this.identity = { dev: st.dev, ino: st.ino };
		this.state = { ok: true };
		if (st.size === this.offset) return false;
		return this.readFrom(st.size);
	}

	private reset(): void {
		this.items.length = 0;
		this.offset = 0;
		this.rest = "";
		this.seenTask = false;
	}

	private readFrom(size: number): boolean {
		let fd: number | undefined;
		try {
			fd = openSync(this.path as string, "r");
			const st = fstatSync(fd);
			if (!st.isFile()) return false;
			const length = Math.min(READ_STEP_BYTES, Math.max(0, size - this.offset));
			const buffer = Buffer.alloc(length);
			const read = readSync(fd, buffer, 0, length, this.offset);
			// Cut at the last newline so no multi-byte character or JSON line is split between polls.
			const lastNewline = buffer.lastIndexOf(0x0a, read - 1);
			if (lastNewline < 0) return false;
			this.offset += lastNewline + 1;
			const chunk = this.rest + buffer.subarray(0, lastNewline + 1).toString("utf8");
			this.rest = "";
			let added = false;
			for (const line of chunk.split("\n")) {
				if (!line.trim()) continue;
				let entry: unknown;
				try {
					entry = JSON.parse(line);
				} catch {
					continue; // a line Pi did not write whole: skip it rather than show garbage
				}
				const items = itemsOfEntry(entry, this.seenTask);
				if (items.some((i) => i.kind === "task")) this.seenTask = true;
				if (items.length > 0) {
					this.items.push(...items);
					added = true;
				}
			}
			return added;
		} catch (error) {
			this.state = { ok: false, reason: "unreadable", detail: String((error as Error).message ?? error) };
			return false;
		} finally {
			if (fd !== undefined) closeSync(fd);
		}
	}
}

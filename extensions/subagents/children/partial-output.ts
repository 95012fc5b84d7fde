/**
 * What a child's own session file holds of its last run: the text of its assistant replies after the last
 * user message (its task, or the text subagent_send gave it). Read when the parent's process ended while the
 * child ran, so the next start can report what it had produced. Pi writes a session file whole lines at a
 * time, from the first assistant reply on; a reply still streaming at the end is not in it.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { type Spend, spendOfSessionText } from "../../shared/budget/spend.ts";
import { contentText } from "../../shared/text/content.ts";

/** The file's tail read at most, in bytes (the parent is told the file's path, which has all of it). */
export const PARTIAL_READ_MAX_BYTES = 8 * 1024 * 1024;

/** What was found: the text (possibly empty), or why the file could not be read. */
export type PartialOutput = { ok: true; text: string } | { ok: false; reason: string };

type Line = { type?: string; message?: { role?: string; content?: unknown } };

/** The assistant text of the last run in a session file's JSONL text (pure). */
export function lastRunText(jsonl: string): string {
	let parts: string[] = [];
	for (const raw of jsonl.split("\n")) {
		if (!raw.startsWith("{")) continue;
		let line: Line;
		try {
			line = JSON.parse(raw) as Line;
		} catch {
			continue; // a torn last line
		}
		if (line.type !== "message" || !line.message) continue;
		if (line.message.role === "user") parts = [];
		else if (line.message.role === "assistant") {
			const text = contentText(line.message.content, "omitted").trim();
			if (text.length > 0) parts.push(text);
		}
	}
	return parts.join("\n\n");
}

/**
 * Opened without blocking and without following a final symlink: the path comes from a session record, and a
 * FIFO or a device there must not freeze the main thread (the open of a FIFO waits for a writer).
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);

/** Read the last run's assistant text from a session file; a missing file is no output, not an error. */
export function readPartialOutput(sessionFile: string | undefined): PartialOutput {
	const tail = readTail(sessionFile);
	return tail.ok ? { ok: true, text: lastRunText(tail.text) } : tail;
}

/** What a child's session file says it spent (every run; at most its last PARTIAL_READ_MAX_BYTES), if readable. */
export function readSessionSpend(sessionFile: string | undefined): Spend | undefined {
	const tail = readTail(sessionFile);
	return tail.ok && tail.text.length > 0 ? spendOfSessionText(tail.text) : undefined;
}

/** The file's text (its last PARTIAL_READ_MAX_BYTES, from a whole line); a missing file is empty text. */
function readTail(sessionFile: string | undefined): PartialOutput {
	if (!sessionFile) return { ok: true, text: "" };
	let fd: number;
	try {
		fd = openSync(sessionFile, OPEN_FLAGS);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		return code === "ENOENT" ? { ok: true, text: "" } : { ok: false, reason: String(error) };
	}
	try {
		const st = fstatSync(fd);
		if (!st.isFile()) return { ok: false, reason: `${sessionFile} is not a regular file` };
		const size = st.size;
		const length = Math.min(size, PARTIAL_READ_MAX_BYTES);
		const buffer = Buffer.alloc(length);
		readSync(fd, buffer, 0, length, size - length);
		let text = buffer.toString("utf8");
		if (length < size) text = text.slice(text.indexOf("\n") + 1); // drop the torn first line
		return { ok: true, text };
	} catch (error) {
		return { ok: false, reason: String(error) };
	} finally {
		closeSync(fd);
	}
}

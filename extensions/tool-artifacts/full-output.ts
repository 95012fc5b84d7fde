/**
 * Recovering a tool's complete output (bash; on Pi 1.x also MCP and codemode, which cut head + tail and
 * name the file in `details.fullOutputPath` and a last `[Full output: <path> (read it with offset/limit)]` line). Pi's bash keeps only the last 50 KB (or 2,000 lines) in the
 * result and, when it cut, streams everything to a temp file named in `details.fullOutputPath`
 * (and, in the text, in a last `[Showing … Full output: <path>]` notice — the only place it survives
 * when Pi 0.73 turns a non-zero exit into an error result without details).
 *
 * The file is Pi's, in the temp directory: it is opened without following symlinks, must be a
 * regular file, is size-bounded, a path taken from the text must have Pi's temp-file name, and the
 * file is accepted only when the text the tool showed is its own tail (so a command cannot point us
 * at an arbitrary file by printing a fake notice).
 */
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { basename, isAbsolute } from "node:path";

/** Largest full output read back into an artifact, in bytes; bigger files stay partial (and the stub says so). */
export const MAX_FULL_OUTPUT_BYTES = 256 * 1024 * 1024;

/** Pi's bash temp files: `pi-bash-<16 hex>.log`. */
const TEMP_NAME = /^pi-bash-[0-9a-f]{16}\.log$/;

/**
 * The last-line notice Pi's bash appends when it cut the output; group 1 or 2 is the output's total lines
 * ("of T", or the last line's number), group 3 the path.
 */
const NOTICE =
	/\n\n\[Showing (?:lines \d+-\d+ of (\d+)(?: \([^)\]]*\))?|last [^\]]* of line (\d+) \(line is [^)]*\))\. Full output: ([^\]\n]+)\]$/;

/** What Pi's bash shows in place of an empty tail (the last line alone was over its byte limit). */
const NO_OUTPUT = "(no output)";

/**
 * The notice of tools that cut head+tail and name the file (Pi 1.x's MCP and codemode):
 * `[Full output: <path> (read it with offset/limit)]` on the last line.
 */
const HEAD_TAIL_NOTICE = /\n\n\[Full output: [^\]\n]+ \(read it with offset\/limit\)\]$/;
/** Characters of the shown tail a file named in `details` must end with (head+tail cuts show only a tail of it). */
const DETAILS_TAIL_CHECK_CHARS = 256;

/** Statuses Pi appends after the notice (error results): "Command exited with code N" and friends. */
const STATUS =
	/\n\n(?:Command exited with code -?\d+|Command aborted|Command timed out after [^\n]*|Command terminated without an exit code)$/;

/** Where the complete output lives according to the result. */
export interface FullOutputLocation {
	/** Absolute path of the temp file. */
	path: string;
	/** Where the path came from: Pi's details (trusted) or the text's notice (verified against the file). */
	source: "details" | "notice";
	/** The text the tool showed before its notice (used to verify a path from the notice). */
	shownTail: string;
	/** The output's total lines as the notice states them (a path from the notice is checked against it). */
	totalLines?: number;
}

/** Pure: the status line Pi appended to an error result ("Command exited with code 2"), if any. */
export function trailingStatus(text: string): string | undefined {
	const m = STATUS.exec(text);
	return m ? m[0].trim() : undefined;
}

/** Pure: find the full-output file of a bash result, if it names one. */
export function locateFullOutput(text: string, details: unknown): FullOutputLocation | undefined {
	const statusMatch = STATUS.exec(text);
	const body = statusMatch ? text.slice(0, statusMatch.index) : text;
	const notice = NOTICE.exec(body);
	const headTail = notice ? undefined : HEAD_TAIL_NOTICE.exec(body);
	const shownTail = notice ? body.slice(0, notice.index) : headTail ? body.slice(0, headTail.index) : body;
	const fromDetails =
		details && typeof details === "object" ? (details as { fullOutputPath?: unknown }).fullOutputPath : undefined;
	if (typeof fromDetails === "string" && isAbsolute(fromDetails)) {
		return { path: fromDetails, source: "details", shownTail };
	}
	const fromNotice = notice?.[3];
	if (notice && fromNotice && isAbsolute(fromNotice) && TEMP_NAME.test(basename(fromNotice))) {
		return { path: fromNotice, source: "notice", shownTail, totalLines: Number(notice[1] ?? notice[2]) };
	}
	return undefined;
}

/** True when the result says output was cut (so a missing file means the complete output is gone). */
export function wasTruncated(text: string, details: unknown): boolean {
	const truncation =
		details && typeof details === "object"
			? (details as { truncation?: { truncated?: unknown } }).truncation
			: undefined;
	if (truncation && truncation.truncated === true) return true;
	const statusMatch = STATUS.exec(text);
	return NOTICE.test(statusMatch ? text.slice(0, statusMatch.index) : text);
}

/** Why the complete output could not be recovered (worded for the model in prompt.ts). */
export type FullOutputFailure =
	| { code: "deleted" }
	| { code: "symlink" }
	| { code: "not-a-file" }
	| { code: "too-large"; maxBytes: number }
	| { code: "mismatch" }
	/** Opening or reading failed; `errno` is the system's error code when there is one (e.g. "EACCES"). */
	| { code: "unreadable"; errno?: string }
	/** The result says it was cut but names no file. */
	| { code: "no-file" };

/** What reading the full output gave. */
export type FullOutputRead = { ok: true; text: string } | { ok: false; failure: FullOutputFailure };

/** The errno code of a thrown fs error, if it has one. */
function errnoOf(error: unknown): string | undefined {
	const code = (error as NodeJS.ErrnoException | undefined)?.code;
	return typeof code === "string" && /^[A-Z0-9_]{1,32}$/.test(code) ? code : undefined;
}

/** Bytes read per step: bounds what one read holds, and each read goes to the thread pool. */
export const READ_CHUNK_BYTES = 1024 * 1024;
/** Extra bytes read before the shown tail (a character cut at the window's start decodes to U+FFFD). */
const TAIL_MARGIN_BYTES = 64;

/** Pi's full-output file, opened and checked (a regular file within the cap whose end is what was shown). */
export interface OpenedOutput {
	handle: FileHandle;
	/** Its size in bytes when checked. */
	size: number;
	location: FullOutputLocation;
}

/**
 * Open Pi's full-output file without blocking or following anything: O_NONBLOCK (a FIFO planted under a
 * temp-file name opens at once instead of waiting for a writer), O_NOFOLLOW, then fstat → a regular file
 * within the cap, and its end (read alone, before anything else) is what was shown. The caller closes it.
 */
export async function openFullOutput(
	location: FullOutputLocation,
): Promise<{ ok: true; opened: OpenedOutput } | { ok: false; failure: FullOutputFailure }> {
	let handle: FileHandle;
	try {
		handle = await open(location.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (error) {
		const errno = errnoOf(error);
		if (errno === "ENOENT") return { ok: false, failure: { code: "deleted" } };
		if (errno === "ELOOP") return { ok: false, failure: { code: "symlink" } };
		return { ok: false, failure: { code: "unreadable", errno } };
	}
	const fail = async (failure: FullOutputFailure) => {
		await handle.close().catch(() => undefined);
		return { ok: false as const, failure };
	};
	try {
		const st = await handle.stat();
		if (!st.isFile()) return fail({ code: "not-a-file" });
		if (st.size > MAX_FULL_OUTPUT_BYTES) return fail({ code: "too-large", maxBytes: MAX_FULL_OUTPUT_BYTES });
		const want = Math.min(st.size, Buffer.byteLength(location.shownTail, "utf8") + TAIL_MARGIN_BYTES);
		const tail = Buffer.allocUnsafe(want);
		const { bytesRead } = await handle.read(tail, 0, want, st.size - want);
		if (!tailMatches(tail.subarray(0, bytesRead).toString("utf8"), location, st.size)) {
			return fail({ code: "mismatch" });
		}
		return { ok: true, opened: { handle, size: st.size, location } };
	} catch (error) {
		return fail({ code: "unreadable", errno: errnoOf(error) });
	}
}

/**
 * The whole file as text, read in READ_CHUNK_BYTES steps off the main thread into one buffer (for outputs the
 * caller keeps whole in memory), its line count checked against the notice's. Closes the file.
 */
export async function readOpenedOutput(opened: OpenedOutput): Promise<FullOutputRead> {
	const { handle, size, location } = opened;
	try {
		const buffer = Buffer.allocUnsafe(size);
		let read = 0;
		while (read < size) {
			const { bytesRead } = await handle.read(buffer, read, Math.min(READ_CHUNK_BYTES, size - read), read);
			if (bytesRead === 0) break;
			read += bytesRead;
		}
		const bytes = buffer.subarray(0, read);
		if (!linesMatch(location, newlinesIn(bytes), read, read > 0 && bytes[read - 1] === 10)) {
			return { ok: false, failure: { code: "mismatch" } };
		}
		return { ok: true, text: bytes.toString("utf8") };
	} catch (error) {
		return { ok: false, failure: { code: "unreadable", errno: errnoOf(error) } };
	} finally {
		await handle.close().catch(() => undefined);
	}
}

/** Open, check and read Pi's full-output file (see openFullOutput and readOpenedOutput). */
export async function readFullOutput(location: FullOutputLocation): Promise<FullOutputRead> {
	const opened = await openFullOutput(location);
	return opened.ok ? readOpenedOutput(opened.opened) : opened;
}

/** Newline bytes in `bytes`. */
export function newlinesIn(bytes: Uint8Array): number {
	let n = 0;
	for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) n++;
	return n;
}

/**
 * Pure: whether a full-output file whose text ends with `fileTail` (and holds `newlines` "\n" in all) is the
 * output the result showed. Pi shows the last lines of the output joined by "\n": on 0.73 exactly the file's
 * end, on 1.x the same without the file's one final "\n" (it does not count an empty last line). So a path
 * from the text (anyone can print a notice) must end with exactly what was shown, or with it and one "\n",
 * and have the notice's line count in either counting; when Pi showed nothing of it ("(no output)": the last
 * line alone was over its byte limit) the count must match and the file must be over Pi's limits. A path Pi
 * put in its details (bash, or MCP/codemode, which show head + tail) is Pi's own: its end must match the end
 * of what was shown, trailing newlines aside.
 */
export function matchesShown(
	fileTail: string,
	location: FullOutputLocation,
	file: { newlines: number; bytes: number },
): boolean {
	return (
		tailMatches(fileTail, location, file.bytes) &&
		linesMatch(location, file.newlines, file.bytes, fileTail.endsWith("\n"))
	);
}

/** Pure: the end of the file (`fileTail`, of a file of `bytes` bytes) is what was shown (see matchesShown). */
export function tailMatches(fileTail: string, location: FullOutputLocation, bytes: number): boolean {
	const noOutput = location.shownTail === NO_OUTPUT;
	const shown = noOutput ? "" : location.shownTail;
	if (location.source === "details") {
		const expected = withoutFinalNewlines(shown).slice(-DETAILS_TAIL_CHECK_CHARS);
		return withoutFinalNewlines(fileTail).endsWith(expected);
	}
	if (noOutput) return bytes > 0; // linesMatch asks for the stated count and a file over Pi's limits
	return shown !== "" && (fileTail.endsWith(shown) || fileTail.endsWith(`${shown}\n`));
}

/** Pure: a path from the notice is a file with the line count it states, in either Pi line's counting. */
export function linesMatch(
	location: FullOutputLocation,
	newlines: number,
	bytes: number,
	endsWithNewline: boolean,
): boolean {
	if (location.source === "details") return true;
	const total = location.totalLines;
	const counted = total === newlines + 1 || (total === newlines && endsWithNewline) || (total === 0 && bytes === 0);
	if (!counted) return false;
	return location.shownTail !== NO_OUTPUT || newlines + 1 > PI_MAX_LINES || bytes > PI_MAX_BYTES;
}

/** The text without the "\n"s it ends with (a loop: a regex would be quadratic on a text of newlines). */
function withoutFinalNewlines(text: string): string {
	let end = text.length;
	while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
	return end === text.length ? text : text.slice(0, end);
}

/** Pi's bash limits (its DEFAULT_MAX_LINES and DEFAULT_MAX_BYTES): an output within both was not cut. */
const PI_MAX_LINES = 2000;
const PI_MAX_BYTES = 50 * 1024;

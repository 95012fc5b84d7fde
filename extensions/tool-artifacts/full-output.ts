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
import { DEFAULT_NOTABLE_LINE_CHARS, scanNotable } from "../shared/text/notable.ts";
import { countNewlines } from "../shared/text/utf8.ts";

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

/** Characters at a result's end its notices are looked for in (a notice holds one path: far less). */
const END_WINDOW = 16 * 1024;

/** `re` (anchored at the end) run on the last END_WINDOW characters only; `index` is in `text`'s terms. */
function atEnd(re: RegExp, text: string): { match: RegExpExecArray; index: number } | undefined {
	const from = Math.max(0, text.length - END_WINDOW);
	const match = re.exec(from === 0 ? text : text.slice(from));
	return match ? { match, index: from + match.index } : undefined;
}

/** Pure: the status line Pi appended to an error result ("Command exited with code 2"), if any. */
export function trailingStatus(text: string): string | undefined {
	const m = atEnd(STATUS, text);
	return m ? m.match[0].trim() : undefined;
}

/** Pure: find the full-output file of a bash result, if it names one. */
export function locateFullOutput(text: string, details: unknown): FullOutputLocation | undefined {
	const statusMatch = atEnd(STATUS, text);
	const body = statusMatch ? text.slice(0, statusMatch.index) : text;
	const found = atEnd(NOTICE, body);
	const notice = found?.match;
	const headTail = notice ? undefined : atEnd(HEAD_TAIL_NOTICE, body);
	const shownTail = found ? body.slice(0, found.index) : headTail ? body.slice(0, headTail.index) : body;
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
	const statusMatch = atEnd(STATUS, text);
	return atEnd(NOTICE, statusMatch ? text.slice(0, statusMatch.index) : text) !== undefined;
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

/** Outputs larger than this are never held whole in memory: stored in chunks and shown through a bounded view. */
export const LARGE_OUTPUT_BYTES = 32 * 1024 * 1024;
/** Bytes of a large output's start, and of its end, that its view keeps verbatim. */
export const VIEW_REGION_BYTES = 4 * 1024 * 1024;

/** UTF-16 units of decoded text the notable scan of a large output takes at a time (whole lines). */
const SCAN_UNIT_BYTES = 2 * 1024 * 1024;

/** Why a large output was refused after it was read (its line count is not the notice's). */
export const LINES_MISMATCH = "its temp file does not match the output shown";

/**
 * One pass over a large full-output file in READ_CHUNK_BYTES steps, for the artifact store to hash and write
 * chunk by chunk (`chunks`, then `accept`), keeping only its first and last VIEW_REGION_BYTES and its counts.
 * `view()` is then a stand-in text of exactly the file's UTF-8 bytes and lines: its start and end verbatim (cut
 * at line ends), the middle replaced by filler lines of the same lengths in bytes, never shown (the stub's head
 * and tail come from the verbatim regions, its footer counts and read calls are the file's own, and the notable
 * scan runs on this bounded view). Memory: the two regions and a filler of about half the middle's bytes.
 */
export class LargeOutputReader {
	private newlines = 0;
	private read = 0;
	private lastByte = -1;
	private readonly head: Buffer;
	private readonly tail: Buffer;
	private readonly tailFrom: number;
	/** True once `accept` refused the content (the caller falls back to the text shown). */
	refused = false;
	/** Notable lines (and their context) the scan found in each SCAN_UNIT_BYTES of the text, by line number. */
	private readonly found = new Map<number, string>();
	private readonly decoder = new TextDecoder();
	/** Decoded text not scanned yet (from the last scanned line end), and the line number it starts at. */
	private pending: string[] = [];
	private pendingUnits = 0;
	private pendingLine = 1;

	constructor(
		private readonly opened: OpenedOutput,
		regionBytes = VIEW_REGION_BYTES,
	) {
		const size = opened.size;
		this.head = Buffer.allocUnsafe(Math.min(regionBytes, size));
		const tailBytes = Math.min(regionBytes, size - this.head.length);
		this.tail = Buffer.allocUnsafe(tailBytes);
		this.tailFrom = size - tailBytes;
	}

	/** The file's bytes in order; each chunk is consumed before the next is read (the buffer is reused). */
	async *chunks(): AsyncGenerator<Uint8Array> {
		const { handle, size } = this.opened;
		const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, Math.max(1, size)));
		while (this.read < size) {
			const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - this.read), this.read);
			if (bytesRead === 0) break;
			const chunk = buffer.subarray(0, bytesRead);
			const at = this.read;
			this.newlines += newlinesIn(chunk);
			if (at < this.head.length) chunk.copy(this.head, at, 0, Math.min(bytesRead, this.head.length - at));
			if (at + bytesRead > this.tailFrom) {
				const from = Math.max(0, this.tailFrom - at);
				chunk.copy(this.tail, at + from - this.tailFrom, from, bytesRead);
			}
			this.read += bytesRead;
			this.lastByte = chunk[bytesRead - 1];
			this.feed(this.decoder.decode(chunk, { stream: true }), false);
			yield chunk;
		}
		this.feed(this.decoder.decode(), true);
	}

	/** The notable scan fed unit by unit (whole lines, about SCAN_UNIT_BYTES each), its lines kept by number. */
	private feed(piece: string, last: boolean): void {
		if (piece.length > 0) {
			this.pending.push(piece);
			this.pendingUnits += piece.length;
		}
		if (!last && this.pendingUnits < SCAN_UNIT_BYTES) return;
		const joined = this.pending.join("");
		const cut = last ? joined.length : joined.lastIndexOf("\n") + 1;
		if (cut === 0) return;
		const unit = joined.slice(0, cut);
		// A copy of each kept text: a slice would keep its whole unit alive.
		for (const l of scanNotable(unit).lines) {
			this.found.set(this.pendingLine + l.line - 1, Buffer.from(viewLine(l.text), "utf8").toString("utf8"));
		}
		this.pendingLine += countNewlines(unit);
		const rest = joined.slice(cut);
		this.pending = rest.length > 0 ? [rest] : [];
		this.pendingUnits = rest.length;
	}

	/** Asked after the last chunk: undefined to store, else why not (the file changed, or the count differs). */
	readonly accept = (): string | undefined => {
		const { size, location } = this.opened;
		const whole = this.read === size;
		if (whole && linesMatch(location, this.newlines, this.read, this.lastByte === 10)) return undefined;
		this.refused = true;
		return LINES_MISMATCH;
	};

	/** The stand-in text (see the class comment); call after the chunks were consumed. */
	view(): string {
		// A region cut inside a line is cut at a character's edge: a split UTF-8 character would decode to U+FFFD.
		const headEnd =
			this.head.length === this.read ? this.head.length : this.head.lastIndexOf(10) + 1 || completeUtf8End(this.head);
		const nl = this.tail.indexOf(10);
		// 0 (then past a split character's continuation bytes): the region starts inside a line
		const tailStart = this.tail.length === 0 ? 0 : nl + 1 || utf8CharStart(this.tail);
		const headText = this.head.subarray(0, headEnd).toString("utf8");
		const tailText = this.tail.subarray(tailStart).toString("utf8");
		const gapBytes = this.tailFrom + tailStart - headEnd;
		if (gapBytes <= 0) return headText + tailText;
		const gapNewlines =
			this.newlines - newlinesIn(this.head.subarray(0, headEnd)) - newlinesIn(this.tail.subarray(tailStart));
		const endsWithNewline = this.tail.length > 0 && nl !== -1;
		// The notable lines of the middle, at their own line numbers (whole lines of the gap only).
		const firstGapLine = newlinesIn(this.head.subarray(0, headEnd)) + 1;
		const gapLines = endsWithNewline ? gapNewlines : gapNewlines + 1;
		const startsAtLine = headEnd === 0 || this.head[headEnd - 1] === 10;
		const kept = [...this.found.entries()]
			.filter(([n]) => n >= firstGapLine + (startsAtLine ? 0 : 1) && n < firstGapLine + gapNewlines)
			.sort((a, b) => a[0] - b[0]);
		const keptBytes = kept.reduce((sum, [, text]) => sum + Buffer.byteLength(text, "utf8"), 0);
		const twoByte =
			/[^\u0000-\u00ff]/.test(headText) ||
			/[^\u0000-\u00ff]/.test(tailText) ||
			kept.some(([, text]) => /[^\u0000-\u00ff]/.test(text));
		if (kept.length === 0 || keptBytes > gapBytes - gapNewlines) {
			return headText + filler(gapBytes, gapNewlines, endsWithNewline, twoByte) + tailText;
		}
		// Filler lines between the kept ones share what the kept lines leave of the middle's bytes.
		const fillerLines = gapLines - kept.length;
		const fillerBytes = gapBytes - gapNewlines - keptBytes;
		const per = fillerLines > 0 ? Math.floor(fillerBytes / fillerLines) : 0;
		let extra = fillerBytes - per * fillerLines;
		const parts: string[] = [];
		let next = firstGapLine; // the gap line the next part starts at
		const run = (lines: number, lastOpen: boolean) => {
			if (lines <= 0) return;
			const bytes = per * lines + extra + (lastOpen ? lines - 1 : lines);
			extra = 0;
			parts.push(filler(bytes, lastOpen ? lines - 1 : lines, !lastOpen, twoByte));
		};
		for (const [i, [n, text]] of kept.entries()) {
			run(n - next, false);
			// With no filler line to take them, the bytes the kept lines lack (their "\r", escapes, clipped part)
			// end the last kept line.
			const pad = fillerLines === 0 && i === kept.length - 1 ? filler(fillerBytes, 0, false, twoByte) : "";
			parts.push(`${text}${pad}\n`);
			next = n + 1;
		}
		run(firstGapLine + gapLines - next, !endsWithNewline);
		return headText + parts.join("") + tailText;
	}
}

/**
 * Pure: `bytes` UTF-8 bytes holding `newlines` "\n" (ending with one when `endsWithNewline`), the rest spread
 * evenly over its lines as characters that take 2 UTF-8 bytes in a one-byte string (3 in a two-byte one) and
 * match no notable-line key: half (two thirds of) the memory of the bytes they stand for.
 */
export function filler(bytes: number, newlines: number, endsWithNewline: boolean, twoByte: boolean): string {
	const char = twoByte ? "\u3000" : "\u00a0";
	const charBytes = twoByte ? 3 : 2;
	const seg = (b: number) => char.repeat(Math.floor(b / charBytes)) + " ".repeat(b % charBytes);
	const rest = bytes - newlines;
	if (newlines === 0) return seg(rest);
	const segments = endsWithNewline ? newlines : newlines + 1;
	const base = Math.floor(rest / segments);
	const extra = rest - base * segments;
	const last = endsWithNewline ? "" : seg(base);
	return `${seg(base + extra)}\n${`${seg(base)}\n`.repeat(newlines - 1)}${last}`;
}

/** The scan's mark of a clipped line (notable.ts). */
const CLIPPED = "\u2026";
/** What stands for the clip mark in a view: two Latin-1 units that are neither a word's nor white space. */
const CLIP_STAND_IN = "\u00b7\u00b7";

/**
 * Pure: a kept notable line as the view holds it. A line the scan clipped at the default length ends in "…",
 * the one unit beyond Latin-1 in most logs: it would make the whole view a two-byte string (twice the memory,
 * and the filler's wider unit). Such a line is kept one unit too long with two Latin-1 units instead, so the
 * scan of the view clips it at the same place and shows the same text; any other line is kept as it is.
 */
export function viewLine(text: string): string {
	if (text.length !== DEFAULT_NOTABLE_LINE_CHARS || !text.endsWith(CLIPPED)) return text;
	const rest = text.slice(0, -1);
	return /[^\u0000-\u00ff]/.test(rest) ? text : `${rest}${CLIP_STAND_IN}`;
}

/** Open, check and read Pi's full-output file (see openFullOutput and readOpenedOutput). */
export async function readFullOutput(location: FullOutputLocation): Promise<FullOutputRead> {
	const opened = await openFullOutput(location);
	return opened.ok ? readOpenedOutput(opened.opened) : opened;
}

/** Pure: the length of `bytes` without a UTF-8 character that its end cuts short. */
function completeUtf8End(bytes: Uint8Array): number {
	let lead = bytes.length - 1;
	while (lead > 0 && lead > bytes.length - 4 && (bytes[lead] & 0xc0) === 0x80) lead--;
	if (lead < 0) return 0;
	const b = bytes[lead];
	const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
	return lead + size > bytes.length ? lead : bytes.length;
}

/** Pure: where the first whole UTF-8 character of `bytes` starts (past at most 3 continuation bytes). */
function utf8CharStart(bytes: Uint8Array): number {
	let i = 0;
	while (i < 3 && i < bytes.length && (bytes[i] & 0xc0) === 0x80) i++;
	return i;
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

/**
 * Stub text: the pieces in their fixed order and the check that a text already is a stub. Pure.
 */
import { shortHash } from "../shared/text/format.ts";
import {
	STUB_FOOTER_PATTERN,
	STUB_HEADER_PATTERN,
	stubFooter,
	stubHeader,
	UNSTORED_STUB_FOOTER_PATTERN,
	UNSTORED_STUB_HEADER_PATTERN,
	unstoredStubFooter,
	unstoredStubHeader,
} from "./prompt.ts";

/** Hex characters of the sha256 used as a stub's id: short, and unambiguous for any realistic store. */
export const ARTIFACT_ID_HEX = 12;

/** The id of an artifact as stubs show it. */
export function artifactId(sha256: string): string {
	return shortHash(sha256, ARTIFACT_ID_HEX);
}

/** The facts a stub's first line states. */
export interface StubHeaderFacts {
	/** Artifact id (hex). */
	id: string;
	/** Name of the tool whose result it replaced. */
	tool: string;
	/** UTF-8 bytes and lines (as Pi's read counts) of the stored output. */
	bytes: number;
	lines: number;
	/** True when the stored output ends with "\n", so its last line (as read counts) is empty. */
	lastLineEmpty: boolean;
}

/** The facts a stub states. */
export interface StubParts extends StubHeaderFacts {
	/** Absolute path of the artifact. */
	path: string;
	/** Notes before the body (partial output, summary failure), one line each. */
	notes: string[];
	/** Label line of the body ("Summary …:" or "Excerpt:"). */
	label: string;
	/** The summary or the excerpt. */
	body: string;
	/**
	 * Set when the store could not keep the output: the stub then says NOT stored and why (`id` and
	 * `path` are unused), and names Pi's full-output file when bash saved one.
	 */
	notStored?: { reason: string; fullOutputFile?: string };
}

/** Pure: a stub's first and last lines. */
function stubEnds(parts: Omit<StubParts, "body">): { header: string; footer: string } {
	if (parts.notStored) {
		return {
			header: unstoredStubHeader(parts.tool, parts.bytes, parts.lines, parts.lastLineEmpty),
			footer: unstoredStubFooter(parts.notStored.reason, parts.notStored.fullOutputFile),
		};
	}
	return {
		header: stubHeader(parts.id, parts.tool, parts.bytes, parts.lines, parts.lastLineEmpty),
		footer: stubFooter(parts.path, parts.id),
	};
}

/** Pure: the stub text. First line header, last line footer, always. */
export function renderStub(parts: StubParts): string {
	const { header, footer } = stubEnds(parts);
	return [header, ...parts.notes, parts.label, parts.body, footer].join("\n");
}

/** Pure: bytes and lines the fixed parts of a stub take (everything but the body), for the body's budget. */
export function stubOverhead(parts: Omit<StubParts, "body">): { bytes: number; lines: number } {
	const { header, footer } = stubEnds(parts);
	const fixed = [header, ...parts.notes, parts.label, footer];
	return {
		bytes: fixed.reduce((sum, line) => sum + Buffer.byteLength(line, "utf8") + 1, 0),
		lines: fixed.length,
	};
}

/** Pure: true when `text` is a stub this extension made, stored or not (first and last lines both match). */
export function isStub(text: string): boolean {
	const firstNewline = text.indexOf("\n");
	const lastNewline = text.lastIndexOf("\n");
	if (firstNewline < 0 || lastNewline < 0) return false;
	const first = text.slice(0, firstNewline);
	const last = text.slice(lastNewline + 1);
	return (
		(STUB_HEADER_PATTERN.test(first) && STUB_FOOTER_PATTERN.test(last)) ||
		(UNSTORED_STUB_HEADER_PATTERN.test(first) && UNSTORED_STUB_FOOTER_PATTERN.test(last))
	);
}

/** Pure: the facts of a stub's first line, or undefined when it is not one. */
export function parseStubHeader(line: string): StubHeaderFacts | undefined {
	const m = STUB_HEADER_PATTERN.exec(line);
	if (!m) return undefined;
	const count = (digits: string) => Number(digits.replaceAll(",", ""));
	return { id: m[1], tool: m[2], bytes: count(m[3]), lines: count(m[4]), lastLineEmpty: m[5] !== undefined };
}

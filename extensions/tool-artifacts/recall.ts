/**
 * `recall_artifact`: page or search one stored tool output. The logic here is pure (text in, text
 * out); the adapter resolves the id through the artifact store, reads the file and bounds what this
 * returns through the projection primitive.
 */
import {
	RECALL_ERRORS,
	RECALL_GROUP_SEPARATOR,
	recallContinue,
	recallPageHeader,
	recallSearchHeader,
} from "./prompt.ts";

/** Lines a page shows when no limit is given. */
export const RECALL_DEFAULT_LIMIT_LINES = 400;
/** Longest pattern accepted, in characters (long patterns are where pathological backtracking hides). */
export const RECALL_MAX_PATTERN_CHARS = 500;
/** Most matching lines listed by one search. */
export const RECALL_MAX_MATCHES = 500;
/** Most context lines around each match. */
export const RECALL_MAX_CONTEXT_LINES = 20;
/** Accepted ids: hex only (no paths, no dots, no slashes), as the store's resolve expects. */
export const ARTIFACT_ID_PATTERN = /^[0-9a-f]{8,64}$/;

/** The tool's parameters after schema validation. */
export interface RecallParams {
	id: string;
	offset?: number;
	limit?: number;
	pattern?: string;
	context?: number;
	ignoreCase?: boolean;
}

/** A recall answer before bounding: text for the model, or an error that says what to do. */
export type RecallAnswer = { ok: true; text: string } | { ok: false; error: string };

/** Pure: check parameters that do not need the artifact. */
export function validateRecall(params: RecallParams): { ok: true } | { ok: false; error: string } {
	const id = params.id.trim().toLowerCase();
	if (!ARTIFACT_ID_PATTERN.test(id))
		return { ok: false, error: RECALL_ERRORS.badId(params.id, "ids are 8-64 hex characters") };
	if (params.pattern !== undefined && (params.offset !== undefined || params.limit !== undefined)) {
		return { ok: false, error: RECALL_ERRORS.bothModes };
	}
	if (params.pattern !== undefined) {
		const compiled = compilePattern(params.pattern, params.ignoreCase === true);
		if (!compiled.ok) return compiled;
	}
	return { ok: true };
}

/** Pure: compile the model's regular expression, or say why not. */
export function compilePattern(
	pattern: string,
	ignoreCase: boolean,
): { ok: true; regex: RegExp } | { ok: false; error: string } {
	if (pattern.length > RECALL_MAX_PATTERN_CHARS)
		return { ok: false, error: RECALL_ERRORS.patternTooLong(RECALL_MAX_PATTERN_CHARS) };
	try {
		return { ok: true, regex: new RegExp(pattern, ignoreCase ? "iu" : "u") };
	} catch (unicodeError) {
		try {
			// Patterns written for grep often have escapes the u flag rejects ("\-"); accept them without it.
			return { ok: true, regex: new RegExp(pattern, ignoreCase ? "i" : "") };
		} catch {
			return { ok: false, error: RECALL_ERRORS.badPattern((unicodeError as Error).message) };
		}
	}
}

/** Pure: lines offset..offset+limit-1 (1-based, as Pi's read counts) with a header and a continuation hint. */
export function pageArtifact(text: string, id: string, offset = 1, limit = RECALL_DEFAULT_LIMIT_LINES): RecallAnswer {
	const lines = text.split("\n");
	const total = lines.length;
	const first = Math.max(1, Math.floor(offset));
	if (first > total) return { ok: false, error: RECALL_ERRORS.offsetPastEnd(first, total) };
	const count = Math.max(1, Math.floor(limit));
	const last = Math.min(total, first + count - 1);
	const out = [recallPageHeader(id, first, last, total), ...lines.slice(first - 1, last)];
	if (last < total) out.push(recallContinue(last + 1, total));
	return { ok: true, text: out.join("\n") };
}

/** Pure: lines matching `regex`, numbered like grep -n ("N:" match, "N-" context, "--" between groups). */
export function searchArtifact(text: string, id: string, pattern: string, regex: RegExp, context = 0): RecallAnswer {
	const around = Math.max(0, Math.min(RECALL_MAX_CONTEXT_LINES, Math.floor(context)));
	const lines = text.split("\n");
	const matches: number[] = [];
	for (let i = 0; i < lines.length && matches.length < RECALL_MAX_MATCHES; i++) {
		regex.lastIndex = 0;
		if (regex.test(lines[i])) matches.push(i);
	}
	const capped = matches.length === RECALL_MAX_MATCHES;
	const out = [recallSearchHeader(id, pattern, matches.length, lines.length, capped)];
	let lastPrinted = -1;
	for (const m of matches) {
		const from = Math.max(0, m - around, lastPrinted + 1);
		const to = Math.min(lines.length - 1, m + around);
		if (lastPrinted >= 0 && from > lastPrinted + 1) out.push(RECALL_GROUP_SEPARATOR);
		for (let i = from; i <= to; i++) {
			const isMatch = i === m || matches.includes(i);
			out.push(`${i + 1}${isMatch ? ":" : "-"}${lines[i]}`);
		}
		lastPrinted = Math.max(lastPrinted, to);
	}
	return { ok: true, text: out.join("\n") };
}

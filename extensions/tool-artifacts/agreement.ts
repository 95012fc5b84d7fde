/**
 * Whether a model's summary and the notable-line scan agree that something failed. The scan is verbatim
 * evidence; a summary that mentions no failure where the scan found one is flagged in the stub, so the parent
 * never takes "the build passed" from a cheap model over the lines that say otherwise. Pure.
 *
 * The rule: the scan found a failure when a line it kept is a failure or a failing summary (weak evidence in a
 * run that passed is already dropped by the scan). The summary mentions a failure when it holds a failure word
 * (fail, error, exception, panic, fatal, crash, abort, traceback, segfault, timeout, non-zero exit, …) that is
 * not negated or counted as zero just before it ("no errors", "0 failed", "without failures", "none failed").
 */
import type { NotableLine } from "../shared/text/notable.ts";

/** Failure vocabulary of a summary, in any wording. */
const FAILURE_WORD =
	/\b(?:fail(?:s|ed|ing|ure|ures)?|errors?|errored|exceptions?|panic(?:s|ked)?|fatal|crash(?:es|ed)?|abort(?:s|ed)?|traceback|segfault|segmentation fault|timed? ?out|timeouts?|broken|regressions?|did not (?:pass|succeed|complete)|unsuccessful|non-?zero (?:exit|status|code)|exit(?:ed)? (?:with )?(?:code|status) [1-9]\d*)\b/gi;

/** Just before a failure word: it is negated or counted as zero. */
const NEGATED_BEFORE =
	/(?:\b(?:no|not|never|without|zero|none|nor|free of|0)\b[\s,:-]*(?:\w+[\s,:-]+){0,2}|\b0\s*(?:\w+\s+)?)$/i;
/** Just after a failure word: counted as zero ("failures: 0", "errors: none"). */
const ZERO_AFTER = /^\s*[:=]?\s*(?:0\b|none\b|zero\b)/i;

/** True when the summary text mentions a failure that is not negated or zero. */
export function mentionsFailure(summary: string): boolean {
	for (const m of summary.matchAll(FAILURE_WORD)) {
		const before = summary.slice(Math.max(0, m.index - 40), m.index);
		const after = summary.slice(m.index + m[0].length, m.index + m[0].length + 12);
		if (NEGATED_BEFORE.test(before) || ZERO_AFTER.test(after)) continue;
		return true;
	}
	return false;
}

/** True when the scan kept a failure or a failing summary line. */
export function scanFoundFailure(lines: readonly NotableLine[]): boolean {
	return lines.some((l) => l.kind === "failure" || l.failing);
}

/** True when the scan found a failure and the summary mentions none: the stub says the two disagree. */
export function summaryDisagrees(summary: string, lines: readonly NotableLine[]): boolean {
	return scanFoundFailure(lines) && !mentionsFailure(summary);
}

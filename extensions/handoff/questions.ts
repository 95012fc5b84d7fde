/**
 * How many questions a questions reply asks. The issue requires at least five; the prompt says so,
 * and this count is what the pipeline enforces (one corrective re-ask, then the shortfall is recorded).
 * Pure: text in, number out.
 */

/** The questions call must ask at least this many questions. */
export const MIN_QUESTIONS = 5;

/** `1.`, `2)`, `3:`, `Q4.`, `Q5:`, `(6)`, optionally behind markdown bullets, emphasis or a heading mark. */
const NUMBERED = /^(?:[-*+>#]\s*)*(?:\*\*|__)?\(?(?:q(?:uestion)?\s*)?\d{1,3}(?:[.):]|\*\*)+\s+\S/i;
/** A bullet at the start of a line: a question of its own even right below a numbered item. */
const BULLET = /^[-*+]\s+\S/;
/** Ends with a question mark, allowing closing emphasis, quotes or brackets after it. */
const QUESTION_END = /\?[\s*_"'`)\]]*$/;

/**
 * Count questions: each numbered line is one question; so is each line ending in "?" that is bulleted
 * or not part of a numbered item (a "?" on the second line of "1. …" continues that item and is not
 * counted again). A blank line ends an item.
 */
export function countQuestions(text: string): number {
	let count = 0;
	let inNumberedItem = false;
	for (const raw of String(text ?? "").split(/\r?\n/)) {
		const line = raw.trim();
		if (!line) {
			inNumberedItem = false;
			continue;
		}
		if (NUMBERED.test(line)) {
			count++;
			inNumberedItem = true;
		} else if (QUESTION_END.test(line) && (BULLET.test(line) || !inNumberedItem)) {
			count++;
		}
	}
	return count;
}

/** What the questions step ended with, as the compaction details and the trajectory record it. */
export interface QuestionCheck {
	/** Questions the first reply asked. */
	firstCount: number;
	/** Questions of the reply the answers call was given (the better of the two when re-asked). */
	count: number;
	/** The minimum required (MIN_QUESTIONS). */
	required: number;
	/** True when the model was asked once more because the first reply had too few. */
	reasked: boolean;
	/** True when even the reply used has fewer than `required` questions. */
	shortfall: boolean;
}

/** Re-ask when the first reply asked fewer than the minimum. */
export function needsReask(firstCount: number): boolean {
	return firstCount < MIN_QUESTIONS;
}

/**
 * The check of a questions step. `reaskCount` is the re-ask reply's count: undefined when there was
 * no re-ask, or when it failed (`reasked` then still says it was tried).
 */
export function questionCheck(firstCount: number, reasked: boolean, reaskCount?: number): QuestionCheck {
	const count = Math.max(firstCount, reaskCount ?? 0);
	return { firstCount, count, required: MIN_QUESTIONS, reasked, shortfall: count < MIN_QUESTIONS };
}

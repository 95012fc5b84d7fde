/**
 * Small format helpers shared by every wording module: counts with separators, plurals, error texts.
 * One copy each, so all model-facing numbers look alike on every machine.
 */

/** 37212 → "37,212": rounded, separators without locale data, so output is the same on every machine. */
export function formatCount(n: number): string {
	if (!Number.isFinite(n)) return String(n);
	const rounded = Math.round(n);
	const digits = String(Math.abs(rounded));
	let out = digits.slice(0, digits.length % 3 || 3);
	for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
	return rounded < 0 ? `-${out}` : out;
}

/** "1 turn", "2 turns", "1,200 output tokens". */
export function plural(n: number, one: string, many = `${one}s`): string {
	return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** The message of a thrown value (an Error's, or any object's `message` string), else its string form. */
export function errorText(error: unknown): string {
	const message = (error as { message?: unknown } | null | undefined)?.message;
	return typeof message === "string" ? message : String(error);
}

/** A hash as ids are shown: its first `hexDigits` hex digits (a commit's, an artifact's). An id, not a text view. */
export function shortHash(hex: string, hexDigits: number): string {
	return hex.slice(0, hexDigits);
}

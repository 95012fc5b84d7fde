// @ts-check
/**
 * The recall search's line scan, as a plain JavaScript module (type-checked by tsc through these
 * JSDoc types, linted by Biome). It is JavaScript because it runs in a worker thread
 * (search-thread.js): Pi loads extensions through jiti on Node and natively under Bun, and a worker
 * started from a .ts file loads under only one of them; a .js module loads under both. It imports
 * nothing, so the worker needs no transpiler.
 */

/**
 * One search: which stored file, and the pattern as a compiled RegExp's source and flags.
 * @typedef {object} SearchJob
 * @property {string} path Absolute path of the artifact, as the store resolved it (never from model text).
 * @property {string} source RegExp source (already compiled once on the main thread, so known valid).
 * @property {string} flags RegExp flags.
 * @property {number} context Context lines around each match.
 * @property {number} maxMatches Matches listed at most.
 * @property {string} separator Row between non-adjacent groups.
 * @property {number} start 1-based line the search starts at.
 */

/**
 * What a search found.
 * @typedef {object} SearchHit
 * @property {string[]} rows Output rows: "N:line" for a match, "N-line" for context, or the separator.
 * @property {number} matches Matching lines listed.
 * @property {boolean} capped True when the search stopped at maxMatches with lines left after the last match.
 * @property {number} total Lines of the text (split on "\n", as Pi's read counts them).
 * @property {number} lastMatch Line of the last match (0 when none).
 */

/**
 * The lines of `text` from line `start` on (split on "\n", 1-based as Pi's read counts) matching the
 * regular expression, grep -n style: "N:line" for a match, "N-line" for context (never before
 * `start`), `separator` between groups that are not adjacent. Stops testing after `maxMatches`
 * matches (the last match still gets its context lines). Linear in the text: no line array is built.
 *
 * @param {string} text the artifact's text
 * @param {string} source RegExp source (compiled once on the main thread, so known valid)
 * @param {string} flags RegExp flags
 * @param {number} context context lines around each match
 * @param {number} maxMatches matches listed at most
 * @param {string} separator row between groups that are not adjacent
 * @param {number} start 1-based line the search starts at
 * @returns {SearchHit}
 */
export function searchLines(text, source, flags, context, maxMatches, separator, start) {
	const regex = new RegExp(source, flags);
	/** @type {string[]} */
	const rows = [];
	/** @type {Array<[number, string]>} */
	let before = [];
	let matches = 0;
	let lastMatch = 0;
	let lastPrinted = 0;
	let afterLeft = 0;
	let lineNo = 0;
	let pos = 0;
	for (const first = Math.max(1, start || 1); lineNo < first - 1; lineNo++) {
		const newline = text.indexOf("\n", pos);
		if (newline === -1) return { rows, matches, capped: false, total: lineNo + 1, lastMatch };
		pos = newline + 1;
	}
	for (;;) {
		const newline = text.indexOf("\n", pos);
		const end = newline === -1 ? text.length : newline;
		lineNo++;
		const line = text.slice(pos, end);
		regex.lastIndex = 0;
		if (matches < maxMatches && regex.test(line)) {
			const first = before.length > 0 ? before[0][0] : lineNo;
			if (lastPrinted > 0 && first > lastPrinted + 1) rows.push(separator);
			for (const [n, seen] of before) rows.push(`${n}-${seen}`);
			before = [];
			rows.push(`${lineNo}:${line}`);
			lastPrinted = lineNo;
			lastMatch = lineNo;
			matches++;
			afterLeft = context;
		} else if (afterLeft > 0) {
			rows.push(`${lineNo}-${line}`);
			lastPrinted = lineNo;
			afterLeft--;
		} else if (matches >= maxMatches) {
			let rest = 0;
			for (let at = text.indexOf("\n", pos); at !== -1; at = text.indexOf("\n", at + 1)) rest++;
			return { rows, matches, capped: true, total: lineNo + rest, lastMatch };
		} else if (context > 0) {
			before.push([lineNo, line]);
			if (before.length > context) before.shift();
		}
		if (newline === -1) break;
		pos = newline + 1;
	}
	return { rows, matches, capped: matches >= maxMatches && lastMatch < lineNo, total: lineNo, lastMatch };
}

/**
 * The notable-line scan: one linear pass over a log (command, test or build output) that finds the lines
 * saying what went wrong or how the run ended, anywhere in the text, with their 1-based line numbers as Pi's
 * read counts them (`text.split("\n")`, a "\r" before the "\n" part of its line). The rules are data, in
 * notable-rules.ts; this module only walks the text and ranks what it found.
 *
 * - Linear time, bounded memory: a search for every rule's keys at once (word-automaton.ts) finds the lines
 *   that hold one, so a line without a key costs no regex of its own, and the rules decide each such line
 *   (decidePart: pure, a part of the text at a time, so another thread can decide parts too:
 *   notable-parallel.ts); the walk then reads the decisions in order and reads the log as steps. No line array
 *   and no copy of the text, only the kept lines are sliced (each at most maxLineChars, and at most MATCH_UNITS
 *   of a line are matched); the decisions are held a part at a time. What is kept is bounded by maxLines per
 *   pool.
 * - Without crying wolf: an expected failure (xfail, KNOWN-FAIL, …) or a guarded look-alike ("0 failed") is
 *   no failure; identical lines fold into one with a count; weak evidence (a bare "Error:" line) ranks after
 *   strong hits and is dropped in a run whose summaries say it passed and that shows no strong failure.
 * - A cap keeps failures over summaries over context: the last summary lines (how the run ended) first,
 *   then failing summaries from the latest, strong failures and weak ones from both ends of their pools,
 *   failure vocabulary from the newest, then the other summaries from the latest, then the context of what
 *   is kept. The result is in line order.
 * - A log is a sequence of steps (issue 32): a step starts at a CI's step marker or after a verdict and ends at
 *   its verdict. A step or a run its CI says passed claims no failure; weak evidence is dropped only where its
 *   own step passed, so a passing summary of one step never silences another step's failure.
 */

import { LineMap } from "./line-map.ts";
import {
	BLOCK_CONTEXT,
	EXPECTED_FAILURE,
	MAX_CONTEXT_LINES,
	MAX_RECORD_LINES,
	NOTABLE_RULES,
	type NotableContext,
	type NotableRule,
} from "./notable-rules.ts";
import { detached, isHighSurrogate, toWellFormed } from "./utf8.ts";
import { buildWordAutomaton, type KeyLines, type WordAutomaton } from "./word-automaton.ts";

export { NOTABLE_RULES, type NotableRule } from "./notable-rules.ts";

/** One line the scan reports. */
export interface NotableLine {
	/** 1-based line number as Pi's read counts it: read(path, offset=line) opens it. */
	line: number;
	/** The line without ANSI escapes, a CI timestamp prefix or a trailing "\r"; clipped to maxLineChars ("…"). */
	text: string;
	/** Id of the rule that found it (for context: the rule of the line it belongs to). */
	rule: string;
	/** failure: something went wrong; summary: how a run ended; context: carries a failure's message. */
	kind: "failure" | "summary" | "context";
	/** How many identical lines (same rule, same text) are folded into this one; 1 for context. */
	count: number;
	/** A summary that reports failures (ranked with the failures); false otherwise. */
	failing: boolean;
	/** Its place in the scan's priority order (0 first): what a shorter view keeps first. */
	rank: number;
	/** For context: the line it belongs to. */
	of?: number;
}

/** What the scan found. */
export interface NotableScan {
	/** The kept lines, in line order. */
	lines: readonly NotableLine[];
	/** Failure lines in the whole text, folded repeats included. */
	failures: number;
	/** Summary lines in the whole text, folded repeats included. */
	summaries: number;
	/** Failure and summary lines (folded repeats included) the kept lines do not stand for. */
	dropped: number;
}

/** Options of a scan; every field is optional. */
export interface NotableOptions {
	/** Most lines kept, context included (default DEFAULT_NOTABLE_LINES). */
	maxLines?: number;
	/** Most UTF-16 units of a kept line's text, "…" included (default DEFAULT_NOTABLE_LINE_CHARS). */
	maxLineChars?: number;
	/**
	 * Evaluation only (the corpus test and benchmark): the rules the scan may use (default: every rule) and
	 * whether it reads the log as steps (default true). `{ rules: isTableRule, steps: false }` is the scan as
	 * it was before the generic rules.
	 */
	evaluation?: NotableEvaluation;
	/**
	 * Called once the walk is over with the text's lines as Pi's read counts them (its "\n" plus one): the walk
	 * counts every line anyway, so a caller that needs the count (a stub's header) makes no line pass of its own.
	 */
	counted?: (lines: number) => void;
	/**
	 * The rules' decisions on the text's key lines, made ahead (decideLines, partly on another thread:
	 * notable-threads.ts): the walk reads them instead of searching and deciding. Ignored unless they were made
	 * for a text of this length with this scan's rules and steps; the result is the same scan either way.
	 */
	decided?: DecidedLines;
}

/**
 * A text's key lines and the rules' decision on each, made before the walk: every line whose raw window holds
 * a key, with the rule that takes it (decideLine on its cleaned window and those keys) or none. A line's
 * decision depends on the line alone; only reading the log as steps is sequential, so the decisions can be
 * made for parts of the text apart (decidePart), on two threads, and joined (joinDecided).
 */
export interface DecidedLines {
	/**
	 * The text's parts in order, each with its length, its "\n" count and its key lines' triples as decidePart
	 * gives them (line start and line within the part). Kept as they came (no joined copy): a walk reads one part
	 * at a time.
	 */
	readonly parts: readonly DecidedPart[];
	/** The text's lines (its "\n" plus one). */
	readonly lines: number;
	/** The length of the text they were made for, and with which rules and steps. */
	readonly units: number;
	readonly enabled: Uint8Array;
	readonly steps: boolean;
}

/** One part of a text's decisions (decidePart's result). */
export interface DecidedPart {
	readonly units: number;
	readonly newlines: number;
	/** [line start in the part, line in the part (0 first), rule or -1] of each key line. */
	readonly at: Int32Array;
}

/** Which rules a scan uses, and whether it reads the log as steps (for measuring rules left out). */
export interface NotableEvaluation {
	/** The rules the scan may use; a rule it returns false for is as if it were not in the table. */
	rules?: (rule: NotableRule) => boolean;
	/** Read the log as steps, with block context (default true): false is the scan as it was before issue 32. */
	steps?: boolean;
	/** UTF-16 units of the text decided at a time (default WALK_PART_UNITS): tests put part ends anywhere. */
	partUnits?: number;
}

/** The evaluation every scan without its own uses (set only by withNotableEvaluation). */
let defaultEvaluation: NotableEvaluation | undefined;

/**
 * Evaluation only: run `fn` with every scan that does not name its own evaluation using `evaluation`, so a
 * caller that scans deep inside (the tool-artifacts stub) can be measured with rules left out. Production
 * code never calls it; nested or concurrent uses are refused.
 */
export async function withNotableEvaluation<T>(evaluation: NotableEvaluation, fn: () => T | Promise<T>): Promise<T> {
	if (defaultEvaluation) throw new Error("withNotableEvaluation: already inside one");
	defaultEvaluation = evaluation;
	try {
		return await fn();
	} finally {
		defaultEvaluation = undefined;
	}
}

/** A rule of the table's specific groups (not `generic`): the table as it was before the generic rules. */
export function isTableRule(rule: NotableRule): boolean {
	return rule.ecosystem !== "generic";
}

/** Lines a scan keeps by default. */
export const DEFAULT_NOTABLE_LINES = 100;
/** UTF-16 units a kept line's text has at most by default. */
export const DEFAULT_NOTABLE_LINE_CHARS = 500;
/** UTF-16 units of a line matched against the rules (the start of a giant line only). */
export const MATCH_UNITS = 1024;
/** Summary lines at the end that are always kept: they say how the run ended. */
const LAST_SUMMARIES = 2;
/** Marks a kept line that was clipped. */
const CLIPPED = "…";

/** ANSI escape sequences (colours, cursor moves) and OSC titles. */
const ANSI = /\u001b(\[[0-9;?]*[ -/]*[@-~]|\][^\u0007\u001b]*(\u0007|\u001b\\)|[@-Z\\-_])/g;
/**
 * A CI prefix: GitHub Actions' ISO timestamp, taskcluster's [task …], mozharness' "HH:MM:SS  INFO - ", and a
 * Mozilla harness' "PID 123 | " or "GECKO(123) | " before a child process's output. Sticky and without capture
 * groups: after a test from 0, `lastIndex` is the prefix's length (no match array per line).
 */
const CI_PREFIX =
	/^(?:\uFEFF)?(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z? ?|\[(?:task|taskcluster|vcs|setup|fetches) [^\]]*\] ?)*(?:\[\d+\] )?(?:\d\d:\d\d:\d\d(?:\.\d+)?\s+(?:INFO|WARNING|ERROR|CRITICAL|DEBUG|FATAL) - )?(?:\s*(?:PID \d+|GECKO\(\d+\)) \| )?/y;

/**
 * Pure: the length of the CI prefix (CI_PREFIX) `s` starts with, 0 for none. Its first characters rule most
 * lines out without the expression: a digit must start "dddd-" or "dd:", a "[" one of "[task", "[vcs", "[setup",
 * "[fetches" or "[<digits>", and spaces or tabs must lead to "PID" or "GECKO"; other lines can start a prefix
 * only with a BOM, "P", "G" or another white space character (those are tried).
 */
function ciPrefixLength(s: string): number {
	const c = s.charCodeAt(0);
	if (c >= 0x30 && c <= 0x39) {
		if (s.charCodeAt(4) !== 0x2d && s.charCodeAt(2) !== 0x3a) return 0; // "-", ":"
	} else if (c === 0x5b) {
		const d = s.charCodeAt(1); // "t", "v", "s", "f", a digit
		if (d !== 0x74 && d !== 0x76 && d !== 0x73 && d !== 0x66 && !(d >= 0x30 && d <= 0x39)) return 0;
	} else if (c === 0x20 || c === 0x09) {
		let i = 1;
		let d = s.charCodeAt(i);
		while (d === 0x20 || d === 0x09) d = s.charCodeAt(++i);
		// Past the spaces and tabs: "P" or "G", or another white space character (or the line's end: none).
		if (!(d >= 0x80) && d !== 0x50 && d !== 0x47 && !(d >= 0x0a && d <= 0x0d)) return 0;
	} else if (c !== 0x50 && c !== 0x47 && !(c >= 0x09 && c <= 0x0d) && !(c >= 0xa0)) return 0;
	CI_PREFIX.lastIndex = 0;
	CI_PREFIX.test(s);
	return CI_PREFIX.lastIndex;
}

/**
 * The line as the rules see it (and the scan shows it): no ANSI, no CI prefix, no trailing "\r", and of a line
 * a carriage return rewrote (Travis' timer mark before "The command … exited with 1.", a progress bar's last
 * state) only what the terminal shows: the text after the last "\r" that is followed by some.
 */
export function cleanLogLine(raw: string): string {
	return withoutEscapes(raw.indexOf("\u001b") === -1 ? raw : raw.replace(ANSI, ""));
}

/**
 * cleanLogLine of a line without ANSI escapes (or with them taken out): a piece of it in one stretch, so it holds
 * no key the line does not (the key search matches words anywhere, whatever is around them).
 */
function withoutEscapes(raw: string): string {
	let s = raw;
	const cr = s.indexOf("\r");
	if (cr !== -1) {
		if (s.endsWith("\r")) s = s.slice(0, -1);
		if (cr < s.length) s = shownAfterReturn(s); // a "\r" before the last character
	}
	const prefix = ciPrefixLength(s);
	return prefix === 0 ? s : s.slice(prefix);
}

/** What a terminal shows of a line with carriage returns in it: what follows the last one followed by text. */
function shownAfterReturn(s: string): string {
	// The trailing "\r"s, counted from the end (`/\r+$/` tried every "\r" of a line of them: quadratic).
	let end = s.length;
	while (end > 0 && s.charCodeAt(end - 1) === 0x0d) end--;
	const shown = end === s.length ? s : s.slice(0, end);
	const at = shown.lastIndexOf("\r");
	return at !== -1 && shown.slice(at + 1).trim() !== "" ? shown.slice(at + 1) : shown;
}

/**
 * A line that carries no message, as context goes: blank, a rule or a log level alone ("[INFO] ", "-----"),
 * a CI's bookkeeping (Travis' fold and timer marks, GitHub Actions' group marks and clean-up, GitLab's
 * section marks), or a report's bare XML element (`<failure>`, `</message>`: the message is the line after).
 * Context steps over it as over a blank line.
 */
const FILLER =
	/^[\W\d_]*((\[?\b(INFO|DEBUG|TRACE|WARN|WARNING|ERROR|info|debug|error)\b\]?)[\W\d_]*)?$|^\W*(travis_(time|fold):|##\[(end)?group\]|section_(start|end):\d|Post job cleanup\.)|^\s*<\/?[\w:-]+>\s*$/;

/** Pure: whether `s` is empty or white space alone (`s.trim() === ""`) without making the trimmed string. */
function isBlank(s: string): boolean {
	for (let i = 0; i < s.length; i++) {
		const c = s.charCodeAt(i);
		if (c === 0x20 || c === 0x09) continue;
		// Other white space (line ends, no-break and wide spaces, a BOM): as trim() sees it.
		return c >= 0x80 || (c >= 0x0a && c <= 0x0d) ? s.trim() === "" : false;
	}
	return true;
}

/**
 * A line the scan keeps for now: its cleaned text, and whether the line was longer than what was matched. Its
 * text as shown (keptText) is made only for the lines the result returns, when the scan ends: most found lines
 * are dropped or folded before then.
 */
interface Kept {
	line: number;
	clean: string;
	longer: boolean;
}

/** A found line with what it carries, before ranking. */
interface Entry extends Kept {
	/** (Kept's `clean`, the cleaned line it was found on, is its key in `fold`.) */
	/** Its rule's entries by cleaned line, where a repeat folds into it while it is kept. */
	fold: LineMap<Entry>;
	/** For a summary: how many of the summary rings hold it (it stays open to folding while one does). */
	rings: number;
	rule: NotableRule;
	count: number;
	failing: boolean;
	context: Kept[];
	/** The step of the log it is in (the first when the log is read as one step). */
	step: Step;
}

/**
 * One step of the log (see the module comment): what the ranking reads of it. A step is an object its entries
 * point to, not a slot in arrays indexed by step: a log of a million verdicts has a million steps, and only those
 * a kept entry is in (and the current one) stay in memory.
 */
interface Step {
	/** Its place in the log, 0 first. */
	index: number;
	/** Its failure evidence: strong failures, failing summaries and verdicts. */
	fails: number;
	/** Its passing summaries, and the line of the last one: it vouches only for what its step printed before it. */
	passes: number;
	passLine: number;
	/** The verdict that ended it, if one did. */
	verdict: "pass" | "fail" | undefined;
	/** A step of a CI that reports every failing step: one without a failing verdict passed. */
	checked: boolean;
	/** The index of the last step before it whose verdict was "fail" (-1: none). */
	failedBefore: number;
}

/** The search words of the scan (every rule's keys, lower-cased, once each), for tests and the docs. */
export const NOTABLE_KEYS: readonly string[] = [
	...new Set(NOTABLE_RULES.flatMap((r) => r.keys.map((k) => k.toLowerCase()))),
];

let tables:
	| {
			automaton: ReturnType<typeof buildWordAutomaton>;
			rulesOf: number[][];
			vetoes: (readonly RegExp[])[];
			patterns: RegExp[];
			needs: (RegExp | null)[];
			strong: Uint8Array;
			stateless: boolean;
			keylessCut: boolean;
	  }
	| undefined;
/**
 * The automaton that finds every key at once, case-insensitively, per key (by its index) the rules that hold
 * it, and per rule its vetoes, pattern and needs. Built on first use, not when the module loads: building them
 * was most of the time evaluating the shared code took at start-up (docs/startup.md), and most sessions never
 * scan a log. The patterns and needs sit in arrays of their own: read from the rules (objects of many shapes),
 * each read was a slow lookup (a tenth of the decisions' time).
 */
function scanTables(): NonNullable<typeof tables> {
	tables ??= {
		automaton: buildWordAutomaton(NOTABLE_KEYS),
		rulesOf: NOTABLE_KEYS.map((w) =>
			NOTABLE_RULES.flatMap((rule, index) => (rule.keys.some((k) => k.toLowerCase() === w) ? [index] : [])),
		),
		vetoes: NOTABLE_RULES.map((rule) =>
			mergedAlternatives([...(rule.not ?? []), ...(rule.kind === "failure" ? [EXPECTED_FAILURE] : [])]),
		),
		patterns: NOTABLE_RULES.map((rule) => rule.pattern),
		needs: NOTABLE_RULES.map((rule) => rule.needs ?? null),
		strong: Uint8Array.from(NOTABLE_RULES, (rule) => (rule.kind === "failure" && !rule.weak ? 1 : 0)),
		// No key holds a "\r" or a BOM: taking one out of a line (cleanLogLine) changes none of its keys.
		keylessCut: !NOTABLE_KEYS.some((k) => k.includes("\r") || k.includes("\uFEFF")),
		// No expression with a lastIndex of its own: a decision depends on the line alone (DecisionCache).
		stateless: NOTABLE_RULES.every((rule) =>
			[rule.pattern, rule.needs, rule.failing, ...(rule.not ?? [])].every((re) => !re || !(re.global || re.sticky)),
		),
	};
	if (!shapesKept) {
		shapesKept = true;
		keepShapes();
	}
	return tables;
}

/**
 * Objects of every kind a scan makes, from two small scans kept for the process (one deciding as it walks, one
 * reading decisions made ahead). V8 holds the hidden classes ("maps") of a class's instances only while an
 * instance lives: when a full collection found no scan running, they died, and every optimized function that
 * checked them (the decisions, the walk) was thrown away, so the first scan after each full collection ran
 * unoptimized (~1.5× as long; issue 32, cost). Holding one instance of each keeps the maps, and with them the
 * optimized code. About 4 KiB; made once per thread, at the first use of the scan's tables.
 */
const SHAPES: unknown[] = [];
let shapesKept = false;
/** The scan collecting its objects into SHAPES (keepShapes), else undefined. */
let keeping: unknown[] | undefined;
/**
 * A small log whose scan makes every kind of object a scan makes: hits, repeats, context, steps, summaries
 * (exported for the test that checks it still does).
 */
export const SHAPES_LOG = [
	"##[group]Run npm test",
	"npm ERR! code ELIFECYCLE",
	"FAILED tests/test_a.py::test_case - AssertionError: assert 1 == 2",
	"  expected 2",
	"FAILED tests/test_a.py::test_case - AssertionError: assert 1 == 2",
	"Traceback (most recent call last):",
	'  File "a.py", line 3, in <module>',
	"ValueError: bad value",
	"3 passed, 1 failed, 2 skipped in 0.52s",
	"Tests run: 5, Failures: 1, Errors: 0, Skipped: 0",
	"\u001b[31merror\u001b[0m: mismatched types at src/main.rs:4:5",
	'{"level":"error","msg":"request failed","code":500}',
	"##[error]Process completed with exit code 1.",
	"",
].join("\n");

function keepShapes(): void {
	keeping = SHAPES;
	try {
		SHAPES.push(...scanNotableAt(SHAPES_LOG, [DEFAULT_NOTABLE_LINES, 4]));
		const { enabled, steps } = decisionsOf();
		const at: number[] = [];
		const newlines = decidePart(SHAPES_LOG, new DecisionCache(enabled, steps, SHAPES_LOG.length), at);
		const decided = joinDecided([{ units: SHAPES_LOG.length, newlines, at }], enabled, steps);
		SHAPES.push(...scanNotableAt(SHAPES_LOG, [DEFAULT_NOTABLE_LINES], { decided }));
	} catch {
		// Only a matter of speed.
	} finally {
		keeping = undefined;
	}
}

/**
 * Regular expressions that veto together as few as can: those of one set of flags joined into one alternation,
 * which matches somewhere exactly when one of them does (one pass over a line instead of one per guard; a
 * rule's guards were a tenth of the scan). One that numbers its groups (a back-reference) or is global or sticky
 * (lastIndex) stays alone.
 */
export function mergedAlternatives(list: readonly RegExp[]): RegExp[] {
	const alone: RegExp[] = [];
	const byFlags = new Map<string, string[]>();
	for (const re of list) {
		if (re.global || re.sticky || /\\[1-9k]/.test(re.source)) alone.push(re);
		else byFlags.set(re.flags, [...(byFlags.get(re.flags) ?? []), `(?:${re.source})`]);
	}
	const merged = [...byFlags].map(([flags, sources]) => {
		try {
			return [new RegExp(sources.join("|"), flags)];
		} catch {
			return list.filter((re) => re.flags === flags); // e.g. two groups of one name: each alone
		}
	});
	return [...merged.flat(), ...alone];
}

/** The keys of a line that holds none. */
const NO_KEYS: readonly number[] = [];

/** Marks of the rules already listed for one line (reused: a line marks, lists, clears). */
const marks = new Uint8Array(NOTABLE_RULES.length);
/** The rules worth trying on one line with several keys, in table order (reused). */
const listed: number[] = [];

/** Every rule enabled (the mask of a scan without an evaluation). */
const ALL_RULES = new Uint8Array(NOTABLE_RULES.length).fill(1);

/** The enabled mask of an evaluation's rules. */
function enabledMask(evaluation: NotableEvaluation | undefined): Uint8Array {
	const keep = evaluation?.rules;
	if (!keep) return ALL_RULES;
	return Uint8Array.from(NOTABLE_RULES, (rule) => (keep(rule) ? 1 : 0));
}

/** Merged lists of several keys' rules, by their keys' number (see rulesFor); at most MERGED_MAX of them. */
const mergedRules = new Map<number, readonly number[]>();
const MERGED_MAX = 4096;
/** Most keys whose number (digits in base NOTABLE_KEYS.length + 1) stays an exact integer. */
const NUMBERED_KEYS = Math.floor(Math.log(Number.MAX_SAFE_INTEGER) / Math.log(NOTABLE_KEYS.length + 1));

/**
 * The rules that hold one of `keys` (indices into NOTABLE_KEYS), in table order: a line tries only those. One
 * key's list is its own (built sorted); several keys' lists are merged, each rule once, and the merge is kept
 * by the keys' number (for as many keys as it stays exact, in the order found; a log repeats a few sets of
 * keys), so that a set of keys is merged once, not per line.
 */
function rulesFor(keys: readonly number[]): readonly number[] {
	const { rulesOf } = scanTables();
	if (keys.length === 1) return rulesOf[keys[0]];
	let id = -1;
	if (keys.length <= NUMBERED_KEYS) {
		id = 0;
		for (const k of keys) id = id * (NOTABLE_KEYS.length + 1) + k + 1;
		const known = mergedRules.get(id);
		if (known) return known;
	}
	listed.length = 0;
	for (const k of keys) {
		for (const r of rulesOf[k]) {
			if (marks[r] === 1) continue;
			marks[r] = 1;
			// Insertion in table order: a line holds few keys, each of few rules.
			let at = listed.length;
			listed.push(r);
			while (at > 0 && listed[at - 1] > r) {
				listed[at] = listed[at - 1];
				at--;
			}
			listed[at] = r;
		}
	}
	for (const r of listed) marks[r] = 0;
	if (id === -1 || mergedRules.size >= MERGED_MAX) return listed;
	const merged = listed.slice();
	mergedRules.set(id, merged);
	return merged;
}

/**
 * The rule that decides a cleaned line whose keys (indices into NOTABLE_KEYS) are `keys`, or undefined: the
 * first enabled rule in table order whose keys the line holds and whose pattern matches (unless vetoed).
 */
function decide(
	clean: string,
	keys: readonly number[],
	enabled: Uint8Array = ALL_RULES,
	strongOnly = false,
): NotableRule | undefined {
	const { vetoes, patterns, needs, strong } = scanTables();
	const list = rulesFor(keys);
	let last = list.length - 1;
	if (strongOnly) while (last >= 0 && strong[list[last]] === 0) last--;
	for (let i = 0; i <= last; i++) {
		const r = list[i];
		if (enabled[r] === 0) continue;
		const guard = needs[r];
		if ((guard !== null && !guard.test(clean)) || !patterns[r].test(clean)) continue;
		for (const veto of vetoes[r]) if (veto.test(clean)) return undefined;
		return NOTABLE_RULES[r];
	}
	return undefined;
}

/**
 * A JSON-lines record's message: the string value of its first `Output`, `log`, `msg`, `message` or `text` field
 * (`go test -json`, Docker's json-file log, pino, bunyan, zap), unescaped and cleaned, its first line only; or
 * undefined. A record starts with "{" and its message field is read even when the line is clipped.
 */
const JSON_MESSAGE = /"(?:[Oo]utput|log|msg|[Mm]essage|text)"\s*:\s*"((?:[^"\\]|\\.)*)"/;

/** Pure: the message of the JSON-lines record `clean` (see JSON_MESSAGE), or undefined. */
export function jsonMessage(clean: string): string | undefined {
	if (clean.charCodeAt(0) !== 0x7b) return undefined; // "{"
	const m = JSON_MESSAGE.exec(clean);
	if (!m) return undefined;
	let value: string;
	try {
		value = JSON.parse(`"${m[1]}"`) as string;
	} catch {
		return undefined;
	}
	const cut = value.indexOf("\n");
	const message = cleanLogLine(cut === -1 ? value : value.slice(0, cut));
	return message.trim() === "" ? undefined : message;
}

/**
 * The rule that decides a cleaned line (decide), and of a JSON-lines record the rule that decides its message
 * when that is a strong failure and the record itself is no more than weak evidence: the record
 * `{"Action":"output","Output":"--- FAIL: TestX (0.00s)\n"}` says what its message says (issue 32). Exported for
 * the decisions' benchmark (test/bench/rule-decisions.bench.ts); `enabled` is a mask over NOTABLE_RULES.
 */
export function decideLine(
	clean: string,
	keys: readonly number[],
	enabled: Uint8Array,
	records: boolean,
): NotableRule | undefined {
	const decided = decide(clean, keys, enabled);
	if (!records || (decided && !decided.weak) || clean.charCodeAt(0) !== 0x7b) return decided;
	const message = jsonMessage(clean);
	if (message === undefined) return decided;
	// Only a strong failure is taken from the message: the rules after the last such rule are not tried.
	const inner = decide(message, scanTables().automaton.indicesIn(message), enabled, true);
	return inner && inner.kind === "failure" && !inner.weak ? inner : decided;
}

/** Slots of a scan's cache of decisions (DecisionCache), a power of two. */
const DECISION_SLOTS = 1024;

/**
 * Pure: a number identical lines with identical keys share (`keysId`: the keys' number, see rulesFor), from the
 * line's length and a few of its units: what picks a line's slot in a DecisionCache, never an identity.
 */
export function lineFingerprint(s: string, keysId: number): number {
	const n = s.length;
	let h = Math.imul(n ^ keysId ^ (keysId / 0x100000000), 0x9e3779b1);
	if (n > 0) {
		h = Math.imul(h ^ s.charCodeAt(n - 1), 0x85ebca6b);
		h = Math.imul(h ^ s.charCodeAt(n >> 1), 0xc2b2ae35);
		h = Math.imul(h ^ s.charCodeAt(n >> 2), 0x27d4eb2f);
		h = Math.imul(h ^ s.charCodeAt(n - 1 - (n >> 2)), 0x165667b1);
	}
	return (h ^ (h >>> 15)) >>> 0;
}

/**
 * The rules' decisions (decideLine) of one scan, by line text and keys: a log repeats lines (a retry's error, a
 * progress line, a report's rows), and a decision is about a microsecond of regular expressions while looking
 * one up is a few units read and one comparison. Direct-mapped (a slot per fingerprint, the latest line in it):
 * no string is hashed, and a line of another text in the slot is only compared (=== stops at the first
 * difference). A decision depends on nothing but the line, its keys, the enabled rules and `records`, all fixed
 * for the cache (no rule's expression is global or sticky: scanTables checks).
 */
export class DecisionCache {
	/** Slots (a power of two): about one per KiB of text, at least 16, at most DECISION_SLOTS. */
	private readonly mask: number;
	// Made at the first decision (a short text with no key line makes none).
	private texts: (string | undefined)[] = [];
	private ids: number[] = [];
	/** The decision in each slot: its rule's index in NOTABLE_RULES, or -1 (none). */
	private rules: number[] = [];

	/** `units`: the text's length, which sizes the cache (a short text's scan allocates little). */
	constructor(
		private readonly enabled: Uint8Array,
		private readonly records: boolean,
		units = DECISION_SLOTS << 10,
	) {
		let slots = 16;
		while (slots < DECISION_SLOTS && slots << 10 < units) slots <<= 1;
		this.mask = slots - 1;
	}

	/** decideLine(clean, keys, enabled, records) ?? null, made once per distinct (line, keys) while it stays in its slot. */
	decide(clean: string, keys: readonly number[]): NotableRule | null {
		const r = this.decideIndex(clean, keys);
		return r === -1 ? null : NOTABLE_RULES[r];
	}

	/** decide's rule as its index in NOTABLE_RULES (-1: none): what decidePart records, with no lookup of it. */
	decideIndex(clean: string, keys: readonly number[]): number {
		if (keys.length > NUMBERED_KEYS || !scanTables().stateless)
			return indexOfRule(decideLine(clean, keys, this.enabled, this.records));
		let id = 0;
		for (let i = 0; i < keys.length; i++) id = id * (NOTABLE_KEYS.length + 1) + keys[i] + 1;
		const slot = lineFingerprint(clean, id) & this.mask;
		if (this.texts.length === 0) {
			this.texts = new Array(this.mask + 1).fill(undefined);
			this.ids = new Array(this.mask + 1).fill(-1);
			this.rules = new Array(this.mask + 1).fill(-1);
		} else if (this.ids[slot] === id && this.texts[slot] === clean) return this.rules[slot];
		const rule = indexOfRule(decideLine(clean, keys, this.enabled, this.records));
		this.texts[slot] = clean;
		this.ids[slot] = id;
		this.rules[slot] = rule;
		return rule;
	}
}

/** Rules by their index in NOTABLE_RULES. */
let ruleIndex: Map<NotableRule, number> | undefined;

/** The index of `rule` in NOTABLE_RULES, or -1 (none). */
function indexOfRule(rule: NotableRule | undefined): number {
	if (rule === undefined) return -1;
	ruleIndex ??= new Map(NOTABLE_RULES.map((r, index) => [r, index]));
	return ruleIndex.get(rule) ?? -1;
}

/** The rule that decides a cleaned line (the first in table order whose keys it holds and whose pattern matches, unless vetoed), or undefined. */
export function matchRule(clean: string, evaluation?: NotableEvaluation): NotableRule | undefined {
	return decideLine(
		clean,
		scanTables().automaton.indicesIn(clean),
		enabledMask(evaluation),
		evaluation?.steps !== false,
	);
}

function whole(n: unknown, fallback: number, min: number): number {
	return typeof n === "number" && Number.isFinite(n) ? Math.max(min, Math.floor(n)) : fallback;
}

/** The kept text of a cleaned line: at most `max` units, never ending inside a surrogate pair, well-formed. */
function keptText(clean: string, max: number, longer = false): string {
	if (!longer && clean.length <= max) return toWellFormed(clean);
	let end = Math.max(0, Math.min(max, clean.length + CLIPPED.length) - CLIPPED.length);
	if (end > 0 && isHighSurrogate(clean.charCodeAt(end - 1))) end--;
	return `${toWellFormed(clean.substring(0, end))}${CLIPPED}`;
}

/** Scan `text` for its notable lines (see the module comment). */
export function scanNotable(text: string, options: NotableOptions = {}): NotableScan {
	return scanNotableAt(text, [options.maxLines], options)[0];
}

/**
 * Scan `text` once for several views: the scans with each of `maxLines` (and the rest of `options`), in that
 * order, exactly what scanNotable gives for each, for the cost of about one. The key search, the cleaning of a
 * line and the rules' decision on it are made once per line; only what each cap keeps (its pools, folded
 * repeats, the context it carries) is its own. The tool-output stub's summary model input and its excerpt keep
 * different caps (issue 32, cost).
 */
export function scanNotableAt(
	text: string,
	maxLines: readonly (number | undefined)[],
	options: Omit<NotableOptions, "maxLines"> = {},
): NotableScan[] {
	if (typeof text !== "string") throw new TypeError(`scanNotable: text must be a string, got ${typeof text}`);
	const evaluation = options.evaluation ?? defaultEvaluation;
	const enabled = enabledMask(evaluation);
	const steps = evaluation?.steps !== false;
	const shared: ScanShared = {
		text,
		enabled,
		steps,
		maxChars: Math.min(MATCH_UNITS, whole(options.maxLineChars, DEFAULT_NOTABLE_LINE_CHARS, 2)),
		keys: scanTables().automaton,
		memo: { line: 0, raw: undefined, clean: undefined },
		decisions: new DecisionCache(enabled, steps, text.length),
		escapes: false,
		carriers: 0,
		current: { line: 0, filler: undefined, rule: undefined, failing: false },
	};
	const passes = maxLines.map((m) => new CapPass(shared, whole(m, DEFAULT_NOTABLE_LINES, 0)));
	const n = text.length;
	const memo = shared.memo;
	let pos = 0;
	let line = 1;
	// The current line's bounds.
	let lineStart = 0;
	let windowEnd = 0;
	// The lines that hold a key, each with the rules' decision on it: decided a part at a time as the walk
	// reaches them (decidePart: the key search, word-automaton.ts, and the rules), or ahead (DecidedLines,
	// partly on another thread). The walk only reads them, and reads the log as steps.
	const keyLines = new DecisionWalk(
		text,
		shared.decisions,
		usable(options.decided, text, enabled, steps) ? options.decided : undefined,
		whole(evaluation?.partUnits, WALK_PART_UNITS, 1),
	);
	// A pass that carries no context sees the line as the key search did: whether its raw window held keys
	// (and the decision on it, set as the memo's), when another pass's context made the walk stop here.
	const keys = new LineKeys(keyLines);
	keeping?.push(shared, passes, keyLines, keys);
	while (pos <= n) {
		lineStart = pos;
		keys.found = undefined;
		if (shared.carriers === 0) {
			// The next line a rule took; the decisions counted the lines before it (no pass over them here).
			if (keyLines.next(pos) === -1) {
				line = keyLines.line; // no rule takes a later line: the decisions counted the text's lines
				break;
			}
			line = keyLines.line;
			lineStart = keyLines.lineStart;
			keys.found = keyLines.words; // its raw window held keys (its decision is set as the memo's below)
		}
		keys.lineStart = lineStart;
		let lineEnd = text.indexOf("\n", lineStart);
		if (lineEnd === -1) lineEnd = n;
		windowEnd = Math.min(lineEnd, lineStart + MATCH_UNITS);
		memo.line = line;
		memo.raw = keyLines.ruleAt(lineStart);
		memo.clean = undefined;
		// window(text, lineStart, lineEnd), knowing whether it had escapes to take out (a key line the walk decided
		// itself was cleaned then).
		const raw = text.slice(lineStart, windowEnd);
		shared.escapes = raw.indexOf("\u001b") !== -1;
		const clean = keyLines.cleanFound() ?? withoutEscapes(shared.escapes ? raw.replace(ANSI, "") : raw);
		for (const p of passes) p.visit(lineStart, lineEnd, line, clean, keys);

		if (lineEnd >= n) break;
		pos = lineEnd + 1;
		line++;
	}
	options.counted?.(line);
	return passes.map((p) => p.finish());
}

/** A line's keys when the decisions listed it: only their being there is read (its rule is the memo's). */
const LISTED: readonly number[] = [0];

/** Whether `d` was made for `text` with these rules and steps (see NotableOptions.decided). */
function usable(d: DecidedLines | undefined, text: string, enabled: Uint8Array, steps: boolean): d is DecidedLines {
	if (!d || d.units !== text.length || d.steps !== steps || d.enabled.length !== enabled.length) return false;
	let units = 0;
	for (const p of d.parts) units += p.units;
	if (units !== text.length) return false;
	for (let i = 0; i < enabled.length; i++) if (d.enabled[i] !== enabled[i]) return false;
	return true;
}

/** Units of text a scan without decisions made ahead decides at a time (what it holds of them at once). */
const WALK_PART_UNITS = 128 * 1024;

/**
 * The walk over a text's decided lines, in the shape of the key search's (KeyLines): `next` gives the next line
 * a rule took (a line no rule took changes nothing unless context is carried), `keysAt` whether a line held keys,
 * and `ruleAt` the decision the walk sets as the line's (memo.raw) before any pass tries it. Its calls go forward
 * only. With decisions made ahead (DecidedLines) it reads them; else it decides the text a part at a time as the
 * walk reaches it (decidePart), holding one part's decisions: the same walk either way.
 */
class DecisionWalk implements KeyLines {
	lineStart = 0;
	line = 1;
	words = LISTED as number[];
	/** [line start, line, rule or -1] of the key lines of text[from, end), and how many numbers of it are triples. */
	private at: Int32Array;
	private count: number;
	/** Where `next` goes on in `at`. */
	private i = 0;
	private end: number;
	/** Lines that start before `end` (the text's line count once `end` is its length: then the final one). */
	private linesBefore: number;

	constructor(
		private readonly text: string,
		private readonly decisions: DecisionCache,
		decided: DecidedLines | undefined,
		private readonly partUnits: number,
	) {
		this.parts = decided?.parts;
		this.at = new Int32Array(0);
		this.count = 0;
		this.end = 0;
		this.linesBefore = 1;
	}

	/** The parts decided ahead, and the next one to read (undefined: this walk decides the parts itself). */
	private readonly parts: readonly DecidedPart[] | undefined;
	private part = 0;

	/** Decisions held up to past `pos` (or the text's end): the next parts decided, the ones before let go. */
	private reach(pos: number): void {
		const text = this.text;
		const n = text.length;
		while (pos >= this.end && this.end < n) {
			const start = this.end;
			let end: number;
			let out: ArrayLike<number>;
			let newlines: number;
			if (this.parts) {
				const made = this.parts[this.part++];
				if (!made) return; // fewer parts than the text (usable() rules it out)
				end = start + made.units;
				out = made.at;
				newlines = made.newlines;
				this.cleans = undefined;
			} else {
				end = Math.min(n, start + this.partUnits);
				if (end < n) {
					const eol = text.lastIndexOf("\n", end - 1);
					if (eol >= start) end = eol + 1;
					else {
						const next = text.indexOf("\n", end);
						end = next === -1 ? n : next + 1;
					}
				}
				const mine: number[] = [];
				const cleans: string[] = [];
				newlines = decidePart(text.slice(start, end), this.decisions, mine, cleans);
				this.cleans = cleans;
				out = mine;
			}
			const lineBase = this.linesBefore;
			// Typed like decisions made ahead: the walk's reads of `at` see one kind of array.
			const at = new Int32Array(out.length - (out.length % 3));
			for (let k = 0; k < at.length; k += 3) {
				at[k] = out[k] + start;
				at[k + 1] = out[k + 1] + lineBase;
				at[k + 2] = out[k + 2];
			}
			this.at = at;
			this.count = at.length;
			this.i = 0;
			this.f = 0;
			this.end = end;
			this.linesBefore = lineBase + newlines;
		}
	}

	/** Where `find` goes on in `at` (its calls go forward too, from the line `next` gave or after it). */
	private f = 0;
	/** The cleaned windows of the lines of `at`, when this walk decided them (decidePart made them already). */
	private cleans: string[] | undefined;
	/** The triple `ruleAt` found last (-1: none). */
	private found = -1;

	/** The index of the triple of the line that starts at `lineStart`, or -1. */
	private find(lineStart: number): number {
		this.reach(lineStart);
		const at = this.at;
		let f = this.f;
		if (f > this.count || (f > 0 && at[f - 3] >= lineStart)) {
			// Behind the cursor (not in the walk's order): found by halves.
			let lo = 0;
			let hi = this.count / 3;
			while (lo < hi) {
				const mid = (lo + hi) >> 1;
				if (at[3 * mid] < lineStart) lo = mid + 1;
				else hi = mid;
			}
			f = 3 * lo;
		}
		while (f < this.count && at[f] < lineStart) f += 3;
		this.f = f;
		return f < this.count && at[f] === lineStart ? f : -1;
	}

	next(from: number): number {
		for (;;) {
			this.reach(from);
			const at = this.at;
			let i = this.i;
			while (i < this.count && (at[i] < from || at[i + 2] === -1)) i += 3;
			this.i = i;
			if (i < this.count) {
				this.lineStart = at[i];
				this.line = at[i + 1];
				this.i = i + 3;
				this.f = i; // ruleAt asks for this line next
				return this.lineStart; // the line's end is looked for from here
			}
			if (this.end >= this.text.length) {
				this.line = this.linesBefore;
				return -1;
			}
			from = this.end; // nothing more here: on from the next part
		}
	}

	/** The cleaned window of the line `ruleAt` was last asked about, when this walk made it; else undefined. */
	cleanFound(): string | undefined {
		return this.found === -1 || this.cleans === undefined ? undefined : this.cleans[this.found / 3];
	}

	keysAt(lineStart: number): number[] {
		return this.find(lineStart) === -1 ? [] : (LISTED as number[]);
	}

	ruleAt(lineStart: number): NotableRule | null | undefined {
		const k = this.find(lineStart);
		this.found = k;
		if (k === -1) return undefined;
		const r = this.at[k + 2];
		return r === -1 ? null : NOTABLE_RULES[r];
	}
}

/**
 * The rules' decisions on the key lines of `part`, a piece of a text that starts at a line start and ends at
 * one (or at the text's end): what the walk decides of each line whose raw window holds a key. Pushes [line
 * start in the part, line in the part (0 first), rule index or -1] of each onto `out` (and its cleaned window onto
 * `cleans`, when given); returns the part's "\n" count. `decisions` fixes the rules and steps.
 */
export function decidePart(part: string, decisions: DecisionCache, out: number[], cleans?: string[]): number {
	if (typeof part !== "string") throw new TypeError(`decidePart: part must be a string, got ${typeof part}`);
	const keyLines = scanTables().automaton.lines(part, MATCH_UNITS);
	const n = part.length;
	let pos = 0;
	for (;;) {
		const first = keyLines.next(pos);
		if (first === -1) return keyLines.line - 1;
		const lineStart = keyLines.lineStart;
		let lineEnd = part.indexOf("\n", first);
		if (lineEnd === -1) lineEnd = n;
		const keys = keyLines.words;
		if (keys.length > 0) {
			const raw = part.slice(lineStart, Math.min(lineEnd, lineStart + MATCH_UNITS));
			const clean = withoutEscapes(raw.indexOf("\u001b") !== -1 ? raw.replace(ANSI, "") : raw);
			out.push(lineStart, keyLines.line - 1, decisions.decideIndex(clean, keys));
			cleans?.push(clean);
		}
		if (lineEnd >= n) return keyLines.line - 1;
		pos = lineEnd + 1;
	}
}

/**
 * The decisions of a whole text from its parts' (decidePart), in text order: each part's length, its "\n"
 * count and its triples. `enabled` and `steps`: those its DecisionCache was made with.
 */
export function joinDecided(
	parts: ReadonlyArray<{ units: number; newlines: number; at: ArrayLike<number> }>,
	enabled: Uint8Array,
	steps: boolean,
): DecidedLines {
	let units = 0;
	let lines = 1;
	const kept: DecidedPart[] = [];
	for (const p of parts) {
		units += p.units;
		lines += p.newlines;
		kept.push({ units: p.units, newlines: p.newlines, at: p.at instanceof Int32Array ? p.at : Int32Array.from(p.at) });
	}
	return { parts: kept, lines, units, enabled, steps };
}

/** The enabled rules and steps of a scan with `options` (the decisions' part: see NotableOptions.decided). */
export function decisionsOf(options: Pick<NotableOptions, "evaluation"> = {}): { enabled: Uint8Array; steps: boolean } {
	const evaluation = options.evaluation ?? defaultEvaluation;
	return { enabled: enabledMask(evaluation), steps: evaluation?.steps !== false };
}

/** What the passes of one scan share: the text, its options, the key search and the decision on the current line. */
interface ScanShared {
	text: string;
	enabled: Uint8Array;
	steps: boolean;
	maxChars: number;
	keys: WordAutomaton;
	/** The rules' decision on the current line (null: none), by the keys of its raw window or of its cleaned text. */
	memo: { line: number; raw: NotableRule | null | undefined; clean: NotableRule | null | undefined };
	/** Whether the current line's window holds an ANSI escape (its cleaned text may then hold keys it does not). */
	escapes: boolean;
	/** The rules' decisions on the lines seen so far, by text and keys (a repeated line is decided once). */
	decisions: DecisionCache;
	/** How many passes carry context at the current line: the walk visits every line while one does. */
	carriers: number;
	/**
	 * What every pass reads the same of the current line, made once for all (`line` says which line it is about):
	 * whether it is a filler (FILLER), and whether `rule`'s summary reports failures.
	 */
	current: { line: number; filler: boolean | undefined; rule: NotableRule | undefined; failing: boolean };
}

/** The cleaned window of the line text[start, end) the rules see. */
function window(text: string, start: number, end: number): string {
	return cleanLogLine(text.slice(start, Math.min(end, start + MATCH_UNITS)));
}

/** A new step of the log (see Step). */
function newStep(index: number, failedBefore: number): Step {
	return { index, fails: 0, passes: 0, passLine: 0, verdict: undefined, checked: false, failedBefore };
}

/** The line text[start, end) whose cleaned window is `clean`, as kept (its text is made at the end). */
function kept(line: number, clean: string, start: number, end: number): Kept {
	return { line, clean, longer: end - start > MATCH_UNITS };
}

/** An entry no pool keeps any more: a later identical line is a new entry. */
function unfold(e: Entry): void {
	e.fold.delete(e.clean);
}

/** The context a pass carries into the lines after a hit. */
interface Carried {
	entry: Entry;
	ctx: NotableContext;
	left: number;
	blanks: number;
}

/**
 * The keys of the line the walk is at, asked for by the passes at most once (see scanNotableAt): the walk sets
 * `lineStart` and `found` (its keys when the key search gave them, else undefined) for each line it visits.
 */
class LineKeys {
	lineStart = 0;
	found: number[] | undefined = undefined;
	constructor(private readonly walk: DecisionWalk) {}

	/** Whether the line's raw window held keys: its keys (or LISTED), else []. */
	get(): number[] {
		this.found ??= this.walk.keysAt(this.lineStart);
		return this.found;
	}
}

/**
 * One cap's pass over the lines the scan visits: what it keeps, the context it carries, its steps. A class (its
 * methods made once), not closures made per scan: V8 holds a closure's optimized code only while one of the
 * closures lives, so after every full collection a scan's closures ran unoptimized again (the scan after one took
 * ~1.5× as long); see SHAPES for the objects' shapes.
 */
class CapPass {
	private readonly text: string;
	private readonly steps: boolean;
	private readonly maxChars: number;
	/**
	 * The kept entries a repeat folds into, per rule by cleaned line (a rule's map made at its first hit): the
	 * line's own string is the key, so a hit builds no key string of its own, and a LineMap hashes none.
	 */
	private readonly folded = new Map<NotableRule, LineMap<Entry>>();
	private readonly verdicts: Entry[] = []; // a runner's own verdicts on a test or a step
	private readonly failingRing: Entry[] = []; // the last `cap` failing summaries
	private readonly strong: Entry[] = [];
	private readonly weak: Entry[] = [];
	// Read as steps, each pool keeps its first half and its latest half: the failure that ended a long run is
	// often its last one. As before (one step), each keeps its first `cap`.
	private readonly headCap: number;
	private readonly tailCap: number;
	private readonly verdictsTail: Entry[] = [];
	private readonly strongTail: Entry[] = [];
	private readonly weakTail: Entry[] = [];
	private readonly ring: Entry[] = []; // the last `cap` summaries (plus LAST_SUMMARIES), in order
	private readonly vocabulary: Entry[] = []; // the last `cap` lines of failure vocabulary, in order
	private failures = 0;
	private summaries = 0;
	// The log as steps: each step's failure evidence (strong failures, failing summaries and verdicts), its
	// passing summaries, and the verdict that ended it. A step starts at a CI's step marker or after a verdict.
	private step: Step = newStep(0, -1);
	/**
	 * Steps before this one passed whatever their own verdict (a run's passing verdict came after them): applied
	 * to the steps' verdicts once, at the end, not at each such verdict (a log of many would cost steps × verdicts).
	 */
	private runPassedBefore = 0;
	// The last failure found (its entry, line, pool, strength), for a marker that says it was ignored.
	private lastEntry: Entry | undefined = undefined;
	private lastLine = 0;
	private lastPool: Entry[] | undefined = undefined;
	private lastStrong = false;
	/** The last line already reported (as a hit or context): before-context never repeats one. */
	private lastTaken = 0;
	private carrying: Carried | undefined = undefined;

	constructor(
		private readonly shared: ScanShared,
		private readonly cap: number,
	) {
		this.text = shared.text;
		this.steps = shared.steps;
		this.maxChars = shared.maxChars;
		this.headCap = shared.steps ? Math.ceil(cap / 2) : cap;
		this.tailCap = cap - this.headCap;
	}

	private foldOf(rule: NotableRule): LineMap<Entry> {
		let fold = this.folded.get(rule);
		if (fold === undefined) {
			fold = new LineMap();
			this.folded.set(rule, fold);
		}
		return fold;
	}

	private lastFailure(entry: Entry, line: number, pool: Entry[] | undefined, strong: boolean): void {
		this.lastEntry = entry;
		this.lastLine = line;
		this.lastPool = pool;
		this.lastStrong = strong;
	}

	private nextStep(): void {
		const step = this.step;
		this.step = newStep(step.index + 1, step.verdict === "fail" ? step.index : step.failedBefore);
	}

	/** Sets what this pass carries, and counts the passes that carry any (shared.carriers). */
	private carry(next: Carried | undefined): void {
		if ((next === undefined) !== (this.carrying === undefined)) this.shared.carriers += next === undefined ? -1 : 1;
		this.carrying = next;
	}

	/** The current line's facts every pass reads (shared.current), made ready for `line`. */
	private lineFacts(line: number): ScanShared["current"] {
		const current = this.shared.current;
		if (current.line !== line) {
			current.line = line;
			current.filler = undefined;
			current.rule = undefined;
		}
		return current;
	}

	/** A marker line: a step starts, or the failure just above was ignored. */
	private mark(rule: NotableRule, line: number): void {
		if (!this.steps) return;
		if (rule.marker === "checked-step") {
			this.nextStep();
			this.step.checked = true;
			return;
		}
		if (rule.marker === "step") {
			// Inside a checked step a shell's or a tool's own markers are part of it.
			const step = this.step;
			if (!step.checked && (step.fails + step.passes > 0 || step.verdict)) this.nextStep();
			return;
		}
		const last = this.lastEntry;
		if (rule.marker !== "ignored" || !last || line - this.lastLine > 3) return;
		// Ansible's "...ignoring": the task failed and the play went on; its line is no failure.
		this.lastEntry = undefined;
		this.failures--;
		if (this.lastStrong) last.step.fails--;
		if (last.count > 1) {
			last.count--;
			return;
		}
		unfold(last);
		const pool = this.lastPool;
		const at = pool?.indexOf(last) ?? -1;
		if (pool && at !== -1) pool.splice(at, 1);
	}

	private hit(rule: NotableRule, clean: string, line: number, lineStart: number, lineEnd: number): void {
		if (rule.kind === "marker") {
			this.mark(rule, line);
			return;
		}
		const isSummary = rule.kind === "summary";
		if (isSummary) this.summaries++;
		else this.failures++;
		let failing = false;
		if (isSummary && rule.failing) {
			// Every pass decides the same on this line: the pattern runs once.
			const facts = this.lineFacts(line);
			if (facts.rule !== rule) {
				facts.rule = rule;
				facts.failing = rule.failing.test(clean);
			}
			failing = facts.failing;
		}
		const entryStep = this.step;
		if (failing || (!isSummary && !rule.weak)) entryStep.fails++;
		else if (isSummary) {
			entryStep.passes++;
			entryStep.passLine = line;
		}
		if (this.steps && rule.ends) {
			// A verdict ends its step: a passing one says the command succeeded. A run's passing verdict ends
			// every step before it (the run passed, whatever a step printed: a "Job failed" a test printed too);
			// a failing one, the last step.
			if (rule.ends === "step" || failing) entryStep.verdict ??= failing ? "fail" : "pass";
			else this.runPassedBefore = entryStep.index + 1; // only the current step's verdict is read before the end
			this.nextStep();
		}
		const fold = this.foldOf(rule);
		const seen = fold.get(clean);
		if (seen) {
			seen.count++;
			if (!isSummary) this.lastFailure(seen, line, undefined, !rule.weak);
			return;
		}
		const entry: Entry = {
			line,
			clean,
			longer: lineEnd - lineStart > MATCH_UNITS,
			fold,
			rings: 0,
			rule,
			count: 1,
			failing,
			context: [],
			step: entryStep,
		};
		const cap = this.cap;
		if (isSummary) {
			// Kept while the ring of summaries or (failing) the ring of failing summaries holds it.
			this.ring.push(entry);
			fold.set(clean, entry);
			entry.rings = 1;
			if (failing) {
				this.failingRing.push(entry);
				entry.rings = 2;
			}
			if (this.ring.length > cap + LAST_SUMMARIES) {
				const old = this.ring.shift() as Entry;
				if (--old.rings === 0) unfold(old);
			}
			if (this.failingRing.length > cap) {
				const old = this.failingRing.shift() as Entry;
				if (--old.rings === 0) unfold(old);
			}
		} else if (rule.vocabulary) {
			// Failure vocabulary keeps the latest lines: the step that failed is usually the last one.
			this.vocabulary.push(entry);
			fold.set(clean, entry);
			if (this.vocabulary.length > cap) unfold(this.vocabulary.shift() as Entry);
			this.lastFailure(entry, line, this.vocabulary, false);
		} else {
			const head = rule.weak ? this.weak : rule.verdict ? this.verdicts : this.strong;
			this.lastFailure(entry, line, undefined, !rule.weak);
			const pool =
				head.length < this.headCap
					? head
					: rule.weak
						? this.weakTail
						: rule.verdict
							? this.verdictsTail
							: this.strongTail;
			if (pool !== head && this.tailCap === 0) return; // counted, not kept: `dropped` says so
			pool.push(entry);
			fold.set(clean, entry);
			this.lastPool = pool;
			if (pool !== head && pool.length > this.tailCap) unfold(pool.shift() as Entry);
		}
		if (rule.before && (!rule.ends || failing)) this.takeBefore(entry, rule.before, lineStart, line);
		this.lastTaken = line;
		// A failure without context of its own heads a block: its next lines carry what it is about (the test's
		// name under a header, the message under a test's name, the symbol under a compiler error).
		const after = rule.after ?? (this.steps && (rule.kind === "failure" || failing) ? BLOCK_CONTEXT : undefined);
		if (after) this.carry({ entry, ctx: after, left: Math.min(after.lines, MAX_CONTEXT_LINES), blanks: 0 });
	}

	/**
	 * The first line of the record whose field the hit is (`record` context): the line below the nearest line
	 * above that is less indented and opens the record ("{"), unless the hit is that line or it was shown.
	 */
	private takeRecord(entry: Entry, lineStart: number, line: number): void {
		const text = this.text;
		const indent = (s: string) => s.length - s.trimStart().length;
		const own = indent(window(text, lineStart, lineStart + MATCH_UNITS));
		if (own === 0) return;
		let end = lineStart - 1; // the "\n" ending the line above
		let below: Kept | undefined;
		for (let k = 1; k <= MAX_RECORD_LINES && end >= 0; k++) {
			const start = text.lastIndexOf("\n", end - 1) + 1;
			const clean = window(text, start, end);
			if (clean.trim() !== "" && indent(clean) < own) {
				if (below && below.line > this.lastTaken && clean.trimEnd().endsWith("{")) entry.context.push(below);
				return;
			}
			below = kept(line - k, clean, start, end);
			end = start - 1;
		}
	}

	/** The lines just above a hit that carry its message (the last frames of a traceback), while they match. */
	private takeBefore(entry: Entry, ctx: NotableContext, lineStart: number, line: number): void {
		if (ctx.record) {
			this.takeRecord(entry, lineStart, line);
			return;
		}
		const text = this.text;
		const taken: Kept[] = [];
		const want = Math.min(ctx.lines, MAX_CONTEXT_LINES);
		let end = lineStart - 1; // the "\n" ending the line above
		let blanks = 0;
		for (let k = 1; taken.length < want && end >= 0 && line - k > this.lastTaken; k++) {
			const start = text.lastIndexOf("\n", end - 1) + 1;
			const clean = window(text, start, end);
			end = start - 1;
			// Without `while` (the last lines of a failed step) a blank line or two above is stepped over.
			const empty = clean.trim() === "" || (this.steps && FILLER.test(clean));
			if (empty && !ctx.while && ++blanks <= 2) continue;
			if (empty || (ctx.while && !ctx.while.test(clean))) break;
			taken.push(kept(line - k, clean, start, end + 1));
		}
		// A step's last lines: the nearest first (what a shorter view keeps); else in line order.
		entry.context.push(...(ctx.while ? taken.reverse() : taken));
	}

	/**
	 * Whether the line is a hit (and handles it); `found`: its keys when the search already saw them (in the raw
	 * window), else those of its cleaned text. The decision is made once per line for all passes (`memo`). A
	 * line that cleaning left as it was (as long as its window: cleaning only takes characters away) holds its
	 * raw window's keys: it takes them from `keys`, so passes carrying it and passes not share one decision.
	 */
	private tryLine(
		lineStart: number,
		lineEnd: number,
		line: number,
		clean: string,
		found: number[] | undefined,
		keys: LineKeys,
	): boolean {
		const shared = this.shared;
		const memo = shared.memo;
		if (!found) {
			// The cleaned text holds the raw window's keys when cleaning left it whole, or took out only one unit
			// without an escape around: a "\r" (a CRLF line) or a BOM, which no key holds (a key never spans it).
			const cut = Math.min(lineEnd - lineStart, MATCH_UNITS) - clean.length;
			if (cut === 0 || (cut === 1 && !shared.escapes && scanTables().keylessCut)) found = keys.get();
		}
		let rule = found ? memo.raw : memo.clean;
		if (rule === undefined || memo.line !== line) {
			// A cleaned line without escapes is a piece of its raw window: no key there, none in it.
			const indices = found ?? (!shared.escapes && keys.get().length === 0 ? NO_KEYS : shared.keys.indicesIn(clean));
			rule = indices.length === 0 ? null : shared.decisions.decide(clean, indices);
			memo.line = line;
			if (found) memo.raw = rule;
			else memo.clean = rule;
		}
		if (!rule) return false;
		this.hit(rule, clean, line, lineStart, lineEnd);
		return true;
	}

	/** Whether the cleaned line `clean` is a filler (FILLER), tested once for all passes. */
	private isFiller(line: number, clean: string): boolean {
		const facts = this.lineFacts(line);
		facts.filler ??= FILLER.test(clean);
		return facts.filler;
	}

	/** A line the scan visits: carried as context, or tried when its raw window holds a key. */
	visit(lineStart: number, lineEnd: number, line: number, clean: string, keys: LineKeys): void {
		const c = this.carrying;
		if (c) {
			// A filler line is stepped over like a blank one, unless it is a hit (a step marker).
			let filler = 0;
			if (isBlank(clean)) filler = 1;
			else if (this.steps && this.isFiller(line, clean))
				filler = this.tryLine(lineStart, lineEnd, line, clean, undefined, keys) ? 2 : 1;
			if (filler === 1) {
				if (++c.blanks > MAX_CONTEXT_LINES) this.carry(undefined);
			} else if (filler === 2) {
				if (this.carrying === c) this.carry(undefined);
			} else if (c.ctx.while) {
				if (c.ctx.while.test(clean)) {
					if (c.left > 0) {
						c.entry.context.push(kept(line, clean, lineStart, lineEnd));
						c.left--;
						this.lastTaken = line;
					} // past the count: the rest of the run is skipped
				} else {
					this.carry(undefined);
					this.tryLine(lineStart, lineEnd, line, clean, undefined, keys);
				}
			} else if (!this.tryLine(lineStart, lineEnd, line, clean, undefined, keys)) {
				c.entry.context.push(kept(line, clean, lineStart, lineEnd));
				this.lastTaken = line;
				if (--c.left <= 0) this.carry(undefined);
			} else if (this.carrying === c) this.carry(undefined);
		} else {
			const found = keys.get();
			if (found.length > 0) this.tryLine(lineStart, lineEnd, line, clean, found, keys);
		}
	}

	finish(): NotableScan {
		const runPassedBefore = this.runPassedBefore;
		const ring = this.ring;
		return rank({
			verdicts: bothEnds(this.verdicts, this.verdictsTail),
			failingRing: this.failingRing,
			strong: bothEnds(this.strong, this.strongTail),
			weak: bothEnds(this.weak, this.weakTail),
			vocabulary: this.vocabulary,
			ring,
			failures: this.failures,
			summaries: this.summaries,
			cap: this.cap,
			maxChars: this.maxChars,
			lastSummaryLine: ring.length > 0 ? ring[ring.length - 1].line : 0,
			verdictOf: (s: Step) => verdictOf(s, runPassedBefore),
			steps: this.steps,
		});
	}
}

/**
 * A step's verdict once the log is read: "pass" for a step before `runPassedBefore` (a run's passing verdict came
 * after it); else its own, and a step of a CI that prints a verdict for every failing step read as passed when it
 * ended without one, unless a step before it (and not before `runPassedBefore`) failed: a step that runs after a
 * failure (GitHub Actions' `if: always()`: a test report, an upload) passed, but the failures it prints are the
 * earlier step's.
 */
function verdictOf(step: Step, runPassedBefore: number): "pass" | "fail" | undefined {
	if (step.index < runPassedBefore) return "pass";
	return step.verdict ?? (step.checked && step.failedBefore < runPassedBefore ? "pass" : undefined);
}

/** A pool's first entries and its latest ones, alternately: the first, the latest, the second, … */
function bothEnds(head: readonly Entry[], tail: readonly Entry[]): Entry[] {
	const out: Entry[] = [];
	for (let i = 0; i < Math.max(head.length, tail.length); i++) {
		if (i < head.length) out.push(head[i]);
		if (i < tail.length) out.push(tail[tail.length - 1 - i]);
	}
	return out;
}

/**
 * A line's start that tells its shape (16 characters, digits aside): lines of one shape repeat one kind of report.
 * A comparison key, never shown.
 */
const SHAPE_START = /^[\s\S]{0,16}/;

/** Pure: a line's shape, its first characters lower-cased with every run of digits as one `#`. */
function shapeOf(text: string): string {
	return SHAPE_START.exec(text.trimStart().toLowerCase().replace(/\d+/g, "#"))?.[0] ?? "";
}

/**
 * A pool in priority order, each shape's first entry before any repeat of a shape (stable otherwise): a logger
 * that prints the same kind of line by the dozen (`ERROR balancer: dialer.go:190 at …`, a progress line) does
 * not crowd out the one line of another kind (a test's `Error: Should be true`).
 */
function shapesFirst(pool: readonly Entry[], textOf: (e: Entry) => string): Entry[] {
	const seen = new Set<string>();
	const firsts: Entry[] = [];
	const repeats: Entry[] = [];
	for (const e of pool) {
		const shape = shapeOf(textOf(e));
		if (seen.has(shape)) repeats.push(e);
		else {
			seen.add(shape);
			firsts.push(e);
		}
	}
	return [...firsts, ...repeats];
}

interface Found {
	verdicts: Entry[];
	failingRing: Entry[];
	strong: Entry[];
	weak: Entry[];
	vocabulary: Entry[];
	ring: Entry[];
	failures: number;
	summaries: number;
	cap: number;
	/** Most UTF-16 units of a kept line's text (keptText). */
	maxChars: number;
	/** The line of the last summary of the log (0: none). */
	lastSummaryLine: number;
	/** A step's verdict once the log is read (verdictOf). */
	verdictOf: (step: Step) => "pass" | "fail" | undefined;
	/** The scan as issue 32 made it (steps, block context); false: as it was before. */
	steps: boolean;
}

/** The kept lines under the cap, by priority, then in line order. */
function rank(found: Found): NotableScan {
	// A step its verdict says passed (the command exited 0, the build succeeded) had no failure: its failure
	// lines are no failures, its summaries report none.
	const passedStep = (e: Entry) => found.verdictOf(e.step) === "pass";
	/** A kept line's text as the result shows it: made here, only for the lines that may be returned. */
	const textOf = (k: Kept) => keptText(k.clean, found.maxChars, k.longer);
	let demoted = 0;
	const keep = (pool: Entry[]) =>
		pool.filter((e) => {
			if (!passedStep(e)) return true;
			demoted += e.count;
			return false;
		});
	const f = {
		...found,
		verdicts: keep(found.verdicts),
		strong: keep(found.strong),
		weak: keep(found.weak),
		vocabulary: keep(found.vocabulary),
		failingRing: found.failingRing.filter((e) => !passedStep(e)),
	};
	for (const e of found.failingRing) if (passedStep(e)) e.failing = false;
	const chosen: Entry[] = [];
	const taken = new Set<Entry>();
	let room = f.cap;
	// An entry taken with room to spare brings its first context line along (its message, or the test's name
	// under a header, is worth more than another header): reserved here, placed below.
	const withFirst = new Set<Entry>();
	const take = (e: Entry) => {
		if (room <= 0 || taken.has(e)) return;
		taken.add(e);
		chosen.push(e);
		room--;
		if (found.steps && e.context.length > 0 && room > 0) {
			withFirst.add(e);
			room--;
		}
	};
	const summaries = f.ring.slice(-f.cap);
	for (const e of summaries.slice(-LAST_SUMMARIES)) take(e);
	// Failing summaries next, the latest first (few, and each says how a run ended), up to half the cap.
	for (const e of f.failingRing.slice(-Math.ceil(f.cap / 2)).reverse()) take(e);
	for (const e of f.verdicts) take(e);
	for (const e of f.strong) take(e);
	// Weak evidence is dropped where its own step passed: the step shows a passing summary after it and no
	// failure, or nothing failed anywhere and the run has a summary after it. A passing summary vouches only for
	// what was printed before it: it never silences another step's evidence, nor what came after it.
	const nothingFailed = f.verdicts.length === 0 && f.failingRing.length === 0 && f.strong.length === 0;
	const stepPassed = (e: Entry) =>
		e.step.fails === 0 &&
		f.verdictOf(e.step) !== "fail" &&
		((e.step.passes > 0 && (!f.steps || e.line < e.step.passLine)) ||
			(nothingFailed && summaries.length > 0 && (!f.steps || e.line < f.lastSummaryLine)));
	for (const e of found.steps ? shapesFirst(f.weak, textOf) : f.weak) if (!stepPassed(e)) take(e);
	for (let i = f.vocabulary.length - 1; i >= 0; i--) if (!stepPassed(f.vocabulary[i])) take(f.vocabulary[i]);
	for (let i = summaries.length - 1; i >= 0; i--) take(summaries[i]);

	// Context fills what the entries leave: each kept entry's first context line, then the rest. Ranks put
	// an entry's first context line right after it (its message is worth more than another header).
	const firstContext = new Map<Entry, NotableLine>();
	const restContext: NotableLine[] = [];
	const seen = new Set(chosen.map((e) => e.line));
	// The returned texts are copied here, once: a slice of the log would keep the whole log alive with the result.
	const contextLine = (e: Entry, c: Kept): NotableLine => ({
		line: c.line,
		text: detached(textOf(c)),
		rule: e.rule.id,
		kind: "context",
		count: 1,
		failing: false,
		rank: 0,
		of: e.line,
	});
	for (const pass of [0, 1]) {
		for (const e of chosen) {
			const candidates = pass === 0 ? e.context.slice(0, 1) : e.context.slice(1);
			for (const c of candidates) {
				const reserved = pass === 0 && withFirst.has(e);
				if (reserved && seen.has(c.line)) room++; // already shown: the reserved room goes back
				if ((!reserved && room <= 0) || seen.has(c.line)) continue;
				seen.add(c.line);
				if (!reserved) room--;
				if (pass === 0) firstContext.set(e, contextLine(e, c));
				else restContext.push(contextLine(e, c));
			}
		}
	}
	const out: NotableLine[] = [];
	let represented = 0;
	let pending: NotableLine | undefined;
	/** A context line (made for this result, placed once) takes the next rank. */
	const placed = (c: NotableLine) => {
		c.rank = out.length;
		out.push(c);
	};
	for (const e of chosen) {
		represented += e.count;
		const kind = e.rule.kind === "summary" ? "summary" : "failure"; // a marker is never an entry
		out.push({
			line: e.line,
			text: detached(textOf(e)),
			rule: e.rule.id,
			kind,
			count: e.count,
			failing: e.failing,
			rank: out.length,
		});
		// Read as steps, an entry's first context line ranks after the next entry: the first two failures (often
		// the first and the last block) come before either's message.
		if (pending) placed(pending);
		pending = firstContext.get(e);
		if (!f.steps && pending) {
			placed(pending);
			pending = undefined;
		}
	}
	if (pending) placed(pending);
	for (const c of restContext) placed(c);
	out.sort((a, b) => a.line - b.line);
	return {
		lines: out,
		failures: f.failures - demoted,
		summaries: f.summaries,
		dropped: f.failures - demoted + f.summaries - represented,
	};
}

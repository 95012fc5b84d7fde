/**
 * The notable-line scan as of its word-automaton key search, kept verbatim (only imports and the export's name
 * differ) as the reference that notable-reference.property.test.ts compares scanNotable against: any faster
 * rewrite of the scan must return exactly this, for every text. Test code only: the package has one scan, in
 * extensions/shared/text/notable.ts. Since the generic rules and steps (issue 32) it is the scan as it was
 * before them: scanNotable with `evaluation: { rules: isTableRule, steps: false }` must equal it (the table's
 * generic rules are filtered out here; the rest is unchanged).
 */
/**
 * The notable-line scan: one linear pass over a log (command, test or build output) that finds the lines
 * saying what went wrong or how the run ended, anywhere in the text, with their 1-based line numbers as Pi's
 * read counts them (`text.split("\n")`, a "\r" before the "\n" part of its line). The rules are data, in
 * notable-rules.ts; this module only walks the text and ranks what it found.
 *
 * - Linear time, bounded memory: one global search for PREFILTER's keywords jumps from candidate line to
 *   candidate line (indexOf counts the newlines between), so a line without a keyword costs no regex of its
 *   own; no line array and no copy of the text, only the kept lines are sliced (each at most maxLineChars,
 *   and at most MATCH_UNITS of a line are matched). What is kept is bounded by maxLines per pool.
 * - Without crying wolf: an expected failure (xfail, KNOWN-FAIL, …) or a guarded look-alike ("0 failed") is
 *   no failure; identical lines fold into one with a count; weak evidence (a bare "Error:" line) ranks after
 *   strong hits and is dropped in a run whose summaries say it passed and that shows no strong failure.
 * - A cap keeps failures over summaries over context: the last summary lines (how the run ended) first,
 *   then strong failures and failing summaries from the earliest, then weak ones, then the other summaries
 *   from the latest, then the context of what is kept. The result is in line order.
 */
import {
	NOTABLE_RULES as EVERY_RULE,
	EXPECTED_FAILURE,
	MAX_CONTEXT_LINES,
	type NotableContext,
	type NotableRule,
} from "../../extensions/shared/text/notable-rules.ts";

/** The table as it was: the generic rules (issue 32) came later, and the scan without them must equal this. */
const NOTABLE_RULES = EVERY_RULE.filter((rule) => rule.ecosystem !== "generic");

import { isHighSurrogate, toWellFormed } from "../../extensions/shared/text/utf8.ts";
import { buildWordAutomaton } from "./word-automaton-reference.ts";

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
 * Mozilla harness' "PID 123 | " or "GECKO(123) | " before a child process's output.
 */
const CI_PREFIX =
	/^(\uFEFF)?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z? ?|\[(task|taskcluster|vcs|setup|fetches) [^\]]*\] ?)*(\[\d+\] )?(\d\d:\d\d:\d\d(\.\d+)?\s+(INFO|WARNING|ERROR|CRITICAL|DEBUG|FATAL) - )?(\s*(PID \d+|GECKO\(\d+\)) \| )?/;

/** How a CI prefix can start (a BOM, a digit, "[", white space, "PID", "GECKO"). */
const PREFIX_START = /^[\uFEFF\d[\s]|^(PID|GECKO)/;

/**
 * The line as the rules see it (and the scan shows it): no ANSI, no CI prefix, no trailing "\r", and of a line
 * a carriage return rewrote (Travis' timer mark before "The command … exited with 1.", a progress bar's last
 * state) only what the terminal shows: the text after the last "\r" that is followed by some.
 */
export function cleanLogLine(raw: string): string {
	let s = raw.indexOf("\u001b") === -1 ? raw : raw.replace(ANSI, "");
	if (s.endsWith("\r")) s = s.slice(0, -1);
	if (s.indexOf("\r") !== -1) s = shownAfterReturn(s);
	if (!PREFIX_START.test(s)) return s; // most lines: no prefix to look for
	const m = CI_PREFIX.exec(s);
	return m && m[0].length > 0 ? s.slice(m[0].length) : s;
}

/** What a terminal shows of a line with carriage returns in it: what follows the last one followed by text. */
function shownAfterReturn(s: string): string {
	const shown = s.replace(/\r+$/, "");
	const at = shown.lastIndexOf("\r");
	return at !== -1 && shown.slice(at + 1).trim() !== "" ? shown.slice(at + 1) : shown;
}

/** A found line with what it carries, before ranking. */
interface Entry {
	line: number;
	text: string;
	key: string;
	rule: NotableRule;
	count: number;
	failing: boolean;
	context: { line: number; text: string }[];
}

/** Every rule's keys, and per key (by its index) the rules that hold it. */
function compileKeys(rules: readonly NotableRule[]): { words: string[]; rulesOf: number[][] } {
	const words = [...new Set(rules.flatMap((r) => r.keys.map((k) => k.toLowerCase())))];
	const rulesOf = words.map((w) =>
		rules.flatMap((rule, index) => (rule.keys.some((k) => k.toLowerCase() === w) ? [index] : [])),
	);
	return { words, rulesOf };
}

const COMPILED = compileKeys(NOTABLE_RULES);
/** Finds every rule's keys at once, case-insensitively. */
const KEYS = buildWordAutomaton(COMPILED.words);

/** The search words of the scan (every rule's keys), for tests and the docs. */
export const NOTABLE_KEYS: readonly string[] = KEYS.words;

/** Marks of the rules worth trying on one line (reused: a line marks, tries in table order, clears). */
const marks = new Uint8Array(NOTABLE_RULES.length);

/** The rule that decides a cleaned line whose keys (indices into NOTABLE_KEYS) are `keys`, or undefined. */
function decide(clean: string, keys: readonly number[]): NotableRule | undefined {
	let first = NOTABLE_RULES.length;
	let last = -1;
	for (const k of keys) {
		for (const r of COMPILED.rulesOf[k]) {
			marks[r] = 1;
			if (r < first) first = r;
			if (r > last) last = r;
		}
	}
	let decided: NotableRule | undefined;
	for (let r = first; r <= last; r++) {
		if (marks[r] === 0) continue;
		const rule = NOTABLE_RULES[r];
		if (!rule.pattern.test(clean)) continue;
		if (!rule.not?.some((re) => re.test(clean)) && !(rule.kind === "failure" && EXPECTED_FAILURE.test(clean))) {
			decided = rule;
		}
		break;
	}
	marks.fill(0, first, last + 1);
	return decided;
}

/** The rule that decides a cleaned line (the first in table order whose keys it holds and whose pattern matches, unless vetoed), or undefined. */
export function matchRule(clean: string): NotableRule | undefined {
	return decide(clean, KEYS.indicesIn(clean));
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
export function referenceScanNotable(text: string, options: NotableOptions = {}): NotableScan {
	if (typeof text !== "string") throw new TypeError(`scanNotable: text must be a string, got ${typeof text}`);
	const cap = whole(options.maxLines, DEFAULT_NOTABLE_LINES, 0);
	const maxChars = Math.min(MATCH_UNITS, whole(options.maxLineChars, DEFAULT_NOTABLE_LINE_CHARS, 2));
	const n = text.length;

	const folded = new Map<string, Entry>();
	const verdicts: Entry[] = []; // a runner's own verdicts on a test or a step
	const failingRing: Entry[] = []; // the last `cap` failing summaries
	const strong: Entry[] = [];
	const weak: Entry[] = [];
	const ring: Entry[] = []; // the last `cap` summaries (plus LAST_SUMMARIES), in order
	let failures = 0;
	let summaries = 0;
	/** The last line already reported (as a hit or context): before-context never repeats one. */
	let lastTaken = 0;
	let carrying: { entry: Entry; ctx: NotableContext; left: number; blanks: number } | undefined;

	const window = (start: number, end: number) => cleanLogLine(text.slice(start, Math.min(end, start + MATCH_UNITS)));
	/** The kept text of the line text[start, end) whose cleaned window is `clean`. */
	const kept = (clean: string, start: number, end: number) => keptText(clean, maxChars, end - start > MATCH_UNITS);

	const hit = (rule: NotableRule, clean: string, line: number, lineStart: number, lineEnd: number): void => {
		const isSummary = rule.kind === "summary";
		if (isSummary) summaries++;
		else failures++;
		const key = `${rule.id}\u0000${clean}`;
		const seen = folded.get(key);
		if (seen) {
			seen.count++;
			return;
		}
		const failing = isSummary && rule.failing?.test(clean) === true;
		const entry: Entry = { line, text: kept(clean, lineStart, lineEnd), key, rule, count: 1, failing, context: [] };
		if (isSummary) {
			ring.push(entry);
			folded.set(key, entry);
			if (failing) failingRing.push(entry);
			if (ring.length > cap + LAST_SUMMARIES) {
				const old = ring.shift() as Entry;
				if (!failingRing.includes(old)) folded.delete(old.key);
			}
			if (failingRing.length > cap) {
				const old = failingRing.shift() as Entry;
				if (!ring.includes(old)) folded.delete(old.key);
			}
		} else {
			const pool = rule.weak ? weak : rule.verdict ? verdicts : strong;
			if (pool.length >= cap) return; // counted, not kept: `dropped` says so
			pool.push(entry);
			folded.set(key, entry);
		}
		if (rule.before) takeBefore(entry, rule.before, lineStart, line);
		lastTaken = line;
		if (rule.after)
			carrying = { entry, ctx: rule.after, left: Math.min(rule.after.lines, MAX_CONTEXT_LINES), blanks: 0 };
	};

	/** The lines just above a hit that carry its message (the last frames of a traceback), while they match. */
	const takeBefore = (entry: Entry, ctx: NotableContext, lineStart: number, line: number): void => {
		const taken: { line: number; text: string }[] = [];
		let end = lineStart - 1; // the "\n" ending the line above
		for (let k = 1; k <= Math.min(ctx.lines, MAX_CONTEXT_LINES) && end >= 0 && line - k > lastTaken; k++) {
			const start = text.lastIndexOf("\n", end - 1) + 1;
			const clean = window(start, end);
			if (clean.trim() === "" || (ctx.while && !ctx.while.test(clean))) break;
			taken.push({ line: line - k, text: kept(clean, start, end) });
			end = start - 1;
		}
		entry.context.push(...taken.reverse());
	};

	/** Whether the line is a hit (and handles it); `found`: its keys when the search already saw them. */
	const tryLine = (lineStart: number, lineEnd: number, line: number, clean: string, found?: number[]): boolean => {
		const keys = found ?? KEYS.indicesIn(clean);
		if (keys.length === 0) return false;
		const rule = decide(clean, keys);
		if (!rule) return false;
		hit(rule, clean, line, lineStart, lineEnd);
		return true;
	};

	let pos = 0;
	let line = 1;
	let found: number[] | undefined;
	while (pos <= n) {
		let lineStart = pos;
		let lineEnd: number;
		found = undefined;
		if (!carrying) {
			const first = KEYS.next(text, pos);
			if (first === -1) break;
			// The automaton counted the lines it passed on the way: no second pass over them.
			const passed = KEYS.passed();
			line += passed.newlines;
			if (passed.lastNewline !== -1) lineStart = passed.lastNewline + 1;
			lineEnd = text.indexOf("\n", first);
			if (lineEnd === -1) lineEnd = n;
			// Every key of this line (within the matched window), so only their rules are tried: the search goes
			// on from the first key, which no earlier part of the line holds.
			const windowEnd = Math.min(lineEnd, lineStart + MATCH_UNITS);
			found = first < windowEnd ? KEYS.wordsAfter(text, first, windowEnd) : [];
		} else {
			lineEnd = text.indexOf("\n", lineStart);
			if (lineEnd === -1) lineEnd = n;
		}
		const clean = window(lineStart, lineEnd);

		if (carrying) {
			const c = carrying;
			if (clean.trim() === "") {
				if (++c.blanks > MAX_CONTEXT_LINES) carrying = undefined;
			} else if (c.ctx.while) {
				if (c.ctx.while.test(clean)) {
					if (c.left > 0) {
						c.entry.context.push({ line, text: kept(clean, lineStart, lineEnd) });
						c.left--;
						lastTaken = line;
					} // past the count: the rest of the run is skipped
				} else {
					carrying = undefined;
					tryLine(lineStart, lineEnd, line, clean);
				}
			} else if (!tryLine(lineStart, lineEnd, line, clean)) {
				c.entry.context.push({ line, text: kept(clean, lineStart, lineEnd) });
				lastTaken = line;
				if (--c.left <= 0) carrying = undefined;
			} else if (carrying === c) carrying = undefined;
		} else if (found && found.length > 0) tryLine(lineStart, lineEnd, line, clean, found);

		if (lineEnd >= n) break;
		pos = lineEnd + 1;
		line++;
	}
	return rank({ verdicts, failingRing, strong, weak, ring, failures, summaries, cap });
}

interface Found {
	verdicts: Entry[];
	failingRing: Entry[];
	strong: Entry[];
	weak: Entry[];
	ring: Entry[];
	failures: number;
	summaries: number;
	cap: number;
}

/** The kept lines under the cap, by priority, then in line order. */
function rank(f: Found): NotableScan {
	const chosen: Entry[] = [];
	const taken = new Set<Entry>();
	let room = f.cap;
	const take = (e: Entry) => {
		if (room <= 0 || taken.has(e)) return;
		taken.add(e);
		chosen.push(e);
		room--;
	};
	const summaries = f.ring.slice(-f.cap);
	for (const e of summaries.slice(-LAST_SUMMARIES)) take(e);
	// Failing summaries next, the latest first (few, and each says how a run ended), up to half the cap.
	for (const e of f.failingRing.slice(-Math.ceil(f.cap / 2)).reverse()) take(e);
	for (const e of f.verdicts) take(e);
	for (const e of f.strong) take(e);
	const passed = f.verdicts.length === 0 && f.failingRing.length === 0 && f.strong.length === 0 && summaries.length > 0;
	if (!passed) for (const e of f.weak) take(e);
	for (let i = summaries.length - 1; i >= 0; i--) take(summaries[i]);

	// Context fills what the entries leave: each kept entry's first context line, then the rest. Ranks put
	// an entry's first context line right after it (its message is worth more than another header).
	const firstContext = new Map<Entry, NotableLine>();
	const restContext: NotableLine[] = [];
	const seen = new Set(chosen.map((e) => e.line));
	const contextLine = (e: Entry, c: { line: number; text: string }): NotableLine => ({
		line: c.line,
		text: c.text,
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
				if (room <= 0 || seen.has(c.line)) continue;
				seen.add(c.line);
				room--;
				if (pass === 0) firstContext.set(e, contextLine(e, c));
				else restContext.push(contextLine(e, c));
			}
		}
	}
	const out: NotableLine[] = [];
	let represented = 0;
	for (const e of chosen) {
		represented += e.count;
		const kind = e.rule.kind === "summary" ? "summary" : "failure";
		out.push({
			line: e.line,
			text: e.text,
			rule: e.rule.id,
			kind,
			count: e.count,
			failing: e.failing,
			rank: out.length,
		});
		const first = firstContext.get(e);
		if (first) out.push({ ...first, rank: out.length });
	}
	for (const c of restContext) out.push({ ...c, rank: out.length });
	out.sort((a, b) => a.line - b.line);
	return {
		lines: out,
		failures: f.failures,
		summaries: f.summaries,
		dropped: f.failures + f.summaries - represented,
	};
}

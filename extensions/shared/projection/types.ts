/**
 * The types of the projection's one entry point (projection.ts): the limits a call works to, the artifact
 * sinks it stores through, its options and its one flat result. Types only.
 */
import type { WindowOption } from "./window.ts";

/** The limits of a surface: a table entry (../surfaces.ts) or one resolved with the user's overrides. */
export interface SurfaceLimits {
	/** UTF-8 bytes of the WHOLE output (head + marker + tail + footer). */
	readonly maxBytes: number;
	/** Lines of the whole output. */
	readonly maxLines: number;
	/** Share of the body budget for the head, 0..1 (absent: DEFAULT_HEAD_SHARE unless the call gives one). */
	readonly headShare?: number;
	/** When set, a call that gives only maxBytes gets ceil(maxBytes / bytesPerLine) lines. */
	readonly bytesPerLine?: number;
	/** A clipped surface: cut to a prefix + mark (or + the caller's marker line), never raised to the window. */
	readonly clip?: boolean;
}

/** Where the full text was (or was not) stored. */
export type ArtifactRef = { ok: true; path: string; sha256: string } | { ok: false; error: string };

/** What a sink says after storing a text. */
export type SinkResult =
	| {
			ok: true;
			/** Absolute path of the stored copy (the footer names it). */
			path: string;
			/** SHA-256 hex of the stored bytes. */
			sha256: string;
	  }
	| {
			ok: false;
			/** One line: why nothing was stored (quoted in the "NOT saved" footer). */
			error: string;
	  };

/** Stores a full text synchronously (for hooks that must not await). The artifact store implements it. */
export interface ArtifactSink {
	/** Store `text` exactly (UTF-8); never throws for storage failures, reports them. */
	put(text: string): SinkResult;
}

/** Stores a full text asynchronously. With such a sink, `project` returns a promise. */
export interface AsyncArtifactSink {
	/** Store `text` exactly (UTF-8); reports failures instead of rejecting. */
	putAsync(text: string): Promise<SinkResult>;
}

/** The projected text is lines of a longer stored text: the footer speaks of that text and its line numbers. */
export interface StoredSource {
	/** The exact text the artifact holds. */
	text: string;
	/** 1-based line of `text` (as Pi's read counts) that the projected text's first line is. */
	firstLine: number;
}

/**
 * A text's sizes, measured once (`measureText`) by a caller that projects the same long text more than once:
 * each call would otherwise measure all of it again. A call uses them only for this very `text`.
 */
export interface MeasuredText {
	/** The text measured. */
	text: string;
	/** UTF-8 bytes (a lone surrogate counts 3, as stored). */
	bytes: number;
	/** Lines as Pi's read counts them. */
	lines: number;
	/** Some line has more UTF-16 units than a third of one read's bytes: it may be longer than one read returns. */
	longLine: boolean;
}

/** What a caller needs beyond a plain view; every field is optional. */
export interface ProjectOptions {
	/** UTF-8 bytes for this call (a batch allocation, a water level, the room a header leaves), at most the surface's. */
	maxBytes?: number;
	/** Lines for this call, at most the surface's (default: from maxBytes by the surface's bytesPerLine, else the surface's). */
	maxLines?: number;
	/** Head share for this call, 0..1 (default: the surface's, else DEFAULT_HEAD_SHARE). */
	headShare?: number;
	/** Stores the full text when it does not fit (called only then). An async sink makes the call return a promise. */
	sink?: ArtifactSink | AsyncArtifactSink;
	/** The full text is already stored (or failed to be): the footer names it. Ignored when `sink` is given. */
	stored?: ArtifactRef;
	/** Why nothing is stored, for the "NOT saved" footer when neither sink nor stored is given. */
	notSavedReason?: string;
	/** The text is a window of a longer stored text (a file read that starts at line 4,001): footer in its numbers. */
	source?: StoredSource;
	/** Own omission marker wording (one line); default omissionMarker. */
	marker?: (omittedLines: number, omittedBytes: number) => string;
	/** False: no footer (the caller says elsewhere where the full text is). Default true. */
	footer?: boolean;
	/**
	 * Show a numbered window of the text's lines under a heading (a file read's result) instead of the whole
	 * text; with `source`, the footer speaks of the stored text's lines. The result's fields are the window's.
	 */
	window?: WindowOption;
	/** The sizes of the text (or of `source.text`) measured once by the caller: used for that text only. */
	measured?: MeasuredText;
}

/** What a list needs beyond its items (list mode: `project(items, surface, options)`); every field optional. */
export interface ListOptions {
	/** UTF-8 bytes for this call, at most the surface's. */
	maxBytes?: number;
	/** Lines (and entries: items + marker) for this call, at most the surface's. */
	maxLines?: number;
	/** Between two shown items; default "\n" (one item a line). */
	separator?: string;
	/** Between the last shown item and the marker; default the separator. */
	markerSeparator?: string;
	/** The marker wording for `omitted` (>= 1) items not shown; default listMore ("… and 5 more"). "" counts nothing. */
	more?: (omitted: number) => string;
}

/** The one result type of the projection. */
export interface Projection {
	/** What the model sees. */
	text: string;
	/** False when the text came back verbatim (and no artifact was written). */
	truncated: boolean;
	/** True when a short surface clipped the text to a prefix + CLIP_MARK (no marker, no footer). */
	clipped: boolean;
	/** UTF-8 bytes of the full text (a lone surrogate counts 3, as stored). */
	totalBytes: number;
	/** Lines of the full text as Pi's read counts them: text.split("\n").length. */
	totalLines: number;
	/** UTF-8 bytes of the full text shown in neither head nor tail. */
	omittedBytes: number;
	/** Lines wholly or partly omitted (firstOmittedLine..last omitted line); 0 when verbatim. */
	omittedLines: number;
	/** 1-based line (as Pi's read counts) of the first omitted line; undefined if not truncated. */
	firstOmittedLine?: number;
	/** The read call's offset printed in the footer (undefined when nothing was stored). */
	readOffset?: number;
	/** The read call's limit printed in the footer: lines that one read returns whole. */
	readLimit?: number;
	/** The artifact when a store was asked (absent when verbatim or when nothing was stored). */
	artifact?: ArtifactRef;
	/** The head is text[0, headEnd) (UTF-16 index); text.length when verbatim. */
	headEnd: number;
	/** The tail is text[tailStart, text.length); text.length when verbatim. */
	tailStart: number;
	/** Head as shown (lone surrogates as U+FFFD); the whole text when verbatim. */
	head: string;
	/** Tail as shown; "" when verbatim or clipped. */
	tail: string;
	/** Omission marker line; "" when verbatim or clipped. */
	marker: string;
	/** Footer line; "" when verbatim, clipped, or asked for none. */
	footer: string;
	/** A list: items shown (whole, or the first clipped); 0 for a text. */
	shownItems: number;
	/** A list: items not shown at all, the count its "and N more" marker names; 0 for a text. */
	omittedItems: number;
	/** A list: the shown items, then the marker when there is one, as the text joins them; [] for a text. */
	entries: readonly string[];
	/** UTF-8 bytes the whole output was fitted to (raised for the minimum window and very long paths). */
	maxBytes: number;
	/** Lines the whole output was fitted to. */
	maxLines: number;
	/** Share of the body given to the head, as applied (0..1). */
	headShare: number;
	/** Body bytes the head cut worked to (0 when verbatim). */
	headBudgetBytes: number;
	/** Body lines the head cut worked to (0 when verbatim). */
	headBudgetLines: number;
	/** Body bytes the tail cut worked to (0 when verbatim). */
	tailBudgetBytes: number;
	/** Body lines the tail cut worked to (0 when verbatim). */
	tailBudgetLines: number;
}

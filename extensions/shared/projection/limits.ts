/**
 * The limits one projection call works to: the surface's entry (a name from ../surfaces.ts, or limits
 * given as an object) narrowed by the call, sanitised (NaN or missing → the minimum window), and raised to
 * the minimum window unless the surface clips.
 */
import { SURFACES, type SurfaceName } from "../surfaces.ts";
import { countLinesUpTo, utf8ByteLength } from "../text/utf8.ts";
import type { ProjectOptions, SurfaceLimits } from "./types.ts";

/** Share of the body kept at the head when neither the call nor the surface says otherwise. */
export const DEFAULT_HEAD_SHARE = 0.75;
/** Smallest view that is still readable, in UTF-8 bytes; smaller maxBytes are raised to it. */
export const MIN_WINDOW_BYTES = 1024;
/** Smallest view in lines (marker + footer + 3 head + 3 tail); smaller maxLines are raised to it. */
export const MIN_WINDOW_LINES = 8;
/** Body bytes kept at least, even when a very long artifact path makes the footer large. */
export const MIN_BODY_BYTES = 256;
/** Stand-in for an unlimited budget, so shares of it stay finite. */
export const UNLIMITED = Number.MAX_SAFE_INTEGER;

/** Limits after sanitising and combining the surface with the call. */
export interface Limits {
	maxBytes: number;
	maxLines: number;
	headShare: number;
	/** The surface is below the minimum window: clip instead of projecting. */
	short: boolean;
}

function count(value: unknown): number | undefined {
	if (typeof value !== "number" || Number.isNaN(value)) return undefined;
	return Math.max(0, Math.floor(Math.min(value, UNLIMITED)));
}

function isShare(value: unknown): value is number {
	return typeof value === "number" && Number.isFinite(value);
}

/** The surface's entry: a name from the table, or limits given as an object. */
export function surfaceOf(surface: SurfaceName | SurfaceLimits): SurfaceLimits {
	if (typeof surface === "string") {
		const entry: SurfaceLimits | undefined = Object.hasOwn(SURFACES, surface) ? SURFACES[surface] : undefined;
		if (!entry) throw new TypeError(`project: unknown surface ${JSON.stringify(surface)}`);
		return entry;
	}
	if (!surface || typeof surface !== "object") throw new TypeError("project: a surface name or limits is required");
	return surface;
}

/** The limits one call works to: the call narrows the surface; NaN or missing → the minimum window. */
export function limitsOf(entry: SurfaceLimits, options: ProjectOptions): Limits {
	// A clipped surface with no usable limit shows nothing; any other is raised to the minimum window.
	const short = entry.clip === true;
	const surfaceBytes = count(entry.maxBytes) ?? (short ? 0 : MIN_WINDOW_BYTES);
	const surfaceLines = count(entry.maxLines) ?? (short ? 1 : MIN_WINDOW_LINES);
	const callBytes = count(options.maxBytes);
	let callLines = count(options.maxLines);
	if (callLines === undefined && callBytes !== undefined && entry.bytesPerLine && entry.bytesPerLine > 0) {
		callLines = Math.ceil(callBytes / entry.bytesPerLine);
	}
	const share = isShare(options.headShare) ? options.headShare : entry.headShare;
	const headShare = isShare(share) ? Math.min(1, Math.max(0, share)) : DEFAULT_HEAD_SHARE;
	const maxBytes = Math.min(surfaceBytes, callBytes ?? surfaceBytes);
	const maxLines = Math.min(surfaceLines, callLines ?? surfaceLines);
	if (short) return { maxBytes, maxLines: Math.max(1, maxLines), headShare, short };
	return {
		maxBytes: Math.max(MIN_WINDOW_BYTES, maxBytes),
		maxLines: Math.max(MIN_WINDOW_LINES, maxLines),
		headShare,
		short,
	};
}

/** True when `text` fits the surface (and the call's limits) verbatim. Cheap: exits early on a long text. */
export function fitsSurface(text: string, surface: SurfaceName | SurfaceLimits, options: ProjectOptions = {}): boolean {
	const lim = limitsOf(surfaceOf(surface), options);
	if (text.length > lim.maxBytes) return false; // every UTF-16 unit is at least one UTF-8 byte
	if (countLinesUpTo(text, lim.maxLines) > lim.maxLines) return false;
	return text.length * 3 <= lim.maxBytes || utf8ByteLength(text) <= lim.maxBytes;
}

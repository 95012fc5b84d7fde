/**
 * The `details.headroom` contract: what every tool result our extensions made (a stub, a recall answer, a
 * batch of child results) carries under `details.headroom`, typed once. Writers build it with
 * `headroomDetails`; readers (pass-through checks, the /headroom ledger, usage totals) use `headroomOf`.
 * Also the one session entry context-trim writes (ContextTrimRecord), which the ledger reads.
 */
/** Tokens and cost of one or more model calls. */
export interface CallUsage {
	/** How many calls (successful replies) this covers. */
	calls: number;
	/** Prompt tokens not served from the cache. */
	input: number;
	/** Completion tokens. */
	output: number;
	/** Prompt tokens served from the provider's cache. */
	cacheRead: number;
	/** Prompt tokens written to the provider's cache. */
	cacheWrite: number;
	/** Total cost in US dollars (0 when the model has no prices). */
	costUsd: number;
}

/** The shape `details.headroom` has on results our extensions made. */
export interface HeadroomDetails {
	/** The result went through the projection (or is a stub): never shorten it again. */
	projected: true;
	/** Absolute paths of the artifacts it points to. */
	artifacts?: string[];
	/** Why the full text could not be stored, when it could not (the text says so too). */
	notStored?: string;
	/** Tokens and cost of the model call that wrote the result's body (a summary), when there was one. */
	usage?: CallUsage;
}

/** The contract's value for a result: projected, with what it points to. */
export function headroomDetails(fields: Omit<HeadroomDetails, "projected"> = {}): HeadroomDetails {
	return { projected: true, ...fields };
}

/** `details.headroom` of any result, as far as it has the contract's shape (undefined when absent). */
export function headroomOf(details: unknown): Partial<Record<keyof HeadroomDetails, unknown>> | undefined {
	if (!details || typeof details !== "object") return undefined;
	const h = (details as { headroom?: unknown }).headroom;
	return h && typeof h === "object" ? (h as Partial<Record<keyof HeadroomDetails, unknown>>) : undefined;
}

/** True when the result was made by our extensions (projected or a stub): it passes through untouched. */
export function isProjected(details: unknown): boolean {
	return headroomOf(details)?.projected === true;
}

/** customType of the session entry context-trim appends when its cut changes (never sent to the model). */
export const CONTEXT_TRIM_ENTRY = "context-trim";

/**
 * What one trim did to a request, as context-trim records it in the session (`pi.appendEntry`, a custom
 * entry the model never sees) and the /headroom ledger reads it. Written when the trim first happens and
 * whenever what it leaves out or shortens changes — not on every request. Tokens are the package's own
 * estimate (shared/text/tokens); "request" means the whole request: system prompt, tools and messages.
 */
export interface ContextTrimRecord {
	kind: "headroom-context-trim";
	/** Messages Pi was about to send (system messages not counted). */
	messagesBefore: number;
	/** Messages sent instead, the marker included (system messages not counted). */
	messagesAfter: number;
	/** Messages left out. */
	messagesOmitted: number;
	/** Estimated tokens of the whole request before trimming. */
	tokensBefore: number;
	/** Estimated tokens of the whole request sent. */
	tokensAfter: number;
	/** Estimated tokens of the messages left out. */
	tokensOmitted: number;
	/** Texts of kept messages shown only as head + tail. */
	textsShortened: number;
	/** UTF-8 bytes of those texts in full. */
	shortenedFromBytes: number;
	/** UTF-8 bytes of what is shown of them. */
	shortenedToBytes: number;
	/** Estimated tokens of the system prompt and tool declarations. */
	systemTokens: number;
	/** Tokens the whole request may take (window − output reserve − safety margin). */
	budgetTokens: number;
}

/** The record of a session entry, when it is a context-trim record (undefined otherwise). */
export function contextTrimRecordOf(entry: unknown): ContextTrimRecord | undefined {
	const e = entry as { type?: unknown; customType?: unknown; data?: unknown } | undefined;
	if (e?.type !== "custom" || e.customType !== CONTEXT_TRIM_ENTRY) return undefined;
	const d = e.data as Partial<ContextTrimRecord> | undefined;
	if (!d || typeof d !== "object" || d.kind !== "headroom-context-trim") return undefined;
	const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
	return {
		kind: "headroom-context-trim",
		messagesBefore: n(d.messagesBefore),
		messagesAfter: n(d.messagesAfter),
		messagesOmitted: n(d.messagesOmitted),
		tokensBefore: n(d.tokensBefore),
		tokensAfter: n(d.tokensAfter),
		tokensOmitted: n(d.tokensOmitted),
		textsShortened: n(d.textsShortened),
		shortenedFromBytes: n(d.shortenedFromBytes),
		shortenedToBytes: n(d.shortenedToBytes),
		systemTokens: n(d.systemTokens),
		budgetTokens: n(d.budgetTokens),
	};
}

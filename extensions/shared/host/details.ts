/**
 * The `details.headroom` contract: what every tool result our extensions made (a stub, a recall answer, a
 * batch of child results) carries under `details.headroom`, typed once. Writers build it with
 * `headroomDetails`; readers (pass-through checks, the /headroom ledger, usage totals) use `headroomOf`.
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

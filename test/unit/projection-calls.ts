/**
 * The calls the projection tests make, each one `project(text, surface, options)`: with an artifact ref the
 * test made itself, or with a real store as the sink. The parts-shaped view of a result keeps the property
 * tests' vocabulary (head, tail, marker, footer, limits, budget) while every value comes from the one entry point.
 */
import {
	type ArtifactRef,
	type Projection,
	project,
	type SurfaceLimits,
} from "../../extensions/shared/projection/projection.ts";
import type { ArtifactKind, ArtifactStore } from "../../extensions/shared/store/artifact-store.ts";

/** A surface given as plain limits (the property tests draw them at random). */
export type Limits = SurfaceLimits;

/** project() with the full text's artifact already known (or none: the footer says not saved). */
export function projectWith(text: string, limits: Limits, artifact: ArtifactRef | undefined): Projection {
	return project(text, limits, { stored: artifact });
}

/** project() storing the full text in `store` (async sink) when it does not fit; any object with put works. */
export function projectStored(
	text: string,
	limits: Limits,
	sink: { store: ArtifactStore; kind: ArtifactKind },
): Promise<Projection> {
	return project(text, limits, { sink: { putAsync: (t) => sink.store.put(sink.kind, t) } });
}

/** project() storing the full text in `store` (sync sink) when it does not fit. */
export function projectStoredSync(
	text: string,
	limits: Limits,
	sink: { store: ArtifactStore; kind: ArtifactKind },
): Projection {
	return project(text, limits, { sink: { put: (t) => sink.store.putSync(sink.kind, t) } });
}

/** The limits a call is fitted to (sanitised, raised to the minimum window), read off a projection of "". */
export function effectiveLimitsOf(limits: Limits): { maxBytes: number; maxLines: number; headShare: number } {
	const p = project("", limits);
	return { maxBytes: p.maxBytes, maxLines: p.maxLines, headShare: p.headShare };
}

/** A projection's pieces, named as the property tests use them. */
export function partsOf(text: string, limits: Limits, artifact: ArtifactRef | undefined) {
	const p = projectWith(text, limits, artifact);
	return {
		projection: p,
		headEnd: p.headEnd,
		tailStart: p.tailStart,
		head: p.head,
		tail: p.tail,
		marker: p.marker,
		footer: p.footer,
		limits: { maxBytes: p.maxBytes, maxLines: p.maxLines, headShare: p.headShare },
		budget: {
			headBytes: p.headBudgetBytes,
			headLines: p.headBudgetLines,
			tailBytes: p.tailBudgetBytes,
			tailLines: p.tailBudgetLines,
		},
	};
}

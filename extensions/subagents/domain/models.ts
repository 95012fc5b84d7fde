/**
 * Model resolution: a spawn's model spec against the models with credentials and every model the registry
 * knows, and the choices an error offers. No Pi imports, no I/O.
 */
import { SURFACES } from "../../shared/surfaces.ts";

/** A model the registry knows. */
export interface ModelChoice {
	/** Provider id, e.g. "mock". */
	provider: string;
	/** Model id within the provider. */
	id: string;
}

export type Resolved<T> = { ok: true; value: T } | { ok: false; failure: ModelFailure };

/** Why a model spec did not resolve, with the choices to offer (ordered, not yet capped). */
export interface ModelFailure {
	/** "ambiguous": a bare id several usable models share; "no-credentials": known, but only without credentials. */
	reason: "unknown" | "ambiguous" | "no-credentials";
	/** The usable matches when ambiguous, else every usable model; session's provider first. */
	choices: string[];
	/** Providers that know the id but have no credentials configured ("no-credentials" only). */
	providers?: string[];
}

/** The models a spec is resolved against. */
export interface ModelPools {
	/** Models with credentials configured (plus the session's own model). */
	available: ModelChoice[];
	/** Every model the registry knows, credentials or not. */
	all: ModelChoice[];
	/** Provider of the session's model: listed first. */
	preferProvider?: string;
}

const keyOf = (m: ModelChoice) => `${m.provider}/${m.id}`;

/** provider/id strings, deduplicated, the preferred provider first, then in sorted order. */
export function orderChoices(models: ModelChoice[], preferProvider?: string): string[] {
	const preferred = models.filter((m) => m.provider === preferProvider).map(keyOf);
	const rest = models.filter((m) => m.provider !== preferProvider).map(keyOf);
	return [...new Set([...preferred.sort(), ...rest.sort()])];
}

/**
 * Resolve a model spec against the usable models first: an exact "provider/id", else the whole spec as
 * a bare id shared by exactly one usable model (ids may themselves contain "/"). An exact "provider/id"
 * without credentials is still accepted (an explicit choice; the child then reports the provider's
 * error). Ambiguity is judged among usable models only, so providers without a key never make a bare
 * id ambiguous.
 */
export function resolveModelSpec(spec: string, pools: ModelPools): Resolved<ModelChoice> {
	const wanted = spec.trim();
	const slash = wanted.indexOf("/");
	const exact = (m: ModelChoice) =>
		slash > 0 && m.provider === wanted.slice(0, slash) && m.id === wanted.slice(slash + 1);
	const usableExact = pools.available.find(exact);
	if (usableExact) return { ok: true, value: usableExact };
	const sameId = uniqueModels(pools.available.filter((m) => m.id === wanted));
	if (sameId.length === 1) return { ok: true, value: sameId[0] };
	if (sameId.length > 1) {
		return { ok: false, failure: { reason: "ambiguous", choices: orderChoices(sameId, pools.preferProvider) } };
	}
	const knownExact = pools.all.find(exact);
	if (knownExact) return { ok: true, value: knownExact };
	const choices = orderChoices(pools.available, pools.preferProvider);
	const known = pools.all.filter((m) => m.id === wanted);
	if (known.length > 0) {
		const providers = [...new Set(known.map((m) => m.provider))].sort();
		return { ok: false, failure: { reason: "no-credentials", choices, providers } };
	}
	return { ok: false, failure: { reason: "unknown", choices } };
}

function uniqueModels(models: ModelChoice[]): ModelChoice[] {
	const seen = new Set<string>();
	return models.filter((m) => !seen.has(keyOf(m)) && seen.add(keyOf(m)));
}

/** Most choices an error names before it counts the rest, so the error stays short with any registry. */
export const MODEL_CHOICES_SHOWN = SURFACES["subagents.modelChoices"].maxLines - 1;

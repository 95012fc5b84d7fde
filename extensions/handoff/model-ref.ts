/**
 * Which model the handoff uses: the configured `handoff.model` ("provider/model-id") when the registry
 * knows it, else the session's own. A configured model that is not found is not silent: the caller
 * gets a warning naming the configured value and the models that are available. Pure.
 */

import { SURFACES } from "../shared/surfaces.ts";
import { LOG } from "./prompt.ts";

/** At most this many available models are listed in the warning (a registry can hold hundreds). */
export const MAX_LISTED_MODELS = SURFACES["handoff.modelList"].maxLines;

/** A model as far as the choice needs it. */
export interface ModelLike {
	provider: string;
	id: string;
}

/** The chosen model and, when the configured one was not found, the warning to log. */
export interface ModelChoice<M> {
	/** The model to use (undefined when neither is there). */
	model: M | undefined;
	/** Set when a configured model was not found and the session's model is used instead. */
	warning?: string;
}

/** "provider/id" of each model, capped at MAX_LISTED_MODELS with a count of the rest. */
export function modelNames(models: ModelLike[]): string[] {
	const names = models.map((m) => `${m.provider}/${m.id}`);
	if (names.length <= MAX_LISTED_MODELS) return names;
	return [...names.slice(0, MAX_LISTED_MODELS), `… and ${names.length - MAX_LISTED_MODELS} more`];
}

export function chooseModel<M extends ModelLike>(
	configured: string | undefined,
	sessionModel: M | undefined,
	find: (provider: string, id: string) => M | undefined,
	available: () => M[],
): ModelChoice<M> {
	if (!configured) return { model: sessionModel };
	const slash = configured.indexOf("/");
	const found = slash > 0 ? find(configured.slice(0, slash), configured.slice(slash + 1)) : undefined;
	if (found) return { model: found };
	let listed: string[];
	try {
		listed = modelNames(available());
	} catch {
		listed = [];
	}
	return { model: sessionModel, warning: LOG.modelNotFound(configured, listed) };
}

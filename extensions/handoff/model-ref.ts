/**
 * Which model the handoff uses: the configured `handoff.model` ("provider/model-id") when the registry
 * knows it, else the session's own. A configured model that is not found is not silent: the caller
 * gets a warning naming the configured value and the models that are available. Pure.
 */

import { project } from "../shared/projection/projection.ts";
import { SURFACES } from "../shared/surfaces.ts";
import { LOG } from "./prompt.ts";

/** At most this many available models are listed in the warning before the rest are counted (a registry can hold hundreds). */
export const MAX_LISTED_MODELS = SURFACES["handoff.modelList"].maxLines - 1;

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

/** "provider/id" of each model within the list surface handoff.modelList, the last entry counting the rest. */
export function modelNames(models: ModelLike[]): string[] {
	const names = models.map((m) => `${m.provider}/${m.id}`);
	return [...project(names, "handoff.modelList", { separator: ", " }).entries];
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

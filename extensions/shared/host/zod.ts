/**
 * zod, required on first use. Loading it costs ~140 ms of start-up on Node and under Bun, and a session needs
 * it only when there is something to validate (a configuration file, an agent file): the defaults are plain
 * data (./config-defaults.ts). A runtime require, so the built bundle (dist/) does not evaluate it at load.
 */
import { createRequire } from "node:module";
import type * as Zod from "zod";

/** zod's `z` namespace. */
export type ZodApi = typeof Zod.z;

let loaded: ZodApi | undefined;

/** zod's `z`, loaded now if it was not yet. */
export function zod(): ZodApi {
	loaded ??= (createRequire(import.meta.url)("zod") as typeof Zod).z;
	return loaded;
}

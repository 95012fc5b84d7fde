/**
 * Loading the part of subagents a start does not need (../later.ts) on first use. `loadLater()` imports it
 * once per module state (a /reload starts afresh); `later()` is the loaded module for code that runs only once
 * it was loaded (a manager exists only after it: children are made by the loaded code), and throws otherwise.
 */
export type Later = typeof import("../later.ts");

let loaded: Later | undefined;
let loading: Promise<Later> | undefined;

/** The later part, imported on the first call (every further call gets the same module). */
export function loadLater(): Promise<Later> {
	loading ??= import("../later.ts").then((module) => {
		loaded = module;
		return module;
	});
	return loading;
}

/** The later part if it was loaded, undefined before. */
export function laterIfLoaded(): Later | undefined {
	return loaded;
}

/** The later part; a caller that can run before it was loaded awaits loadLater() first. */
export function later(): Later {
	if (!loaded) throw new Error("subagents: the children's code is not loaded yet (loadLater first)");
	return loaded;
}

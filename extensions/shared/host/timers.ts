/**
 * Node's (and Bun's) timers hold a signed 32-bit delay: a longer one (a `timeout_s` of 25 days, a
 * `maxRunSeconds` of a year) fires at once instead of never. Every delay that comes from configuration or
 * from a tool's parameters goes through clampTimerMs.
 */

/** The largest delay setTimeout honours, in milliseconds (2^31 − 1, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** The same limit in whole seconds, for settings counted in seconds. */
export const MAX_TIMER_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

/** `ms` within [0, MAX_TIMER_MS]; NaN counts as 0, Infinity as the limit. */
export function clampTimerMs(ms: number): number {
	if (Number.isNaN(ms) || ms <= 0) return 0;
	return Math.min(ms, MAX_TIMER_MS);
}

/**
 * A wait on the manager's read model: resolve when a condition over it holds (checked after every settled
 * run), when a timeout passes, or when a signal aborts, whichever comes first, and leave no listener or
 * timer behind.
 */
import { clampTimerMs } from "../../shared/host/timers.ts";

/** How long to wait and what to do meanwhile. */
export interface WaitOptions {
	/** Give up after this many milliseconds (absent: no limit). */
	timeoutMs?: number;
	/** Stop waiting when this aborts. */
	signal?: AbortSignal;
	/** Called every tickMs while waiting (progress updates). */
	onTick?: () => void;
	/** Milliseconds between ticks (default 1000). */
	tickMs?: number;
}

/** How a wait ended. */
export interface WaitOutcome {
	timedOut: boolean;
	aborted: boolean;
}

/** Wait until `done()` is true; `waiters` is the set the manager calls after every settled run. */
export function waitUntil(waiters: Set<() => void>, done: () => boolean, options: WaitOptions): Promise<WaitOutcome> {
	if (done()) return Promise.resolve({ timedOut: false, aborted: false });
	return new Promise((resolve) => {
		let timer: ReturnType<typeof setTimeout> | undefined;
		let ticker: ReturnType<typeof setInterval> | undefined;
		const finish = (outcome: WaitOutcome) => {
			if (timer) clearTimeout(timer);
			if (ticker) clearInterval(ticker);
			waiters.delete(check);
			options.signal?.removeEventListener("abort", onAbort);
			resolve(outcome);
		};
		const check = () => {
			if (done()) finish({ timedOut: false, aborted: false });
		};
		const onAbort = () => finish({ timedOut: false, aborted: true });
		waiters.add(check);
		if (options.signal?.aborted) return onAbort();
		options.signal?.addEventListener("abort", onAbort, { once: true });
		if (options.timeoutMs !== undefined)
			timer = setTimeout(() => finish({ timedOut: true, aborted: false }), clampTimerMs(options.timeoutMs));
		if (options.onTick) ticker = setInterval(options.onTick, Math.max(1, clampTimerMs(options.tickMs ?? 1000)));
	});
}

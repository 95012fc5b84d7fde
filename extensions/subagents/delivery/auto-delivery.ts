/**
 * The automatic-delivery timer of one extension instance: when to try delivering settled results to the
 * parent, and how often to poll for idle after its run ended. A module of its own so the adapter can hold one
 * from session start without loading the delivery itself (delivery.ts, loaded with the children: adapter/later.ts).
 */

/** Delay before an automatic delivery, in milliseconds, so children finishing together arrive together. */
export const FLUSH_DEBOUNCE_MS = 50;
/** Interval of idle polls after the parent's run ended, in milliseconds. */
export const FLUSH_POLL_MS = 25;
/** Idle polls after agent_end before giving up until the next run ends (0.73 has no agent_settled). */
export const FLUSH_POLL_ATTEMPTS = 200;

/** The pending automatic-delivery attempt of one extension instance, and the idle polls it has left. */
export class AutoDelivery {
	private timer: ReturnType<typeof setTimeout> | undefined;
	private attempts = 0;

	/** `deliver` is one attempt: false when the parent was busy (try again later). */
	constructor(private readonly deliver: () => Promise<boolean>) {}

	/** Try to deliver soon; with polls, keep trying while the parent is still winding down its run. */
	schedule(polls = 0): void {
		this.attempts = Math.max(this.attempts, polls);
		if (this.timer) return;
		const delay = polls > 0 ? FLUSH_POLL_MS : FLUSH_DEBOUNCE_MS;
		this.timer = setTimeout(() => {
			this.timer = undefined;
			void this.deliver().then((done) => {
				if (done) this.attempts = 0;
				else if (this.attempts > 0) {
					const left = this.attempts - 1;
					this.attempts = 0;
					this.schedule(left);
				}
			});
		}, delay);
	}

	/** Drop the pending attempt (shutdown). */
	cancel(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
		this.attempts = 0;
	}
}

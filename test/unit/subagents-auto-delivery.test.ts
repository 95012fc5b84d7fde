/**
 * The automatic-delivery timer, owned by AutoDelivery: deliveries scheduled together go out once after the
 * debounce; after the parent's run ended it keeps polling while the parent is busy, for at most the polls
 * it was given; cancel drops what is pending.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AutoDelivery, FLUSH_DEBOUNCE_MS, FLUSH_POLL_MS } from "../../extensions/subagents/delivery/delivery.ts";

beforeEach(() => {
	vi.useFakeTimers();
});
afterEach(() => {
	vi.useRealTimers();
});

/** An AutoDelivery whose attempts answer from `busy` (true: the parent was busy, try later). */
function counted(busy: () => boolean) {
	let attempts = 0;
	const auto = new AutoDelivery(async () => {
		attempts++;
		return !busy();
	});
	return { auto, attempts: () => attempts };
}

describe("AutoDelivery", () => {
	it("debounces: several schedules before the delay make one attempt", async () => {
		const { auto, attempts } = counted(() => false);
		auto.schedule();
		auto.schedule();
		auto.schedule();
		await vi.advanceTimersByTimeAsync(FLUSH_DEBOUNCE_MS - 1);
		expect(attempts()).toBe(0);
		await vi.advanceTimersByTimeAsync(1);
		expect(attempts()).toBe(1);
		await vi.advanceTimersByTimeAsync(FLUSH_DEBOUNCE_MS * 10);
		expect(attempts()).toBe(1);
	});

	it("polls while the parent is busy, at most the polls it was given, and stops once delivered", async () => {
		let busy = true;
		const { auto, attempts } = counted(() => busy);
		auto.schedule(3);
		await vi.advanceTimersByTimeAsync(FLUSH_POLL_MS * 2);
		expect(attempts()).toBe(2);
		busy = false;
		await vi.advanceTimersByTimeAsync(FLUSH_POLL_MS * 10);
		expect(attempts()).toBe(3);

		const stuck = counted(() => true);
		stuck.auto.schedule(3);
		await vi.advanceTimersByTimeAsync(FLUSH_POLL_MS * 20);
		// The first attempt plus one for each of the 3 polls.
		expect(stuck.attempts()).toBe(4);
	});

	it("a busy parent without polls is not retried (the next run's end schedules again)", async () => {
		const { auto, attempts } = counted(() => true);
		auto.schedule();
		await vi.advanceTimersByTimeAsync(FLUSH_DEBOUNCE_MS * 20);
		expect(attempts()).toBe(1);
	});

	it("cancel drops the pending attempt and its polls", async () => {
		const { auto, attempts } = counted(() => true);
		auto.schedule(5);
		auto.cancel();
		await vi.advanceTimersByTimeAsync(FLUSH_POLL_MS * 20);
		expect(attempts()).toBe(0);
	});
});

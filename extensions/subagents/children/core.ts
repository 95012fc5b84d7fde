/**
 * The state of this session's children that the manager's parts share: the records, each child's runtime,
 * the ledger, the subscribers and waiters, the waiting children's handovers. The manager (manager.ts) owns
 * it and is its only public face; its parts take it as their first argument: the queue (queue.ts), a run
 * (runner.ts) and a run's settlement (settle.ts). No Pi imports.
 */
import type { QuestionDesk } from "../ask/desk.ts";
import type { DeliveryLedger } from "../domain/ledger.ts";
import type { ChildRecord } from "../domain/records.ts";
import type { ChildBackend, ManagerLimits, Runtime } from "./child-run.ts";
import type { Subscribers } from "./read-model.ts";
import type { Handover } from "./requests.ts";

/** A waiting child's handover (its first message from its inputs), and whether one is being made. */
export interface PendingHandover {
	compose: Handover;
	base: string;
	preparing: boolean;
}

export interface ManagerCore {
	readonly backend: ChildBackend;
	readonly ledger: DeliveryLedger;
	/** The children's open questions to the parent (ask_parent): they live as long as the children do. */
	readonly questions: QuestionDesk;
	readonly records: Map<string, ChildRecord>;
	readonly runtimes: Map<string, Runtime>;
	/** Waits in progress (waitFor): checked after every settled run, after the subscribers heard of it. */
	readonly waiters: Set<() => void>;
	readonly subscribers: Subscribers;
	/** Waiting children's handovers. */
	readonly handovers: Map<string, PendingHandover>;
	limits: ManagerLimits;
	/** Set at shutdown: nothing starts, queues or is released any more. */
	closed: boolean;
	/** Number of the latest child id handed out. */
	sequence: number;
	now(): number;
	/** Children in spawn order. */
	list(): ChildRecord[];
	mustGet(id: string): ChildRecord;
	/** Tell the subscribers something visible changed. */
	changed(): void;
	/** Settle or release waiting children, then start queued ones while slots are free (queue.ts). */
	pump(): void;
}

import type { Awaitable, ClaimHandle } from "./claim.js";

/**
 * A durable store's keeping of the notifications an in-process queue accepted, beside their records,
 * so they outlive the process that accepted them. The receiver keeps a notification's job data (as the
 * queue keeps it: sealed with its `encryptionKey`, or card numbers masked; never card verification
 * data) with its claim before answering `processed: true`; a receiver on the same store that finds the
 * claim lapsed (its process died or froze) takes the record over with `resume` and runs it from that
 * data. The data stays while the record is processing or failed (a dead letter, to redrive), and goes
 * when it completes or is released.
 */
export interface KeptNotifications {
  /**
   * Keep `data` with the processing record `claim` owns; false when it does not own it (any more). The
   * receiver calls it after a claim that did not keep the data itself (`RunClaim.carried`: no `kept: true`).
   */
  keep(claim: ClaimHandle, data: string): Awaitable<boolean>;
  /**
   * Up to `limit` ids of records that keep data and are processing under a lapsed lease (by this
   * process's clock: a hint, `resume` decides on the store's), found by an index of the kept records
   * by lease, so a receiver's sweep reads what it finds, not every processing record of the store.
   * A record listed may turn out to be no such record any more (`resume` answers undefined).
   */
  lapsed(limit: number): Awaitable<string[]>;
  /**
   * Take over a record whose claim lapsed (processing, lease past) and which keeps data: owned by
   * `owner` for `leaseMs` from now, one attempt more. Undefined when it is not such a record (any
   * more): its holder is alive, another receiver took it first, or nothing is kept for it.
   */
  resume(id: string, owner: string, leaseMs: number): Awaitable<ResumedClaim | undefined>;
  /**
   * Redrive a dead letter that keeps data (failed, its data kept): processing again under `owner`, its
   * lease already lapsed, so the next sweep takes it over and runs it. False when it is not one.
   */
  rerun(id: string, owner: string): Awaitable<boolean>;
  /**
   * Whether `id` is such a dead letter now (failed, its data kept), so `rerun` would redrive it: a
   * failed record without kept data was refused to its sender (`processed: false`), which delivers it
   * again, or is a durable queue's dead letter. Lets the CLI's redrive tell the two apart, and list
   * the first on a dry run.
   */
  redrivable(id: string): Awaitable<boolean>;
}

/** A lapsed record taken over by `resume`: the new claim, its attempt and the data kept with it. */
export interface ResumedClaim {
  claim: ClaimHandle;
  attempt: number;
  carried: string;
}

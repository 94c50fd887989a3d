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
  /** Keep `data` with the processing record `claim` owns; false when it does not own it (any more). */
  keep(claim: ClaimHandle, data: string): Awaitable<boolean>;
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

// A job whose own data cannot be read goes to its queue's dead letters (see `QueuedJobRead`). Its
// record must follow it there: left `queued`, the console's "failed" filter would not list it, the
// gauges would count it waiting, and an ordered lane it was to drain would wait for the sweep. This
// fails the record with the store's owner semantics (a worker's take-over of the queued record, then
// its failure) and, when the job was its lane's drain job, wakes the lane's next notification.
import { drainedLanes, type OrderClaim, type WokenLane } from "../idempotency/store.js";
import { claimJob, type JobClaim } from "./claim-job.js";
import type { NotificationJobData } from "./job-data.js";
import type { RunSettings } from "./run-settings.js";

/**
 * What a record failed for its unreadable job keeps as its error: a code, never the reason's text
 * (a schema's message may quote the payload).
 */
export const UNREADABLE_JOB_DATA = "invalid_job_data";

/** A dead-lettered job whose data could not be read, as its queue names it. */
export interface UnreadableJob {
  /** The job's id in its queue: derived from its notification's id, never written by the job data. */
  jobId: string;
  data: unknown;
  /** The queue's job id for a notification id (`jobIdFor`): only a record whose job this is is failed. */
  jobIdFor: (id: string) => string;
}

/** What became of an unreadable job's record. */
export type UnreadableRecord =
  /** Failed (`held`: a dead letter holding its lane); `woken`: its lane's next notification, to be queued. */
  | { failed: true; id: string; held?: true; woken?: WokenLane; order?: OrderClaim }
  /**
   * Left as it was: `no_id` (the data names none), `other_id` (it names a notification whose job
   * this is not: moved or written by hand, and failing that record would fail someone else's
   * notification), `not_waiting` (settled, gone, or held by a live claim), `store_unavailable`.
   */
  | { failed: false; why: "no_id" | "other_id" | "not_waiting" | "store_unavailable" };

/**
 * Fail the record of a job whose own data is unreadable, once its job is on its way to the dead
 * letters. Only the record the job's id names is touched: the id the data carries is used only when
 * the queue derives the job's id from it. The record is taken over as a worker takes a queued one
 * (with the fingerprint the record itself keeps: the job's may be what was tampered with), and failed
 * as a lane's last run is (`lanes.fail`, which holds the lane under `onDeadLetter: "hold"`).
 *
 * A lane handing this claim an older notification than the job's own (the job's was not first in
 * line) gets that claim back undone when the claim is a transaction's; otherwise its lease lapses and
 * the lane takes it back as from a holder that died. The job's record then stays queued in its lane,
 * where the lane's runner takes it with the data the lane keeps, as for any waiting notification.
 */
export async function failUnreadableRecord(settings: RunSettings, job: UnreadableJob): Promise<UnreadableRecord> {
  const data = (job.data ?? {}) as Partial<NotificationJobData>;
  const id = recordIdIn(data);
  if (id === undefined) return { failed: false, why: "no_id" };
  if (job.jobIdFor(id) !== job.jobId) {
    settings.logger.warn(
      { job_id: job.jobId },
      "job data names another notification than its job; no record failed for it",
    );
    return { failed: false, why: "other_id" };
  }
  const order = orderIn(data);
  const { store } = settings;
  try {
    const record = await store.get(order ? { id, order: { key: order.key } } : id);
    if (!record || record.state === "completed" || record.state === "failed")
      return { failed: false, why: "not_waiting" };
    const taken: JobClaim = await claimJob(store, {
      id,
      fingerprint: record.fingerprint,
      owner: settings.nextOwner(job.jobId),
      leaseMs: settings.leaseMs,
      handlerTimeoutMs: settings.timeoutMs,
      kind: "take",
      // No handler runs: the record keeps the count it has (a store may ignore this and count one more).
      attempt: Math.max(1, record.attempts),
      ...(order ? { order } : {}),
      ...(typeof data.handoff === "string" ? { handoffFrom: data.handoff } : {}),
    });
    const { claim, transaction } = taken;
    if (claim.status !== "claimed" && claim.status !== "stale") return { failed: false, why: "not_waiting" };
    if (claim.id !== id) {
      await transaction?.discard?.();
      return { failed: false, why: "not_waiting" };
    }
    if (transaction) {
      await transaction.rollback(UNREADABLE_JOB_DATA);
      return { failed: true, id };
    }
    const lanes = claim.order ? drainedLanes(store) : undefined;
    const failed = await (lanes ? lanes.fail(claim, UNREADABLE_JOB_DATA) : store.fail(claim, UNREADABLE_JOB_DATA));
    if (failed === false) return { failed: false, why: "not_waiting" };
    if (failed === "held") return { failed: true, id, held: true };
    if (!lanes || !claim.order) return { failed: true, id };
    // The lane's drain job was this one: its next notification, if any, becomes the one whose job runs the lane.
    const key = claim.order.key;
    const woken = await lanes.wake({ key, head: id, drain: id }, settings.leaseMs);
    return woken ? { failed: true, id, woken, order: claim.order } : { failed: true, id, order: claim.order };
  } catch {
    return { failed: false, why: "store_unavailable" };
  }
}

/** The record id the data names: its `id`, or (written before it was carried) its notification's own, in clear. */
function recordIdIn(data: Partial<NotificationJobData>): string | undefined {
  if (typeof data.id === "string" && data.id !== "") return data.id;
  const own = (data.notification as { id?: unknown } | undefined)?.id;
  return typeof own === "string" && own !== "" ? own : undefined;
}

/** The data's order claim, when well formed; whatever else it holds is not passed to the store. */
function orderIn(data: Partial<NotificationJobData>): OrderClaim | undefined {
  const order = data.order as Partial<OrderClaim> | undefined;
  if (!order || typeof order.key !== "string") return undefined;
  if (order.position !== undefined && typeof order.position !== "string") return undefined;
  return order as OrderClaim;
}

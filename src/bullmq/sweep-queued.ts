import type { Queue } from "bullmq";
import { appendedFor } from "../idempotency/lane-queue.js";
import { DEFAULT_LEASE_MS, drainedLanes, type IdempotencyRecord, type IdempotencyStore } from "../idempotency/store.js";
import { withTimeout } from "../shared/time-limit.js";
import type { NotificationJobData } from "../worker/job-data.js";
import { jobIdFor, queueIdentity } from "./job-id.js";
import { LEDGER_PARTS, type LedgerEntry, parseJobData, type QueueLedger } from "./queue-ledger.js";

/** What one sweep did. */
export interface SweepResult {
  /** Ledger copies looked at. */
  checked: number;
  /** Notifications whose job was gone, queued again from their copy. */
  requeued: number;
  /** Copies dropped: their notification is done (or failed, in the failed set for `redrive`). */
  dropped: number;
  /**
   * Of `requeued`, the lanes woken from the store's side (`DrainedLaneStore.stalled`): notifications
   * waited and neither the job that was to run the lane nor its head's own job was in the queue. Set
   * when one was.
   */
  lanes?: number;
  /**
   * Of `requeued`, copies whose record was gone (its claim lost, or released after the receiver's
   * enqueue failed, or past its retention): no job was lost for them. Set when one was.
   */
  restored?: number;
}

export interface SweepQueuedOptions {
  /** The receivers' queue (`bullmqQueue`), with its ledger of job copies. */
  queue: { readonly queue: Queue<NotificationJobData>; readonly ledger: QueueLedger };
  /** The store the receivers claim in. */
  store: IdempotencyStore;
  /**
   * Copies younger than this are left alone: their receiver may still be adding the job. Default 10 s;
   * the receiver's enqueue gives up after 5 s.
   */
  olderThanMs?: number;
  /** How many copies are read at a time; a sweep pages through every part's copies. Default 1,000. */
  limit?: number;
  /**
   * Most lanes a sweep looks at from the store's side, those idle longest first; the rest at the next
   * sweep (a lane looked at is not looked at again for `olderThanMs`). Default 500.
   */
  laneLimit?: number;
  /**
   * A lane a receiver woke less than this ago is left alone: the add of its drain job may still be on
   * its way (the receiver's enqueue gives up after the queue's `timeoutMs`, 5 s by default). Default
   * `olderThanMs`.
   */
  wokenGraceMs?: number;
}

export const DEFAULT_SWEEP_MIN_AGE_MS = 10_000;
const DEFAULT_SWEEP_PAGE = 1_000;
const DEFAULT_LANE_LIMIT = 500;
/** The longest one Redis call of a sweep may take: a sweep during a failover gives up and tries next time. */
const SWEEP_CALL_TIMEOUT_MS = 5_000;

/**
 * Find notifications accepted into the queue whose job no longer exists, and queue them again from
 * the ledger's copy (see `queue-ledger.ts`), without waiting for the sender to deliver them again (it
 * has stopped: it was answered 200). Whether a copy is still needed is decided by its record:
 *
 * - `queued`, or `processing` with a lapsed lease (its receiver or worker died), and no job in the
 *   queue: queued again. The store runs it exactly once whoever else queues it meanwhile. Of an
 *   ordered subscription's copies (its lane, which has no job per notification), one a sweep: its
 *   job runs the subscription's lane from the head. With a store that finds its stalled
 *   lanes itself (`lanes.stalled`), a lane's copy is left until its notification is done instead, and
 *   the lanes are woken from the store's side (`wakeStalledLanes`), after the copies.
 * - no record: the claim itself was lost (or its retention ran out); with no job, queued again too,
 *   counted as `restored` (no job was lost for it).
 * - a copy of a lane that runs (`lanes.running`, asked once a lane): kept, its record not read.
 * - `completed`: the copy is dropped.
 * - `failed`: dropped once the job is in the failed set (for `redrive`) or gone; kept while BullMQ
 *   still holds the job for a retry.
 * - anything else (a job still there, a live lease): left for the next sweep.
 */
export async function sweepQueued(options: SweepQueuedOptions): Promise<SweepResult> {
  const before = Date.now() - (options.olderThanMs ?? DEFAULT_SWEEP_MIN_AGE_MS);
  // The copies, then the lanes: the lanes are looked at even when the copies' pass failed.
  let result: SweepResult | undefined;
  let failure: unknown;
  try {
    result = await sweepCopies(options, before);
  } catch (err) {
    failure = err;
  }
  const wokenBefore = Date.now() - (options.wokenGraceMs ?? options.olderThanMs ?? DEFAULT_SWEEP_MIN_AGE_MS);
  const woken = await wakeStalledLanes(options, before, wokenBefore);
  if (result === undefined) throw failure;
  if (woken > 0) {
    result.requeued += woken;
    result.lanes = woken;
  }
  return result;
}

async function sweepCopies(options: SweepQueuedOptions, before: number): Promise<SweepResult> {
  const { ledger, queue } = options.queue;
  const result: SweepResult = { checked: 0, requeued: 0, dropped: 0 };
  const pageSize = options.limit ?? DEFAULT_SWEEP_PAGE;
  // A subscription's lane needs one job to run it from its head, not one per waiting copy, and
  // none while one of its copies still has its job (the lane's drain job): decided after the pass.
  const lanesToWake = new Map<string, { entry: LedgerEntry; restored: boolean }>();
  const lanesWithJob = new Set<string>();
  // Whether a subscription's lane has a runner, asked once a sweep (see `verdictFor`).
  const running = new Map<string, Promise<boolean>>();
  for (let part = 0; part < LEDGER_PARTS; part++) {
    // Pages by offset: a dropped copy leaves the part, so the next page starts that much earlier.
    for (let offset = 0; ; ) {
      const page = await bounded(ledger.duePage(part, before, offset, pageSize));
      let dropped = 0;
      for (const entry of page) {
        result.checked++;
        const verdict = await verdictFor(entry, queue, options.store, running);
        if (verdict === "drop") {
          await bounded(ledger.forget(entry.id, entry.part));
          dropped++;
        } else if (verdict === "requeue" || verdict === "restore") {
          const restored = verdict === "restore";
          const key = entry.data!.order?.key;
          if (key !== undefined) {
            if (!lanesToWake.has(key)) lanesToWake.set(key, { entry, restored });
            continue;
          }
          await requeue(queue, entry);
          count(result, restored);
        } else if (verdict === "job_there" && entry.data?.order) lanesWithJob.add(entry.data.order.key);
      }
      result.dropped += dropped;
      offset += page.length - dropped;
      if (page.length < pageSize) break;
    }
  }
  for (const [key, { entry, restored }] of lanesToWake) {
    if (lanesWithJob.has(key)) continue;
    await requeue(queue, entry);
    count(result, restored);
  }
  return result;
}

/** One notification queued again: its job was lost, or (`restored`) its record was gone. */
function count(result: SweepResult, restored: boolean): void {
  result.requeued++;
  if (restored) result.restored = (result.restored ?? 0) + 1;
}

/** Job states in which a job will still run (or is running): the lane it drains is not lost. */
const LIVE_JOB = new Set(["waiting", "active", "delayed", "prioritized", "waiting-children"]);

/**
 * The store's side of the sweep: lanes with notifications waiting that nothing runs (see
 * `lanes.stalled`), whose drain job (the job of the notification that woke the lane) and whose head's
 * own job are both gone from the queue, get a drain job again, made from the head's data kept in the
 * lane. The lane is found as long as the store keeps it, whatever the queue lost: a failover of the
 * queue's master, a job removed by hand. Answers how many lanes were woken.
 */
async function wakeStalledLanes(options: SweepQueuedOptions, before: number, wokenBefore: number): Promise<number> {
  const { store } = options;
  const lanes = drainedLanes(store);
  if (!lanes) return 0;
  const { queue, ledger } = options.queue;
  // A store may serve several queues, its lanes side by side: a lane is woken only in the queue it was
  // appended for (named in the data it keeps); another queue's is left to that one's sweep.
  const ours = queueIdentity(queue);
  const stalled = await bounded(
    Promise.resolve(
      lanes.stalled({ before, wokenBefore, limit: options.laneLimit ?? DEFAULT_LANE_LIMIT, queue: ours }),
    ),
  );
  let woken = 0;
  for (const lane of stalled) {
    const jobIds = [...new Set([lane.head, lane.drain ?? lane.head])].map(jobIdFor);
    const states = await Promise.all(jobIds.map((jobId) => bounded(queue.getJobState(jobId))));
    if (states.some((state) => LIVE_JOB.has(state))) continue;
    const head = await bounded(Promise.resolve(lanes.wake(lane, store.leaseMs ?? DEFAULT_LEASE_MS)));
    if (!head) continue;
    // Its data as the receiver kept it in the lane; appended without (a store that keeps none), the copy.
    const data = head.carried !== undefined ? parseJobData(head.carried) : (await bounded(ledger.find(head.id)))?.data;
    // Nothing to run it from (or its head changed since the look, to another queue's): its runner mark
    // lapses, and the next sweep looks again.
    if (!data || !appendedFor(head.carried, ours)) continue;
    const jobId = jobIdFor(head.id);
    // A finished job under the head's id would make the add a no-op.
    if (states[0] === "completed" || states[0] === "failed") await bounded(queue.remove(jobId));
    await bounded(queue.add(data.event_type, data, { jobId }));
    woken++;
  }
  return woken;
}

async function requeue(queue: Queue<NotificationJobData>, entry: LedgerEntry): Promise<void> {
  const data = entry.data!;
  await bounded(queue.add(data.event_type, data, { jobId: jobIdFor(entry.id) }));
}

async function verdictFor(
  entry: LedgerEntry,
  queue: Queue<NotificationJobData>,
  store: IdempotencyStore,
  running: Map<string, Promise<boolean>>,
): Promise<"drop" | "requeue" | "restore" | "keep" | "job_there"> {
  if (!entry.data) return "drop";
  const order = entry.data.order;
  const lanes = drainedLanes(store);
  // A copy of a lane that runs waits for its runner: one look at the lane for all its copies (a busy
  // lane on a cluster keeps one per waiting notification), not one record read each. A copy of a
  // notification done meanwhile is dropped by its worker, or by a sweep once the lane is idle.
  if (order && lanes && (await laneRunning(order.key, store, running))) return "keep";
  const record: IdempotencyRecord | undefined = await bounded(
    Promise.resolve(store.get(order ? { id: entry.id, order: { key: order.key } } : entry.id)),
  );
  const jobId = jobIdFor(entry.id);
  // With a store that finds its stalled lanes itself (`wakeStalledLanes`), a lane's copy only waits for
  // its notification to be done; no drain job is queued from it. One whose record is gone is as below.
  if (order && lanes && record !== undefined && record.state !== "failed")
    return record.state === "completed" ? "drop" : "keep";
  if (record?.state === "completed") {
    // The copy of the notification that woke its lane is the lane's (its waiting notifications have none of their
    // own, their data is in the lane): it goes once the lane is empty. While notifications still wait
    // and nothing runs the lane, its drain job was lost: one is queued again from this copy (it finds
    // its own notification done and runs the lane from its head).
    if (!order || !lanes) return "drop";
    if (!(await bounded(Promise.resolve(lanes.waiting({ key: order.key }))))) return "drop";
    if (await laneRunning(order.key, store, running)) return "keep";
    return jobVerdict(queue, jobId);
  }
  if (record?.state === "failed") {
    // Failed, but BullMQ still holds the job for a retry (waiting, delayed, active): the copy is the
    // retry's safety net until the job settles. In the failed set (or gone), `redrive` takes over.
    const state = await bounded(queue.getJobState(jobId));
    return state === "failed" || state === "unknown" || state === "completed" ? "drop" : "keep";
  }
  const waiting = record === undefined || record.state === "queued" || (record.leaseUntil ?? 0) < Date.now();
  if (!waiting) return "keep";
  // Waiting in its subscription's lane, which a runner drains: it never had a job of its own to lose.
  if (order && record?.state === "queued" && (await laneRunning(order.key, store, running))) return "keep";
  const verdict = await jobVerdict(queue, jobId);
  // No record and no job: the claim was lost, not the job (a lane's waiting notification never had one).
  return verdict === "requeue" && record === undefined ? "restore" : verdict;
}

/** Whether the lane of `key` is being run (`lanes.running`), asked once a sweep. */
function laneRunning(key: string, store: IdempotencyStore, running: Map<string, Promise<boolean>>): Promise<boolean> {
  const lanes = drainedLanes(store);
  if (!lanes) return Promise.resolve(false);
  let asked = running.get(key);
  if (!asked) {
    asked = bounded(Promise.resolve(lanes.running({ key }))).catch(() => false);
    running.set(key, asked);
  }
  return asked;
}

/** What the queue holding (or not) the job `jobId` means for a copy whose notification still waits. */
async function jobVerdict(queue: Queue<NotificationJobData>, jobId: string): Promise<"drop" | "requeue" | "job_there"> {
  const state = await bounded(queue.getJobState(jobId));
  if (state === "failed") return "drop";
  if (state === "unknown") return "requeue";
  if (state === "completed") {
    // A kept completed job under this id would make the add a no-op while the record still waits.
    await bounded(queue.remove(jobId));
    return "requeue";
  }
  // Waiting, delayed or active: the job is there (for a lane, its drain job).
  return "job_there";
}

const bounded = <T>(task: Promise<T>): Promise<T> =>
  withTimeout(
    task,
    SWEEP_CALL_TIMEOUT_MS,
    () => new Error(`sweep: Redis did not answer within ${SWEEP_CALL_TIMEOUT_MS} ms`),
  );

import { Job, type MinimalQueue } from "bullmq";
import { appendedFor } from "../idempotency/lane-queue.js";
import { withTimeout } from "../shared/time-limit.js";
import type { NotificationJobData } from "../worker/job-data.js";
import type { RunSettings } from "../worker/run-settings.js";
import { failUnreadableRecord } from "../worker/unreadable-job.js";
import { jobIdFor, queueIdentity } from "./job-id.js";
import { parseJobData } from "./queue-ledger.js";

/** The longest the drain job's hand-over to the lane's next notification may take. */
const WAKE_TIMEOUT_MS = 5_000;

/**
 * A job whose own data is unreadable is about to go to the failed set: its record is failed with it
 * (`failUnreadableRecord`), and when it was its lane's drain job, the lane's next notification gets
 * the drain job instead, made from the data the lane keeps with it, so the lane goes on now rather
 * than when the sweep finds it. Nothing here stops the job's own way to the failed set.
 */
export async function failRecordOfUnreadable(job: Job<NotificationJobData>, settings: RunSettings): Promise<void> {
  const jobId = String(job.id);
  const fields = { job_id: jobId };
  const outcome = await failUnreadableRecord(settings, { jobId, data: job.data, jobIdFor });
  if (!outcome.failed) return;
  const { woken } = outcome;
  if (!woken?.carried) return;
  const queue = (job as unknown as { queue: MinimalQueue & { opts: { prefix?: string } } }).queue;
  const data = parseJobData(woken.carried);
  // A lane of another queue sharing the store is left to that queue's sweep (see `appendedFor`).
  if (!data || !appendedFor(woken.carried, queueIdentity(queue))) return;
  const { jobId: _own, delay: _delay, ...opts } = job.opts;
  await withTimeout(
    Job.create(queue, data.event_type, data, { ...opts, jobId: jobIdFor(woken.id) }),
    WAKE_TIMEOUT_MS,
    () => new Error("lane wake timed out"),
  ).catch(() => {
    // Its runner mark lapses after a lease, and the sweep wakes the lane then.
    settings.logger.warn(
      { ...fields, notification_id: woken.id },
      "could not queue the lane's next notification; the sweep will",
    );
  });
}

import type { NotificationJobData } from "../bullmq/job-data.js";
import { jobIdFor } from "../bullmq/job-id.js";
import type { NotificationQueue } from "../queue/queue.js";

/** The parts of a BullMQ job the console reads or acts on (typed here, so `bullmq` stays optional). */
interface BullJob {
  id?: string;
  data: NotificationJobData;
  attemptsMade: number;
  timestamp: number;
  processedOn?: number;
  finishedOn?: number;
  getState(): Promise<string>;
  retry(state: "failed", options: { resetAttemptsMade: boolean; resetAttemptsStarted: boolean }): Promise<void>;
  remove(): Promise<void>;
}

interface BullQueue {
  getJob(id: string): Promise<BullJob | undefined>;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
  getJobs(types: string[], start: number, end: number, asc?: boolean): Promise<Array<BullJob | undefined>>;
}

/**
 * A notification's job, as the console shows it: never the notification in clear when it is sealed,
 * and never the job's failure text (a handler's error message may quote the payload; the record's
 * failure reason is the one to show).
 */
export interface JobView {
  state: string;
  attemptsMade: number;
  /** Epoch ms: added to the queue, last run started, finished (completed or failed for good). */
  queuedAt: number;
  processedAt?: number;
  finishedAt?: number;
  eventType: string;
  /** The job's notification is sealed (`encryptionKey`): the console cannot and does not open it. */
  sealed: boolean;
  order?: { key: string; position?: string };
  headers: Record<string, string>;
  /** The notification as the job keeps it (masked), when not sealed; the caller redacts it further. */
  notification?: unknown;
}

/** What the console does with a durable queue's jobs; undefined for a queue that has no jobs to show. */
export interface QueueJobs {
  view(id: string): Promise<JobView | undefined>;
  /** Move a failed job back to waiting with its attempts reset; false when it is not in the failed set. */
  retryFailed(id: string): Promise<boolean>;
  /** Remove a failed job (a discarded dead letter); false when it is not in the failed set. */
  removeFailed(id: string): Promise<boolean>;
  /** Notification ids in the failed set, newest first, from `start`. */
  failed(start: number, count: number): Promise<string[]>;
  counts(): Promise<{ waiting: number; active: number; delayed: number; failed: number; lagMs?: number }>;
}

/** The BullMQ queue under a `bullmqQueue(...)` (its `queue` property), if that is what `queue` is. */
export function queueJobsOf(queue: NotificationQueue | undefined): QueueJobs | undefined {
  const bull = (queue as { queue?: Partial<BullQueue> } | undefined)?.queue;
  if (!bull || typeof bull.getJob !== "function" || typeof bull.getJobCounts !== "function") return undefined;
  const q = bull as BullQueue;
  const failedJob = async (id: string) => {
    const job = await q.getJob(jobIdFor(id));
    return job && (await job.getState()) === "failed" ? job : undefined;
  };
  return {
    async view(id) {
      const job = await q.getJob(jobIdFor(id));
      if (!job) return undefined;
      const { data } = job;
      const view: JobView = {
        state: await job.getState(),
        attemptsMade: job.attemptsMade,
        queuedAt: job.timestamp,
        eventType: data.event_type,
        sealed: data.sealed !== undefined,
        headers: data.headers ?? {},
      };
      if (job.processedOn) view.processedAt = job.processedOn;
      if (job.finishedOn) view.finishedAt = job.finishedOn;
      if (data.order) view.order = data.order;
      if (data.notification !== undefined) view.notification = data.notification;
      return view;
    },
    async retryFailed(id) {
      const job = await failedJob(id);
      if (!job) return false;
      await job.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
      return true;
    },
    async removeFailed(id) {
      const job = await failedJob(id);
      if (!job) return false;
      await job.remove();
      return true;
    },
    async failed(start, count) {
      const jobs = await q.getJobs(["failed"], start, start + count - 1, false);
      return jobs.flatMap((job) => (job ? [job.data.id] : []));
    },
    async counts() {
      const counts = await q.getJobCounts("waiting", "active", "delayed", "failed");
      const [oldest] = await q.getJobs(["waiting"], 0, 0, true);
      return {
        waiting: counts.waiting ?? 0,
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        failed: counts.failed ?? 0,
        ...(oldest ? { lagMs: Math.max(0, Date.now() - oldest.timestamp) } : {}),
      };
    },
  };
}

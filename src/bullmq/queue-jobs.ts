import type { Job, Queue } from "bullmq";
import type { Cluster, Redis } from "ioredis";
import { DEFAULT_RETENTION_SECONDS } from "../idempotency/store.js";
import {
  aboutJobData,
  type DeadLetter,
  failuresOf,
  type JobAbout,
  type JobFailure,
  type JobView,
  type QueueJobs,
} from "../queue/queue-jobs.js";
import type { NotificationJobData } from "../worker/job-data.js";
import { isLostLetter, UNRUNNABLE_REASON } from "./dead-letter.js";
import { jobIdFor } from "./job-id.js";

/** Most redrive notes kept per notification. */
const MAX_NOTES = 100;

/** Failed jobs read per page when listing the dead letters. */
const PAGE = 500;

/**
 * The console's view of a BullMQ queue: jobs by notification id, the failed set as its dead letters.
 * A redrive keeps the failure it follows beside the job (`<prefix>:<name>:redriven:<job id>`, a list
 * of `JobFailure` JSON kept for the stores' default retention), as a completed job is removed.
 */
export function bullmqJobs(queue: Queue<NotificationJobData>, client: Redis | Cluster): QueueJobs {
  const failedJob = async (id: string) => {
    const job = await queue.getJob(jobIdFor(id));
    return job && (await job.getState()) === "failed" ? job : undefined;
  };
  const notesKey = (id: string) => queue.toKey(`redriven:${jobIdFor(id)}`);
  const failures = async (id: string) => failuresOf(await client.lrange(notesKey(id), 0, MAX_NOTES - 1));
  // The job each dead letter listed was read from, for its redrive.
  const jobOf = new WeakMap<DeadLetter, Job<NotificationJobData>>();
  const letterOf = (job: Job<NotificationJobData>, id?: string): DeadLetter => {
    const { data } = job;
    const letter: DeadLetter = { id: id ?? data?.id ?? data?.notification?.id ?? String(job.id) };
    if (data?.order) letter.order = data.order;
    if (isLostLetter(data)) letter.unrunnable = job.failedReason || UNRUNNABLE_REASON;
    jobOf.set(letter, job);
    return letter;
  };
  return {
    kind: "BullMQ",
    async view(id) {
      const job = await queue.getJob(jobIdFor(id));
      if (!job) return undefined;
      const { data } = job;
      const [state, redriven] = await Promise.all([job.getState(), failures(id)]);
      const view: JobView = {
        state,
        attemptsMade: (redriven.at(-1)?.attempts ?? 0) + job.attemptsMade,
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
    failures,
    async about(ids) {
      const found = new Map<string, JobAbout>();
      if (ids.length === 0) return found;
      const pipeline = client.pipeline();
      for (const id of ids) pipeline.hget(queue.toKey(jobIdFor(id)), "data");
      const answers = (await pipeline.exec()) ?? [];
      ids.forEach((id, i) => {
        const [err, text] = answers[i] ?? [];
        if (err || typeof text !== "string") return;
        try {
          const about = aboutJobData(JSON.parse(text));
          if (about) found.set(id, about);
        } catch {}
      });
      return found;
    },
    async retryFailed(id, note?: JobFailure) {
      const job = await failedJob(id);
      // A dead letter whose data was lost (`keepUnrunnable`) has nothing to run: a recording may.
      if (!job || isLostLetter(job.data)) return false;
      // Kept before `retry` resets the job's attempts for a full policy again.
      if (note)
        await client
          .multi()
          .rpush(notesKey(id), JSON.stringify(note))
          .ltrim(notesKey(id), -MAX_NOTES, -1)
          .expire(notesKey(id), DEFAULT_RETENTION_SECONDS)
          .exec();
      await job.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
      return true;
    },
    async deadLetters(ids) {
      if (ids) {
        const letters: DeadLetter[] = [];
        for (const id of ids) {
          const job = await queue.getJob(jobIdFor(id));
          if (job && (await job.isFailed())) letters.push(letterOf(job, id));
        }
        return letters;
      }
      // The whole failed set first (a job another process retried meanwhile is simply not there any
      // more, and its retry fails harmlessly).
      const seen = new Map<string, DeadLetter>();
      for (let start = 0; ; start += PAGE) {
        const page = (await queue.getFailed(start, start + PAGE - 1)).filter((job) => job && !seen.has(String(job.id)));
        if (page.length === 0) break;
        for (const job of page) seen.set(String(job.id), letterOf(job));
      }
      return [...seen.values()];
    },
    async redrive(letter, after) {
      const job = jobOf.get(letter) ?? (await failedJob(letter.id));
      if (!job || isLostLetter(job.data)) return "no dead letter of it in the failed set";
      // Run after the dead letter before it in its lane has gone back into the lane (see `processJob`).
      if (after !== undefined || job.data?.redriveAfter !== undefined)
        await job.updateData({ ...job.data, redriveAfter: after?.id });
      await job.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
      return undefined;
    },
    async removeFailed(id) {
      const job = await failedJob(id);
      if (!job) return false;
      await job.remove();
      return true;
    },
    async failed(start, count) {
      const jobs = await queue.getJobs(["failed"], start, start + count - 1, false);
      return jobs.flatMap((job) => (job ? [job.data.id] : []));
    },
    async counts() {
      const counts = await queue.getJobCounts("waiting", "active", "delayed", "failed");
      const [oldest] = await queue.getJobs(["waiting"], 0, 0, true);
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

import type { Job, MinimalQueue } from "bullmq";
import type { Cluster, Redis } from "ioredis";
import { withTimeout } from "../shared/time-limit.js";
import type { NotificationJobData } from "../worker/job-data.js";
import { jobIdFor } from "./job-id.js";
import { onceLeftActive } from "./left-active.js";
import { SCRIPTS } from "./lua/scripts.generated.js";

/**
 * KEYS: the job's hash, the queue's failed set, events stream, wait list, delayed and prioritized sets.
 * ARGV: job id, name, data, opts, timestamp, attempts made, failed reason, now.
 *
 * Writes the job of a notification that failed for good as BullMQ keeps a failed one (its hash, its
 * entry in the failed set, a `failed` event), so `redrive`, the console and BullMQ's own tools find it
 * as any dead letter. A job of the id still waiting, delayed or prioritized leaves those first; one that
 * is active (another worker runs it) is left to that worker, and 0 is answered.
 */
const WRITE_DEAD_LETTER = SCRIPTS.WRITE_DEAD_LETTER;

type DeadLetterClient = { mwWriteDeadLetter(...keysAndArgs: Array<string | number>): Promise<number> };

/**
 * Put a notification of an ordered lane that failed its last attempt in the queue's failed set, under
 * its own job id, with its job data as the receiver wrote it: a lane's notifications have no job of
 * their own, so without this the dead letter would exist only as a failed record that no redrive finds.
 * The job's options are the drain job's (`job`), so a redriven one gets the same retry policy.
 * Resolves true when written (or already there), false when a job of the id is running elsewhere.
 * `client` is a connection to the queue's Redis (BullMQ's own sits behind its backend).
 */
export async function writeDeadLetter(
  client: Redis | Cluster,
  job: Job<NotificationJobData>,
  data: NotificationJobData,
  attemptsMade: number,
  reason: string,
): Promise<boolean> {
  const queue = (job as unknown as { queue: MinimalQueue }).queue;
  const commands = client as unknown as DeadLetterClient;
  if (typeof commands.mwWriteDeadLetter !== "function")
    client.defineCommand("mwWriteDeadLetter", { lua: WRITE_DEAD_LETTER, numberOfKeys: 6 });
  const id = jobIdFor(data.id);
  const { attempts, backoff, removeOnComplete, removeOnFail } = job.opts;
  const opts = JSON.stringify({ attempts, backoff, removeOnComplete, removeOnFail });
  const written = await commands.mwWriteDeadLetter(
    queue.toKey(id),
    queue.keys.failed!,
    queue.keys.events!,
    queue.keys.wait!,
    queue.keys.delayed!,
    queue.keys.prioritized!,
    id,
    data.event_type,
    JSON.stringify(data),
    opts,
    data.receivedAt,
    attemptsMade,
    reason,
    Date.now(),
  );
  return written === 1;
}

/** The longest one write may take: Redis away, the writer gives up rather than hold its claim. */
const WRITE_TIMEOUT_MS = 5_000;

/**
 * `writeDeadLetter` for a waiting notification of a lane whose last run failed (it has no job of its own to fail). A
 * job of its own that is active elsewhere (its worker about to postpone it) is waited for, briefly;
 * false when it stays active, the worker stops (`stop`), or Redis does not answer.
 */
export async function writeDeadLetterSoon(
  client: Redis | Cluster,
  job: Job<NotificationJobData>,
  data: NotificationJobData,
  attemptsMade: number,
  reason: string,
  stop: AbortSignal,
): Promise<boolean> {
  const write = () =>
    withTimeout(
      writeDeadLetter(client, job, data, attemptsMade, reason),
      WRITE_TIMEOUT_MS,
      () => new Error("dead letter write timed out"),
    );
  // That job's claim meets the notification held by the writer and moves it to the delayed set, where the write finds it.
  try {
    return await onceLeftActive(write, stop);
  } catch {
    return false;
  }
}

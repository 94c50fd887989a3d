import { Job, type MinimalQueue } from "bullmq";
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

/** Why a dead letter written by `keepUnrunnable` cannot be run as it is: said by every redrive path. */
export const UNRUNNABLE_REASON =
  "its data could not be read (moved from another notification, no key opens it, or gone): nothing to run it from";

/** A dead letter `keepUnrunnable` wrote without a notification: `lost` says why. */
interface LostLetter extends NotificationJobData {
  lost: string;
}

/**
 * Whether a dead letter is one `keepUnrunnable` wrote without a notification (its data was lost before
 * it ran): it is not redriven, only listed (replay it from a recording, or discard it).
 */
export const isLostLetter = (data: Partial<LostLetter> | undefined): boolean =>
  typeof data?.lost === "string" && data.notification === undefined && data.sealed === undefined;

/**
 * A notification handed to a worker (a lane's waiting notification) whose data cannot be read, from the lane or from
 * a job: accepted, it is a dead letter, written to the failed set before its record is failed, so the
 * CLI's `redrive` and the console find it as they find any. Its data is kept as it was when it names
 * this notification (sealed under a key that a fixed worker holds again, it runs once redriven);
 * otherwise (another notification's data put in its place, or none) the letter holds its id, order and
 * why, and no notification. Resolves false when it could not be written (the claim is then let go,
 * and the notification tried again later), true when written or when there is no queue client to write with.
 */
export async function keepUnrunnable(
  client: Redis | Cluster | undefined,
  job: Job<NotificationJobData>,
  claim: { id: string; order?: { key: string; position?: string }; attempt: number; carried?: string },
  stop: AbortSignal,
): Promise<boolean> {
  if (!client) return true;
  const names = (data: Partial<NotificationJobData> | undefined): data is NotificationJobData =>
    data?.id === claim.id && data.order?.key === claim.order?.key && typeof data.event_type === "string";
  const queue = (job as unknown as { queue: MinimalQueue }).queue;
  const own = await withTimeout(Job.fromId<NotificationJobData>(queue, jobIdFor(claim.id)), WRITE_TIMEOUT_MS, () =>
    Error("job lookup timed out"),
  ).catch(() => null);
  if (own === null) return false;
  let carried: Partial<NotificationJobData> | undefined;
  try {
    carried = claim.carried === undefined ? undefined : JSON.parse(claim.carried);
  } catch {}
  const data: NotificationJobData | LostLetter = names(carried)
    ? carried
    : names(own?.data)
      ? own.data
      : {
          id: claim.id,
          event_type: "(unknown)",
          headers: {},
          receivedAt: own?.timestamp ?? Date.now(),
          fingerprint: "",
          ...(claim.order ? { order: claim.order } : {}),
          lost: UNRUNNABLE_REASON,
        };
  return writeDeadLetterSoon(client, job, data, claim.attempt, UNRUNNABLE_REASON, stop);
}

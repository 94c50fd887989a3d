import { type Job, Queue } from "bullmq";
import { Cluster, type Redis } from "ioredis";
import { inRedriveOrder } from "../queue/redrive-order.js";
import { closeIfOwned, producerConnection, type RedisConnection } from "../redis/connect.js";
import { coded, MerchantWebhooksError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { withTimeout } from "../shared/time-limit.js";
import type { NotificationJobData } from "../worker/job-data.js";
import { assertClusterPrefix } from "./cluster-prefix.js";
import { isLostLetter, UNRUNNABLE_REASON } from "./dead-letter.js";
import { jobIdFor } from "./job-id.js";

export interface RedriveOptions {
  connection: RedisConnection;
  /** Queue name, as given to `bullmqQueue`. */
  name: string;
  /** BullMQ key prefix, as given to `bullmqQueue`. */
  prefix?: string;
  /** Notification ids to put back; default every job in the failed set. */
  ids?: readonly string[];
  /** List what would be put back without moving anything. */
  dryRun?: boolean;
  /** How long to wait for Redis before giving up. Default 5 s. */
  connectTimeoutMs?: number;
  /**
   * Throw a `QueueNotFoundError`, listing the queues found, when Redis has no queue of this name and
   * prefix: a misspelt name would otherwise redrive nothing and look like success. Default false.
   */
  requireQueue?: boolean;
}

/** A BullMQ queue found in Redis. */
export interface FoundQueue {
  prefix: string;
  name: string;
}

/** `redrive` with `requireQueue` found no such queue; `found` lists the queues Redis has. */
export class QueueNotFoundError extends MerchantWebhooksError {
  override readonly name = "QueueNotFoundError";
  constructor(
    readonly queue: FoundQueue,
    readonly found: readonly FoundQueue[],
  ) {
    super("MW_QUEUE_NOT_FOUND", `no queue "${queue.name}" with prefix "${queue.prefix}" in Redis`);
  }
}

/** The most queues `findQueues` lists. */
const MAX_FOUND = 1_000;

/**
 * The BullMQ queues in Redis, by their `<prefix>:<name>:meta` hash (every Queue writes one when it
 * starts, and a queue name cannot contain ":"). On a cluster every master is scanned.
 */
export async function findQueues(client: Redis | Cluster): Promise<FoundQueue[]> {
  const nodes = client instanceof Cluster ? client.nodes("master") : [client];
  const found = new Map<string, FoundQueue>();
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", "*:meta", "COUNT", 1_000, "TYPE", "hash");
      cursor = next;
      for (const key of keys) {
        const base = key.slice(0, -":meta".length);
        const colon = base.lastIndexOf(":");
        if (colon > 0) found.set(base, { prefix: base.slice(0, colon), name: base.slice(colon + 1) });
      }
    } while (cursor !== "0" && found.size < MAX_FOUND);
  }
  return [...found.values()].sort((a, b) => a.prefix.localeCompare(b.prefix) || a.name.localeCompare(b.name));
}

export interface RedriveResult {
  /** Notification ids moved from the failed set back to waiting (or that would be, on a dry run). */
  redriven: string[];
  /** Requested ids with no job in the failed set (never failed, already redriven, or removed). */
  notFailed: string[];
  /**
   * Dead letters left where they are: their data was lost before they could run (see
   * `keepUnrunnable`), with why. Replay one from a recording (the console), or discard it. Absent
   * when there are none.
   */
  unrunnable?: Array<{ id: string; reason: string }>;
}

const PAGE = 500;

/**
 * The jobs in the order they go back (`inRedriveOrder`): an ordered lane's dead letters each after
 * the one before it (`after`), so a newer one never runs before an older one of its lane is back in
 * line (which would make the older stale).
 */
export function inLaneOrder(
  jobs: readonly Job<NotificationJobData>[],
): Array<{ job: Job<NotificationJobData>; after?: string }> {
  const { unordered, lanes } = inRedriveOrder(
    jobs,
    (job) => job.data?.order,
    (job) => job.data?.id ?? String(job.id),
  );
  return [
    ...unordered.map((job) => ({ job })),
    ...lanes.flatMap((lane) => lane.map((job, i) => (i === 0 ? { job } : { job, after: lane[i - 1]!.data.id }))),
  ];
}

/**
 * Put dead-lettered notifications back to work after a fix: each job leaves the failed set for the
 * lane with its attempts reset. The record of a failed notification may be claimed again, so
 * a worker runs the handler; a notification completed meanwhile (by a redelivery) is not run twice.
 */
const REDRIVE_KEYS: KnownKeys<RedriveOptions> = {
  connection: true,
  name: true,
  prefix: true,
  ids: true,
  dryRun: true,
  connectTimeoutMs: true,
  requireQueue: true,
};

export async function redrive(options: RedriveOptions): Promise<RedriveResult> {
  rejectUnknownKeys("redrive", options, Object.keys(REDRIVE_KEYS));
  assertClusterPrefix("redrive", options.connection, options.name, options.prefix);
  const handle = producerConnection(options.connection);
  const queue = new Queue<NotificationJobData>(options.name, {
    connection: handle.client,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    // A Queue writes its `meta` hash on start-up, which would create a key for a queue that does not
    // exist (a misspelt name, a dry run that must leave Redis as it was); the queue's own producer
    // writes it, and moving a job back needs none of it.
    skipMetasUpdate: true,
  });
  queue.on("error", () => {});
  const result: RedriveResult = { redriven: [], notFailed: [] };
  try {
    const connectMs = options.connectTimeoutMs ?? 5_000;
    await withTimeout(queue.waitUntilReady(), connectMs, () =>
      coded(new Error(`could not connect to Redis within ${connectMs} ms`), "MW_QUEUE_UNAVAILABLE"),
    );
    if (options.requireQueue && (await handle.client.exists(queue.keys.meta!, queue.keys.id!)) === 0)
      throw new QueueNotFoundError(
        { prefix: options.prefix ?? "bull", name: options.name },
        await findQueues(handle.client),
      );
    const failed: Job<NotificationJobData>[] = [];
    if (options.ids) {
      for (const id of options.ids) {
        const job = await queue.getJob(jobIdFor(id));
        if (job && (await job.isFailed())) failed.push(job);
        else result.notFailed.push(id);
      }
    } else {
      // The whole failed set first, then put back in lane order (a job another process retried
      // meanwhile is simply not there any more, and its retry below fails harmlessly).
      const seen = new Set<string>();
      for (let start = 0; ; start += PAGE) {
        const page = (await queue.getFailed(start, start + PAGE - 1)).filter((job) => job && !seen.has(String(job.id)));
        if (page.length === 0) break;
        for (const job of page) {
          seen.add(String(job.id));
          failed.push(job);
        }
      }
    }
    for (const { job, after } of inLaneOrder(failed)) {
      if (isLostLetter(job.data)) {
        (result.unrunnable ??= []).push({
          id: job.data?.id ?? String(job.id),
          reason: job.failedReason || UNRUNNABLE_REASON,
        });
        continue;
      }
      if (!options.dryRun) {
        // Run after the dead letter before it in its lane has gone back into the lane (see `processJob`).
        if (after !== undefined || job.data?.redriveAfter !== undefined)
          await job.updateData({ ...job.data, redriveAfter: after });
        await job.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
      }
      result.redriven.push(job.data?.id ?? job.data?.notification?.id ?? String(job.id));
    }
    return result;
  } finally {
    await queue.close();
    await closeIfOwned(handle);
  }
}

import { Queue } from "bullmq";
import { Cluster, type Redis } from "ioredis";
import type { DeadLetterJobs } from "../queue/queue-jobs.js";
import { type RedriveResult, redriveDeadLetters } from "../queue/redrive-dead-letters.js";
import { closeIfOwned, producerConnection, type RedisConnection } from "../redis/connect.js";
import { coded, MerchantWebhooksError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { withTimeout } from "../shared/time-limit.js";
import type { NotificationJobData } from "../worker/job-data.js";
import { assertClusterPrefix } from "./cluster-prefix.js";
import { bullmqJobs } from "./queue-jobs.js";

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

export type { RedriveResult } from "../queue/redrive-dead-letters.js";

const REDRIVE_KEYS: KnownKeys<RedriveOptions> = {
  connection: true,
  name: true,
  prefix: true,
  ids: true,
  dryRun: true,
  connectTimeoutMs: true,
  requireQueue: true,
};

/**
 * Put dead-lettered notifications back to work after a fix: each job leaves the failed set with its
 * attempts reset, an ordered lane's oldest first (`redriveDeadLetters`). The record of a failed
 * notification may be claimed again, so a worker runs the handler; a notification completed
 * meanwhile (by a redelivery) is not run twice.
 */
export async function redrive(options: RedriveOptions): Promise<RedriveResult> {
  rejectUnknownKeys("redrive", options, Object.keys(REDRIVE_KEYS));
  const { jobs, close } = await openDeadLetters(options);
  try {
    return await redriveDeadLetters(jobs, options);
  } finally {
    await close();
  }
}

/**
 * The failed set of a BullMQ queue, for a redrive (`redrive`, the CLI's `redrive --queue`), once Redis
 * answers; with `requireQueue`, a `QueueNotFoundError` when there is no such queue. `close` when done.
 */
export async function openDeadLetters(
  options: Omit<RedriveOptions, "ids" | "dryRun">,
): Promise<{ jobs: DeadLetterJobs; close(): Promise<void> }> {
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
  const close = async () => {
    await queue.close();
    await closeIfOwned(handle);
  };
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
    return { jobs: bullmqJobs(queue, handle.client), close };
  } catch (err) {
    await close();
    throw err;
  }
}

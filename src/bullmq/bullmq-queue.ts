import { type JobsOptions, Queue, type QueueOptions } from "bullmq";
import type { NotificationQueue, QueuedNotification } from "../queue/queue.js";
import type { QueueJobs } from "../queue/queue-jobs.js";
import { checkRedisConnection } from "../redis/check-connection.js";
import { closeIfOwned, producerConnection, type RedisConnection } from "../redis/connect.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { withTimeout } from "../shared/time-limit.js";
import { jobDataFor, type NotificationJobData } from "../worker/job-data.js";
import { type EncryptionKey, sealingKey } from "../worker/seal.js";
import { assertClusterPrefix } from "./cluster-prefix.js";
import { jobIdFor, queueIdentity } from "./job-id.js";
import { bullmqJobs } from "./queue-jobs.js";
import { jobFinished, LEDGER_PARTS, type QueueLedger, queueLedger } from "./queue-ledger.js";

const BULLMQ_QUEUE_KEYS = {
  connection: true,
  name: true,
  prefix: true,
  jobOptions: true,
  telemetry: true,
  timeoutMs: true,
  encryptionKey: true,
} as const satisfies KnownKeys<BullmqQueueOptions>;

import { type CloseOptions, closeTimeoutOf } from "../shared/close-options.js";
import { MerchantWebhooksError, optionError } from "../shared/errors.js";

const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

export interface BullmqQueueOptions {
  /** Redis for the queue: an ioredis client, a URL or ioredis options. Share it with the workers. */
  connection: RedisConnection;
  /** Queue name; the workers use the same. */
  name: string;
  /**
   * BullMQ key prefix. Default `bull`. On Redis Cluster it must hold a hash tag, such as `{mw}`, so
   * every key of the queue is in one slot; without one `bullmqQueue` throws at once.
   */
  prefix?: string;
  /** Merged over `DEFAULT_JOB_OPTIONS` (attempts, backoff, retention); `jobId` is always derived. */
  jobOptions?: Omit<JobsOptions, "jobId">;
  /**
   * BullMQ's own OpenTelemetry spans (`new BullMQOtel(name)` from `bullmq-otel`); give the workers the
   * same through `workerOptions.telemetry`. Without it the trace still reaches the worker in the job data.
   */
  telemetry?: QueueOptions["telemetry"];
  /** Longest an enqueue may take before the receiver answers 503. Default 5 s. */
  timeoutMs?: number;
  /**
   * 32 bytes (or their base64) to seal each job's notification with AES-256-GCM; give the workers the
   * same key. Without it, job data holds the notification with card numbers masked. Either way, card
   * verification data is never written.
   */
  encryptionKey?: EncryptionKey;
}

/**
 * Retries: 8 runs, 2 s doubling (about 4 minutes in all) rides out a dependency's restart; what still
 * fails waits in the failed set for `redrive`. Completed jobs are removed at once: the idempotency
 * store keeps the outcome for its retention period, and a kept job would only keep a second copy of
 * the payload. Failed jobs are kept: the failed set is the dead-letter queue.
 */
export const DEFAULT_JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: "exponential", delay: 2_000 },
  removeOnComplete: true,
  removeOnFail: false,
} as const satisfies JobsOptions;

export class QueueUnavailableError extends MerchantWebhooksError {
  override name = "QueueUnavailableError";
  constructor(message: string) {
    super("MW_QUEUE_UNAVAILABLE", message, { status: 503 });
  }
}

export interface BullmqNotificationQueue extends NotificationQueue {
  readonly durable: true;
  /** The BullMQ queue underneath, for counts, metrics and dashboards. */
  readonly queue: Queue<NotificationJobData>;
  /** Its jobs and failed set, for the console (`createAdmin`). */
  readonly jobs: QueueJobs;
  /** A copy of each queued job's data, kept apart from the queue until done (see `sweepQueued`). */
  readonly ledger: QueueLedger;
  enqueue(item: QueuedNotification): Promise<void>;
  wake(item: QueuedNotification): Promise<void>;
  carry(item: Omit<QueuedNotification, "run" | "mailbox" | "carried">): string;
  has(id: string): Promise<boolean>;
  /** A PING on the queue's connection within `timeoutMs`; rejects while Redis is down. */
  ping(): Promise<void>;
  /**
   * Close the queue, letting adds in flight finish for at most `timeoutMs` (default 10 s), then the
   * connection made for it (a lent client stays open).
   */
  close(options?: CloseOptions): Promise<void>;
}

/**
 * The ledger part that serialised job data names (its copy goes there, where the worker drops it). Read
 * without parsing the whole: `ledger` is a top-level key written before the notification, and a key
 * of that name cannot appear unescaped inside a string value before it.
 */
function partOf(carried: string): number {
  const part = Number(/"ledger":(\d+)/.exec(carried)?.[1] ?? 0);
  return part < LEDGER_PARTS ? part : 0;
}

/**
 * The receiver's `queue` option for handlers that run in workers (`createWorker`). An enqueue resolves
 * once the job is stored in Redis, so the receiver acknowledges only what a worker will find; it
 * rejects within `timeoutMs` (at once while Redis is known to be down), and the receiver answers 503.
 */
export function bullmqQueue(options: BullmqQueueOptions): BullmqNotificationQueue {
  rejectUnknownKeys("bullmqQueue", options, Object.keys(BULLMQ_QUEUE_KEYS));
  checkRedisConnection(options?.connection, { what: "bullmqQueue", options: true });
  if (typeof options.name !== "string" || options.name === "")
    throw optionError(
      new TypeError(
        `bullmqQueue: name must be the queue's name, a non-empty string; got ${JSON.stringify(options.name)}`,
      ),
      "MW_INVALID_OPTION",
      "name",
    );
  assertClusterPrefix("bullmqQueue", options.connection, options.name, options.prefix);
  const key = options.encryptionKey === undefined ? undefined : sealingKey(options.encryptionKey);
  const handle = producerConnection(options.connection);
  const timeoutMs = options.timeoutMs ?? 5_000;
  const queue = new Queue<NotificationJobData>(options.name, {
    connection: handle.client,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    defaultJobOptions: { ...DEFAULT_JOB_OPTIONS, ...options.jobOptions },
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  });
  const ledger = queueLedger(handle.client, options.prefix, options.name);
  const laneQueue = queueIdentity(queue);
  const cluster = (handle.client as { isCluster?: boolean }).isCluster === true;
  /** The queue's failed and completed sets, where a job that will not run again sits. */
  const finishedSets = [queue.keys.failed!, queue.keys.completed!] as const;
  // Errors reach the receiver through rejected enqueues; without a listener they would crash the process.
  queue.on("error", () => {});
  let connected = false;

  async function ready(): Promise<void> {
    // Before the first connection BullMQ waits for Redis to come up; after it, a lost connection fails now.
    if (connected && handle.client.status !== "ready")
      throw new QueueUnavailableError("Redis connection for the queue is down");
    await queue.waitUntilReady();
    connected = true;
  }

  async function add(item: QueuedNotification): Promise<void> {
    await ready();
    // Appended to its lane with its data (`inLane`), a lane's notification needs nothing more on one
    // Redis: the lane keeps it until it is done, and the sweep finds a lane whose drain job the queue
    // lost from the store's side (`lanes.stalled`; with a store that cannot, by the copy that `wake`
    // keeps of the notification that woke the lane). A copy there would sit on the lane's own server
    // and be lost with it. On a cluster each waiting notification keeps a copy on another master than the queue's:
    // a kill of the queue's master can lose the last appends of the lanes it also serves (replication
    // is asynchronous), and only a copy elsewhere brings those back (`test/cluster/ordered-failover`).
    // Appended without its data, the copy is where its runner reads it from.
    if (item.mailbox && item.carried !== undefined && item.inLane && (!cluster || item.inLane.wake)) return;
    if (item.mailbox) {
      const carried = item.carried ?? JSON.stringify(jobDataFor(item, key, ledger.partFor(item.id)));
      return ledger.keep(item.id, carried, partOf(carried));
    }
    const part = ledger.partFor(item.id);
    const data: NotificationJobData = jobDataFor(item, key, part);
    const jobId = jobIdFor(item.id);
    // The copy goes beside the job, never after it: a job acknowledged without its copy could be lost
    // for good. The same command reads whether the id's job sits finished (see `addJob`).
    const [finished] = await Promise.all([
      ledger.keepBesideJob(item.id, data, part, { id: jobId, finished: finishedSets }),
      queue.add(item.notification.event_type, data, { jobId }),
    ]);
    if (finished) await replaceFinished(item, data, jobId);
  }

  /** The notification's own job; for a lane's notification, the job that runs its subscription's lane. */
  async function addJob(item: QueuedNotification, data: NotificationJobData, withCopy: boolean): Promise<void> {
    const jobId = jobIdFor(item.id);
    // The add is a no-op when the id is still in the queue. Waiting, delayed or active jobs will run;
    // a job left in the failed (or, if kept, completed) set would not, yet the receiver has just
    // claimed the id again: replace that job so the notification runs, with the payload just received.
    // Whether the job sits finished is asked beside the add, not after it: read before or after the
    // add, a finished job means the add found it there and did nothing (a job this add made is
    // waiting), so one round trip does. A script reads the two sets; BullMQ's job-state read would
    // also scan the lane, at a cost growing with the backlog.
    // The drain job of a lane gets the copy of the notification that woke it beside it, in the same
    // command: the lane keeps its notifications' data, and the sweep finds the lane by this copy.
    const finishedOrNot = withCopy
      ? ledger.keepBesideJob(item.id, data, data.ledger ?? ledger.partFor(item.id), {
          id: jobId,
          finished: finishedSets,
        })
      : jobFinished(handle.client, jobId, finishedSets);
    const [finished] = await Promise.all([finishedOrNot, queue.add(item.notification.event_type, data, { jobId })]);
    if (finished) await replaceFinished(item, data, jobId);
  }

  /** The add met the id's finished job: remove it and add the notification afresh. */
  async function replaceFinished(item: QueuedNotification, data: NotificationJobData, jobId: string): Promise<void> {
    await queue.remove(jobId);
    await queue.add(item.notification.event_type, data, { jobId });
  }

  return {
    durable: true,
    queue,
    jobs: bullmqJobs(queue, handle.client),
    ledger,
    enqueue: (item) =>
      withTimeout(
        add(item),
        timeoutMs,
        () => new QueueUnavailableError(`enqueue did not finish within ${timeoutMs} ms`),
      ),
    wake: (item) =>
      withTimeout(
        (async () => {
          await ready();
          const data = item.carried
            ? (JSON.parse(item.carried) as NotificationJobData)
            : jobDataFor(item, key, ledger.partFor(item.id));
          await addJob(item, data, item.inLane !== undefined && (cluster || !item.inLane.found));
        })(),
        timeoutMs,
        () => new QueueUnavailableError(`enqueue did not finish within ${timeoutMs} ms`),
      ),
    // Named with its queue: a store serving several queues keeps their lanes side by side, and the
    // sweep wakes a stalled lane only in the queue it was appended for (see `sweepQueued`).
    carry: (item) => JSON.stringify({ ...jobDataFor(item, key, ledger.partFor(item.id)), queue: laneQueue }),
    async has(id) {
      const state = await withTimeout(
        queue.getJobState(jobIdFor(id)),
        timeoutMs,
        () => new QueueUnavailableError(`Redis did not answer within ${timeoutMs} ms`),
      );
      // A failed job waits for redrive, a completed one ran: neither runs again by itself.
      return state !== "unknown" && state !== "failed" && state !== "completed";
    },
    async ping() {
      // No offline queue on this connection: a PING while Redis is down is refused at once.
      await withTimeout(
        handle.client.ping(),
        timeoutMs,
        () => new QueueUnavailableError(`Redis did not answer within ${timeoutMs} ms`),
      );
    },
    async close(closeOptions) {
      const limit = closeTimeoutOf(closeOptions, DEFAULT_CLOSE_TIMEOUT_MS);
      // Past the limit the connection closes under the adds still waiting: they fail, and their
      // receivers answer 503, so the sender keeps those notifications.
      await withTimeout(queue.close(), limit, () => new Error("queue not closed in time")).catch(() => {});
      await closeIfOwned(handle);
    },
  };
}

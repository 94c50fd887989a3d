import { type Job, Worker, type WorkerOptions } from "bullmq";
import type { Logger } from "pino";
import type { Handler, HandlerHooks, SubscriptionHandlers } from "../dispatch/handlers.js";
import type { PlatformOption } from "../dispatch/platform-handle.js";
import {
  DRAINED_LANE_CALLS,
  type DrainedLaneStore,
  drainedLanes,
  type IdempotencyStore,
} from "../idempotency/store.js";
import type { RedactOptions } from "../logging/redact.js";
import type { HealthOptions } from "../receiver/health.js";
import { checkRedisConnection } from "../redis/check-connection.js";
import { closeIfOwned, type RedisConnection, workerConnection } from "../redis/connect.js";
import type { CloseOptions } from "../shared/close-options.js";
import { optionError } from "../shared/errors.js";
import type { KnownKeys } from "../shared/option-keys.js";
import type { NotificationJobData } from "../worker/job-data.js";
import { RUN_OPTION_KEYS } from "../worker/run-settings.js";
import type { EncryptionKey } from "../worker/seal.js";
import {
  prepareRuns,
  rejectUnknownWorkerKeys,
  type WorkerHealth,
  workerControls,
  workerLogger,
} from "../worker/worker-lifecycle.js";
import { assertClusterPrefix } from "./cluster-prefix.js";
import { gaugeFailedSet } from "./failed-set-gauge.js";
import { jobProcessor } from "./job-processor.js";
import type { JobOutcome, JobRunner } from "./process-job.js";
import { batchedDrops, queueLedger } from "./queue-ledger.js";
import { DEFAULT_SWEEP_EVERY_MS, sweepEvery } from "./sweep-every.js";
import { workerStore } from "./worker-store.js";

export interface CreateWorkerOptions extends SubscriptionHandlers, HandlerHooks, PlatformOption {
  /** Redis for the queue: an ioredis client, a URL or ioredis options (the receivers' will do). */
  connection: RedisConnection;
  /** Queue name, as given to `bullmqQueue`. */
  name: string;
  /** BullMQ key prefix, as given to `bullmqQueue` (on Redis Cluster, with a hash tag such as `{mw}`). */
  prefix?: string;
  /** Jobs run at once by this worker. Default 10. */
  concurrency?: number;
  /**
   * Gets the jobs of receivers with `ordering` that are stale when their turn comes (older than the
   * newest completed notification of their subscription). Without it they complete, logged, unrun.
   */
  onStale?: Handler;
  /**
   * The store the receivers claim in. Default: `redisStore` on `connection` with its default prefix,
   * which is what receivers get from `redisStore({ connection })` on the same Redis.
   */
  idempotency?: IdempotencyStore;
  /** A pino logger. Default: pino to stdout, named `merchant-webhooks`. */
  logger?: Logger;
  /** What `ctx.log` redacts beyond card data. Default `{ pii: true }`. */
  redact?: RedactOptions;
  /** Time a handler may take before `ctx.signal` aborts and the attempt fails. Default 60 s; 0 for none. */
  handlerTimeoutMs?: number;
  /** How long a worker's claim holds without renewal. Default 30 s, as for receivers. */
  leaseMs?: number;
  /** How long BullMQ's lock on a running job holds without renewal. Default: `leaseMs`. */
  lockDuration?: number;
  /**
   * How often BullMQ looks for jobs whose worker died. Default 30 s. Give every worker of a queue the
   * same value: the first worker to look holds the others off for its own interval.
   */
  stalledInterval?: number;
  /** Times a job may be recovered from a dead worker before it is failed. Default 1 (BullMQ's). */
  maxStalledCount?: number;
  /**
   * The key given to `bullmqQueue`, to open sealed jobs; during a rotation, the new and the old key.
   * A sealed job no key opens fails at once, with the reason, and waits in the failed set for `redrive`.
   */
  encryptionKey?: EncryptionKey | readonly EncryptionKey[];
  /**
   * How often this worker looks for notifications accepted into the queue whose job was lost (a
   * failover that dropped the queue master's last writes, a job removed by hand) and queues them again
   * from the ledger's copy (`sweepQueued`). Default 30 s; 0 turns it off.
   */
  sweepQueuedEveryMs?: number;
  /** Any other BullMQ worker option; the ones above take precedence. */
  workerOptions?: Omit<WorkerOptions, "connection" | "prefix" | "autorun">;
}

export interface NotificationWorker {
  /** The BullMQ worker underneath, for events and metrics. */
  readonly worker: Worker<NotificationJobData, JobOutcome>;
  /** Resolves once connected to Redis and taking jobs. */
  waitUntilReady(): Promise<void>;
  /**
   * Pings the store and the queue's Redis within `timeoutMs` (default 500 ms), and says how many jobs
   * run here. `ok` is false while either is down, once closed, and while the worker takes no jobs.
   */
  health(options?: HealthOptions): Promise<WorkerHealth>;
  /**
   * Stop taking jobs and wait up to `timeoutMs` (default 30 s) for running handlers. Past it, their
   * `ctx.signal` aborts and their jobs go back to the queue at once, for another worker to pick up
   * when this worker's claim lapses. Resolves true when every running handler finished in time.
   */
  close(options?: CloseOptions): Promise<boolean>;
}

const WORKER_KEYS = {
  ...RUN_OPTION_KEYS,
  connection: true,
  name: true,
  prefix: true,
  concurrency: true,
  idempotency: true,
  lockDuration: true,
  stalledInterval: true,
  maxStalledCount: true,
  sweepQueuedEveryMs: true,
  workerOptions: true,
} as const satisfies KnownKeys<Omit<CreateWorkerOptions, keyof SubscriptionHandlers | keyof HandlerHooks>>;

/**
 * Run queued notifications: the same typed handlers and context as a receiver, each notification id's
 * handler completing once however many workers, receivers and redeliveries there are.
 */
export function createWorker(options: CreateWorkerOptions): NotificationWorker {
  rejectUnknownWorkerKeys("createWorker", options, WORKER_KEYS);
  checkRedisConnection(options?.connection, { what: "createWorker", options: true });
  if (typeof options.name !== "string" || options.name === "")
    throw optionError(
      new TypeError(
        `createWorker: name must be the queue's name, as given to bullmqQueue; got ${JSON.stringify(options.name)}`,
      ),
      "MW_INVALID_OPTION",
      "name",
    );
  assertClusterPrefix("createWorker", options.connection, options.name, options.prefix);
  const logger = workerLogger(options);
  const { store, closeStore } = workerStore(options);
  // Every store of this package can hand a subscription on; a wrapper that drops `lanes` quietly turns
  // an ordered backlog's drain into one notification per lease (docs/ordering.md).
  const lanes = options.idempotency?.lanes;
  if (options.idempotency && !lanes?.takeNext)
    logger.warn(
      "createWorker: the idempotency store has no lanes, so no takeNext: with ordering, a subscription's queued notifications then run one per lease as their jobs come back, not one after another; a store wrapper must pass takeNext through, with the rest of `lanes`",
    );
  // A lane kept whole needs every call: without `retry`, say, a failed run is failed for good at once.
  else if (lanes && drainedLanes(options.idempotency!)) {
    const missing = DRAINED_LANE_CALLS.filter(
      (name) => typeof (lanes as Partial<DrainedLaneStore>)[name] !== "function",
    );
    if (missing.length > 0)
      logger.warn(
        `createWorker: the idempotency store's lanes have no ${missing.join(", ")}: with ordering, a subscription's lane then loses what they do (a retry in its turn, a dead letter holding it, the sweep's look); a store wrapper must pass \`lanes\` through whole`,
      );
  }
  const { settings, shutdown } = prepareRuns(options, store, logger, closeStore);
  const handle = workerConnection(options.connection);
  const ledger = queueLedger(handle.client, options.prefix, options.name);
  const runner: JobRunner = {
    ...settings,
    ledger,
    drops: batchedDrops(ledger),
    queueClient: handle.client,
  };

  const stopSweeping = sweepEvery(options.sweepQueuedEveryMs ?? DEFAULT_SWEEP_EVERY_MS, {
    connection: handle.client,
    name: options.name,
    prefix: options.prefix,
    ledger,
    store,
    logger,
  });
  const processor = jobProcessor(runner, logger, settings.redact, options.name);
  const concurrency = options.concurrency ?? 10;
  // Jobs in the processor now, for `health()`: BullMQ keeps its own count private.
  let running = 0;
  const counted = async (job: Job<NotificationJobData>, token?: string): Promise<JobOutcome> => {
    running++;
    try {
      return await processor(job, token);
    } finally {
      running--;
    }
  };

  const worker = new Worker<NotificationJobData, JobOutcome>(options.name, counted, {
    ...options.workerOptions,
    connection: handle.client,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    concurrency,
    // A dead worker's job is retried once its lock lapses; with the lease lapsing at the same time,
    // the retry can claim the record at once instead of waiting for it.
    lockDuration: options.lockDuration ?? settings.leaseMs,
    ...(options.stalledInterval !== undefined ? { stalledInterval: options.stalledInterval } : {}),
    ...(options.maxStalledCount !== undefined ? { maxStalledCount: options.maxStalledCount } : {}),
  });
  worker.on("error", (err) => {
    // A lost lock (the worker froze or stalled past it: its renewal refused, or a move of a job another
    // worker has since finished and removed) says nothing failed: the stalled check gave the job to
    // another worker, and the store's claim decides who records the outcome.
    if (/missing lock|lock mismatch|could not renew lock|missing key for job/i.test(err?.message ?? ""))
      logger.warn({ err }, "a job's lock was lost (this worker paused past it); another worker has the job");
    else logger.error({ err }, "worker error");
  });
  const stopFailedSetGauge = gaugeFailedSet(options.name, options.prefix, handle.client);

  return {
    worker,
    waitUntilReady: async () => {
      await worker.waitUntilReady();
    },
    ...workerControls({
      store,
      // The queue's Redis, on the connection the worker's ledger and sweep use.
      queue: { ping: async () => void (await handle.client.ping()) },
      concurrency,
      running: () => running,
      taking: () => worker.isRunning(),
      stop: () => worker.close(),
      shutdown,
      release: async () => {
        await runner.drops!.flush();
        await stopSweeping();
        await stopFailedSetGauge();
        await closeStore();
        await closeIfOwned(handle);
      },
    }),
  };
}

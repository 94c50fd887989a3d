import { setMaxListeners } from "node:events";
import { DelayedError, UnrecoverableError, Worker, type Job, type WorkerOptions } from "bullmq";
import { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import { DEFAULT_LEASE_MS, type IdempotencyStore } from "../idempotency/store.js";
import { defaultLogger, handlerLogger, libraryLogger } from "../logging/logger.js";
import type { RedactOptions } from "../logging/redact.js";
import type { SubscriptionHandlers } from "../dispatch/handlers.js";
import { checkHandlingOptions } from "../dispatch/check-handling-options.js";
import { ownerTokens } from "../dispatch/run-claimed.js";
import { failFastRedisOptions, redisStore } from "../redis/index.js";
import { assertClusterPrefix } from "./cluster-prefix.js";
import { closeIfOwned, workerConnection, type RedisConnection } from "../redis/clients.js";
import type { NotificationJobData } from "./job-data.js";
import { processJob, type JobOutcome, type JobRunner } from "./process-job.js";
import { redactErrorInPlace } from "../logging/redact-error.js";

export interface CreateWorkerOptions extends SubscriptionHandlers {
  /** Redis for the queue: an ioredis client, a URL or ioredis options (the receivers' will do). */
  connection: RedisConnection;
  /** Queue name, as given to `bullmqQueue`. */
  name: string;
  /** BullMQ key prefix, as given to `bullmqQueue` (on Redis Cluster, with a hash tag such as `{mw}`). */
  prefix?: string;
  /** Jobs run at once by this worker. Default 10. */
  concurrency?: number;
  /**
   * The store the receivers claim in. Default: `redisStore` on `connection` with its default prefix,
   * which is what receivers get from `redisStore({ redis })` on the same Redis.
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
  /** Any other BullMQ worker option; the ones above take precedence. */
  workerOptions?: Omit<WorkerOptions, "connection" | "prefix" | "autorun">;
}

export interface NotificationWorker {
  /** The BullMQ worker underneath, for events and metrics. */
  readonly worker: Worker<NotificationJobData, JobOutcome>;
  /** Resolves once connected to Redis and taking jobs. */
  waitUntilReady(): Promise<void>;
  /**
   * Stop taking jobs and wait up to `timeoutMs` (default 30 s) for running handlers. Past it, their
   * `ctx.signal` aborts and their jobs go back to the queue at once, for another worker to pick up
   * when this worker's claim lapses. Resolves true when every running handler finished in time.
   */
  close(timeoutMs?: number): Promise<boolean>;
}

/** Queued handlers are the slow ones, and no sender is waiting on them: a longer limit than a receiver's. */
export const DEFAULT_WORKER_HANDLER_TIMEOUT_MS = 60_000;
const DEFAULT_CLOSE_TIMEOUT_MS = 30_000;
/** After the handlers are told to stop: time for their jobs to be put back before closing regardless. */
const REQUEUE_GRACE_MS = 5_000;

/** Stands for "the worker stopped waiting" in the race between a job and the shutdown signal. */
const STOPPED = Symbol("stopped");

/**
 * Run queued notifications: the same typed handlers and context as a receiver, each notification id's
 * handler completing once however many workers, receivers and redeliveries there are.
 */
export function createWorker(options: CreateWorkerOptions): NotificationWorker {
  assertClusterPrefix("createWorker", options.connection, options.name, options.prefix);
  const logger = libraryLogger(options.logger ?? defaultLogger(), options.redact ?? {});
  const { store, closeStore } = options.idempotency ? { store: options.idempotency, closeStore: async () => {} } : sharedStore(options.connection);
  const leaseMs = options.leaseMs ?? store.leaseMs ?? DEFAULT_LEASE_MS;
  try {
    checkHandlingOptions(options, store, leaseMs);
  } catch (err) {
    void closeStore(); // a store made here must not keep the process alive after the refusal
    throw err;
  }
  const handle = workerConnection(options.connection);
  const shutdown = new AbortController();
  // One listener per running job waits on it: as many as `concurrency`.
  setMaxListeners(0, shutdown.signal);
  const nextOwner = ownerTokens();

  const runner: JobRunner = {
    store,
    handlers: options,
    leaseMs,
    timeoutMs: options.handlerTimeoutMs ?? DEFAULT_WORKER_HANDLER_TIMEOUT_MS,
    ctxLogger: handlerLogger(logger, options.redact ?? {}),
    nextOwner: (job) => nextOwner(String(job.id)),
    shutdown: shutdown.signal,
  };

  async function processor(job: Job<NotificationJobData>, token?: string): Promise<JobOutcome> {
    const started = performance.now();
    const run = processJob(job, token, runner);
    const fields = () => ({
      notification_id: job.data?.notification?.id,
      event_type: job.data?.notification?.event_type,
      job_id: job.id,
      job_attempt: job.attemptsMade + 1,
      duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    });
    let outcome: JobOutcome | typeof STOPPED;
    try {
      outcome = await untilAborted(run, shutdown.signal);
    } catch (thrown) {
      if (thrown instanceof DelayedError) {
        logger.debug(fields(), "notification held elsewhere or store unreachable; looking again shortly");
        throw thrown;
      }
      // BullMQ stores the message and stack in the failed job (`failedReason`, `stacktrace`).
      const err = redactErrorInPlace(thrown, options.redact ?? {});
      const final = err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      logger.error({ ...fields(), err, final }, final ? "notification failed; left in the failed set" : "notification failed; will retry");
      throw err;
    }
    if (outcome === STOPPED) {
      // The handler may still finish in this process; if it does not, its claim lapses and another worker runs it.
      run.catch(() => {});
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (outcome === "conflict") logger.warn(fields(), "notification id already used with a different payload; job dropped");
    else logger.info({ ...fields(), outcome }, "notification processed by worker");
    return outcome;
  }

  const worker = new Worker<NotificationJobData, JobOutcome>(options.name, processor, {
    ...options.workerOptions,
    connection: handle.client,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    concurrency: options.concurrency ?? 10,
    // A dead worker's job is retried once its lock lapses; with the lease lapsing at the same time,
    // the retry can claim the record at once instead of waiting for it.
    lockDuration: options.lockDuration ?? leaseMs,
    ...(options.stalledInterval !== undefined ? { stalledInterval: options.stalledInterval } : {}),
    ...(options.maxStalledCount !== undefined ? { maxStalledCount: options.maxStalledCount } : {}),
  });
  worker.on("error", (err) => logger.error({ err }, "worker error"));

  let closing: Promise<boolean> | undefined;
  return {
    worker,
    waitUntilReady: async () => {
      await worker.waitUntilReady();
    },
    close(timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS) {
      return (closing ??= (async () => {
        const closed = worker.close();
        const drained = await settlesWithin(closed, timeoutMs);
        if (!drained) {
          shutdown.abort(new Error("worker closing"));
          await settlesWithin(closed, REQUEUE_GRACE_MS);
        }
        await closeStore();
        await closeIfOwned(handle);
        return drained;
      })());
    },
  };
}

/**
 * The default store: the one receivers reach with `redisStore({ redis })` on the same Redis (default
 * prefix). A URL or a lent client goes to the store as it is; options get the store's fail-fast
 * settings underneath, on a connection closed with the worker.
 */
function sharedStore(connection: RedisConnection): { store: IdempotencyStore; closeStore: () => Promise<void> } {
  if (typeof connection === "string" || connection instanceof Redis || connection instanceof Cluster) {
    const store = redisStore({ redis: connection });
    return { store, closeStore: () => store.close() };
  }
  const client = new Redis({ ...failFastRedisOptions(), ...connection });
  const store = redisStore({ redis: client });
  return {
    store,
    async closeStore() {
      await store.close();
      client.disconnect();
    },
  };
}

async function untilAborted<T>(task: Promise<T>, signal: AbortSignal): Promise<T | typeof STOPPED> {
  if (signal.aborted) return STOPPED;
  let onAbort!: () => void;
  const stopped = new Promise<typeof STOPPED>((resolve) => {
    onAbort = () => resolve(STOPPED);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([task, stopped]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

async function settlesWithin(task: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([task.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

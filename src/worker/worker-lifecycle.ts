// What `createWorker` (BullMQ) and `createPgBossWorker` (pg-boss) do alike around their queue's own loop:
// the options every worker takes checked, its logger and run settings made, and its `health()` and
// `close()`. Each entry point adds only its queue's own options, connection and loop.
import type { Logger } from "pino";
import { checkHandlingOptions } from "../dispatch/check-handling-options.js";
import { ALL_HANDLER_KEYS } from "../dispatch/handlers.js";
import type { IdempotencyStore } from "../idempotency/store.js";
import { defaultLogger, libraryLogger } from "../logging/logger.js";
import type { NotificationQueue } from "../queue/queue.js";
import { checkHealth, type HealthOptions, type ReceiverHealth } from "../receiver/health.js";
import { type CloseOptions, closeTimeoutOf } from "../shared/close-options.js";
import { rejectUnknownKeys } from "../shared/option-keys.js";
import { settlesWithin } from "../shared/time-limit.js";
import { loadOtelApi } from "../telemetry/load-api.js";
import { RUN_OPTION_KEYS, type RunOptions, type RunSettings, runSettings } from "./run-settings.js";

/**
 * Refuse an option `what` (the entry point) does not know: the options every worker takes, its
 * handlers, and the queue's own (`queueKeys`). Called first, before any other check.
 */
export function rejectUnknownWorkerKeys(what: string, options: unknown, queueKeys: Record<string, true>): void {
  rejectUnknownKeys(
    what,
    options,
    new Set([...Object.keys(RUN_OPTION_KEYS), ...Object.keys(queueKeys), ...ALL_HANDLER_KEYS]),
  );
}

/** The worker's logger: the one given (else pino to stdout), with the worker's redaction. */
export function workerLogger(options: Pick<RunOptions, "logger" | "redact">): Logger {
  return libraryLogger(options.logger ?? defaultLogger(), options.redact ?? {});
}

/**
 * The run settings of a worker on `store` (see `runSettings`), once its handlers and limits are
 * checked. A refused option rejects after `closeStore` (a store made by the worker must not keep the
 * process alive after the refusal). Also starts looking for the optional OpenTelemetry API.
 */
export function prepareRuns(
  options: RunOptions,
  store: IdempotencyStore,
  logger: Logger,
  closeStore?: () => Promise<void>,
): { settings: RunSettings; shutdown: AbortController } {
  const prepared = runSettings(options, store, logger);
  try {
    checkHandlingOptions(options, store, prepared.settings.leaseMs);
  } catch (err) {
    void closeStore?.();
    throw err;
  }
  loadOtelApi();
  return prepared;
}

/** `close()`'s default wait for running handlers. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 30_000;
/** After the handlers are told to stop: time for their jobs to go back (or roll back) before closing regardless. */
export const ABORT_GRACE_MS = 5_000;

/** `receiver.health()`'s shape, for a worker: its store and queue, and how many jobs it is running. */
export interface WorkerHealth extends ReceiverHealth {
  /** Jobs this worker is running now. */
  running: number;
  /** True once `close()` was called. */
  closed: boolean;
}

/** What a worker's `health()` and `close()` need from its queue's loop. */
export interface WorkerLoop {
  store: IdempotencyStore;
  /** The queue's server, pinged as a receiver pings its queue. */
  queue: Pick<NotificationQueue, "ping">;
  concurrency: number;
  /** Jobs running here now. */
  running(): number;
  /** False while the loop takes no jobs (see `WorkerHealthSource.taking`). */
  taking(): boolean;
  /** Stop taking jobs; settles once every job taken has settled. */
  stop(): Promise<unknown>;
  /** The controller of the run settings' `shutdown` signal: aborted past the close's time limit. */
  shutdown: AbortController;
  /** After the jobs: let go of what the worker holds (connections, timers, listeners). */
  release(): Promise<void>;
}

/** A worker's `health()` and `close()`, the same whichever queue it works. */
export interface WorkerControls {
  /** Pings the store and the queue within `timeoutMs`; `ok` is false while either is down, once closed, and while no jobs are taken. */
  health(options?: HealthOptions): Promise<WorkerHealth>;
  /** Stop taking jobs, wait up to `timeoutMs` for the running ones, then abort them (see `closeWorker`). The same promise on every call. */
  close(options?: CloseOptions): Promise<boolean>;
}

export function workerControls(loop: WorkerLoop): WorkerControls {
  let closing: Promise<boolean> | undefined;
  return {
    async health(options) {
      // Store and queue pinged at once, each within the time-out, as a receiver's health does. Not ok
      // while either is down, and not ok while the worker takes no jobs: a load balancer or an
      // orchestrator's probe should replace a worker that is up but idle for good.
      const health = await checkHealth(
        loop.store,
        loop.queue,
        options,
        { inFlight: loop.running, maxInFlight: loop.concurrency },
        // A worker's jobs may be of ordered lanes: the ones a dead letter holds are reported.
        { lanes: true },
      );
      const closed = closing !== undefined;
      return { ...health, ok: health.ok && !closed && loop.taking(), running: loop.running(), closed };
    },
    close(limit) {
      return (closing ??= closeWorker(loop, closeTimeoutOf(limit, DEFAULT_CLOSE_TIMEOUT_MS)));
    },
  };
}

/**
 * Stop taking jobs and wait up to `timeoutMs` for the running ones. Past it, their handlers are told to
 * stop (`ctx.signal` aborts) and their jobs get `ABORT_GRACE_MS` to go back to the queue, unused, for
 * another worker. True when every running handler finished in time.
 */
async function closeWorker(loop: WorkerLoop, timeoutMs: number): Promise<boolean> {
  const finished = loop.stop();
  const drained = await settlesWithin(finished, timeoutMs);
  if (!drained) {
    loop.shutdown.abort(new Error("worker closing"));
    await settlesWithin(finished, ABORT_GRACE_MS);
  }
  await loop.release();
  return drained;
}

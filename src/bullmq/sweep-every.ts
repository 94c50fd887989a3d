import { Queue } from "bullmq";
import type { Logger } from "pino";
import type { IdempotencyStore } from "../idempotency/store.js";
import type { RedisClient } from "../redis/fail-fast-connection.js";
import { optionError } from "../shared/errors.js";
import type { NotificationJobData } from "../worker/job-data.js";
import { DEFAULT_JOB_OPTIONS } from "./bullmq-queue.js";
import type { QueueLedger } from "./queue-ledger.js";
import { DEFAULT_SWEEP_MIN_AGE_MS, sweepQueued } from "./sweep-queued.js";

export const DEFAULT_SWEEP_EVERY_MS = 30_000;

export interface SweepTarget {
  connection: RedisClient;
  name: string;
  prefix: string | undefined;
  ledger: QueueLedger;
  store: IdempotencyStore;
  logger: Logger;
}

/**
 * Run `sweepQueued` every `everyMs` (0: never), one sweep at a time, until the returned stop is
 * called. A copy is looked at once it is older than the interval (at most 10 s): a receiver may still
 * be adding its job. A sweep that fails (Redis away) is logged and tried again next time.
 */
export function sweepEvery(everyMs: number, target: SweepTarget): () => Promise<void> {
  if (!Number.isFinite(everyMs) || everyMs < 0)
    throw optionError(
      new RangeError(`createWorker: sweepQueuedEveryMs must be 0 (off) or a positive number, got ${everyMs}`),
      "MW_INVALID_OPTION",
      "sweepQueuedEveryMs",
    );
  if (everyMs === 0) return async () => {};
  let queue: Queue<NotificationJobData> | undefined;
  let running: Promise<void> | undefined;
  const sweep = async () => {
    if (!queue) {
      queue = new Queue<NotificationJobData>(target.name, {
        connection: target.connection,
        ...(target.prefix ? { prefix: target.prefix } : {}),
        defaultJobOptions: DEFAULT_JOB_OPTIONS,
      });
      // Errors reach the sweep as rejected calls; without a listener they would crash the process.
      queue.on("error", () => {});
    }
    try {
      const result = await sweepQueued({
        queue: { queue, ledger: target.ledger },
        store: target.store,
        olderThanMs: Math.min(everyMs, DEFAULT_SWEEP_MIN_AGE_MS),
        // However often it sweeps, a lane a receiver just woke waits out that receiver's add of its job.
        wokenGraceMs: DEFAULT_SWEEP_MIN_AGE_MS,
      });
      // Each only for a real loss: a copy whose job is gone, a lane with waiting notifications and no job to run them.
      if (result.requeued > (result.lanes ?? 0) + (result.restored ?? 0))
        target.logger.warn(result, "notifications whose job was lost were queued again from the ledger");
      // A copy whose record was gone (a claim released after a failed enqueue, or lost) had no job to lose.
      if (result.restored)
        target.logger.info(result, "notifications whose record was gone were queued again from the ledger");
      if (result.lanes)
        target.logger.warn(result, "lanes whose job was lost were woken from the store, their notifications in order");
    } catch (err) {
      target.logger.warn({ err }, "sweep for lost jobs failed; trying again at the next one");
    }
  };
  const timer = setInterval(() => {
    running ??= sweep().finally(() => {
      running = undefined;
    });
  }, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
    await queue?.close().catch(() => {});
  };
}

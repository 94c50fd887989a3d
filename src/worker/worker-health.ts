import type { IdempotencyStore } from "../idempotency/store.js";
import type { NotificationQueue } from "../queue/queue.js";
import { checkHealth, type HealthOptions, type ReceiverHealth } from "../receiver/health.js";

/** `receiver.health()`'s shape, for a worker: its store and queue, and how many jobs it is running. */
export interface WorkerHealth extends ReceiverHealth {
  /** Jobs this worker is running now. */
  running: number;
  /** True once `close()` was called. */
  closed: boolean;
}

/** What a worker's health is read from, whichever queue it works. */
export interface WorkerHealthSource {
  store: IdempotencyStore;
  /** The queue's server, pinged as a receiver pings its queue. */
  queue: Pick<NotificationQueue, "ping">;
  concurrency: number;
  running: () => number;
  /** False while the worker takes no jobs: closed, or its loop stopped (not started, or ended on an error). */
  taking: () => boolean;
  closed: () => boolean;
}

/**
 * Ping the worker's store and queue at once (each within the time-out, as a receiver's health does).
 * Not ok while either is down, and not ok while the worker takes no jobs: a load balancer or an
 * orchestrator's probe should replace a worker that is up but idle for good.
 */
export async function workerHealth(source: WorkerHealthSource, options?: HealthOptions): Promise<WorkerHealth> {
  const health = await checkHealth(
    source.store,
    source.queue,
    options,
    { inFlight: source.running, maxInFlight: source.concurrency },
    // A worker's jobs may be of ordered lanes: the ones a dead letter holds are reported.
    { lanes: true },
  );
  const closed = source.closed();
  return { ...health, ok: health.ok && !closed && source.taking(), running: source.running(), closed };
}

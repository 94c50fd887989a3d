import { settlesWithin } from "../shared/time-limit.js";

/** `close()`'s default wait for running handlers. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 30_000;
/** After the handlers are told to stop: time for their jobs to go back (or roll back) before closing regardless. */
export const ABORT_GRACE_MS = 5_000;

/** What a worker's close needs from its queue. */
export interface ClosingWorker {
  /** Stop taking jobs; settles once every job taken has settled. */
  stop(): Promise<unknown>;
  /** Aborts the running handlers' `ctx.signal`. */
  shutdown: AbortController;
  /** After the jobs: let go of what the worker holds (connections, timers, listeners). */
  release(): Promise<void>;
}

/**
 * Stop taking jobs and wait up to `timeoutMs` for the running ones. Past it, their handlers are told to
 * stop (`ctx.signal` aborts) and their jobs get `ABORT_GRACE_MS` to go back to the queue, unused, for
 * another worker. True when every running handler finished in time.
 */
export async function closeWorker(worker: ClosingWorker, timeoutMs: number): Promise<boolean> {
  const finished = worker.stop();
  const drained = await settlesWithin(finished, timeoutMs);
  if (!drained) {
    worker.shutdown.abort(new Error("worker closing"));
    await settlesWithin(finished, ABORT_GRACE_MS);
  }
  await worker.release();
  return drained;
}

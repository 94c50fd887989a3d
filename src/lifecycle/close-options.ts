/** The one argument every `close()` takes: the receiver's, a worker's, a queue's, a store's. */
export interface CloseOptions {
  /** Longest the close waits for work in flight (handlers, background writes) before giving up on it. */
  timeoutMs?: number;
}

/**
 * What `close()` accepts: `{ timeoutMs }`, or the bare number of milliseconds the receiver and the
 * worker took before 0.1.0 (deprecated, still honoured).
 */
export type CloseLimit = CloseOptions | number;

/** The time limit a `close(limit)` was given, else `fallback`. */
export function closeTimeoutOf(limit: CloseLimit | undefined, fallback: number): number {
  const given = typeof limit === "number" ? limit : limit?.timeoutMs;
  if (given === undefined) return fallback;
  if (typeof given !== "number" || Number.isNaN(given) || given < 0) {
    throw new RangeError(`close: timeoutMs must be a number of milliseconds, 0 or more, got ${String(given)}`);
  }
  return given;
}

import { coded, optionError } from "./errors.js";
/** The one argument every `close()` takes: the receiver's, a worker's, a queue's, a store's. */
export interface CloseOptions {
  /** Longest the close waits for work in flight (handlers, background writes) before giving up on it. */
  timeoutMs?: number;
}

/** The time limit a `close(options)` was given, else `fallback`. */
export function closeTimeoutOf(options: CloseOptions | undefined, fallback: number): number {
  // Plain JavaScript may still pass the bare number the receiver and the worker took before 0.1.0:
  // read as options it would be no limit at all, so it is refused with the form to use instead.
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw coded(
      new TypeError(
        `close: pass { timeoutMs: ${String(options)} }, not ${typeof options === "number" ? "a bare number" : String(options)}`,
      ),
      "MW_CLOSE_OPTIONS",
    );
  }
  const given = options?.timeoutMs;
  if (given === undefined) return fallback;
  if (typeof given !== "number" || Number.isNaN(given) || given < 0) {
    throw optionError(
      new RangeError(`close: timeoutMs must be a number of milliseconds, 0 or more, got ${String(given)}`),
      "MW_INVALID_TIMEOUT",
      "timeoutMs",
    );
  }
  return given;
}

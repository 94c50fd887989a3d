/** A queue at its limit refuses work with this; the receiver answers 503 "overloaded" with Retry-After. */
export class QueueFullError extends Error {
  override name = "QueueFullError";
  constructor(limit: number) {
    super(`queue is full (${limit} notifications waiting)`);
  }
}

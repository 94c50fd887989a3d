import PQueue from "p-queue";

/** The `backpressure` option: how much work a receiver takes on before it answers 503 "overloaded". */
export interface BackpressureOptions {
  /** Notifications past intake and not yet answered (claiming, running, enqueueing). Default 1000. */
  maxInFlight?: number;
  /** Handlers run at once for synchronous handling. Default: no bound but `maxInFlight`. */
  concurrency?: number;
  /** With `concurrency`: requests waiting for a handler slot. Default `concurrency * 10`. */
  maxPending?: number;
}

/**
 * Past this many notifications in flight a process is only queueing work it cannot finish in time:
 * each waits longer for its store calls and its turn on the event loop, until whole bursts time out.
 * A sender's retry later costs less than that.
 */
export const DEFAULT_MAX_IN_FLIGHT = 1000;

/**
 * The receiver's load shedding, one mechanism: a count of notifications in flight with its limit and,
 * with `concurrency`, slots for synchronous handlers (p-queue): the answer still waits for the handler,
 * but only `concurrency` handlers run at once and only `maxPending` requests wait for a slot.
 */
export function handlerSlots({
  maxInFlight = DEFAULT_MAX_IN_FLIGHT,
  concurrency,
  maxPending = concurrency === undefined ? Number.POSITIVE_INFINITY : concurrency * 10,
}: BackpressureOptions = {}) {
  const queue = concurrency === undefined ? undefined : new PQueue({ concurrency });
  let inFlight = 0;
  return {
    maxInFlight,
    inFlight: () => inFlight,
    /** Takes a place for one notification, or false when the receiver should shed it. */
    enter(): boolean {
      if (inFlight >= maxInFlight || (queue && queue.size >= maxPending)) return false;
      inFlight++;
      return true;
    },
    /** Gives back the place `enter` took. */
    leave(): void {
      inFlight--;
    },
    run: <T>(task: () => Promise<T>): Promise<T> => (queue ? (queue.add(task) as Promise<T>) : task()),
  };
}

export type HandlerSlots = ReturnType<typeof handlerSlots>;

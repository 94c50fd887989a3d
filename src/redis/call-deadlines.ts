import { MerchantWebhooksError } from "../shared/errors.js";
import { eventLoopLag, holdLagSampler } from "../shared/event-loop-lag.js";

export class CallTimeoutError extends MerchantWebhooksError {
  override name = "CallTimeoutError";
  constructor(message: string) {
    super("MW_REDIS_CALL_TIMEOUT", message);
  }
}

interface Pending {
  readonly deadline: number;
  /** `eventLoopLag()` when the call was made. */
  readonly lagAtStart: number;
  settled: boolean;
  readonly expire: (lagMs: number) => void;
}

/**
 * Deadlines for the calls of one connection, with one timer in all instead of a timer and a race per
 * call. Every call gets the same time limit, so deadlines come in the order the calls are made: a
 * queue whose head expires first, and one timer set for that head, is enough. The timer is cleared
 * when no call is outstanding, so it never holds the process open.
 *
 * A call's deadline moves out by this process's own event-loop delay since the call was made, up to
 * `maxLagMs`: on a loaded machine the answer is often in the socket, unread, while our timers run
 * first, and a deadline that counted that time would report a healthy Redis as down. Only time in
 * which we could have read an answer and none came counts against the limit.
 */
export function callDeadlines(maxLagMs = 5_000): <T>(task: Promise<T>, deadline: number) => Promise<T> {
  let queue: Pending[] = [];
  let head = 0;
  let outstanding = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let releaseSampler: (() => void) | undefined;

  /** When `pending` expires, given the delay seen since it was made. */
  const dueAt = (pending: Pending, lagNow: number) =>
    pending.deadline + Math.min(maxLagMs, Math.max(0, lagNow - pending.lagAtStart));

  function arm(): void {
    while (head < queue.length && queue[head]!.settled) head++;
    if (head < queue.length) {
      timer ??= setTimeout(expireDue, Math.max(0, dueAt(queue[head]!, eventLoopLag()) - performance.now()));
    }
  }

  function expireDue(): void {
    timer = undefined;
    const now = performance.now();
    const lagNow = eventLoopLag();
    const due: Pending[] = [];
    while (head < queue.length && (queue[head]!.settled || dueAt(queue[head]!, lagNow) <= now)) {
      const pending = queue[head++]!;
      if (!pending.settled) due.push(pending);
    }
    // Timers run before sockets are read: an answer that came in during this turn is read after this
    // and before `setImmediate`, so a call expires only once the socket had its chance.
    if (due.length > 0) {
      setImmediate(() => {
        const lagThen = eventLoopLag();
        for (const pending of due) if (!pending.settled) settle(pending).expire(lagThen - pending.lagAtStart);
      });
    }
    arm();
  }

  function settle(pending: Pending): Pending {
    pending.settled = true;
    if (--outstanding === 0) {
      clearTimeout(timer);
      timer = undefined;
      queue = [];
      head = 0;
      releaseSampler?.();
      releaseSampler = undefined;
    }
    return pending;
  }

  function enqueue(pending: Pending): void {
    outstanding++;
    const last = queue[queue.length - 1];
    if (!last || last.deadline <= pending.deadline) queue.push(pending);
    else {
      // Rare: a call that waited for the connection has an earlier deadline than calls sent meanwhile.
      let at = queue.length;
      while (at > head && queue[at - 1]!.deadline > pending.deadline) at--;
      queue.splice(at, 0, pending);
      clearTimeout(timer);
      timer = undefined;
    }
    arm();
  }

  /** Rejects if `task` has not settled by `deadline` (a `performance.now()` time); the task keeps running, its late outcome ignored. */
  return function beforeDeadline<T>(task: Promise<T>, deadline: number): Promise<T> {
    releaseSampler ??= holdLagSampler();
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = {
        deadline,
        lagAtStart: eventLoopLag(),
        settled: false,
        expire: (lagMs) => reject(new CallTimeoutError(noAnswer(lagMs))),
      };
      enqueue(pending);
      task.then(
        (value) => {
          if (pending.settled) return;
          settle(pending);
          resolve(value);
        },
        (error: unknown) => {
          if (pending.settled) return;
          settle(pending);
          reject(error);
        },
      );
    });
  };
}

function noAnswer(lagMs: number): string {
  const lag = Math.round(lagMs);
  return lag > 0
    ? `no answer within the time limit (plus ${lag} ms of this process's event-loop delay, not counted)`
    : "no answer within the time limit";
}

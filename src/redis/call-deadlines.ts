import { MerchantWebhooksError } from "../shared/errors.js";
import { eventLoopLag, holdLagSampler } from "../shared/event-loop-lag.js";

export class CallTimeoutError extends MerchantWebhooksError {
  override name = "CallTimeoutError";
  constructor(message: string) {
    super("MW_REDIS_CALL_TIMEOUT", message);
  }
}

/**
 * One call under a deadline. Its owner sets `settled` once the call has its outcome; until then, past
 * the deadline, `expire` is called once.
 */
export interface WatchedCall {
  readonly deadline: number;
  /** `eventLoopLag()` when the call was made. */
  readonly lagAtStart: number;
  settled: boolean;
  expire(lagMs: number): void;
}

/** A command that can be failed from outside, as ioredis's `Command` can (`reject`). */
export interface Rejectable {
  reject(error: Error): void;
}

/** A command under a deadline: past it, the command itself is rejected, so no promise wraps it. */
class WatchedCommand implements WatchedCall {
  settled = false;
  constructor(
    public command: Rejectable,
    readonly deadline: number,
    readonly lagAtStart: number,
  ) {}
  expire(lagMs: number): void {
    this.command.reject(new CallTimeoutError(noAnswer(lagMs)));
  }
}

/** The deadlines of one connection's calls. */
export interface CallDeadlines {
  /** Rejects if `task` has not settled by `deadline` (a `performance.now()` time); the task keeps running, its late outcome ignored. */
  <T>(task: Promise<T>, deadline: number): Promise<T>;
  /**
   * Watch a command sent now: past `deadline` and not yet `settled` (which the caller sets when its
   * answer or error arrives), the command is rejected with `CallTimeoutError`. The caller may point
   * the watch at another command that continues the call (`command`).
   */
  watch(command: Rejectable, deadline: number): WatchedCall & { command: Rejectable };
}

/**
 * Deadlines for the calls of one connection, with one timer in all instead of a timer and a race per
 * call. Every call gets the same time limit, so deadlines come in the order the calls are made: a
 * queue whose head expires first, and one timer set for that head, is enough.
 *
 * A call marks itself settled (a field, no callback): the queue drops settled calls from its head as
 * new ones come in and when its timer fires, and the timer, re-armed for the oldest unsettled call,
 * stops (with the delay sampler) once a firing finds none, so a busy connection neither sets nor
 * clears a timer per call. The timer is unref'd: an outstanding call is held open by its socket.
 *
 * A call's deadline moves out by this process's own event-loop delay since the call was made, up to
 * `maxLagMs`: on a loaded machine the answer is often in the socket, unread, while our timers run
 * first, and a deadline that counted that time would report a healthy Redis as down. Only time in
 * which we could have read an answer and none came counts against the limit.
 */
export function callDeadlines(maxLagMs = 5_000): CallDeadlines {
  let queue: Array<WatchedCall | undefined> = [];
  let head = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The time (`performance.now()`) the timer is set for. */
  let armedFor = 0;
  let releaseSampler: (() => void) | undefined;
  /** Expired calls waiting for their `setImmediate`: the sampler is kept for their messages. */
  let expiring = 0;

  /** When `call` expires, given the delay seen since it was made. */
  const dueAt = (call: WatchedCall, lagNow: number) =>
    call.deadline + Math.min(maxLagMs, Math.max(0, lagNow - call.lagAtStart));

  /**
   * Let go of the settled calls at the head; when none is left and `idle` (the timer found nothing
   * outstanding), of the timer and the sampler too. A call made meanwhile keeps both: a connection
   * with one call at a time would otherwise set and clear them for each.
   */
  function dropSettled(idle: boolean): void {
    while (head < queue.length && queue[head]!.settled) queue[head++] = undefined;
    if (head < queue.length) {
      // Keep the array from growing without end under steady traffic.
      if (head > 1024 && head * 2 > queue.length) {
        queue = queue.slice(head);
        head = 0;
      }
      return;
    }
    queue = [];
    head = 0;
    if (!idle) return;
    clearTimeout(timer);
    timer = undefined;
    if (expiring === 0) {
      releaseSampler?.();
      releaseSampler = undefined;
    }
  }

  /** Set the timer for the head's deadline, unless it is set for that time or earlier already. */
  function arm(): void {
    if (head === queue.length) return;
    const due = dueAt(queue[head]!, eventLoopLag());
    if (timer !== undefined && armedFor <= due) return;
    clearTimeout(timer);
    armedFor = due;
    timer = setTimeout(expireDue, Math.max(0, due - performance.now()));
    timer.unref();
  }

  function expireDue(): void {
    timer = undefined;
    const now = performance.now();
    const lagNow = eventLoopLag();
    const due: WatchedCall[] = [];
    while (head < queue.length) {
      const call = queue[head]!;
      if (!call.settled && dueAt(call, lagNow) > now) break;
      queue[head++] = undefined;
      if (!call.settled) due.push(call);
    }
    // Timers run before sockets are read: an answer that came in during this turn is read after this
    // and before `setImmediate`, so a call expires only once the socket had its chance.
    if (due.length > 0) {
      expiring++;
      setImmediate(() => {
        const lagThen = eventLoopLag();
        expiring--;
        for (const call of due) {
          if (call.settled) continue;
          call.settled = true;
          call.expire(lagThen - call.lagAtStart);
        }
        dropSettled(true);
      });
    }
    dropSettled(true);
    arm();
  }

  /** Ready for a call made now: the head cleared of settled calls, the delay sampler running. */
  function prepare(): void {
    dropSettled(false);
    releaseSampler ??= holdLagSampler();
  }

  function enqueue(call: WatchedCall): void {
    const last = queue[queue.length - 1];
    if (head === queue.length || last!.deadline <= call.deadline) queue.push(call);
    else {
      // Rare: a call that waited for the connection has an earlier deadline than calls sent meanwhile.
      let at = queue.length;
      while (at > head && queue[at - 1]!.deadline > call.deadline) at--;
      queue.splice(at, 0, call);
    }
    arm();
  }

  const beforeDeadline = <T>(task: Promise<T>, deadline: number): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      prepare();
      const call: WatchedCall = {
        deadline,
        lagAtStart: eventLoopLag(),
        settled: false,
        expire: (lagMs) => reject(new CallTimeoutError(noAnswer(lagMs))),
      };
      enqueue(call);
      task.then(
        (value) => {
          if (call.settled) return;
          call.settled = true;
          resolve(value);
        },
        (error: unknown) => {
          if (call.settled) return;
          call.settled = true;
          reject(error);
        },
      );
    });

  return Object.assign(beforeDeadline, {
    watch(command: Rejectable, deadline: number) {
      prepare();
      const call = new WatchedCommand(command, deadline, eventLoopLag());
      enqueue(call);
      return call;
    },
  });
}

function noAnswer(lagMs: number): string {
  const lag = Math.round(lagMs);
  return lag > 0
    ? `no answer within the time limit (plus ${lag} ms of this process's event-loop delay, not counted)`
    : "no answer within the time limit";
}

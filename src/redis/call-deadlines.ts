export class CallTimeoutError extends Error {
  override name = "CallTimeoutError";
}

interface Pending {
  readonly deadline: number;
  settled: boolean;
  readonly expire: () => void;
}

/**
 * Deadlines for the calls of one connection, with one timer in all instead of a timer and a race per
 * call. Every call gets the same time limit, so deadlines come in the order the calls are made: a
 * queue whose head expires first, and one timer set for that head, is enough. The timer is cleared
 * when no call is outstanding, so it never holds the process open.
 */
export function callDeadlines(): <T>(task: Promise<T>, deadline: number) => Promise<T> {
  let queue: Pending[] = [];
  let head = 0;
  let outstanding = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  function arm(): void {
    while (head < queue.length && queue[head]!.settled) head++;
    if (head < queue.length) timer ??= setTimeout(expireDue, Math.max(0, queue[head]!.deadline - performance.now()));
  }

  function expireDue(): void {
    timer = undefined;
    const now = performance.now();
    while (head < queue.length && (queue[head]!.settled || queue[head]!.deadline <= now)) {
      const pending = queue[head++]!;
      if (!pending.settled) settle(pending).expire();
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
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = {
        deadline,
        settled: false,
        expire: () => reject(new CallTimeoutError("no answer within the time limit")),
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

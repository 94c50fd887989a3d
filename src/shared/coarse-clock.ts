// Time limits that are many and short-lived (a body read, a statement) watched by one interval per
// limit instead of a timer each: a timer per task cost a timer list made, scheduled and dropped
// (about a tenth of the Fastify plugin's own CPU for body reads).

/** Ticks of a clock per time limit: a task is given up on between its limit and 1.1 times it. */
const TICKS = 10;

/**
 * The tasks under way with one time limit, watched by one interval for all of them. The interval
 * ticks `TICKS` times per limit and stops once a tick finds nothing to watch; a task expires at the
 * first tick at least the limit after it started. Tasks are kept in the order they started, which is
 * the order they expire in.
 */
class CoarseClock {
  private tick = 0;
  private readonly tasks = new Map<() => void, number>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly periodMs: number) {}

  /** Call `expire` once the limit has passed, unless `unwatch(expire)` comes first. */
  watch(expire: () => void): void {
    this.tasks.set(expire, this.tick + TICKS + 1);
    this.timer ??= setInterval(() => this.sweep(), this.periodMs).unref();
  }

  unwatch(expire: () => void): void {
    this.tasks.delete(expire);
  }

  private sweep(): void {
    this.tick++;
    if (this.tasks.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    for (const [expire, due] of this.tasks) {
      if (due > this.tick) break;
      this.tasks.delete(expire);
      expire();
    }
  }
}

const clocks = new Map<number, CoarseClock>();

/** The one clock of a time limit (ms), made on first use. */
export function clockFor(limitMs: number): CoarseClock {
  let clock = clocks.get(limitMs);
  if (!clock) clocks.set(limitMs, (clock = new CoarseClock(Math.max(1, Math.ceil(limitMs / TICKS)))));
  return clock;
}

/**
 * Settles as `task` does, or rejects with `error()` once `ms` have passed (at most a tenth later), on
 * the limit's shared clock. The task itself is never cancelled: this only stops waiting for it.
 */
export function withinCoarseLimit<T>(task: Promise<T>, ms: number, error: () => Error): Promise<T> {
  const clock = clockFor(ms);
  return new Promise<T>((resolve, reject) => {
    const expire = () => reject(error());
    clock.watch(expire);
    task.then(
      (value) => {
        clock.unwatch(expire);
        resolve(value);
      },
      (err: unknown) => {
        clock.unwatch(expire);
        reject(err);
      },
    );
  });
}

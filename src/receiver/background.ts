import type { Logger } from "pino";
import { settlesWithin } from "../shared/time-limit.js";

/** Work a receiver keeps doing after it answered: completion records being retried, recordings. */
export interface Background {
  track(what: string, task: Promise<unknown>): void;
  /**
   * Wait for tracked work, at most `timeoutMs`. Resolves false if some was abandoned, each piece logged
   * by name: a completion left unwritten means a redelivery may run its handler again.
   */
  settle(timeoutMs: number): Promise<boolean>;
  /** How many tracked pieces are still running. */
  size(): number;
}

export function background(logger: Logger): Background {
  const pending = new Map<Promise<unknown>, string>();
  return {
    size: () => pending.size,
    track(what, task) {
      pending.set(task, what);
      task.finally(() => pending.delete(task)).catch(() => {});
    },
    async settle(timeoutMs) {
      await settlesWithin(Promise.allSettled([...pending.keys()]), timeoutMs);
      if (pending.size === 0) return true;
      logger.warn(
        { abandoned: [...pending.values()], timeout_ms: timeoutMs },
        "receiver closed with background work unfinished",
      );
      return false;
    },
  };
}

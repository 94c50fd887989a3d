import { Queue } from "bullmq";
import type { Cluster, Redis } from "ioredis";
import { withTimeout } from "../shared/time-limit.js";
import { observeFailedSet } from "../telemetry/telemetry.js";

/** Longest a count of the failed set may take at collection time (the worker's connection never gives up). */
const COUNT_TIMEOUT_MS = 1_000;

/**
 * Have the `webhook.queue.failed` gauge report this queue's failed (dead-letter) set. The count is
 * taken only when a metric reader collects, through a Queue on the worker's own connection, made then.
 * Returns the function that stops it.
 */
export function gaugeFailedSet(name: string, prefix: string | undefined, client: Redis | Cluster): () => Promise<void> {
  let queue: Queue | undefined;
  const stop = observeFailedSet({
    queue: name,
    count() {
      if (!queue) {
        queue = new Queue(name, { connection: client, ...(prefix ? { prefix } : {}) });
        queue.on("error", () => {});
      }
      return withTimeout(queue.getFailedCount(), COUNT_TIMEOUT_MS, () => new Error("failed set not counted in time"));
    },
  });
  return async () => {
    stop();
    await queue?.close();
  };
}

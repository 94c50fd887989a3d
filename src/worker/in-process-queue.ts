import { type InProcessQueue, type InProcessQueueOptions, queueInMemory } from "../queue/in-process-queue.js";
import { carriedJobData } from "./carried-job-data.js";
import { jobDataFor } from "./job-data.js";
import { sealingKey } from "./seal.js";

/**
 * Acknowledge after accepting into memory, then run handlers with bounded concurrency (see
 * `queueInMemory`). The data a durable store keeps with each claim is the job data every queue keeps
 * (job-data.ts): sealed with `encryptionKey`, or card numbers masked; card verification data never.
 */
export function inProcessQueue(options: InProcessQueueOptions = {}): InProcessQueue {
  const key = options.encryptionKey === undefined ? undefined : sealingKey(options.encryptionKey);
  const keys = key ? [key] : [];
  return queueInMemory(options, {
    carry: (item) => JSON.stringify(jobDataFor(item, key)),
    readCarried: (claim) => carriedJobData(claim, keys),
  });
}

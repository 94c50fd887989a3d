import type { ClaimedOrStale } from "../idempotency/store.js";
import { type NotificationJobData, type QueuedJob, readQueuedJob } from "./job-data.js";
import type { SealingKey } from "./seal.js";

/**
 * The job data a lane notification's receiver kept with it in the lane, opened and validated as a
 * job's is. It must name the record and order key it was handed over under: data moved from another
 * record (by whoever can write to the store) is not run; a sealed one is bound to both by its seal as
 * well. Undefined when it does not, or no key opens it, or no schema accepts it.
 */
export function carriedJobData(claim: ClaimedOrStale, keys: readonly SealingKey[]): QueuedJob | undefined {
  if (claim.carried === undefined) return undefined;
  let data: Partial<NotificationJobData>;
  try {
    data = JSON.parse(claim.carried) as Partial<NotificationJobData>;
  } catch {
    return undefined;
  }
  if (data?.id !== claim.id || data.order?.key !== claim.order?.key) return undefined;
  const receivedAt = typeof data.receivedAt === "number" ? data.receivedAt : Date.now();
  const read = readQueuedJob(data, keys, receivedAt);
  return "job" in read ? read.job : undefined;
}

import type { ClaimedOrStale } from "../idempotency/store.js";
import { carriedJobData } from "./carried-job-data.js";
import { type QueuedJob, readQueuedJob } from "./job-data.js";
import type { SealingKey } from "./seal.js";

/** A lane's notification's job could not be looked up (a timeout, a paused or failing-over queue): not a job that is gone. */
export const UNREACHABLE = Symbol("unreachable");

/** A lane notification's job data as its queue keeps it, found by the transport (with whatever it keeps beside it). */
export interface FoundJobData {
  data: unknown;
  /** When it was queued: what stands in for a `receivedAt` the data does not carry. */
  since: number;
}

/**
 * Where a transport finds the job data of a lane's notification that the lane did not carry: its job,
 * or a copy the queue keeps. Undefined when it is gone; `UNREACHABLE` when the queue could not be asked.
 */
export type JobDataLookup<Found extends FoundJobData> = (id: string) => Promise<Found | undefined | typeof UNREACHABLE>;

/** A lane notification's data, read: `found` is the transport's find when the lane did not carry it. */
export interface HandedOver<Found extends FoundJobData> {
  job: QueuedJob;
  found?: Found;
}

/**
 * The data of a lane's notification handed over to another notification's job, to run it there: the
 * data its receiver kept with it in the lane (handed over with the claim), else the transport's find.
 * Undefined when it is gone or cannot be read (no key opens it, or no schema accepts it: as good as
 * gone here); `UNREACHABLE` when the transport could not ask.
 */
export async function handedOverData<Found extends FoundJobData>(
  claim: ClaimedOrStale,
  keys: readonly SealingKey[],
  lookUp: JobDataLookup<Found>,
): Promise<HandedOver<Found> | undefined | typeof UNREACHABLE> {
  const kept = carriedJobData(claim, keys);
  if (kept) return { job: kept };
  const found = await lookUp(claim.id);
  if (found === undefined || found === UNREACHABLE) return found;
  try {
    const read = readQueuedJob(found.data, keys, found.since);
    return "job" in read ? { job: read.job, found } : undefined;
  } catch {
    return undefined;
  }
}

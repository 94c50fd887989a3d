import type { ClaimRequest, ClaimResult, IdempotencyStore } from "../idempotency/store.js";
import { claimsInTransaction, type TransactionalClaim } from "../idempotency/transaction.js";
import type { NotificationJob } from "./job-data.js";
import type { RunSettings } from "./run-settings.js";

/**
 * The claim a worker makes for a job's notification: with its own owner token, taking over the
 * receiver's queued record at once (the job names it), and handed over from the receiver's claim when
 * the job says so. `attempt` is the queue's count of the run, when the record is to keep it.
 */
export function jobClaimRequest(
  own: NotificationJob,
  settings: RunSettings,
  owner: string,
  attempt: number | undefined,
): ClaimRequest {
  return {
    id: own.id,
    fingerprint: own.fingerprint,
    owner,
    leaseMs: settings.leaseMs,
    // A store claiming in a transaction bounds it on the server by this: a frozen worker's job is free again after it.
    handlerTimeoutMs: settings.timeoutMs,
    kind: "take",
    ...(attempt !== undefined ? { attempt } : {}),
    ...(own.order ? { order: own.order } : {}),
    ...(own.handoff ? { handoffFrom: own.handoff } : {}),
  };
}

/** A job's claim, and the transaction it was made in when the store claims in one (its handler runs in it). */
export interface JobClaim {
  claim: ClaimResult;
  transaction?: TransactionalClaim;
}

/** Claim as a receiver would: in a transaction with a store that claims in one. Rejects when the store cannot be reached. */
export async function claimJob(store: IdempotencyStore, request: ClaimRequest): Promise<JobClaim> {
  if (!claimsInTransaction(store)) return { claim: await store.claim(request) };
  const transaction = await store.claimInTransaction(request);
  return { claim: transaction.result, transaction };
}

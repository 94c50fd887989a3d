import type { ClaimedOrStale, ClaimHandle, IdempotencyStore } from "../idempotency/store.js";
import type { TransactionalClaim } from "../idempotency/transaction.js";
import type { Logger } from "../logging/logger.js";

/**
 * Let a claim go at once, unrun and uncounted as a failure: a lease of 0, so it goes back in line at
 * its position (see `return_lapsed_holder`) and whoever comes next need not wait the lease out; a
 * claim made in a transaction is rolled back instead. Taken over meanwhile, the record refuses it.
 */
export async function letGo(
  store: IdempotencyStore,
  claim: ClaimHandle,
  transaction: TransactionalClaim | undefined,
): Promise<void> {
  if (transaction) await transaction.rollback("job_unreachable");
  else await Promise.resolve(store.extend(claim, 0)).catch(() => {});
}

/**
 * A notification handed to a job with nothing to run it from (its job and every copy gone, or its data
 * unreadable), on every queue alike: its record fails (`job_missing`), so it no longer holds up its
 * subscription and a redelivery by the sender runs it afresh; logged at warn level, since no handler
 * failed. The queue keeps it as a dead letter first where it can (see `JobTransport.lookUps`).
 * `handedOver`: the claim is a lane's next, handed to this job (not the job's own).
 */
export async function failUnrunnable(
  store: IdempotencyStore,
  claim: ClaimHandle,
  transaction: TransactionalClaim | undefined,
  logger: Logger,
  jobId: string,
  handedOver: boolean,
): Promise<void> {
  // A lane's next claimed in a transaction is failed in it (see `failWithin`): rolled back first, it
  // would be back in its lane, free to another job of the lane, until its failure was recorded after
  // the rollback, and that job would fail it (and say so) a second time. A job's own claim (maybe a
  // dead letter's, looked at late) is rolled back, its failure recorded after as for any failed run:
  // never over a dead letter.
  if (transaction?.failWithin && handedOver) await transaction.failWithin("job_missing");
  else if (transaction) await transaction.rollback("job_missing");
  else await Promise.resolve(store.fail(claim, "job_missing")).catch(() => {});
  logger.warn(
    { notification_id: claim.id, job_id: jobId, outcome: "job_missing" },
    "queued notification has no job to run from",
  );
}

/**
 * A run that lost its claim (its worker froze or was cut off past its lease or its transaction's bound,
 * and the record went to another run), on every queue alike: whether that other run completed the
 * notification, as the record says (completed, under another claim's owner token). Then nothing
 * failed and nothing is left to do here: no attempt is counted, no job failed, no dead letter kept,
 * and one line says so at info level. Otherwise the record's new holder settles it.
 */
export async function completedElsewhere(
  store: IdempotencyStore,
  claim: ClaimedOrStale,
  logger: Logger,
  jobId: string,
): Promise<boolean> {
  const record = await Promise.resolve(store.get(claim.order ? { id: claim.id, order: claim.order } : claim.id)).catch(
    () => undefined,
  );
  if (record?.state !== "completed" || record.owner === claim.owner) return false;
  logger.info(
    { notification_id: claim.id, job_id: jobId, attempt: claim.attempt, outcome: "completed_elsewhere" },
    "notification completed by another worker while this run's claim was lost; nothing to do",
  );
  return true;
}

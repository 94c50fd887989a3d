import type { Claimed } from "./transport.js";

/**
 * Which run of its notification a claimed run is: one count for the record, the job and `ctx.attempt`,
 * on every queue. A claim asked for with the queue's count of the job (`JobTransport.attempt`) carries
 * it. A claim handed over from a lane was counted by the lane, one more run over the receiver's queued
 * mark; when the notification has a job of its own that its queue counts (`jobCount`: pg-boss's
 * retries so far, plus one), that count is the run's, and the record is set to it in the claim's
 * transaction. Rejects when that write fails (the store is out of reach).
 */
export async function runAttempt({ claim, transaction, countedByQueue }: Claimed, jobCount?: number): Promise<number> {
  const attempt = countedByQueue || jobCount === undefined ? claim.attempt : jobCount;
  if (claim.attempt !== attempt && transaction?.countAttempt) await transaction.countAttempt(attempt);
  return attempt;
}

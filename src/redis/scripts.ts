/**
 * The idempotency record's state machine as Lua, one script per transition (`lua/*.lua`, the shared steps in
 * `lua/includes/`). Each script touches
 * exactly one key (the record's hash), so it runs atomically on one node and works unchanged on Redis
 * Cluster: no hash tag is needed in the key prefix. (The ordered variants in `ordered-scripts.ts` touch
 * two keys, which share a hash tag.)
 *
 * Leases are measured on the server's clock (`TIME`), never the caller's: receivers on machines whose
 * clocks disagree still agree on whether a lease is live. Every transition after a claim checks the
 * owner token, which is what makes a late write harmless: a command that timed out on the client and
 * reaches Redis afterwards (or a process that paused past its lease) can only change a record it
 * still owns.
 *
 * Hash fields: state, fingerprint, owner, leaseUntil (epoch ms; processing, or queued at claim: the
 * hand-off lease), attempts,
 * answer (JSON, completed only), error (failed only), carried (an in-process queue's job data, kept
 * by KEEP while processing or failed).
 */
import { SCRIPTS } from "./lua/scripts.generated.js";

/**
 * ARGV: fingerprint, owner, leaseMs, takeQueued ('1' or '0'), retentionMs, handoff (owner token or ''),
 * toQueue ('1', '0' or absent), attempt (a worker's queue count of this run, '' or absent: see
 * `TakeClaim.attempt`), carried (an in-process queue's job data to keep as KEEP does, '' or absent: see
 * `RunClaim.carried`). A different fingerprint is a conflict only against a completed record.
 * With toQueue the record is written queued, its owner and lease kept as the hand-off lease, so no
 * `markQueued` follows the job's add.
 * Returns attempt (an integer: claimed, the common answer, kept the shortest to send and read) |
 * {'queued_at_claim', attempt} | {'kept', attempt} | {'processing', retryAfterMs} | {'queued'} | {'completed', answerJson} |
 * {'conflict'}.
 */
export const CLAIM = SCRIPTS.CLAIM;

/**
 * ARGV: owner, leaseMs, retentionMs. A lease of 0 ends the claim at once (see `abandon`); a record
 * queued at claim has its hand-off lease ended the same way. Returns 1 or 0.
 */
export const EXTEND = SCRIPTS.EXTEND;

/** ARGV: owner, answerJson, retentionMs. Returns 1 or 0. */
export const COMPLETE = SCRIPTS.COMPLETE;

/** ARGV: owner, error, retentionMs. Returns 1 or 0. */
export const FAIL = SCRIPTS.FAIL;

/** ARGV: owner, retentionMs. Returns 1 or 0. */
export const MARK_QUEUED = SCRIPTS.MARK_QUEUED;

/** ARGV: owner. Deletes a processing or queued record its owner gives up. Returns 1 or 0. */
export const RELEASE = SCRIPTS.RELEASE;

/**
 * ARGV: owner, data. Keeps an in-process queue's job data in the processing record its owner holds
 * (the `carried` field, cleared by COMPLETE, gone with RELEASE). Returns 1 or 0.
 */
export const KEEP = SCRIPTS.KEEP;

/**
 * ARGV: owner, leaseMs. Takes over a processing record whose lease lapsed and which keeps data (KEEP):
 * the new owner, a lease, one attempt more. Returns {attempt, data}, or 0 when it is no such record.
 */
export const RESUME = SCRIPTS.RESUME;

/**
 * ARGV: owner, retentionMs. Marks a failed record that keeps data (KEEP) to run again: processing under
 * a lease already lapsed, for a receiver's sweep to RESUME. Returns 1 or 0.
 */
export const RERUN = SCRIPTS.RERUN;

/** Names under which the scripts are registered on the client with `defineCommand`. */
export const COMMANDS = {
  mwIdemClaim: CLAIM,
  mwIdemExtend: EXTEND,
  mwIdemComplete: COMPLETE,
  mwIdemFail: FAIL,
  mwIdemMarkQueued: MARK_QUEUED,
  mwIdemRelease: RELEASE,
  mwIdemKeep: KEEP,
  mwIdemResume: RESUME,
  mwIdemRerun: RERUN,
} as const;

export type CommandName = keyof typeof COMMANDS;

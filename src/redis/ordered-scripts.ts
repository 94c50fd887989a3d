import { SCRIPTS } from "./lua/scripts.generated.js";

/**
 * The record transitions of `scripts.ts` (their steps shared through `lua/includes/`) for notifications claimed in order. Each touches four keys:
 * KEYS[1] the record's hash, KEYS[2] its order key's hash, KEYS[3] the key's lane, KEYS[4] the
 * key's carried data (a hash from record key to the job data its receiver kept with it, see
 * ORDERED_CLAIM), which share a hash tag (see `orderedKeys`), so the order check and the claim are one
 * atomic script on one node, on Redis Cluster too. ARGV are those of the unordered script, plus more
 * on a claim. The data sits in a hash of its own, not in the record's, so a record keeps Redis's
 * compact encoding after its data is gone.
 *
 * Order hash fields: position (newest completed, sortable form), owner, leaseUntil and heldSince (the
 * claim holding the key), lastHeldMs (how long the last hold took), runnerUntil (the key's lane has
 * a runner, a worker draining its lane or a drain job on its way, until then; see
 * ORDERED_MARK_WAITING), wokenBy (the receiver's claim whose append set runnerUntil for a drain job
 * it is about to queue; dropped once a worker takes the runner over), drain (the record key of the
 * notification whose job was queued to run the lane last, by a receiver's wake or the sweep's; see
 * `lane-index.ts`). Record hash fields added:
 * position, holdsKey ('1' while this claim holds the key; a stale claim does not), waiting (its member
 * in the lane, while it is in it).
 */

/**
 * ARGV: fingerprint, owner, leaseMs, takeQueued ('1' or '0'), retentionMs, position ('' for none), id,
 * mode, handoff (owner token or ''), record key prefix (KEYS[1] without the id), the lane's
 * maximum length (a 'queue' claim beyond it answers {'processing', leaseMs, 'full'}), the job data to
 * carry ('' for none), the lane's dead-letter policy ('hold' or '', kept on the order hash by a
 * 'queue' claim; see ORDERED_FAIL_IN_LANE).
 *
 * After the record's own checks, a position older than the key's newest completed one is stale (the
 * record is claimed, the key is not). Then, by mode:
 * - 'direct' (a receiver running the handler itself): another live holder of the key answers
 *   processing, with the time its last holder took (bounded by the lease) as the expected wait.
 * - 'queue' (a receiver handing the notification to a durable queue): the record joins the key's
 *   lane in position order; the key is not held and never makes it wait.
 * - 'worker' (a queue worker): a live holder answers processing; otherwise the worker runs the list's
 *   first waiting notification, which may be an older notification than its own job's (its own record then stays
 *   queued, in the list, for whoever holds the key next).
 * Returns those of CLAIM, with {'claimed', attempt, previousPosition or '', [id, position]},
 * {'stale', attempt, newestPosition, [id, position, carried data]} and {'processing', retryAfterMs,
 * 'key'}; id, position and data are there when the claim is on another record than the one asked for.
 * A 'queue' claim with data to carry keeps it (KEYS[4]) and hands the record over at once, as
 * ORDERED_MARK_WAITING does after a claim without, answering {'waiting', attempt, previousPosition or
 * '', wake}: the receiver's append is one script, and the worker the record goes to gets the data
 * with it.
 */
export const ORDERED_CLAIM = SCRIPTS.ORDERED_CLAIM;

/**
 * KEYS: the order key's hash, its lane, its carried data. ARGV: owner, leaseMs, retentionMs, record key prefix.
 * Hand the key, if free, to the first waiting notification of its list, claimed for `owner`: the worker that just
 * finished a notification of the key runs the next one at once. Returns {} when there is none (or the
 * key is held, or the head is still being handed to the queue), else as ORDERED_CLAIM with id and position.
 */
export const ORDERED_NEXT = SCRIPTS.ORDERED_NEXT;

/**
 * KEYS: the order key's hash, its lane, its carried data. ARGV: owner, record key prefix. Undo a hand-over by
 * ORDERED_NEXT whose answer never arrived: if `owner` holds the key, the notification it was handed
 * goes back in line at its position and the key is free, at once instead of after a lease. Returns 1
 * when there was one to undo. A stale hand-over (which holds no key) is left to its lease.
 */
export const ORDERED_ABANDON_NEXT = SCRIPTS.ORDERED_ABANDON_NEXT;

/**
 * ARGV: owner, leaseMs, retentionMs. The key is part of the claim: if another notification's claim
 * holds it now, the claim is lost (0). A lease of 0 ends both at once.
 */
export const ORDERED_EXTEND = SCRIPTS.ORDERED_EXTEND;

/** ARGV: owner, answerJson, retentionMs. Moves the key's position forward to the record's, never back. */
export const ORDERED_COMPLETE = SCRIPTS.ORDERED_COMPLETE;

/**
 * ARGV: owner, answerJson, retentionMs, then the next claim's owner, leaseMs and the record key prefix.
 * ORDERED_COMPLETE and, in the same step, ORDERED_NEXT for the runner: returns 0 when the completion
 * was refused (nothing changed), 1 when completed with no waiting notification handed over, else as ORDERED_NEXT.
 */
export const ORDERED_COMPLETE_NEXT = SCRIPTS.ORDERED_COMPLETE_NEXT;

/** ARGV: owner, error, retentionMs. The position stays: a failed notification did not happen. */
export const ORDERED_FAIL = SCRIPTS.ORDERED_FAIL;

/**
 * ARGV: owner, error, retentionMs, id. ORDERED_FAIL for a run of the lane that spent its attempts (a
 * dead letter). On a key whose lane holds (its order hash's `hold`, written by the receivers' claims
 * with `onDeadLetter: "hold"`), the record goes back to its place at the head of the lane,
 * failed, answering 2: `first_waiter` answers 'held' for it, so nothing behind it is handed out until
 * its redriven job's claim takes it (own id first) or a person completes it (discard).
 */
export const ORDERED_FAIL_IN_LANE = SCRIPTS.ORDERED_FAIL_IN_LANE;

/**
 * ARGV: owner, error, retentionMs, delayMs, leaseMs, id. A run of the lane that failed with attempts
 * left: the record goes back into its key's lane at its position, queued, with its data and
 * its attempts, to be retried from `retryAt` (now + delayMs). Until then `first_waiter` answers
 * 'later' for it, so nothing behind it runs (position order), and the key keeps its runner mark past
 * the retry, so appends meanwhile queue no drain job: the runner that put it back comes again then.
 */
export const ORDERED_RETRY = SCRIPTS.ORDERED_RETRY;

/** ARGV: owner, retentionMs. The record stays in its key's lane, if it is in one, for a worker. */
export const ORDERED_MARK_QUEUED = SCRIPTS.ORDERED_MARK_QUEUED;

/**
 * ARGV: owner, retentionMs, leaseMs. MARK_QUEUED for a notification that joins its key's lane
 * without a job of its own, answering {1, wake}: wake is 1 when the key has no runner (no live holder,
 * no live runnerUntil), and the caller must then queue one drain job; the runner flag is set for
 * `leaseMs` in the same step, so other appends meanwhile queue none. A runner clears the flag in the
 * same step as it finds the list empty (ORDERED_NEXT), so an append is either found by the runner or
 * wakes a new one. The flag is marked as this claim's (wokenBy) until a worker takes the runner over,
 * so a receiver whose drain job could not be queued clears it on release (ORDERED_RELEASE) and the
 * next append wakes a runner at once. {0, 0} when the claim is no longer the caller's.
 */
export const ORDERED_MARK_WAITING = SCRIPTS.ORDERED_MARK_WAITING;

/**
 * ARGV: owner. A runner flag this claim's append set (ORDERED_MARK_WAITING) goes too: its drain job
 * was never queued (the queue refused it), and a flag left standing would keep the next appends from
 * waking one for a whole lease. A worker that took the runner over has dropped wokenBy: its flag stays.
 */
export const ORDERED_RELEASE = SCRIPTS.ORDERED_RELEASE;

/**
 * Registered with `defineCommand`: four keys each, three for those on the key alone (`orderedKeys`),
 * five for the two that append to a lane (the claim and the lane append), whose fifth is the lanes
 * index of the lane's slot (`lane-index.ts`).
 */
export const ORDERED_COMMANDS = {
  mwIdemOrderedClaim: ORDERED_CLAIM,
  mwIdemOrderedNext: ORDERED_NEXT,
  mwIdemOrderedAbandonNext: ORDERED_ABANDON_NEXT,
  mwIdemOrderedExtend: ORDERED_EXTEND,
  mwIdemOrderedComplete: ORDERED_COMPLETE,
  mwIdemOrderedCompleteNext: ORDERED_COMPLETE_NEXT,
  mwIdemOrderedFail: ORDERED_FAIL,
  mwIdemOrderedFailInLane: ORDERED_FAIL_IN_LANE,
  mwIdemOrderedRetry: ORDERED_RETRY,
  mwIdemOrderedMarkQueued: ORDERED_MARK_QUEUED,
  mwIdemOrderedMarkWaiting: ORDERED_MARK_WAITING,
  mwIdemOrderedRelease: ORDERED_RELEASE,
} as const;

export type OrderedCommandName = keyof typeof ORDERED_COMMANDS;

/**
 * The keys of a record claimed in order and of its order key. Both carry the order key as their hash
 * tag, so Redis Cluster puts a subscription's records and its position in one slot; braces and `%` in
 * the order key are escaped so the tag cannot end early or differ between the two.
 *
 * The lane's sorted set keeps its older name, `:waiting` (as does the records' `waiting` field): a
 * renamed key would strand the lanes of a deployment that upgrades with notifications waiting in them.
 */
export function orderedKeys(
  prefix: string,
  orderKey: string,
  id: string,
): { record: string; order: string; waiting: string; carried: string; recordPrefix: string } {
  const tag = `{${orderKey.replace(/[{}%]/g, (c) => encodeURIComponent(c))}}`;
  const recordPrefix = `${prefix}${tag}:n:`;
  return {
    record: recordPrefix + id,
    order: `${prefix}${tag}:order`,
    waiting: `${prefix}${tag}:waiting`,
    carried: `${prefix}${tag}:carried`,
    recordPrefix,
  };
}

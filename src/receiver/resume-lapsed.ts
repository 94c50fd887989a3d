import type { ClaimedRun } from "../dispatch/run-claimed.js";
import type { ClaimHandle, IdempotencyStore, KeptNotifications } from "../idempotency/store.js";
import type { NotificationQueue } from "../queue/queue.js";
import type { Verdict } from "./answer-and-log.js";
import { logFieldsOf, logInProcess } from "./claim-and-dispatch.js";
import { inProcessRun } from "./in-process-run.js";
import type { ResolvedOptions } from "./options.js";

/** Lapsed kept records asked for at a time (`kept.lapsed`). */
const BATCH = 200;

/** The record's error when the data kept with it cannot be read (no key opens it, or it is no notification). */
export const KEPT_DATA_UNREADABLE = "kept_data_unreadable";

export interface LapsedSweep {
  /** Look once: take over each lapsed claim with kept data and queue its run here. Resolves to how many. */
  sweep(): Promise<number>;
  /** Stop the interval (a sweep under way stops before its next record). */
  stop(): void;
}

/**
 * What a receiver's sweep (`kept.lapsed`) and the CLI's redrive (which lists the dead letters) need of
 * a store: the kept notifications, and the list.
 */
export type KeepingStore = IdempotencyStore & { kept: KeptNotifications; list: NonNullable<IdempotencyStore["list"]> };

/** Whether the store keeps an in-process queue's notifications and can list its records to find them again. */
export const keepsNotifications = (store: IdempotencyStore): store is KeepingStore =>
  store.kept !== undefined && store.list !== undefined;

/**
 * A receiver's sweep for the notifications another in-process queue accepted on the same store and
 * did not finish: records still processing whose lease lapsed (their receiver died or froze) and
 * which keep their data (`kept.keep`). Each is taken over with `kept.resume` (the store's owner token
 * fences it: one receiver wins, and the one that lost its claim no longer completes it or starts its
 * handler) and run in this receiver's queue as an accepted notification, its attempt counted on.
 * Runs at once, then every `everyMs`; each sweep takes no more than the queue accepts.
 */
export function resumeLapsed(
  resolved: ResolvedOptions & { store: KeepingStore },
  queue: NotificationQueue,
  /** The queue's `readCarried`: the notification in the data kept with a claim. */
  readCarried: NonNullable<NotificationQueue["readCarried"]>,
  work: {
    nextOwner: () => string;
    retryCompletion: (write: () => Promise<unknown>) => void;
    logQueued: (verdict: Verdict, started: number) => void;
  },
  everyMs: number,
): LapsedSweep {
  const { store, logger } = resolved;
  let stopped = false;
  let sweeping: Promise<number> | undefined;

  /** Take over one lapsed record and queue its run; false when it was not one, or could not be queued. */
  const resumeOne = async (id: string): Promise<boolean> => {
    const owner = work.nextOwner();
    const sent = performance.now();
    const taken = await store.kept.resume(id, owner, resolved.leaseMs);
    if (!taken) return false;
    const { claim, attempt } = taken;
    const read = readCarried({ status: "claimed", ...claim, attempt, carried: taken.carried });
    if (!read) {
      // No retry reads it either: a dead letter with its reason, never a handler run on a guess.
      await Promise.resolve(store.fail(claim, KEPT_DATA_UNREADABLE)).catch(() => {});
      logger.error(
        { notification_id: id, outcome: "invalid", reason: KEPT_DATA_UNREADABLE },
        "kept notification could not be read (no encryptionKey opens it, or it is not a notification): record failed",
      );
      return false;
    }
    const fields = { ...logFieldsOf(read.notification), attempt };
    const run: ClaimedRun = {
      store,
      handlers: resolved.options,
      notification: read.notification,
      claim,
      attempt,
      headers: read.headers,
      receivedAt: read.receivedAt,
      timeoutMs: resolved.timeoutMs,
      leaseMs: resolved.leaseMs,
      ctxLogger: resolved.ctxLogger,
      platform: resolved.options.platform,
      leaseFrom: sent,
    };
    const lost = () =>
      logger.warn({ ...fields, outcome: "lost_claim" }, "claim taken over while queued; the other delivery runs it");
    try {
      await queue.enqueue({
        id,
        fingerprint: read.fingerprint,
        notification: read.notification,
        headers: read.headers,
        receivedAt: read.receivedAt,
        owner,
        run: inProcessRun(run, { retryCompletion: work.retryCompletion }, logInProcess(work.logQueued, fields), lost),
      });
    } catch {
      // Full or closing: its lease ends at once, so the next sweep (here or elsewhere) takes it.
      await giveBack(store, claim);
      return false;
    }
    logger.warn(
      { ...fields, reason: "claim lapsed" },
      "accepted notification taken over from a receiver whose claim lapsed (it died or froze): running it here",
    );
    return true;
  };

  // Read along the store's index of kept records by lease: a sweep reads the lapsed ones, not every
  // processing record. Each taken over leaves that range (its lease moves on); a batch in which none
  // was (another receiver took them, or the store's clock says not yet) ends the sweep.
  const sweepOnce = async (): Promise<number> => {
    let resumed = 0;
    for (;;) {
      const ids = await store.kept.lapsed(BATCH);
      let taken = 0;
      for (const id of ids) {
        if (stopped) return resumed;
        // A queue that refuses now refuses the rest too: they wait for the next sweep.
        if (
          queue.ping &&
          !(await Promise.resolve(queue.ping()).then(
            () => true,
            () => false,
          ))
        )
          return resumed;
        if (await resumeOne(id)) taken++;
      }
      resumed += taken;
      if (ids.length < BATCH || taken === 0 || stopped) return resumed;
    }
  };

  const sweep = () => {
    // One sweep at a time: the interval's next waits for the one under way.
    sweeping ??= sweepOnce().finally(() => {
      sweeping = undefined;
    });
    return sweeping;
  };
  const failed = (err: unknown) => logger.warn({ err }, "sweep for lapsed in-process claims failed; tried again later");
  const timer = setInterval(() => void sweep().catch(failed), everyMs);
  timer.unref?.();
  void sweep().catch(failed);
  return {
    sweep,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/** End a taken-over claim's lease at once, so the record is found lapsed again. */
async function giveBack(store: IdempotencyStore, claim: ClaimHandle): Promise<void> {
  await Promise.resolve(store.extend(claim, 0)).catch(() => {});
}

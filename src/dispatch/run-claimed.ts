import type { Logger } from "pino";
import { OUTCOMES } from "../answer/outcomes.js";
import type { ClaimHandle, IdempotencyStore } from "../idempotency/store.js";
import type { TransactionalClaim } from "../idempotency/transaction.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { withTimeout } from "../shared/time-limit.js";
import type { ClaimedOrder } from "./claimed-order.js";
import { handlerContext } from "./handler-context.js";
import type { HandlerObserver } from "./handler-observer.js";
import {
  type Handler,
  type HandlerContext,
  type HandlerHooks,
  handlerFor,
  type SubscriptionHandlers,
} from "./handlers.js";
import { HandlerTimeoutError, LeaseLostError, runHandler } from "./run-handler.js";

/** Everything a claimed notification's run needs: the same for a receiver and a queue worker. */
export interface ClaimedRun {
  store: IdempotencyStore;
  handlers: SubscriptionHandlers & HandlerHooks;
  notification: SubscriptionNotification;
  /** The claim: complete, fail and extend succeed only while its owner token holds the record. */
  claim: ClaimHandle;
  attempt: number;
  headers: Readonly<Record<string, string>>;
  receivedAt: number;
  timeoutMs: number;
  leaseMs: number;
  /** Base for `ctx.log`, with the receiver's redaction (see `handlerLogger`). */
  ctxLogger: Logger;
  /** With `ordering`: the claim's key, and whether the store found the notification stale. */
  order?: ClaimedOrder | undefined;
  /**
   * Claimed inside a database transaction (see `TransactionalStore`): the handler writes into it, and
   * the outcome is its commit or rollback instead of the store's complete or fail.
   */
  transaction?: TransactionalClaim | undefined;
  /**
   * `performance.now()` when the request that gave the claim its current lease was sent. With it, the
   * handler starts only while at least half the lease is left: a claim answered late, or one whose
   * caller spent long on something else (a worker looking up a waiter's job), is confirmed first with
   * an extension, measured the same way. Without it the caller vouches for the lease.
   */
  leaseFrom?: number | undefined;
}

/** Where the receiver and the worker part ways. */
export interface ClaimedHooks {
  /** Aborts `ctx.signal` besides the time limit and a lost claim (a worker that stops waiting on close). */
  stop?: AbortSignal;
  /**
   * The claim went to another process: mid-run, before the handler could start (not confirmed live
   * with time left), or at completion (refused). Default: a failed run mid-run, a `LeaseLostError`
   * before the start, the outcome as it was at completion. The worker postpones its job.
   */
  leaseLost?: () => Promise<never>;
  /** A failed run, once recorded. Default: report it. The worker rethrows, so BullMQ's retries apply. */
  failed?: (err: unknown) => never;
  /**
   * The handler's effect happened but the store did not take the completion: keep retrying it, in the
   * background (a receiver, which answers at once) or while the job holds its place (a worker).
   */
  retryCompletion: (write: () => Promise<unknown>) => unknown;
  /** Runs the handler in its span (see `observeHandler`). Default: runs it as it is. */
  observeHandler?: HandlerObserver;
  /**
   * Called once the completion has been sent to the store, before its answer. A worker draining a
   * subscription sends its take-next right behind it: on the same connection the store applies the two
   * in that order, and the round trips overlap.
   */
  completionSent?: () => void;
}

export type ClaimedOutcome =
  | { outcome: "processed" | "unhandled" | "stale" }
  | { outcome: "handler_failed" | "handler_timeout"; err: unknown };

/** Run the handler for a claimed notification, then record its outcome under the claim's owner. */
export async function runClaimed(run: ClaimedRun, hooks: ClaimedHooks): Promise<ClaimedOutcome> {
  const { store, notification, claim, order, transaction } = run;
  const id = notification.id;
  // A stale notification never reaches its event's handler (nor onAny): `onStale` (if any) runs in its place.
  const handler = order?.stale ? order.onStale : handlerThenOnAny(run.handlers, notification.event_type);
  if (handler && !transaction && !(await leaseLeftToStart(run))) {
    if (hooks.leaseLost) return hooks.leaseLost();
    throw new LeaseLostError();
  }
  if (handler) {
    const stop = hooks.stop;
    let ctx: HandlerContext | undefined;
    const runIt = () =>
      runHandler(
        handler,
        notification,
        (signal) =>
          (ctx = handlerContext({
            notification,
            attempt: run.attempt,
            headers: run.headers,
            receivedAt: run.receivedAt,
            signal: stop ? () => AbortSignal.any([signal(), stop]) : signal,
            baseLogger: run.ctxLogger,
            previousPosition: order?.newest,
            transaction: transaction?.transaction,
          })),
        {
          timeoutMs: run.timeoutMs,
          leaseMs: run.leaseMs,
          // A transaction's claim has no lease to lose: it lasts as long as the connection does.
          extendLease: transaction ? async () => true : async () => store.extend(claim, run.leaseMs),
        },
      );
    try {
      if (hooks.observeHandler) {
        await hooks.observeHandler(
          { notificationId: id, eventType: notification.event_type, attempt: run.attempt },
          runIt,
        );
      } else await runIt();
    } catch (err) {
      if (hooks.leaseLost && err instanceof LeaseLostError) return hooks.leaseLost();
      const failed = err instanceof HandlerTimeoutError ? "handler_timeout" : "handler_failed";
      // A failed record is taken over by the next delivery; if this write is lost, the lease lapsing does the same.
      if (transaction) await transaction.rollback(failed);
      else {
        const recorded = await Promise.resolve(store.fail(claim, failed)).catch(() => undefined);
        // Refused: the record is another process's now, and its outcome is not this run's to report.
        if (recorded === false && hooks.leaseLost) return hooks.leaseLost();
      }
      if (ctx) await reportFailure(run, err, ctx);
      if (hooks.failed) hooks.failed(err);
      return { outcome: failed, err };
    }
  }
  const outcome = order?.stale ? "stale" : handler ? "processed" : "unhandled";
  const answer = { processed: true, message: OUTCOMES[outcome].message };
  if (transaction) {
    try {
      await transaction.commit(answer);
    } catch (err) {
      // Nothing committed: neither the effects nor the record. The sender's retry (or the job's) runs it again.
      if (hooks.failed) hooks.failed(err);
      return { outcome: "handler_failed", err };
    }
    return { outcome };
  }
  let completed: boolean;
  try {
    const completion = store.complete(claim, answer);
    hooks.completionSent?.();
    completed = await completion;
  } catch {
    // While the lease lives a redelivery meets 409; an outage longer than the lease leaves a window (see docs/stores.md).
    await hooks.retryCompletion(async () => store.complete(claim, answer));
    return { outcome };
  }
  // Refused: another process holds the record now (the lease lapsed under a freeze or a slow store).
  // Its owner settles it; a worker must not end its job as if this run had (see `processJob`).
  if (!completed && hooks.leaseLost) return hooks.leaseLost();
  return { outcome };
}

/**
 * Whether the claim is live with at least half its lease left, so the handler may start: at once when
 * the lease's request went out recently enough, else after an extension that answers in time. Half a
 * lease covers a handler that has no heartbeat (its time limit is at most half the lease, see
 * `runHandler`); one that has a heartbeat gets its first renewal a third of a lease in.
 */
async function leaseLeftToStart(run: ClaimedRun): Promise<boolean> {
  if (run.leaseFrom === undefined) return true;
  const margin = run.leaseMs / 2;
  if (run.leaseMs - (performance.now() - run.leaseFrom) >= margin) return true;
  const sent = performance.now();
  const held = await Promise.resolve(run.store.extend(run.claim, run.leaseMs)).catch(() => false);
  return held && run.leaseMs - (performance.now() - sent) >= margin;
}

/**
 * The typed handler, then `onAny`, as one run under one time limit and one `ctx`: `onAny` sees only
 * notifications their handler processed, and a failure of either fails the notification.
 */
function handlerThenOnAny(handlers: SubscriptionHandlers & HandlerHooks, eventType: string): Handler | undefined {
  const typed = handlerFor(handlers, eventType);
  const onAny = handlers.onAny;
  if (!typed || !onAny) return typed ?? onAny;
  return async (notification, ctx) => {
    await typed(notification, ctx);
    await onAny(notification, ctx);
  };
}

/**
 * Tell `onError` about a failed run. It is awaited (an alert should leave before the sender's retry),
 * but bounded by the handler time limit, and whatever it throws is logged: a broken alerting hook must
 * neither hold the answer nor change it.
 */
async function reportFailure(run: ClaimedRun, err: unknown, ctx: HandlerContext): Promise<void> {
  const onError = run.handlers.onError;
  if (!onError) return;
  const hook = Promise.resolve().then(() => onError(err, run.notification, ctx));
  try {
    // A time limit of 0 means none, as for the handler.
    await (run.timeoutMs > 0 ? withTimeout(hook, run.timeoutMs, () => new HandlerTimeoutError(run.timeoutMs)) : hook);
  } catch (hookErr) {
    run.ctxLogger.error({ err: hookErr, notification_id: run.notification.id }, "onError hook failed");
  }
}

/** Owner tokens unique per claim without a random draw per notification: one UUID per process part. */
export function ownerTokens(): (scope?: string) => string {
  const instance = crypto.randomUUID();
  let sequence = 0;
  return (scope) => (scope === undefined ? `${instance}:${++sequence}` : `${instance}:${scope}:${++sequence}`);
}

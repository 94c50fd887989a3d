// Running a claimed notification, the same for the receiver and every queue worker: the handler its
// event selects, the `ctx` it gets (`handlerContext`), the run under its limits, and the outcome
// recorded under the claim's owner.
import type { Logger } from "pino";
import { positionToRfc3339 } from "../idempotency/position.js";
import type { ClaimHandle, ClaimResult, IdempotencyStore, OrderClaim } from "../idempotency/store.js";
import type { TransactionalClaim, TransactionHandle } from "../idempotency/transaction.js";
import { SUBSCRIPTION_EVENTS } from "../schema/event-types.js";
import { type AnyEventObject, eventObjectOf, type SubscriptionNotification } from "../schema/index.js";
import { MerchantWebhooksError } from "../shared/errors.js";
import { withTimeout } from "../shared/time-limit.js";
import type { HandlerObserver } from "./handler-observer.js";
import {
  type EventHandlerKey,
  HANDLER_KEYS,
  type Handler,
  type HandlerContext,
  type HandlerHooks,
  type SubscriptionHandlers,
} from "./handlers.js";
import { OUTCOMES } from "./outcomes.js";
import type { PlatformHandle } from "./platform-handle.js";
import { failureOutcome, retryDecision, type SteeredFailure } from "./retry-decision.js";

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
  /** The platform client handlers get as `ctx.platform`, if the receiver was given one. */
  platform?: unknown;
  /**
   * `performance.now()` when the request that gave the claim its current lease was sent. With it, the
   * handler starts only while at least half the lease is left: a claim answered late, or one whose
   * caller spent long on something else (a worker looking up a waiting notification's job), is confirmed first with
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
  /**
   * Records a failed run in place of the store's `fail` (not inside a transaction): a worker puts a
   * notification of an ordered lane back in line for its retry (`lanes.retry`). False when refused.
   */
  recordFailure?: (failed: SteeredFailure | "handler_timeout", err: unknown) => Promise<boolean>;
  /** A failed run, once recorded. Default: report it. The worker rethrows, so BullMQ's retries apply. */
  failed?: (err: unknown) => never;
  /**
   * The handler's effect happened but the store did not take the completion: keep retrying it, in the
   * background (a receiver, which answers at once) or while the job holds its place (a worker).
   */
  retryCompletion: (write: () => Promise<unknown>) => unknown;
  /**
   * A handler's `RetryAfterError`: keep the claim for a run again after `delayMs` instead of failing
   * the record; true when it is kept (the in-process queue, which holds the claim meanwhile). Default:
   * the record fails like any run, and whoever retries it waits (see `retryDecision`).
   */
  holdForRetry?: (delayMs: number) => Promise<boolean>;
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
  | { outcome: SteeredFailure | "handler_timeout"; err: unknown };

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
            platform: run.platform,
          })),
        {
          timeoutMs: run.timeoutMs,
          leaseMs: run.leaseMs,
          // A transaction's claim has no lease to lose: it lasts as long as the connection does, unless
          // the transaction itself is lost under the handler.
          extendLease: transaction ? async () => true : async () => store.extend(claim, run.leaseMs),
          watchLoss: transaction?.watchLoss?.bind(transaction),
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
      const failed = err instanceof HandlerTimeoutError ? "handler_timeout" : failureOutcome(err);
      const decision = retryDecision(err);
      if (
        decision.retry === "after" &&
        hooks.holdForRetry &&
        !transaction &&
        (await hooks.holdForRetry(decision.delayMs))
      ) {
        if (ctx) await reportFailure(run, err, ctx);
        return { outcome: failed, err };
      }
      // A failed record is taken over by the next delivery; if this write is lost, the lease lapsing does the same.
      if (transaction) {
        await transaction.rollback(failed);
        // The server ends a claim's transaction that outlives its bound (its process froze) once another
        // run claims the record: that run settles it, and this one's failure is not one to report.
        if (hooks.leaseLost && (await heldElsewhere(store, claim))) return hooks.leaseLost();
      } else {
        const recorded = await Promise.resolve(
          hooks.recordFailure ? hooks.recordFailure(failed, err) : store.fail(claim, failed),
        ).catch(() => undefined);
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
      // Nothing committed: neither the effects nor the record. The sender's retry (or the job's) runs it
      // again, unless the commit failed because another run holds the record now (see above).
      if (hooks.leaseLost && (await heldElsewhere(store, claim))) return hooks.leaseLost();
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

/** Whether another run holds the claim's record now, or completed it. */
async function heldElsewhere(store: IdempotencyStore, claim: ClaimHandle): Promise<boolean> {
  const record = await Promise.resolve(store.get(claim.order ? { id: claim.id, order: claim.order } : claim.id)).catch(
    () => undefined,
  );
  return (
    record?.owner !== undefined &&
    record.owner !== claim.owner &&
    (record.state === "completed" || record.state === "processing")
  );
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
  const typed = handlers[handlerKeyFor(eventType)] as Handler | undefined;
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

interface HandlerContextInput {
  notification: SubscriptionNotification;
  attempt: number;
  headers: Readonly<Record<string, string>>;
  receivedAt: number;
  /** Made on first read: most handlers never look at the signal. */
  signal: () => AbortSignal;
  /** The redacting logger (`handlerLogger`) the per-notification child is made from. */
  baseLogger: Logger;
  /** With `ordering`, in the sortable form the store keeps. */
  previousPosition?: string | undefined;
  /** The open transaction of a store that claims in one (`ctx.transaction`). */
  transaction?: unknown;
  /** `ctx.platform`. */
  platform?: unknown;
}

/**
 * `ctx.event`: for a known event type the object its row names (possibly absent), so the handler's
 * type can say which it is; otherwise whichever event object the notification carries.
 */
function eventFor(notification: SubscriptionNotification): AnyEventObject | undefined {
  const type = notification.event_type;
  if (!Object.hasOwn(SUBSCRIPTION_EVENTS, type)) return eventObjectOf(notification)?.event;
  return notification.resource[SUBSCRIPTION_EVENTS[type as keyof typeof SUBSCRIPTION_EVENTS].eventObjectKey];
}

/**
 * A class rather than an object literal with getters: getters defined in a literal are closures made
 * per notification, each holding the scope of the call that made them, which under load pushed several
 * KB per request out of the young generation. Prototype getters are made once; per notification there
 * are only the fields.
 */
class NotificationContext implements HandlerContext {
  readonly id: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly headers: Readonly<Record<string, string>>;
  // An own property only when there is a previous position: `declare` keeps the class from adding it.
  declare readonly previousPosition?: string;
  // Likewise an own property only inside a store's transaction.
  declare readonly transaction: TransactionHandle;
  // And only with a platform client.
  declare readonly platform: PlatformHandle;
  readonly #notification: SubscriptionNotification;
  readonly #receivedAtMs: number;
  readonly #makeSignal: () => AbortSignal;
  readonly #baseLogger: Logger;
  #receivedAt: Date | undefined;
  #signal: AbortSignal | undefined;
  #log: Logger | undefined;

  constructor({
    notification,
    attempt,
    headers,
    receivedAt,
    signal,
    baseLogger,
    previousPosition,
    transaction,
    platform,
  }: HandlerContextInput) {
    if (transaction !== undefined) (this as { transaction?: unknown }).transaction = transaction;
    if (platform !== undefined) (this as { platform?: unknown }).platform = platform;
    if (previousPosition !== undefined)
      (this as { previousPosition?: string }).previousPosition = positionToRfc3339(previousPosition);
    this.#notification = notification;
    this.id = notification.id;
    this.eventType = notification.event_type;
    this.attempt = attempt;
    this.headers = headers;
    this.#receivedAtMs = receivedAt;
    this.#makeSignal = signal;
    this.#baseLogger = baseLogger;
  }

  get event(): AnyEventObject | undefined {
    return eventFor(this.#notification);
  }

  get signal(): AbortSignal {
    return (this.#signal ??= this.#makeSignal());
  }

  get receivedAt(): Date {
    return (this.#receivedAt ??= new Date(this.#receivedAtMs));
  }

  // Built on first use: a pino child costs more than the rest of ctx together.
  get log(): Logger {
    return (this.#log ??= this.#baseLogger.child({
      notification_id: this.id,
      event_type: this.eventType,
      attempt: this.attempt,
    }));
  }
}

/** The `ctx` a handler gets, the same in receivers and queue workers. */
export function handlerContext(input: HandlerContextInput): HandlerContext {
  return new NotificationContext(input);
}

export class HandlerTimeoutError extends MerchantWebhooksError {
  override name = "HandlerTimeoutError";
  constructor(ms: number) {
    super("MW_HANDLER_TIMEOUT", `handler did not finish within ${ms} ms`);
  }
}

export class LeaseLostError extends MerchantWebhooksError {
  override name = "LeaseLostError";
  constructor() {
    super("MW_LEASE_LOST", "the claim on this notification was lost to another process");
  }
}

export interface RunLimits {
  timeoutMs: number;
  leaseMs: number;
  /** Pushes the claim's lease forward; false when another process took the claim. */
  extendLease: () => Promise<boolean>;
  /** Given the run's stop, for a claim that can be lost otherwise than by its lease (a transaction). */
  watchLoss?: ((stop: (error: Error) => void) => void) | undefined;
}

/**
 * Run one handler under a time limit. A handler that returns without a promise is done there and
 * then, before any timer could have fired, so it costs no timer and no race. For one that returns a
 * promise, the limit counts from the call. The `AbortController` is made only when the handler reads
 * `ctx.signal` (or the run is stopped), and the lease gets a heartbeat only when the handler may
 * outlive it: with the defaults (10 s limit, 30 s lease) one timer is all an asynchronous handler costs.
 */
export async function runHandler(
  handler: Handler,
  notification: SubscriptionNotification,
  contextFor: (signal: () => AbortSignal) => HandlerContext,
  limits: RunLimits,
): Promise<void> {
  let controller: AbortController | undefined;
  const signal = () => (controller ??= new AbortController()).signal;
  const started = performance.now();
  const result = handler(notification, contextFor(signal));
  if (!isPromiseLike(result)) return;

  let rejectRun: (error: Error) => void = () => {};
  const stopped = new Promise<never>((_, reject) => {
    rejectRun = reject;
  });
  const stop = (error: Error) => {
    (controller ??= new AbortController()).abort(error);
    rejectRun(error);
  };

  limits.watchLoss?.(stop);
  const left = Math.max(0, limits.timeoutMs - (performance.now() - started));
  const timer =
    limits.timeoutMs > 0 ? setTimeout(() => stop(new HandlerTimeoutError(limits.timeoutMs)), left) : undefined;
  const needsHeartbeat = limits.timeoutMs === 0 || limits.timeoutMs > limits.leaseMs / 2;
  const heartbeat = needsHeartbeat
    ? setInterval(
        () => {
          limits.extendLease().then(
            (held) => held || stop(new LeaseLostError()),
            () => {}, // the store is unreachable: keep running; the lease may still hold
          );
        },
        Math.max(1, Math.floor(limits.leaseMs / 3)),
      )
    : undefined;
  heartbeat?.unref?.();

  try {
    await Promise.race([result, stopped]);
  } finally {
    clearTimeout(timer);
    clearInterval(heartbeat);
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === "object" && typeof (value as PromiseLike<unknown>).then === "function";
}

/** What the run of a notification claimed in order needs beside the claim itself. */
export interface ClaimedOrder {
  /** The store found it older than the key's newest completion: `onStale` runs instead of its handler. */
  stale: boolean;
  /** The key's newest completed position (sortable form): before this one, or after it when stale. */
  newest: string | undefined;
  onStale: Handler | undefined;
}

/** 409 reason and message when the notification's subscription, not its id, is held. */
export const SUBSCRIPTION_BUSY = "another notification of this subscription is being processed";

export function claimedOrder(
  order: OrderClaim | undefined,
  claim: Extract<ClaimResult, { status: "claimed" | "stale" }>,
  onStale: Handler | undefined,
): ClaimedOrder | undefined {
  if (!order) return undefined;
  return claim.status === "stale"
    ? { stale: true, newest: claim.newestPosition, onStale }
    : { stale: false, newest: claim.previousPosition, onStale };
}

/** The handler key an event_type goes to; anything unrecognised goes to `onUnknown`. */
export function handlerKeyFor(eventType: string): EventHandlerKey {
  return Object.hasOwn(HANDLER_KEYS, eventType) ? HANDLER_KEYS[eventType]! : "onUnknown";
}

import PQueue from "p-queue";
import { retryDecision } from "../dispatch/retry-decision.js";
import { retryInBackground } from "../dispatch/retry-in-background.js";
import {
  type ClaimedOutcome,
  type ClaimedRun,
  claimedOrder,
  LeaseLostError,
  ownerTokens,
  runClaimed,
  SUBSCRIPTION_BUSY,
} from "../dispatch/run-claimed.js";
import { listedAs } from "../idempotency/listed-as.js";
import {
  type ClaimBase,
  type ClaimedOrStale,
  type ClaimRequest,
  type ClaimResult,
  drainedLanes,
  type OrderClaim,
} from "../idempotency/store.js";
import { claimsInTransaction, type TransactionalClaim } from "../idempotency/transaction.js";
import { shownId } from "../logging/transform-payload.js";
import type { NotificationQueue, QueuedNotification } from "../queue/queue.js";
import { QueueFullError } from "../queue/queue-full-error.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { type ReceiveObservation, UNOBSERVED } from "../telemetry/observe-receive.js";
import { type LogFields, retryAfter, type Verdict, verdict } from "./answer-and-log.js";
import type { Background } from "./background.js";
import { inProcessRun, type LogRun } from "./in-process-run.js";
import { type BackpressureOptions, DEFAULT_MAX_IN_FLIGHT, type Ordering, type ResolvedOptions } from "./options.js";

/** An accepted notification, as intake hands it on. */
export interface Accepted {
  notification: SubscriptionNotification;
  /** The parsed body as received: the payload's fingerprint is of its JSON value. */
  body: Record<string, unknown>;
  headers: Record<string, string>;
  /** The tenant `authorizeSender` authorized the sender as: its records are kept apart from other tenants'. */
  tenant?: string;
  /** The payload's fingerprint, when intake took it already. */
  fingerprint?: string;
}

/**
 * A record's id or ordering key in the store: as given, or inside its tenant's namespace when a sender
 * check named one. The tenant is encoded, so it holds no `/` and no tenant's namespace spells another's:
 * tenant A sending B's next id under A's own merchant claims `A/id`, never B's `B/id`.
 */
export const inTenant = (tenant: string | undefined, key: string): string =>
  tenant === undefined ? key : `${encodeURIComponent(tenant)}/${key}`;

/**
 * The middle step: claim the notification's id, then run its handler now (under the backpressure
 * slots) or hand it to the queue. `logQueued` writes the line for a queued run that ends after the answer.
 *
 * Load is shed first, before any store call: a notification that finds `backpressure.maxInFlight`
 * others in flight (or every handler slot's queue full) is answered 503 "overloaded" and leaves no
 * record behind. A burst past what the process can serve is then refused as the process's own load,
 * not left to pile up until the store calls time out and the store is blamed.
 */
export function claimAndDispatch(
  resolved: ResolvedOptions,
  slots: HandlerSlots,
  work: Background,
  logQueued: (verdict: Verdict, started: number) => void,
): (accepted: Accepted, observation?: ReceiveObservation) => Promise<Verdict> {
  const { unavailableRetry } = resolved;
  const receiver: Receiving = {
    resolved,
    slots,
    logQueued,
    nextOwner: ownerTokens(),
    retryCompletion: (write) => work.track("completion record", retryInBackground(write)),
  };

  return (accepted, observation = UNOBSERVED) => {
    const fields = logFieldsOf(accepted.notification);
    // Shed load before claiming, so a refused notification leaves no record behind.
    if (!slots.enter())
      return Promise.resolve(
        verdict("overloaded", { ...fields, reason: "backpressure" }, { headers: unavailableRetry }),
      );
    // Not another async layer (a promise and a hop per request): the place is given back once the
    // verdict is reached, settled either way, before the caller's own continuation runs.
    const decided = claimThenDispatch(receiver, accepted, fields, observation);
    decided.then(slots.leave, slots.leave);
    return decided;
  };
}

/**
 * A notification's log line fields. The line's ids are the sender's text: one holding a card number is
 * not shown. Events of an `eventSchema` need not carry a subscription resource.
 */
export function logFieldsOf(notification: SubscriptionNotification): LogFields {
  const merchant = notification.resource?.merchant_id;
  const subscription = notification.resource?.id;
  return {
    notification_id: shownId(notification.id),
    event_type: notification.event_type,
    merchant_id: merchant === undefined ? undefined : shownId(merchant),
    subscription_id: subscription === undefined ? undefined : shownId(subscription),
  };
}

/** What every step reads: the resolved options, and what the receiver makes once for all its requests. */
interface Receiving {
  resolved: ResolvedOptions;
  /** Load shedding and, with `backpressure.concurrency`, the slots handlers run in. */
  slots: HandlerSlots;
  logQueued: (verdict: Verdict, started: number) => void;
  /** A fresh owner token per claim, so a lost lease's holder cannot settle the record it lost. */
  nextOwner: () => string;
  /** A completion the store did not take is retried in the background, which `close` waits for. */
  retryCompletion: (write: () => Promise<unknown>) => void;
}

/** What the store answered a claim with, and how the claim was made. */
interface Claimed {
  claim: ClaimResult;
  /** The claim's open transaction, when the handler's writes (or the queue's job) go into it. */
  transaction: TransactionalClaim | undefined;
  /** When the claim's request went out: its lease is counted from here, not from its answer. */
  claimSent: number | undefined;
}

/**
 * The steps in order: the record's id and ordering key in the sender's tenant, the payload's
 * fingerprint, the claim; a claim that is not ours is answered as it stands; ours becomes a run that
 * the queue takes or that runs here. Each step returns early with its verdict, so the sequence reads
 * as the request goes.
 */
async function claimThenDispatch(
  receiver: Receiving,
  accepted: Accepted,
  fields: LogFields,
  observation: ReceiveObservation,
): Promise<Verdict> {
  const { resolved } = receiver;
  const { notification, body, tenant } = accepted;
  const id = inTenant(tenant, notification.id);

  const order = orderOrMisconfigured(resolved.ordering, notification);
  if ("misconfigured" in order)
    return verdict("misconfigured", { ...fields, reason: order.misconfigured, err: order.err });
  if (order.order && tenant !== undefined) order.order = { ...order.order, key: inTenant(tenant, order.order.key) };
  // Node's HMAC answers synchronously: awaiting it anyway would cost a microtask hop per request.
  const fingerprintOf = resolved.fingerprint;
  const computed = accepted.fingerprint ?? fingerprintOf(body);
  const fingerprint = typeof computed === "string" ? computed : await computed;
  const owner = receiver.nextOwner();
  const { leaseMs, timeoutMs: handlerTimeoutMs } = resolved;
  // Kept with the record for the console's event-type and subscription filters.
  const listed = listedAs(notification.event_type, notification.resource?.id);
  // Bound for a lane: the store keeps the job data with the claim and hands the notification over
  // in the same step, so no `lanes.append` follows (see `AppendClaim.carried`); for an in-process
  // queue, kept with the claim, so no `kept.keep` follows (`RunClaim.carried`).
  const receivedAt = Date.now();
  const carried = carriedFor(
    resolved,
    accepted,
    { id, fingerprint, owner, order: order.order, receivedAt },
    observation,
  );
  const request = receiverClaim(
    resolved.options.queue?.durable === true,
    { id, fingerprint, owner, leaseMs, handlerTimeoutMs, listedAs: listed },
    order.order,
    carried,
  );

  const claimed = await claim(resolved, request, fields);
  if ("outcome" in claimed) return claimed;
  const ours = claimed.claim;
  if (!isOurs(ours)) return answerNotOurs(ours, fields, resolved.unavailableRetry);
  fields.attempt = ours.attempt;

  const run = claimedRun(resolved, accepted, { ...claimed, claim: ours }, order.order, receivedAt);
  const runIt = () =>
    runClaimed(run, { retryCompletion: receiver.retryCompletion, observeHandler: observation.handler });
  const queue = resolved.options.queue;
  // A notification found stale at claim is settled here and now: there is nothing to queue.
  if (queue && !run.order?.stale) {
    const appended = ours.status === "claimed" ? ours.appended : undefined;
    const queuedAtClaim = ours.status === "claimed" && ours.queued === true;
    const keptAtClaim = ours.status === "claimed" && ours.kept === true;
    const job = {
      id,
      fingerprint,
      owner,
      order,
      ...(carried !== undefined ? { carried } : {}),
      appended,
      queuedAtClaim,
      keptAtClaim,
    };
    return handToQueue(receiver, queue, run, job, runIt, fields, observation);
  }
  return runHere(receiver.slots, runIt, fields);
}

/**
 * Claim the id in the idempotency store, once, under the request's fresh owner token: only the claim's
 * holder may run the handler or write its effects. A store that cannot answer is the store's trouble,
 * answered 503 so the sender keeps the notification and nothing ran.
 */
async function claim(resolved: ResolvedOptions, request: ClaimRequest, fields: LogFields): Promise<Claimed | Verdict> {
  const { options, store } = resolved;
  let claim: ClaimResult;
  let transaction: TransactionalClaim | undefined;
  let claimSent: number | undefined;
  const claimOnce = async (asked: ClaimRequest) => {
    // With a store that claims in a transaction, the handler run here writes into that transaction.
    if (claimsInTransaction(store)) {
      transaction = await store.claimInTransaction(asked);
      claim = transaction.result;
      // Handed to a queue, it runs later under its lease: the claim commits now, unless the queue
      // adds its job in this transaction (then all commit together). A stale one is settled here
      // and now, so it keeps its transaction.
      if (options.queue && claim.status === "claimed" && !queuesWithin(options.queue, transaction)) {
        await transaction.detach();
        transaction = undefined;
      }
    } else {
      claimSent = performance.now();
      claim = await store.claim(asked);
    }
    return claim;
  };
  try {
    claim = await claimOnce(request);
    // "Already queued" must never hide a job that no longer exists (lost in a failover, removed by
    // hand): the record is taken over and the notification queued again. Taken over as the first
    // claim was made (in a transaction, for a store that claims in one), so a refused re-enqueue
    // releases it and a stale one is settled: the first claim's transaction has ended already.
    if (claim.status === "queued" && !claim.inLane && (await jobMissing(options.queue, request.id)))
      claim = await claimOnce(takingOver(request));
  } catch (err) {
    const reason = "idempotency store unavailable";
    return verdict(
      "unavailable",
      { ...fields, reason, err },
      { message: `${reason}; retry later`, headers: resolved.unavailableRetry },
    );
  }
  return { claim, transaction, claimSent };
}

/**
 * The receiver's claim: to run now (or in this process's in-process queue, whose data for an unordered
 * notification the claim keeps on a store that keeps notifications: `RunClaim.carried`); or, handed to a durable queue, an ordered notification's
 * `append` to its subscription's lane instead of waiting for the subscription (accepted at once, run in
 * position order by workers), and an unordered one's `enqueue`, written queued in the claim itself
 * (under the claim's lease, as the hand-off lease), so the add is the only round trip after it.
 */
function receiverClaim(
  durable: boolean,
  base: ClaimBase,
  order: OrderClaim | undefined,
  carried: string | undefined,
): ClaimRequest {
  // An in-process queue's data, unordered, kept by the claim on a store that keeps notifications.
  if (!durable)
    return order
      ? { ...base, kind: "run", order }
      : carried === undefined
        ? { ...base, kind: "run" }
        : { ...base, kind: "run", carried };
  if (!order) return { ...base, kind: "enqueue", queueAtClaim: true };
  return carried === undefined ? { ...base, kind: "append", order } : { ...base, kind: "append", order, carried };
}

/** The same claim for a queue, taking over the queued record whose job is missing. */
const takingOver = (request: ClaimRequest): ClaimRequest =>
  request.kind === "enqueue" || request.kind === "append" ? { ...request, takeOver: true } : request;

/** Whether the claim is this request's to run (or, stale, to settle). */
const isOurs = (claim: ClaimResult): claim is ClaimedOrStale => claim.status === "claimed" || claim.status === "stale";

/**
 * A record already there decides the answer, and nothing runs: done before (200 duplicate), accepted
 * into a queue before, another payload under the same id (422), or another delivery holding the id or
 * its subscription (409 with Retry-After, or 503 when the subscription's lane is full), so the
 * sender retries later rather than running it twice.
 */
function answerNotOurs(
  claim: Exclude<ClaimResult, ClaimedOrStale>,
  fields: LogFields,
  unavailableRetry: Record<string, string>,
): Verdict {
  switch (claim.status) {
    case "completed":
      return verdict("duplicate", fields);
    case "queued":
      return verdict("duplicate", { ...fields, reason: "already queued" });
    case "conflict":
      return verdict("conflict", fields);
    case "processing":
      // The subscription's lane is at its maximum length: not accepted, the sender keeps it.
      if (claim.full)
        return verdict(
          "overloaded",
          { ...fields, reason: "subscription's lane is full" },
          { headers: unavailableRetry },
        );
      if (claim.key) {
        return verdict(
          "in_progress",
          { ...fields, reason: SUBSCRIPTION_BUSY },
          { message: `${SUBSCRIPTION_BUSY}; retry later`, headers: retryAfter(claim.retryAfterMs) },
        );
      }
      return verdict("in_progress", fields, { headers: retryAfter(claim.retryAfterMs) });
  }
}

/**
 * The run of a claim that is ours, as `runClaimed` takes it here, in the in-process queue or in a
 * worker. Named fields, not a spread of the resolved options: a spread copied all of them per request.
 */
function claimedRun(
  resolved: ResolvedOptions,
  { notification, headers }: Accepted,
  { claim, transaction, claimSent }: Claimed & { claim: ClaimedOrStale },
  order: OrderClaim | undefined,
  receivedAt: number,
): ClaimedRun {
  const { options, store, leaseMs, timeoutMs, ctxLogger, ordering } = resolved;
  return {
    store,
    handlers: options,
    notification,
    claim,
    attempt: claim.attempt,
    headers,
    receivedAt,
    timeoutMs,
    leaseMs,
    ctxLogger,
    order: claimedOrder(order, claim, ordering?.onStale),
    transaction,
    platform: options.platform,
    leaseFrom: claimSent,
  };
}

/**
 * Hand the claimed notification to the queue and answer 202 at once: nobody waits on a queued run,
 * whose outcome gets its own log line. The claim, its queued mark and the job are made to agree (in one
 * transaction, or in that order); a queue that refuses leaves nothing behind, so the sender's retry
 * starts afresh.
 */
async function handToQueue(
  { resolved, logQueued, retryCompletion }: Receiving,
  queue: NotificationQueue,
  run: ClaimedRun,
  job: Pick<QueuedNotification, "id" | "fingerprint" | "owner" | "carried"> & {
    order: { order?: OrderClaim };
    /** The store handed it over to the lane in the claim (`AppendClaim.carried`). */
    appended: { wake: boolean } | undefined;
    /** The store wrote the record queued in the claim (`EnqueueClaim.queueAtClaim`). */
    queuedAtClaim: boolean;
    /** The store kept the in-process queue's data with the claim (`RunClaim.carried`). */
    keptAtClaim: boolean;
  },
  runIt: () => Promise<ClaimedOutcome>,
  fields: LogFields,
  observation: ReceiveObservation,
): Promise<Verdict> {
  const { store, leaseMs, unavailableRetry } = resolved;
  const { claim, transaction } = run;
  const runQueued = async () => {
    const started = performance.now();
    logQueued(outcomeVerdict(await runIt(), fields), started);
  };
  const lostWhileQueued = () =>
    resolved.logger.warn(
      { ...fields, outcome: "lost_claim" },
      "claim taken over while queued; the other delivery runs it",
    );
  // An ordered notification joins its subscription's lane: kept by the queue without a job, and
  // one drain job queued only when the store says the subscription has no runner.
  const lanes = drainedLanes(store);
  const mailbox = queue.durable && queue.wake && lanes && claim.order ? { mailbox: true as const } : {};
  const item: QueuedNotification = {
    id: job.id,
    fingerprint: job.fingerprint,
    notification: run.notification,
    headers: run.headers,
    receivedAt: run.receivedAt,
    owner: job.owner,
    ...job.order,
    trace: observation.carrier(),
    // An in-process queue holds the claim while the notification waits, and runs it only if still owned.
    run: queue.durable
      ? runQueued
      : inProcessRun(
          run,
          { retryCompletion, observeHandler: observation.handler },
          logInProcess(logQueued, fields),
          lostWhileQueued,
        ),
    ...mailbox,
    ...(mailbox.mailbox && job.carried !== undefined ? { carried: job.carried } : {}),
  };
  const { appended } = job;
  try {
    // Enqueued inside the notification's span, so a BullMQ producer span (bullmq-otel) joins its trace.
    if (queuesWithin(queue, transaction)) {
      // The claim, the queued mark and the job commit together: a crash leaves all or none.
      await observation.inSpan(() => queue.enqueueInTransaction!(item, transaction.transaction));
      await transaction.commitQueued();
    } else {
      if (appended) {
        // Already in the lane, with its data, which the lane keeps until the notification is done:
        // the queue needs only the drain job, for a key without a runner, and keeps the copy of the
        // notification that woke the lane beside it (how a sweep finds a lane whose drain job was lost).
        // A store that finds its stalled lanes itself needs no copy of the waking one beside the queue.
        const inLane = { ...item, inLane: lanes ? { ...appended, found: true as const } : appended };
        await observation.inSpan(() =>
          Promise.all([queue.enqueue(inLane), appended.wake ? queue.wake!(inLane) : undefined]),
        );
        return verdict("queued", fields);
      }
      // Kept with its claim before it is acknowledged, on a store that can: a receiver on the same
      // store runs it if this process dies (see `resumeLapsed`). Kept by the claim itself, or else now.
      // Its claim lost already (its lease ran out before this): the delivery that took it runs it.
      if (
        !queue.durable &&
        !job.keptAtClaim &&
        !claim.order &&
        store.kept &&
        queue.carry &&
        !(await store.kept.keep(claim, queue.carry(item)))
      )
        return verdict("in_progress", { ...fields, reason: "claim lost before the notification was kept" });
      await observation.inSpan(() => queue.enqueue(item));
      if (mailbox.mailbox) {
        const { wake } = await lanes!.append(claim, leaseMs);
        if (wake) await observation.inSpan(() => queue.wake!(item));
      } else if (queue.durable && !job.queuedAtClaim) await store.markQueued(claim);
    }
  } catch (err) {
    // Refused, the notification leaves nothing behind: the sender's retry starts afresh.
    if (transaction) await (transaction.discard?.() ?? transaction.rollback("queue_unavailable")).catch(() => {});
    else await Promise.resolve(store.release(claim)).catch(() => {});
    return queueRefused(err, fields, unavailableRetry);
  }
  return verdict("queued", fields);
}

/** A queued run's log line: its outcome as a verdict, with why it is not run again when it is not. */
export const logInProcess =
  (logQueued: (verdict: Verdict, started: number) => void, fields: LogFields): LogRun =>
  (result, started, last) =>
    logQueued(outcomeVerdict(result, last ? { ...fields, reason: last } : fields), started);

/**
 * Run the handler here, in one of the backpressure slots, and answer with its outcome: the sender
 * waits for it, so a failure is answered as one and retried.
 */
async function runHere(slots: HandlerSlots, runIt: () => Promise<ClaimedOutcome>, fields: LogFields): Promise<Verdict> {
  try {
    return outcomeVerdict(await slots.run(runIt), fields);
  } catch (err) {
    // The claim's answer came too late (a slow store, a stalled event loop) and no extension confirmed
    // it: the handler never started, and another delivery may hold the id now. The sender retries.
    if (err instanceof LeaseLostError)
      return verdict("in_progress", { ...fields, reason: "claim not confirmed live; handler not started" });
    throw err;
  }
}

/**
 * A run's outcome as the verdict answered (or logged, for a queued run), with its error if it failed.
 * A handler's `RetryAfterError` is passed on to the sender as `Retry-After`.
 */
function outcomeVerdict(result: ClaimedOutcome, fields: LogFields): Verdict {
  if (!("err" in result)) return verdict(result.outcome, fields);
  const decision = retryDecision(result.err);
  const extra = decision.retry === "after" ? { headers: retryAfter(decision.delayMs) } : {};
  return verdict(result.outcome, { ...fields, err: result.err }, extra);
}

/**
 * The job data to keep with the claim, made before it, so it is made (and sealed) for a duplicate too:
 * a cost only off the hot path. Undefined unless the claim keeps it:
 * - bound for the subscription's lane (a durable queue that can `carry` and `wake`, a store whose
 *   lanes are kept whole, an ordered notification: `AppendClaim.carried`);
 * - an in-process queue's unordered notification on a store that keeps notifications (`RunClaim.carried`:
 *   kept by the claim itself, one round trip; a store that does not answers without `kept`, and
 *   `kept.keep` follows).
 */
function carriedFor(
  resolved: ResolvedOptions,
  { notification, headers }: Accepted,
  item: Pick<QueuedNotification, "id" | "fingerprint" | "owner" | "order" | "receivedAt">,
  observation: ReceiveObservation,
): string | undefined {
  const { store } = resolved;
  const queue = resolved.options.queue;
  if (!queue?.carry) return undefined;
  const forLane =
    item.order !== undefined && queue.durable && queue.wake && drainedLanes(store) && !claimsInTransaction(store);
  const forKept = item.order === undefined && !queue.durable && store.kept !== undefined;
  if (!forLane && !forKept) return undefined;
  return queue.carry({ ...item, notification, headers, trace: observation.carrier() });
}

/** Whether the queue adds its job in the claim's transaction, and the claim can commit marked queued. */
function queuesWithin(
  queue: NotificationQueue,
  transaction: TransactionalClaim | undefined,
): transaction is TransactionalClaim & Required<Pick<TransactionalClaim, "commitQueued">> {
  return transaction?.commitQueued !== undefined && queue.enqueueInTransaction !== undefined;
}

/** Whether a durable queue that can tell says it holds no job for `id`; an unanswered question counts as no. */
async function jobMissing(queue: NotificationQueue | undefined, id: string): Promise<boolean> {
  if (!queue?.durable || !queue.has) return false;
  try {
    return !(await queue.has(id));
  } catch {
    return false;
  }
}

function queueRefused(err: unknown, fields: LogFields, unavailableRetry: Record<string, string>): Verdict {
  if (err instanceof QueueFullError)
    return verdict("overloaded", { ...fields, reason: err.message }, { headers: unavailableRetry });
  return verdict(
    "unavailable",
    { ...fields, reason: "queue unavailable", err },
    {
      message: "queue unavailable; retry later",
      headers: unavailableRetry,
    },
  );
}

/**
 * The `order` of a claim request (empty when ordering is off or the notification has no key), or why
 * it could not be had: a `key` or `position` function that throws is the merchant's configuration,
 * answered 500 so the sender keeps the notification.
 */
function orderOrMisconfigured(
  ordering: Ordering | undefined,
  notification: SubscriptionNotification,
): { order?: OrderClaim } | { misconfigured: string; err: unknown } {
  if (!ordering) return {};
  try {
    const order = ordering.orderOf(notification);
    return order ? { order } : {};
  } catch (err) {
    return { misconfigured: "ordering key or position function threw", err };
  }
}

/**
 * The receiver's load shedding, one mechanism: a count of notifications in flight with its limit and,
 * with `concurrency`, slots for synchronous handlers (p-queue): the answer still waits for the handler,
 * but only `concurrency` handlers run at once and only `maxPending` requests wait for a slot.
 */
export function handlerSlots({
  maxInFlight = DEFAULT_MAX_IN_FLIGHT,
  concurrency,
  maxPending = concurrency === undefined ? Number.POSITIVE_INFINITY : concurrency * 10,
}: BackpressureOptions = {}) {
  const queue = concurrency === undefined ? undefined : new PQueue({ concurrency });
  let inFlight = 0;
  return {
    maxInFlight,
    inFlight: () => inFlight,
    /** Takes a place for one notification, or false when the receiver should shed it. */
    enter(): boolean {
      if (inFlight >= maxInFlight || (queue && queue.size >= maxPending)) return false;
      inFlight++;
      return true;
    },
    /** Gives back the place `enter` took. */
    leave(): void {
      inFlight--;
    },
    run: <T>(task: () => Promise<T>): Promise<T> => (queue ? (queue.add(task) as Promise<T>) : task()),
  };
}

export type HandlerSlots = ReturnType<typeof handlerSlots>;

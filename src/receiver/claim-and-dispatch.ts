import { retryAfter } from "../answer/answer.js";
import { retryInBackground } from "../dispatch/retry-in-background.js";
import { ownerTokens, runClaimed, type ClaimedOutcome, type ClaimedRun } from "../dispatch/run-claimed.js";
import { holdClaimWhileQueued } from "../queue/hold-claim.js";
import { QueueFullError } from "../queue/queue-full-error.js";
import type { NotificationQueue, QueuedNotification } from "../queue/queue.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { UNOBSERVED, type ReceiveObservation } from "../telemetry/observe-receive.js";
import type { Background } from "./background.js";
import type { ResolvedOptions } from "./resolve-options.js";
import { verdict, type LogFields, type Verdict } from "./verdict.js";
import { claimedOrder, SUBSCRIPTION_BUSY } from "../dispatch/claimed-order.js";
import { orderOrMisconfigured } from "../ordering/order-of.js";
import { claimsInTransaction, type TransactionalClaim } from "../idempotency/transaction.js";

/** An accepted notification, as intake hands it on. */
export interface Accepted {
  notification: SubscriptionNotification;
  /** The parsed body as received: its canonical JSON is the payload's fingerprint. */
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * The middle step: claim the notification's id, then run its handler now (under the backpressure
 * slots) or hand it to the queue. `logQueued` writes the line for a queued run that ends after the answer.
 */
export function claimAndDispatch(
  resolved: ResolvedOptions,
  work: Background,
  logQueued: (verdict: Verdict, started: number) => void,
): (accepted: Accepted, observation?: ReceiveObservation) => Promise<Verdict> {
  const { options, store, leaseMs, slots, unavailableRetry, ordering, fingerprint: fingerprintOf } = resolved;
  const { timeoutMs, ctxLogger } = resolved;
  const nextOwner = ownerTokens();
  const retryCompletion = (write: () => Promise<unknown>) => work.track("completion record", retryInBackground(write));

  return async ({ notification, body, headers }, observation = UNOBSERVED) => {
    const id = notification.id;
    const fields: LogFields = {
      notification_id: id,
      event_type: notification.event_type,
      // Events of an `eventSchema` need not carry a subscription resource.
      merchant_id: notification.resource?.merchant_id,
      subscription_id: notification.resource?.id,
    };
    // Shed load before claiming, so a refused notification leaves no record behind.
    if (slots?.full())
      return verdict("overloaded", { ...fields, reason: "backpressure" }, { headers: unavailableRetry });

    const order = orderOrMisconfigured(ordering, notification);
    if ("misconfigured" in order)
      return verdict("misconfigured", { ...fields, reason: order.misconfigured, err: order.err });
    // Node's HMAC answers synchronously: awaiting it anyway would cost a microtask hop per request.
    const computed = fingerprintOf(body);
    const fingerprint = typeof computed === "string" ? computed : await computed;
    const owner = nextOwner();
    let claim;
    let transaction: TransactionalClaim | undefined;
    try {
      // Handed to a durable queue, an ordered notification joins its subscription's waiting list
      // instead of waiting for the subscription: accepted at once, run in position order by workers.
      const forQueue = options.queue?.durable ? { forQueue: true } : {};
      const request = { id, fingerprint, owner, leaseMs, ...order, ...forQueue };
      // With a store that claims in a transaction, the handler run here writes into that transaction.
      if (claimsInTransaction(store)) {
        transaction = await store.claimInTransaction(request);
        claim = transaction.result;
        // Handed to a queue, it runs later under its lease: the claim commits now. A stale one is
        // settled here and now, so it keeps its transaction.
        if (options.queue && claim.status === "claimed") {
          await transaction.detach();
          transaction = undefined;
        }
      } else claim = await store.claim(request);
      // "Already queued" must never hide a job that no longer exists (lost in a failover, removed by
      // hand): the record is taken over and the notification queued again.
      if (claim.status === "queued" && (await jobMissing(options.queue, id)))
        claim = await store.claim({ ...request, takeQueued: true });
    } catch (err) {
      const reason = "idempotency store unavailable";
      return verdict(
        "unavailable",
        { ...fields, reason, err },
        { message: `${reason}; retry later`, headers: unavailableRetry },
      );
    }
    switch (claim.status) {
      case "completed":
        return verdict("duplicate", fields);
      case "queued":
        return verdict("duplicate", { ...fields, reason: "already queued" });
      case "conflict":
        return verdict("conflict", fields);
      case "processing":
        // The subscription's mailbox is at its maximum length: not accepted, the sender keeps it.
        if (claim.full)
          return verdict(
            "overloaded",
            { ...fields, reason: "subscription's mailbox is full" },
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
    fields.attempt = claim.attempt;
    const claimed = claimedOrder(order.order, claim, ordering?.onStale);

    const receivedAt = Date.now();
    // Named fields, not a spread of the resolved options: a spread copied all of them per request.
    const claimedRun: ClaimedRun = {
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
      order: claimed,
      transaction,
    };
    const run = () => runClaimed(claimedRun, { retryCompletion, observeHandler: observation.handler });
    const outcomeVerdict = (result: ClaimedOutcome) =>
      verdict(result.outcome, "err" in result ? { ...fields, err: result.err } : fields);
    // A notification found stale at claim is settled here and now: there is nothing to queue.
    if (options.queue && !claimed?.stale) {
      // Built only on the queue path: a synchronous notification needs neither.
      const runQueued = async () => {
        const started = performance.now();
        logQueued(outcomeVerdict(await run()), started);
      };
      const lostWhileQueued = () =>
        resolved.logger.warn(
          { ...fields, outcome: "lost_claim" },
          "claim taken over while queued; the other delivery runs it",
        );
      // An ordered notification joins its subscription's mailbox: kept by the queue without a job, and
      // one drain job queued only when the store says the subscription has no runner.
      const queue = options.queue;
      const mailbox = queue.durable && queue.wake && store.markWaiting && claim.order ? { mailbox: true as const } : {};
      try {
        // Enqueued inside the notification's span, so a BullMQ producer span (bullmq-otel) joins its trace.
        const item: QueuedNotification = {
          id,
          fingerprint,
          notification,
          headers,
          receivedAt,
          owner,
          ...order,
          trace: observation.carrier(),
          // Nobody waits on a queued run's answer: its outcome gets its own log line. An in-process
          // queue holds the claim while the notification waits, and runs it only if still owned.
          run: options.queue!.durable
            ? runQueued
            : holdClaimWhileQueued({ store, claim, leaseMs }, runQueued, lostWhileQueued),
          ...mailbox,
        };
        await observation.inSpan(() => queue.enqueue(item));
        if (mailbox.mailbox) {
          const { wake } = await store.markWaiting!(claim, leaseMs);
          if (wake) await observation.inSpan(() => queue.wake!(item));
        } else if (queue.durable) await store.markQueued(claim);
      } catch (err) {
        await Promise.resolve(store.release(claim)).catch(() => {});
        return queueRefused(err, fields, unavailableRetry);
      }
      return verdict("queued", fields);
    }

    return outcomeVerdict(slots ? await slots.run(run) : await run());
  };
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

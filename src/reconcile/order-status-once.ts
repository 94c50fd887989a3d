import type { OrderEvent, QueriedOrder } from "../client/types.js";
import type { Handler } from "../dispatch/handlers.js";
import { RetryAfterError } from "../dispatch/retry-errors.js";
import { ownerTokens } from "../dispatch/run-claimed.js";
import { sortablePosition } from "../idempotency/position.js";
import { type ClaimHandle, DEFAULT_LEASE_MS, type IdempotencyStore, type OrderClaim } from "../idempotency/store.js";

/** An order event as the order handler gets it: live from the platform, or built by the reconciler. */
export type ReconcilableOrderEvent = OrderEvent & {
  /** Set on an event the reconciler built from QueryOrder's answer because the live one never came. */
  reconciled?: true;
};

/**
 * Every claim of an order's status, live or reconciled, uses this fingerprint: the payloads differ
 * (an event against a QueryOrder answer), but they are the same fact, so the second is a duplicate,
 * never a conflict.
 */
export const ORDER_STATUS_FINGERPRINT = "merchant-webhooks order status v1";

/** The business key both paths claim: the order and its status. */
export const orderStatusKey = (order: Pick<QueriedOrder, "id" | "status">): string =>
  `order-status/${order.id}/${order.status ?? "UNKNOWN"}`;

/**
 * The order key every status of one order is claimed under, at the order's `update_time`: one status
 * of an order is applied at a time, and a status older than the newest one applied is stale.
 */
const orderClaimOf = (order: Pick<QueriedOrder, "id" | "update_time">): OrderClaim => {
  const position = order.update_time === undefined ? undefined : sortablePosition(order.update_time);
  return { key: `order/${order.id}`, ...(position !== undefined ? { position } : {}) };
};

/** How the store names an order status's record (`store.get`): its business key and its order key. */
export function orderStatusRecord(order: Pick<QueriedOrder, "id" | "status">): { id: string; order: { key: string } } {
  return { id: orderStatusKey(order), order: { key: `order/${order.id}` } };
}

/** What claiming an order's status and running its effect came to. */
export type OrderStatusOutcome =
  | { status: "ran" }
  /** Applied before (by a live event or a reconciliation): not run again. */
  | { status: "done" }
  /**
   * Older (by the order's `update_time`) than a status of the order applied already, as a late event
   * for APPROVED after COMPLETED was reconciled: recorded, not run.
   */
  | { status: "stale"; newestPosition: string }
  /** The other path holds it right now. */
  | { status: "processing"; retryAfterMs: number };

/**
 * Claim the order's status in the idempotency store and, when the claim is ours, run `effect` under it
 * (its lease pushed forward while it runs), then complete the record; a failed effect fails it so the
 * next delivery or run takes it again. Whichever path claims first runs; the other finds it done.
 * The claim is made in order, under the order's key at its `update_time` (the interface shows no
 * transitions between statuses, so time is what orders them): a status older than one applied is
 * completed as stale without running `effect`, and two statuses of one order never run at once.
 */
export async function applyOrderStatusOnce(
  store: IdempotencyStore,
  order: Pick<QueriedOrder, "id" | "status" | "update_time">,
  owner: string,
  effect: () => void | Promise<void>,
  leaseMs = store.leaseMs ?? DEFAULT_LEASE_MS,
): Promise<OrderStatusOutcome> {
  const id = orderStatusKey(order);
  const orderClaim = orderClaimOf(order);
  const claim = await store.claim({
    kind: "run",
    id,
    fingerprint: ORDER_STATUS_FINGERPRINT,
    owner,
    leaseMs,
    order: orderClaim,
  });
  if (claim.status === "completed" || claim.status === "queued" || claim.status === "conflict")
    return { status: "done" };
  if (claim.status === "processing") return { status: "processing", retryAfterMs: claim.retryAfterMs };
  const handle: ClaimHandle = { id, owner, order: orderClaim };
  if (claim.status === "stale") {
    await store.complete(handle, { processed: true, message: "older than the order status applied" });
    return { status: "stale", newestPosition: claim.newestPosition };
  }
  const heartbeat = setInterval(
    () => void Promise.resolve(store.extend(handle, leaseMs)).catch(() => {}),
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  heartbeat.unref?.();
  try {
    await effect();
  } catch (err) {
    clearInterval(heartbeat);
    await Promise.resolve(store.fail(handle, "order status effect failed")).catch(() => {});
    throw err;
  }
  clearInterval(heartbeat);
  await store.complete(handle, { processed: true, message: "order status applied" });
  return { status: "ran" };
}

/**
 * The live side: wraps the order-event handler given to `eventReceiverOptions({ schema: orderEventSchema,
 * handler })` so it claims the order's status in `store`, the key the reconciler claims too. An event
 * for a status applied before (by the reconciler, or an earlier event) does not run the handler again,
 * nor does one older than a status applied (stale: answered processed, logged); one being applied at
 * that moment (this status, or another of the order) fails with `RetryAfterError`, so the platform
 * retries and then finds it done.
 */
export function oncePerOrderStatus(
  store: IdempotencyStore,
  handler: Handler<ReconcilableOrderEvent>,
  options: { leaseMs?: number } = {},
): Handler<ReconcilableOrderEvent> {
  const nextOwner = ownerTokens();
  return async (event, ctx) => {
    const outcome = await applyOrderStatusOnce(
      store,
      event.order,
      nextOwner("order-status"),
      () => handler(event, ctx),
      options.leaseMs,
    );
    if (outcome.status === "processing")
      throw new RetryAfterError("this order status is being applied by the reconciler", outcome.retryAfterMs);
    if (outcome.status === "done")
      ctx.log.info({ order_id: event.order.id, status: event.order.status }, "order status applied before; not again");
    if (outcome.status === "stale")
      ctx.log.info(
        { order_id: event.order.id, status: event.order.status, newest_position: `${outcome.newestPosition}Z` },
        "order status older than the one applied; stale, not run",
      );
  };
}

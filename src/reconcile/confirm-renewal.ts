import type { PaymentClient } from "../client/create-payment-client.js";
import { PaymentApiError } from "../client/errors.js";
import type { QueriedOrder } from "../client/types.js";
import type { HandlerContext, HandlerFor } from "../dispatch/handlers.js";
import { NonRetriableError, RetryAfterError } from "../dispatch/retry-errors.js";

export interface ConfirmRenewalOptions {
  /** Order statuses that confirm the charge. Default COMPLETED. */
  paidStatuses?: readonly string[];
  /** When QueryOrder cannot answer (the platform is down), the notification is retried after this long. Default 60 s. */
  retryAfterMs?: number;
}

/** The renewal handler's `ctx`, with the order QueryOrder answered for its `payment_detail.order_id`. */
export type ConfirmedRenewalContext = Parameters<HandlerFor<"SUBSCRIPTION_RENEW">>[1] & {
  readonly confirmedOrder: QueriedOrder;
};

/**
 * "Check before trusting": wraps `onRenew` so that, before it runs, the renewal's
 * `renewal_event.payment_detail.order_id` is asked of the platform with QueryOrder, and the handler
 * runs only when the platform says that order is paid; it gets the answer as `ctx.confirmedOrder`.
 * A renewal naming no order, or an order the platform does not know or has not been paid, fails with
 * `NonRetriableError` (to the dead letters, for a person); a QueryOrder that cannot be answered fails
 * with `RetryAfterError`, so the notification is retried later rather than trusted or dropped.
 */
export function confirmRenewal(
  client: Pick<PaymentClient, "queryOrder">,
  handler: (
    notification: Parameters<HandlerFor<"SUBSCRIPTION_RENEW">>[0],
    ctx: ConfirmedRenewalContext,
  ) => void | Promise<void>,
  options: ConfirmRenewalOptions = {},
): HandlerFor<"SUBSCRIPTION_RENEW"> {
  const paid = new Set(options.paidStatuses ?? ["COMPLETED"]);
  const retryAfterMs = options.retryAfterMs ?? 60_000;
  return async (notification, ctx) => {
    const orderId = notification.resource.renewal_event?.payment_detail?.order_id;
    if (!orderId) throw new NonRetriableError("renewal names no payment_detail.order_id to confirm");
    let order: QueriedOrder;
    try {
      // Asked as the notification's merchant: the order is that merchant's, whoever signs the request.
      const merchant = notification.resource.merchant_id;
      order = await client.queryOrder({ id: orderId }, merchant ? { merchant_id: merchant } : {});
    } catch (err) {
      if (err instanceof PaymentApiError && err.status === 404)
        throw new NonRetriableError("the platform does not know the renewal's order", { cause: err });
      throw new RetryAfterError("the renewal's order could not be confirmed now", retryAfterMs, { cause: err });
    }
    if (!paid.has(order.status ?? ""))
      throw new NonRetriableError(`the renewal's order is ${order.status ?? "without a status"}, not paid`);
    // A proxy, not a copy or a prototype: ctx's getters read its private fields, so they run on ctx itself.
    const confirmed = new Proxy(ctx, {
      get: (target, key) => (key === "confirmedOrder" ? order : Reflect.get(target, key, target)),
    }) as HandlerContext & ConfirmedRenewalContext;
    await handler(notification, confirmed);
  };
}

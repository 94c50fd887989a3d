import type { OrderClaim } from "../idempotency/store.js";
import type { SubscriptionNotification } from "../schema/index.js";
import type { Ordering } from "./ordering-options.js";

/**
 * The `order` of a claim request (empty when ordering is off or the notification has no key), or why
 * it could not be had: a `key` or `position` function that throws is the merchant's configuration,
 * answered 500 so the sender keeps the notification.
 */
export function orderOrMisconfigured(
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

import type { Handler } from "../dispatch/handlers.js";
import type { OrderClaim } from "../idempotency/store.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { sortablePosition } from "../idempotency/position.js";

export interface OrderingOptions {
  /**
   * Notifications with the same key run one at a time and never out of order. Default: the
   * subscription, `resource.merchant_id` + `resource.id`. Return undefined to leave one unordered.
   */
  key?: (notification: SubscriptionNotification) => string | undefined;
  /**
   * Where a notification stands among its key's: an RFC 3339 date-time (any offset, any fraction) or a
   * Date. Default `resource.update_time`, else `resource.create_time`. Without one (or with one that is
   * not a date-time) a notification still waits its turn, but is never stale.
   */
  position?: (notification: SubscriptionNotification) => string | Date | undefined;
  /**
   * Gets stale notifications instead of their event's handler.
   * @deprecated Give `onStale` beside the other handlers (the receiver's and the worker's option), not
   * inside `ordering`; this one still works when that one is not given.
   */
  onStale?: Handler;
}

/** The `ordering` option: `true` for the defaults, or the parts to change. */
export type OrderingOption = boolean | OrderingOptions;

/** The `ordering` option resolved once at start-up. */
export interface Ordering {
  /** The notification's key and position, or undefined when it has no key (it is then not ordered). */
  orderOf(notification: SubscriptionNotification): OrderClaim | undefined;
  onStale: Handler | undefined;
}

/** `merchant_id` and `id` joined so that no two pairs meet (`:` and `%` inside them are escaped). */
// Events validated by an `eventSchema` need not carry a subscription resource: they are then unordered.
export function subscriptionKey(notification: SubscriptionNotification): string | undefined {
  const id = notification.resource?.id;
  return typeof id === "string"
    ? `${encodeURIComponent(notification.resource.merchant_id ?? "")}:${encodeURIComponent(id)}`
    : undefined;
}

export function updateOrCreateTime(notification: SubscriptionNotification): string | undefined {
  return notification.resource?.update_time ?? notification.resource?.create_time;
}

/**
 * Check and resolve `ordering` with the top-level `onStale` (the deprecated `ordering.onStale` stands in
 * for it when it is not given; both at once, different, is refused).
 * Undefined when ordering is off. Throws a TypeError naming the option on a wrong type.
 */
export function resolveOrdering(option: OrderingOption | undefined, onStale?: Handler): Ordering | undefined {
  if (option === undefined || option === false) return undefined;
  if (option !== true && (typeof option !== "object" || option === null)) {
    throw new TypeError("ordering must be true, false or an object { key?, position?, onStale? }");
  }
  const parts: OrderingOptions = option === true ? {} : option;
  for (const name of ["key", "position", "onStale"] as const) {
    if (parts[name] !== undefined && typeof parts[name] !== "function")
      throw new TypeError(`ordering.${name} must be a function`);
  }
  if (onStale !== undefined && typeof onStale !== "function") throw new TypeError("onStale must be a function");
  if (onStale !== undefined && parts.onStale !== undefined && parts.onStale !== onStale) {
    throw new TypeError(
      "onStale is given twice, at the top level and in ordering: keep the top-level onStale (ordering.onStale is its deprecated alias)",
    );
  }
  const keyOf = parts.key ?? subscriptionKey;
  const positionOf = parts.position ?? updateOrCreateTime;
  return {
    orderOf(notification) {
      const key = keyOf(notification);
      if (key === undefined) return undefined;
      const at = positionOf(notification);
      const position = at === undefined ? undefined : sortablePosition(at);
      return position === undefined ? { key } : { key, position };
    },
    onStale: onStale ?? parts.onStale,
  };
}

import type { Handler } from "../dispatch/handlers.js";
import { isBefore, type SortablePosition, sortablePosition } from "../idempotency/position.js";
import type { OrderClaim } from "../idempotency/store.js";
import { type KnownKeys, rejectUnknownKeys } from "../lifecycle/option-keys.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { coded } from "../shared/errors.js";

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
   * How far ahead of this process's clock a position may be, in milliseconds. Default one day. A
   * position further ahead (a sender's wrong clock, `9999-12-31T23:59:59Z`) is not taken: the
   * notification waits its turn and runs its handler, but is never stale and does not move its key's
   * position, so it cannot make the key's real notifications stale. `Infinity` turns the check off.
   */
  maxFutureSkewMs?: number;
}

const ORDERING_KEYS = {
  key: true,
  position: true,
  maxFutureSkewMs: true,
} as const satisfies KnownKeys<OrderingOptions>;

/** One day: wider than any honest clock error, far narrower than a record's lifetime. */
export const DEFAULT_MAX_FUTURE_SKEW_MS = 86_400_000;

/** The `ordering` option: `true` for the defaults, or the parts to change. */
export type OrderingOption = boolean | OrderingOptions;

/** The `ordering` option resolved once at start-up. */
export interface Ordering {
  /** The notification's key and position, or undefined when it has no key (it is then not ordered). */
  orderOf(notification: SubscriptionNotification): OrderClaim | undefined;
  onStale: Handler | undefined;
}

/** Whether `position` lies more than `maxSkew` ms after this process's clock. */
export function isTooFarAhead(position: SortablePosition, maxSkew: number): boolean {
  if (maxSkew === Number.POSITIVE_INFINITY) return false;
  const limit = sortablePosition(new Date(Math.min(Date.now() + maxSkew, MAX_DATE_MS)));
  return limit !== undefined && isBefore(limit, position);
}

/** The last millisecond `Date` can hold: a skew beyond it means no limit in practice. */
const MAX_DATE_MS = 8.64e15;

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
 * Check and resolve `ordering` with the top-level `onStale`. Undefined when ordering is off. Throws a
 * TypeError naming the option on a wrong type or an unknown key.
 */
export function resolveOrdering(option: OrderingOption | undefined, onStale?: Handler): Ordering | undefined {
  if (option === undefined || option === false) return undefined;
  if (option !== true && (typeof option !== "object" || option === null)) {
    throw coded(
      new TypeError("ordering must be true, false or an object { key?, position?, maxFutureSkewMs? }"),
      "MW_INVALID_OPTION",
    );
  }
  const parts: OrderingOptions = option === true ? {} : option;
  // Where it stood before 0.1.0: ignoring it would hand stale notifications to no handler in silence.
  if ("onStale" in parts)
    throw coded(
      new TypeError("ordering.onStale: give onStale beside the other handlers (onRenew, onCancel...), not in ordering"),
      "MW_INVALID_OPTION",
    );
  rejectUnknownKeys("ordering", parts, Object.keys(ORDERING_KEYS));
  for (const name of ["key", "position"] as const) {
    if (parts[name] !== undefined && typeof parts[name] !== "function")
      throw coded(new TypeError(`ordering.${name} must be a function`), "MW_INVALID_OPTION");
  }
  if (onStale !== undefined && typeof onStale !== "function")
    throw coded(new TypeError("onStale must be a function"), "MW_INVALID_OPTION");
  const maxSkew = parts.maxFutureSkewMs ?? DEFAULT_MAX_FUTURE_SKEW_MS;
  if (typeof maxSkew !== "number" || Number.isNaN(maxSkew) || maxSkew < 0)
    throw coded(
      new TypeError("ordering.maxFutureSkewMs must be a number of milliseconds, 0 or more (Infinity: no limit)"),
      "MW_INVALID_OPTION",
    );
  const keyOf = parts.key ?? subscriptionKey;
  const positionOf = parts.position ?? updateOrCreateTime;
  return {
    orderOf(notification) {
      const key = keyOf(notification);
      if (key === undefined) return undefined;
      const at = positionOf(notification);
      const position = at === undefined ? undefined : sortablePosition(at);
      return position === undefined || isTooFarAhead(position, maxSkew) ? { key } : { key, position };
    },
    onStale,
  };
}

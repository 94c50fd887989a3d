import { createHash, randomUUID } from "node:crypto";
import type { NotificationOf } from "../dispatch/handlers.js";
import { subscriptionEventRows } from "../schema/event-types.js";
import type { EventType, SubscriptionNotification, SubscriptionResource } from "../schema/index.js";
import { optionError } from "../shared/errors.js";
import { buildPaymentDetail, buildProduct, buildSubscriber } from "./builders.js";
import { type DeepPartial, deepMerge } from "./deep-merge.js";

export interface BuildNotificationOptions {
  /** Draw the notification and order ids at random, so each call is a new delivery. */
  random?: boolean;
  /** Derive the ids from this seed: the same seed gives the same ids, another seed other ids. */
  seed?: number | string;
  /** When the notification was created; the other times follow from it. Default 2026-11-23T08:15:30Z. */
  at?: Date | string;
}

export type NotificationOverrides = DeepPartial<SubscriptionNotification>;

const DEFAULT_TIME = "2026-11-23T08:15:30Z";
const DAY_MS = 24 * 60 * 60 * 1000;

/** What each event_type carries. The interface does not publish the pairing; these follow the names. */
interface EventShape {
  resourceEventType: string;
  status: string;
  phase: string;
  summary: string;
  eventObject?: (time: string, orderId: string) => Partial<SubscriptionResource>;
}

const paidEvent = (key: "subscription_event" | "renewal_event") => (_time: string, orderId: string) => ({
  [key]: { subscription_plan_type: "REGULAR", payment_detail: buildPaymentDetail({ order_id: orderId }) },
});

/** The event object each resource event type carries. */
const EVENT_OBJECTS: Readonly<Record<string, EventShape["eventObject"]>> = {
  SUBSCRIPTION: paidEvent("subscription_event"),
  RENEWAL: paidEvent("renewal_event"),
  UNSUBSCRIPTION: (time) => ({
    unsubscription_event: { reason: "cancelled by the subscriber", unsubscription_time: time },
  }),
  SUSPENDED: (time) => ({ suspended_event: { reason: "payment failed", suspended_time: time } }),
  RESUMED: (time) => ({ resumed_event: { resumed_time: time } }),
};

const SHAPES: Readonly<Record<string, EventShape>> = Object.fromEntries(
  subscriptionEventRows().map(([eventType, row]) => [
    eventType,
    { ...row, eventObject: EVENT_OBJECTS[row.resourceEventType] },
  ]),
);

/** UNKNOWN, and event types this version does not know: no event object, as nothing says which. */
const UNKNOWN_SHAPE: EventShape = {
  resourceEventType: "UNKNOWN",
  status: "ACTIVE",
  phase: "1",
  summary: "Subscription event",
};

/**
 * A complete notification of `eventType` that passes `subscriptionNotificationSchema`, with the event
 * object and payment detail that fit it. The same arguments give the same notification, ids included,
 * unless `options.random` asks for fresh ids. `overrides` is merged in at any depth; a key set to
 * `undefined` removes the field, and arrays are replaced whole.
 */
export function buildNotification<E extends EventType>(
  eventType: E,
  overrides?: NotificationOverrides,
  options: BuildNotificationOptions = {},
): NotificationOf<E> {
  const shape = SHAPES[eventType] ?? UNKNOWN_SHAPE;
  const ids = idsFor(eventType, options);
  const at = new Date(options.at ?? DEFAULT_TIME);
  if (Number.isNaN(at.getTime()))
    throw optionError(
      new RangeError(`options.at is not a valid time: ${String(options.at)}`),
      "MW_INVALID_OPTION",
      "at",
    );
  const time = rfc3339(at);
  const periodEnd = new Date(at.getTime() + 30 * DAY_MS);
  // Only a subscription that is running has a next charge.
  const running = shape.status === "ACTIVE";

  const resource: SubscriptionResource = {
    id: "SUB-TEST-0001",
    reference_id: "merchant-sub-0001",
    merchant_id: "M-TEST-0001",
    create_time: shape.phase === "1" ? time : rfc3339(new Date(at.getTime() - 30 * DAY_MS)),
    update_time: time,
    subscription_status: shape.status,
    event_type: shape.resourceEventType,
    execution_phase: shape.phase,
    ...(running ? { next_execution_time: periodEnd.getTime() } : {}),
    period_start_time: time,
    period_end_time: rfc3339(periodEnd),
    subscriber: buildSubscriber(),
    product: buildProduct(),
    ...shape.eventObject?.(time, ids.orderId),
  };
  const notification: SubscriptionNotification = {
    id: ids.notificationId,
    create_time: time,
    update_time: time,
    event_type: eventType,
    event_version: "1.0",
    resource_type: "subscription",
    resource_version: "2.0",
    summary: shape.summary,
    resource,
  };
  return deepMerge(notification, overrides) as NotificationOf<E>;
}

function idsFor(eventType: string, options: BuildNotificationOptions): { notificationId: string; orderId: string } {
  if (options.random) {
    const draw = randomUUID().replace(/-/g, "").toUpperCase();
    return { notificationId: `WH-${draw.slice(0, 20)}`, orderId: `ORD-${draw.slice(12, 32)}` };
  }
  if (options.seed !== undefined) {
    const digest = createHash("sha256")
      .update(`${String(options.seed)}\0${eventType}`)
      .digest("hex")
      .toUpperCase();
    return { notificationId: `WH-${digest.slice(0, 20)}`, orderId: `ORD-${digest.slice(20, 40)}` };
  }
  return { notificationId: `WH-TEST-${eventType}`, orderId: "ORD-TEST-0001" };
}

/** RFC 3339 in UTC, to the second, as the platform writes its times. */
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

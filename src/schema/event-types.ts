import type { EVENT_TYPES } from "./enums.js";
import type { EventObjectKey } from "./types.js";

/** What this library pairs with one known event_type. */
interface EventRow {
  /** The `SubscriptionHandlers` key it goes to. */
  handler: string;
  /** The CLI's short name (`send renew`). */
  shortName: string;
  /** The simulator's scenario command (`cancel alice`); `send` and scenario files accept it too. */
  verb: string;
  /** The resource's own `event_type` and status in a typical notification (the interface does not publish the pairing). */
  resourceEventType: string;
  status: string;
  /** `execution_phase`: 1 for the first charge, 2 after. */
  phase: string;
  summary: string;
  /** The resource field holding its event object, which handlers get as `ctx.event` (the pairing follows the names). */
  eventObjectKey: EventObjectKey;
}

/**
 * The one table keyed by event_type: handler keys, CLI names and test notifications all derive from it,
 * and the compiler keeps it in step with `EVENT_TYPES` (every known type but UNKNOWN, nothing else).
 */
export const SUBSCRIPTION_EVENTS = {
  SUBSCRIPTION_CREATED: {
    handler: "onCreated",
    shortName: "created",
    verb: "create",
    resourceEventType: "SUBSCRIPTION",
    status: "ACTIVE",
    phase: "1",
    summary: "Subscription created",
    eventObjectKey: "subscription_event",
  },
  SUBSCRIPTION_RENEW: {
    handler: "onRenew",
    shortName: "renew",
    verb: "renew",
    resourceEventType: "RENEWAL",
    status: "ACTIVE",
    phase: "2",
    summary: "Subscription renewed",
    eventObjectKey: "renewal_event",
  },
  SUBSCRIPTION_CANCELLED: {
    handler: "onCancel",
    shortName: "cancelled",
    verb: "cancel",
    resourceEventType: "UNSUBSCRIPTION",
    status: "CANCELLED",
    phase: "2",
    summary: "Subscription cancelled",
    eventObjectKey: "unsubscription_event",
  },
  SUBSCRIPTION_SUSPENDED: {
    handler: "onSuspend",
    shortName: "suspended",
    verb: "suspend",
    resourceEventType: "SUSPENDED",
    status: "SUSPENDED",
    phase: "2",
    summary: "Subscription suspended",
    eventObjectKey: "suspended_event",
  },
  SUBSCRIPTION_RESUMED: {
    handler: "onResume",
    shortName: "resumed",
    verb: "resume",
    resourceEventType: "RESUMED",
    status: "ACTIVE",
    phase: "2",
    summary: "Subscription resumed",
    eventObjectKey: "resumed_event",
  },
} as const satisfies Record<Exclude<(typeof EVENT_TYPES)[number], "UNKNOWN">, EventRow>;

export type SubscriptionEventType = keyof typeof SUBSCRIPTION_EVENTS;

/** The rows with their event types, in the table's order. */
export const subscriptionEventRows = () =>
  Object.entries(SUBSCRIPTION_EVENTS) as Array<
    [SubscriptionEventType, (typeof SUBSCRIPTION_EVENTS)[SubscriptionEventType]]
  >;

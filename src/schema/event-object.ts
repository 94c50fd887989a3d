import type { z } from "zod";
import type {
  renewalEventSchema,
  resumedEventSchema,
  subscriptionEventSchema,
  suspendedEventSchema,
  unsubscriptionEventSchema,
} from "./events.js";
import type { subscriptionNotificationSchema } from "./notification.js";

/** The five event objects a resource may carry, in the order they are looked for. */
export const EVENT_OBJECT_KEYS = [
  "subscription_event",
  "renewal_event",
  "unsubscription_event",
  "suspended_event",
  "resumed_event",
] as const;

export type EventObjectKey = (typeof EVENT_OBJECT_KEYS)[number];

export type EventObject =
  | { kind: "subscription_event"; event: z.output<typeof subscriptionEventSchema> }
  | { kind: "renewal_event"; event: z.output<typeof renewalEventSchema> }
  | { kind: "unsubscription_event"; event: z.output<typeof unsubscriptionEventSchema> }
  | { kind: "suspended_event"; event: z.output<typeof suspendedEventSchema> }
  | { kind: "resumed_event"; event: z.output<typeof resumedEventSchema> };

/**
 * The one event object a notification carries, tagged with its kind. The interface does not publish
 * which object each event_type fills, so this returns whichever is present rather than assuming.
 */
export function eventObjectOf(notification: z.output<typeof subscriptionNotificationSchema>): EventObject | undefined {
  const resource = notification.resource;
  for (const kind of EVENT_OBJECT_KEYS) {
    const event = resource[kind];
    if (event !== undefined) return { kind, event } as EventObject;
  }
  return undefined;
}

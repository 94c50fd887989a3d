import { EVENT_TYPES } from "./enums.js";
import { EVENT_OBJECT_KEYS } from "./notification.js";
import type { EventObject, KnownEventType, SubscriptionNotification, SubscriptionResource } from "./types.js";

// Helpers over a parsed notification. They sit apart from the schemas because they are typed with the
// types inferred from those schemas: in one file, schemas and inferred types would import each other.

/** The event object a notification carries, tagged with its key; undefined when it carries none. */
export function eventObjectOf(notification: { resource: SubscriptionResource }): EventObject | undefined {
  const resource = notification.resource;
  for (const kind of EVENT_OBJECT_KEYS) {
    const event = resource[kind];
    // The cast pairs `kind` with its own event type, which TypeScript cannot follow through the loop.
    if (event !== undefined) return { kind, event } as EventObject;
  }
  return undefined;
}

const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES);

/**
 * The notification's event_type as a closed union, for exhaustive `switch`es: a value this version
 * does not list yet maps to "UNKNOWN", which is where the interface's own UNKNOWN goes too. The value
 * as received stays on `notification.event_type`.
 */
export function eventTypeOf(notification: Pick<SubscriptionNotification, "event_type">): KnownEventType {
  const type = notification.event_type;
  return KNOWN_EVENT_TYPES.has(type) ? (type as KnownEventType) : "UNKNOWN";
}

import { type SubscriptionEventType, subscriptionEventRows } from "./event-types.js";

/**
 * Every name a person may use for an event type, lower-cased: the event_type itself, the handler key
 * (`onCancel`), the handler's verb without `on` (`cancel`), the CLI's short name (`cancelled`) and the
 * scenario verb. One map, built from the one table, so `send cancel`, `send cancelled`, `send onCancel`
 * and `SUBSCRIPTION_CANCELLED` agree everywhere, in any case.
 */
const BY_NAME: ReadonlyMap<string, SubscriptionEventType> = new Map(
  subscriptionEventRows().flatMap(([eventType, row]) =>
    [eventType, row.handler, row.handler.slice(2), row.shortName, row.verb].map(
      (name) => [name.toLowerCase(), eventType] as const,
    ),
  ),
);

/** The event type `name` stands for (case-insensitive), or undefined when it names none. */
export function eventTypeNamed(name: string): SubscriptionEventType | undefined {
  return BY_NAME.get(name.toLowerCase());
}

/** The names each event type answers to, one line each, for an error or a help text. */
export function eventNamesList(indent = "  "): string {
  return subscriptionEventRows()
    .map(([eventType, row]) => {
      const names = [...new Set([row.verb, row.shortName, row.handler])];
      return `${indent}${eventType.padEnd(24)} ${names.join(", ")}`;
    })
    .join("\n");
}

import { shownId } from "../logging/transform-payload.js";
import { eventTypeOf } from "../schema/index.js";

/** Ids go on spans as they are, unless one is a card number: an id is no excuse to export a PAN. */
export const idAttribute = shownId;

/**
 * Attribute names on spans and metrics. Only these are ever set: identifiers the platform assigns and
 * the library's own verdicts, never a field of the notification's resource (card data, names, emails).
 */
export const ATTR = {
  notificationId: "webhook.notification.id",
  eventType: "webhook.event_type",
  outcome: "webhook.outcome",
  attempt: "webhook.attempt",
  subscriptionId: "webhook.subscription.id",
  source: "webhook.source",
  queueLagMs: "webhook.queue.lag_ms",
  status: "http.response.status_code",
  errorType: "error.type",
  queue: "messaging.destination.name",
  gapKind: "webhook.reconcile.gap_kind",
  repaired: "webhook.reconcile.repaired",
  mode: "webhook.reconcile.mode",
} as const;

/**
 * `event_type` as a metric attribute: event types the platform adds later pass validation, and a sender
 * could make up any number of them, so values the library does not know are counted as `UNKNOWN` (as
 * `eventTypeOf` dispatches them), keeping the number of series bounded. Spans carry the value as sent.
 * `none` when the notification was refused before its event type was known.
 */
export function eventTypeLabel(eventType: string | undefined): string {
  return eventType === undefined ? "none" : eventTypeOf({ event_type: eventType });
}

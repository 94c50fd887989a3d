import type { Span } from "@opentelemetry/api";
import type { ObservedLine } from "./answer-line.js";
import { ATTR, eventTypeLabel, idAttribute } from "./attributes.js";
import type { Metrics, Telemetry } from "./telemetry.js";

/**
 * End a notification's span with what its log line says: the line gains `trace_id` and `span_id`, the
 * span gains the line's identifiers and verdict, and an error status when `failed`.
 */
export function endSpan({ api }: Telemetry, span: Span, line: ObservedLine, failed: boolean): void {
  const { traceId, spanId } = span.spanContext();
  line.trace_id = traceId;
  line.span_id = spanId;
  span.setAttributes(spanAttributes(line));
  if (failed) span.setStatus({ code: api.SpanStatusCode.ERROR, message: line.outcome });
  span.end();
}

/** Count one notification's outcome, by event type and by who counted it (a receiver or a worker). */
export function countNotification(metrics: Metrics, line: ObservedLine, source: "receiver" | "worker"): void {
  metrics.notifications.add(1, {
    [ATTR.outcome]: line.outcome,
    [ATTR.eventType]: eventTypeLabel(line.event_type),
    [ATTR.source]: source,
  });
}

/** Identifiers and verdicts only (see `ATTR`): nothing from the notification's resource but its id. */
function spanAttributes(line: ObservedLine): Record<string, string | number> {
  const attributes: Record<string, string | number> = { [ATTR.outcome]: line.outcome };
  if (line.status !== undefined) attributes[ATTR.status] = line.status;
  if (line.notification_id !== undefined) attributes[ATTR.notificationId] = idAttribute(line.notification_id);
  if (line.event_type !== undefined) attributes[ATTR.eventType] = line.event_type;
  if (line.attempt !== undefined) attributes[ATTR.attempt] = line.attempt;
  if (line.subscription_id !== undefined) attributes[ATTR.subscriptionId] = idAttribute(line.subscription_id);
  return attributes;
}

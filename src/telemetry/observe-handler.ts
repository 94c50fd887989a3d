import type { Context } from "@opentelemetry/api";
import type { HandlerFields, HandlerObserver } from "../dispatch/handler-observer.js";
import { failureOutcome } from "../dispatch/retry-decision.js";
import { HandlerTimeoutError, LeaseLostError } from "../dispatch/run-claimed.js";
import { ATTR, eventTypeLabel, idAttribute } from "./attributes.js";
import type { Telemetry } from "./telemetry.js";

export type { HandlerFields, HandlerObserver };

/**
 * Run a handler inside a `webhook.handler` span, child of `parent`, and record its duration. The span
 * is the active one while the handler runs, so spans the merchant's own code makes nest under it. A
 * failure is named by its outcome only: an error's message may quote the notification.
 */
export async function observeHandler<T>(
  telemetry: Telemetry,
  parent: Context,
  fields: HandlerFields,
  run: () => Promise<T>,
): Promise<T> {
  const { api, tracer, metrics } = telemetry;
  const span = tracer?.startSpan(
    "webhook.handler",
    {
      kind: api.SpanKind.INTERNAL,
      attributes: {
        [ATTR.notificationId]: idAttribute(fields.notificationId),
        [ATTR.eventType]: fields.eventType,
        [ATTR.attempt]: fields.attempt,
        [ATTR.source]: fields.source,
      },
    },
    parent,
  );
  const started = performance.now();
  let outcome = "processed";
  try {
    return await api.context.with(span ? api.trace.setSpan(parent, span) : parent, run);
  } catch (err) {
    outcome =
      err instanceof HandlerTimeoutError
        ? "handler_timeout"
        : err instanceof LeaseLostError
          ? "lease_lost"
          : failureOutcome(err);
    span?.setStatus({ code: api.SpanStatusCode.ERROR, message: outcome });
    span?.setAttribute(ATTR.errorType, outcome);
    throw err;
  } finally {
    span?.setAttribute(ATTR.outcome, outcome);
    span?.end();
    metrics?.handlerDuration.record((performance.now() - started) / 1000, {
      [ATTR.outcome]: outcome,
      [ATTR.eventType]: eventTypeLabel(fields.eventType),
      [ATTR.source]: fields.source,
    });
  }
}

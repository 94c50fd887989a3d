import type { Context, Span } from "@opentelemetry/api";
import type { ObservedLine } from "./answer-line.js";
import { ATTR } from "./attributes.js";
import { type HeaderSource, headerGetter } from "./header-getter.js";
import { type HandlerObserver, observeHandler } from "./observe-handler.js";
import { countNotification, endSpan } from "./record-line.js";
import { currentTelemetry, type Telemetry } from "./telemetry.js";

/** One request's telemetry, from its arrival to its answer. */
export interface ReceiveObservation {
  /** Run `task` with the notification's span active (an enqueue, so a BullMQ producer span joins the trace). */
  inSpan<T>(task: () => T): T;
  /** Run the handler in a child span and record its duration. */
  handler: HandlerObserver;
  /** The trace context to put in a queued job (W3C `traceparent`, `tracestate`), or undefined. */
  carrier(): Record<string, string> | undefined;
  /** The answer is ready: adds `trace_id`/`span_id` to `line`, then records the span, the count and the duration. */
  end(line: ObservedLine): void;
}

/** With nothing registered: every method passes straight through, and nothing is allocated per request. */
export const UNOBSERVED: ReceiveObservation = {
  inSpan: (task) => task(),
  handler: (_fields, run) => run(),
  carrier: () => undefined,
  end: () => {},
};

/**
 * Start observing a request. The parent is the active span when HTTP instrumentation made one (it has
 * read `traceparent` already), or else the `traceparent` of the request's own headers.
 */
export function observeReceive(headers: HeaderSource): ReceiveObservation {
  const telemetry = currentTelemetry();
  return telemetry ? startObservation(telemetry, headers) : UNOBSERVED;
}

function startObservation(telemetry: Telemetry, headers: HeaderSource): ReceiveObservation {
  const { api, tracer, metrics } = telemetry;
  const active = api.context.active();
  const instrumented = api.trace.getSpan(active) !== undefined;
  const parent = instrumented ? active : api.propagation.extract(active, headers, headerGetter);
  const span: Span | undefined = tracer?.startSpan(
    "webhook.receive",
    { kind: instrumented ? api.SpanKind.INTERNAL : api.SpanKind.SERVER },
    parent,
  );
  const context: Context = span ? api.trace.setSpan(parent, span) : parent;

  return {
    inSpan: (task) => api.context.with(context, task),
    handler: (fields, run) => observeHandler(telemetry, context, { ...fields, source: "receiver" }, run),
    carrier() {
      if (!span) return undefined;
      const carrier: Record<string, string> = {};
      api.propagation.inject(context, carrier);
      return Object.keys(carrier).length > 0 ? carrier : undefined;
    },
    end(line) {
      if (span) endSpan(telemetry, span, line, line.status !== undefined && line.status >= 500);
      if (metrics) {
        countNotification(metrics, line, "receiver");
        if (line.duration_ms !== undefined)
          metrics.receiveDuration.record(line.duration_ms / 1000, { [ATTR.outcome]: line.outcome });
      }
    },
  };
}

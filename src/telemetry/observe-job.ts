import type { Context, Span } from "@opentelemetry/api";
import type { ObservedLine } from "./answer-line.js";
import { ATTR } from "./attributes.js";
import { type HandlerObserver, observeHandler } from "./observe-handler.js";
import { countNotification, endSpan } from "./record-line.js";
import { currentTelemetry, type Telemetry } from "./telemetry.js";

/** A queued notification's start in a worker: the trace context the receiver put in the job, and its wait. */
export interface JobStart {
  /** `traceparent` (and `tracestate`) from the job data, when the receiver was tracing; anything else is ignored. */
  carrier?: unknown;
  queue: string;
  /** Milliseconds from the receiver's acknowledgement to now. */
  queueLagMs: number;
  /** The job's first start: only then is the wait recorded as queue lag (a retry's backoff is no lag). */
  firstStart: boolean;
}

/** One job's telemetry in a worker. */
export interface JobObservation {
  handler: HandlerObserver;
  /** The job ended (or was put back): adds `trace_id`/`span_id` to `line`, then records the span and the count. */
  end(line: ObservedLine, counted: boolean): void;
}

const UNOBSERVED: JobObservation = {
  handler: (_fields, run) => run(),
  end: () => {},
};

/**
 * Start observing a job. Its `webhook.process` span continues the receiver's trace from the job data;
 * if BullMQ's own telemetry (`bullmq-otel`) already made a consumer span in that trace, it nests under it.
 */
export function observeJob(start: JobStart): JobObservation {
  const telemetry = currentTelemetry();
  return telemetry ? startObservation(telemetry, start) : UNOBSERVED;
}

function startObservation(telemetry: Telemetry, start: JobStart): JobObservation {
  const { api, tracer, metrics } = telemetry;
  if (metrics && start.firstStart)
    metrics.queueLag.record(Math.max(0, start.queueLagMs) / 1000, { [ATTR.queue]: start.queue });
  const parent = parentOf(telemetry, start.carrier);
  const span: Span | undefined = tracer?.startSpan(
    "webhook.process",
    {
      kind: api.SpanKind.CONSUMER,
      attributes: { [ATTR.queue]: start.queue, [ATTR.queueLagMs]: Math.round(start.queueLagMs) },
    },
    parent,
  );
  const context: Context = span ? api.trace.setSpan(parent, span) : parent;

  return {
    handler: (fields, run) => observeHandler(telemetry, context, { ...fields, source: "worker" }, run),
    end(line, counted) {
      if (span) endSpan(telemetry, span, line, line.outcome.startsWith("handler_"));
      if (metrics && counted) countNotification(metrics, line, "worker");
    },
  };
}

function parentOf({ api }: Telemetry, carrier: unknown): Context {
  const active = api.context.active();
  if (typeof carrier !== "object" || carrier === null) return active;
  const extracted = api.propagation.extract(api.ROOT_CONTEXT, carrier);
  const sent = api.trace.getSpanContext(extracted);
  const current = api.trace.getSpanContext(active);
  // BullMQ's consumer span, continuing the same trace, is the closer parent; any other active span is not ours.
  return sent && current?.traceId === sent.traceId ? active : extracted;
}

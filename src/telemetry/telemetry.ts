import type { Counter, Histogram, Meter, MeterProvider, Tracer, TracerProvider } from "@opentelemetry/api";
import { ATTR } from "./attributes.js";
import { type OtelApi, otelApi } from "./load-api.js";

/** The instrumentation scope every span and instrument is created under. */
export const SCOPE = "merchant-webhooks";

export interface Metrics {
  notifications: Counter;
  handlerDuration: Histogram;
  receiveDuration: Histogram;
  queueLag: Histogram;
  reconcileGaps: Counter;
}

/** What is recorded while an OpenTelemetry SDK is registered; either part may be off on its own. */
export interface Telemetry {
  api: OtelApi;
  tracer?: Tracer;
  metrics?: Metrics;
}

/** Counts the failed (dead-letter) set of one queue, for the depth gauge. */
export interface FailedSetSource {
  queue: string;
  count(): Promise<number>;
}

const failedSets = new Set<FailedSetSource>();

// Seconds, as OpenTelemetry's conventions ask; Prometheus shows them as `_seconds` histograms.
const HANDLER_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const RECEIVE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

let cached: { tracerProvider?: TracerProvider; meterProvider?: MeterProvider; telemetry?: Telemetry } = {};

/**
 * The tracer and instruments of the providers registered now, or undefined when there is nothing to
 * record (the API is not installed, or no SDK registered a provider): callers then do no work at all.
 * A notification costs two provider look-ups; spans and instruments are made again only when a
 * different provider is registered.
 */
export function currentTelemetry(): Telemetry | undefined {
  const api = otelApi();
  if (!api) return undefined;
  const tracerProvider = delegateOf(api.trace.getTracerProvider());
  const meterProvider = api.metrics.getMeterProvider();
  if (tracerProvider !== cached.tracerProvider || meterProvider !== cached.meterProvider) {
    cached = { tracerProvider, meterProvider, telemetry: telemetryOf(api, tracerProvider, meterProvider) };
  }
  return cached.telemetry;
}

/**
 * Have `source` observed by the failed-set depth gauge while metrics are on; returns the function that
 * stops it. Sources are read when the metric reader collects, not per notification.
 */
export function observeFailedSet(source: FailedSetSource): () => void {
  failedSets.add(source);
  currentTelemetry();
  return () => void failedSets.delete(source);
}

/** The API's global provider is a proxy; without an SDK it delegates to the no-op provider. */
function delegateOf(provider: TracerProvider): TracerProvider {
  const proxy = provider as TracerProvider & { getDelegate?: () => TracerProvider };
  return typeof proxy.getDelegate === "function" ? proxy.getDelegate() : provider;
}

function telemetryOf(
  api: OtelApi,
  tracerProvider: TracerProvider,
  meterProvider: MeterProvider,
): Telemetry | undefined {
  const noopTracerProvider = new api.ProxyTracerProvider().getDelegate();
  const tracer = tracerProvider === noopTracerProvider ? undefined : tracerProvider.getTracer(SCOPE);
  const meter = meterProvider.getMeter(SCOPE);
  const metrics = meter === api.createNoopMeter() ? undefined : metricsOf(meter);
  if (!tracer && !metrics) return undefined;
  return { api, tracer, metrics };
}

function metricsOf(meter: Meter): Metrics {
  meter
    .createObservableGauge("webhook.queue.failed", {
      description: "Jobs in the BullMQ failed set (the dead-letter queue), per queue a worker takes from",
      unit: "{job}",
    })
    .addCallback(async (result) => {
      await Promise.all(
        [...failedSets].map(async (source) => {
          // A queue that cannot be counted now (Redis down) is left out of this collection.
          const count = await source.count().catch(() => undefined);
          if (count !== undefined) result.observe(count, { [ATTR.queue]: source.queue });
        }),
      );
    });
  return {
    notifications: meter.createCounter("webhook.notifications", {
      description: "Notifications answered by receivers and run by workers, by outcome and event type",
      unit: "{notification}",
    }),
    handlerDuration: meter.createHistogram("webhook.handler.duration", {
      description: "Time a handler took",
      unit: "s",
      advice: { explicitBucketBoundaries: HANDLER_BUCKETS },
    }),
    receiveDuration: meter.createHistogram("webhook.receive.duration", {
      description: "Time from a request reaching the receiver to its answer",
      unit: "s",
      advice: { explicitBucketBoundaries: RECEIVE_BUCKETS },
    }),
    reconcileGaps: meter.createCounter("webhook.reconcile.gaps", {
      description: "Gaps reconcile runs found (what the platform never delivered), by kind, mode and whether repaired",
      unit: "{gap}",
    }),
    queueLag: meter.createHistogram("webhook.queue.lag", {
      description: "Time from the receiver's acknowledgement to a worker's first start of the notification",
      unit: "s",
      advice: { explicitBucketBoundaries: LAG_BUCKETS },
    }),
  };
}

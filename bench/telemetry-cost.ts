import os from "node:os";
import { context, metrics, propagation, trace } from "@opentelemetry/api";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { createReceiver, memoryStore } from "merchant-webhooks";
import { pino } from "pino";
import { observeReceive } from "../src/telemetry/observe-receive.js";
import { type Step, timeSteps } from "./cpu-rounds.js";
import { notificationText } from "./notification-body.js";

/**
 * What OpenTelemetry costs per notification, in the core alone (one process, memory store): the same
 * receiver with no SDK registered (the API installed, nothing recording) and with a tracer provider
 * (batching span processor, every span sampled) and a meter provider registered, batches taking turns.
 * The providers are registered and removed between batches, outside the timed part. A third step
 * times the receiver's telemetry calls alone with no SDK registered: what a notification pays for
 * telemetry being there at all.
 */
const size = Number(process.env.TELEMETRY_BATCH ?? 10_000);
const rounds = Number(process.env.TELEMETRY_ROUNDS ?? 9);

// Spans are batched and handed to an exporter that drops them: the cost of sending them is the collector's.
const dropSpans: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
const tracerProvider = new NodeTracerProvider({
  spanProcessors: [
    new BatchSpanProcessor(dropSpans, {
      maxQueueSize: 100_000,
      maxExportBatchSize: 2_048,
      scheduledDelayMillis: 1_000,
    }),
  ],
});
const meterProvider = new MeterProvider({
  readers: [
    new PeriodicExportingMetricReader({
      exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
      exportIntervalMillis: 60_000,
    }),
  ],
});

/** As an application does: the tracer provider with the W3C propagator and the AsyncLocalStorage context manager. */
function register(): void {
  tracerProvider.register();
  metrics.setGlobalMeterProvider(meterProvider);
}
/**
 * The providers alone, without the AsyncLocalStorage context manager: on Node 20 that manager puts a
 * hook on every promise of the process, a cost of the SDK's set-up rather than of these spans.
 */
function registerWithoutContextManager(): void {
  unregister();
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
}
function unregister(): void {
  trace.disable();
  metrics.disable();
  context.disable();
  propagation.disable();
}

const encoder = new TextEncoder();
let next = 0;
let handled = 0;
const receiver = createReceiver({
  logger: pino(pino.destination({ dest: "/dev/null", sync: true })),
  idempotency: memoryStore({ maxEntries: 1_000_000 }),
  onRenew: () => {
    handled++;
  },
});
const headers = { "content-type": "application/json" };

const step = (name: string, setup: () => void): Step => ({
  name,
  async: true,
  prepare(count) {
    setup();
    const bodies = Array.from({ length: count }, () => encoder.encode(notificationText(`telemetry-${next++}`)));
    return async (i) => {
      const response = await receiver.handle({ method: "POST", headers, rawBody: bodies[i]! });
      if (response.status !== 200) throw new Error(`unexpected ${response.status}: ${response.body}`);
    };
  },
});

// A thousand calls per timed operation: one call is far below the CPU clock's resolution.
const CALLS = 1_000;
const callsAlone: Step = {
  name: "telemetry calls alone, no SDK (per 1,000)",
  prepare() {
    unregister();
    return () => {
      for (let i = 0; i < CALLS; i++)
        observeReceive(headers).end({ outcome: "processed", status: 200, duration_ms: 1 });
    };
  },
};

const [off, on, bare, calls] = await timeSteps(
  [
    step("no SDK registered", unregister),
    step("traces + metrics", register),
    step("traces + metrics, no context manager", registerWithoutContextManager),
    callsAlone,
  ],
  {
    rounds,
    size,
    warmup: 5_000,
  },
);
unregister();
await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);

const result = {
  notifications: rounds * size * 3,
  us_per_notification_without_sdk: off!.us,
  us_per_notification_with_traces_and_metrics: on!.us,
  added_us_per_notification: Math.round((on!.us - off!.us) * 100) / 100,
  ratio: Math.round((on!.us / off!.us) * 100) / 100,
  us_per_notification_with_traces_and_metrics_no_context_manager: bare!.us,
  added_us_without_context_manager: Math.round((bare!.us - off!.us) * 100) / 100,
  ns_per_notification_for_telemetry_calls_without_sdk: Math.round((calls!.us * 1000) / CALLS),
  handled,
  machine: `${os.cpus()[0]?.model ?? "unknown cpu"}, ${os.cpus().length} cores, Node ${process.version}`,
};
console.log(JSON.stringify(result));

import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { type InstalledOtel, installOtel } from "./fixtures/otel.js";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const traceparent = `00-${TRACE_ID}-b7ad6b7169203331-01`;

describe("traces and metrics of the BullMQ path", () => {
  const prefix = uniquePrefix("otel");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}-store:` });
  const queue = bullmqQueue({ connection: REDIS_URL, name: "otel", prefix, jobOptions: { attempts: 1 } });
  const receiver = createReceiver({ logger: captureLogger().logger, idempotency: store, queue });
  const workerLog = captureLogger();
  let otel: InstalledOtel;
  let worker: ReturnType<typeof createWorker>;

  beforeAll(async () => {
    otel = installOtel();
    worker = createWorker({
      connection: REDIS_URL,
      name: "otel",
      prefix,
      idempotency: store,
      logger: workerLog.logger,
      onRenew: () => {},
      onCancel: () => {
        throw new Error("entitlement service down");
      },
    });
    await worker.waitUntilReady();
  });

  afterAll(async () => {
    await worker.close({ timeoutMs: 5_000 });
    await receiver.close();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
    await otel.uninstall();
  });

  const post = (body: unknown) =>
    receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json", traceparent },
      rawBody: json(body),
    });

  it("carries the trace in the job: the worker's handler span joins the receiver's trace", async () => {
    const body = notification("SUBSCRIPTION_RENEW");
    expect((await post(body)).status).toBe(200);

    // The worker may start the job once before the receiver has marked it queued and put it back: that
    // run's span has no handler child. The run that handled it does.
    const { processSpan, handler } = await eventually(
      () => {
        for (const span of otel.finished("webhook.process")) {
          if (span.attributes["webhook.notification.id"] !== body.id) continue;
          const child = otel
            .finished("webhook.handler")
            .find((h) => h.parentSpanContext?.spanId === span.spanContext().spanId);
          if (child) return { processSpan: span, handler: child };
        }
        return undefined;
      },
      20_000,
      "the worker's span with its handler child",
    );
    const receive = otel
      .finished("webhook.receive")
      .find((span) => span.attributes["webhook.notification.id"] === body.id)!;

    expect(receive.attributes["webhook.outcome"]).toBe("queued");
    expect(receive.spanContext().traceId).toBe(TRACE_ID);
    expect(processSpan.spanContext().traceId).toBe(TRACE_ID);
    expect(processSpan.parentSpanContext?.spanId).toBe(receive.spanContext().spanId);
    expect(handler.spanContext().traceId).toBe(TRACE_ID);
    expect(handler.attributes).toMatchObject({ "webhook.outcome": "processed", "webhook.source": "worker" });

    const line = await eventually(() =>
      workerLog.lines().find((entry) => entry.notification_id === body.id && entry.outcome === "processed"),
    );
    expect(line).toMatchObject({ trace_id: TRACE_ID, span_id: processSpan.spanContext().spanId });
    expect(typeof line.queue_lag_ms).toBe("number");
    expect(line.queue_lag_ms).toBeGreaterThanOrEqual(0);

    expect(
      await otel.sum("webhook.notifications", { "webhook.source": "receiver", "webhook.outcome": "queued" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      await otel.sum("webhook.notifications", { "webhook.source": "worker", "webhook.outcome": "processed" }),
    ).toBeGreaterThanOrEqual(1);
    const lag = (await otel.metric("webhook.queue.lag"))?.dataPoints ?? [];
    expect(lag.reduce((total, point) => total + (point.value as { count: number }).count, 0)).toBeGreaterThanOrEqual(1);
  });

  it("gauges the depth of the failed set", async () => {
    const body = notification("SUBSCRIPTION_CANCELLED");
    expect((await post(body)).status).toBe(200);
    await eventually(async () => (await queue.queue.getFailedCount()) === 1, 20_000, "the job to fail");

    const depth = async () => {
      const points = (await otel.metric("webhook.queue.failed"))?.dataPoints ?? [];
      return points.find((point) => point.attributes["messaging.destination.name"] === "otel")?.value;
    };
    expect(await depth()).toBe(1);
    expect(
      await otel.sum("webhook.notifications", { "webhook.source": "worker", "webhook.outcome": "handler_failed" }),
    ).toBe(1);
  });
});

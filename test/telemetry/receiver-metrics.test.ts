import { createReceiver, memoryStore } from "merchant-webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { type InstalledOtel, installOtel } from "./fixtures/otel.js";

describe("metrics of the in-request path", () => {
  let otel: InstalledOtel;
  beforeAll(() => {
    otel = installOtel();
  });
  afterAll(() => otel.uninstall());

  it("counts a scripted mix by outcome and event type, and times every answer and handler", async () => {
    const receiver = createReceiver({
      idempotency: memoryStore(),
      logger: captureLogger().logger,
      onRenew: () => {},
      onCancel: () => {
        throw new Error("entitlement service down");
      },
    });
    const post = (body: unknown) =>
      receiver.handle({ method: "POST", headers: { "content-type": "application/json" }, rawBody: json(body) });
    const first = notification("SUBSCRIPTION_RENEW");
    const statuses = [
      await post(first),
      await post(notification("SUBSCRIPTION_RENEW")),
      await post(first),
      await post({ ...notification(), resource: "not an object" }),
      await post(notification("SUBSCRIPTION_CANCELLED")),
      await post({ ...notification(), event_type: "SUBSCRIPTION_PAUSED_IN_2030" }),
    ].map((response) => response.status);
    expect(statuses).toEqual([200, 200, 200, 400, 500, 200]);

    const count = (outcome: string, eventType?: string) =>
      otel.sum("webhook.notifications", {
        "webhook.outcome": outcome,
        "webhook.source": "receiver",
        ...(eventType ? { "webhook.event_type": eventType } : {}),
      });
    expect(await count("processed", "SUBSCRIPTION_RENEW")).toBe(2);
    expect(await count("duplicate", "SUBSCRIPTION_RENEW")).toBe(1);
    expect(await count("invalid")).toBe(1);
    expect(await count("handler_failed", "SUBSCRIPTION_CANCELLED")).toBe(1);
    // An event type the library does not know is counted as UNKNOWN, so senders cannot add series at will.
    expect(await count("unhandled", "UNKNOWN")).toBe(1);
    expect(await otel.sum("webhook.notifications")).toBe(6);

    const histogramCount = async (name: string, outcome: string) => {
      const points = (await otel.metric(name))?.dataPoints ?? [];
      return points
        .filter((point) => point.attributes["webhook.outcome"] === outcome)
        .reduce((total, point) => total + (point.value as { count: number }).count, 0);
    };
    expect((await otel.metric("webhook.receive.duration"))?.descriptor.unit).toBe("s");
    expect(await histogramCount("webhook.receive.duration", "processed")).toBe(2);
    expect(await histogramCount("webhook.receive.duration", "invalid")).toBe(1);
    expect(await histogramCount("webhook.handler.duration", "processed")).toBe(2);
    expect(await histogramCount("webhook.handler.duration", "handler_failed")).toBe(1);
  });
});

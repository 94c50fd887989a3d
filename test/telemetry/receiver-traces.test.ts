import { createReceiver, memoryStore } from "merchant-webhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { type InstalledOtel, installOtel } from "./fixtures/otel.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN_ID = "00f067aa0ba902b7";
const traceparent = `00-${TRACE_ID}-${PARENT_SPAN_ID}-01`;

/** Every string the test notification carries that is card data or personal data. */
const SECRETS = [
  "411111",
  "411111******1111",
  "123",
  "ADA EXAMPLE",
  "Ada Example",
  "ada@example.com",
  "203.0.113.7",
  "+4915112345678",
  "Berlin",
  "10115",
  "CUST-88213",
  "billing@merchant.example",
  "crm-88213",
  "ORD-2026112300081529",
];

describe("traces of the in-request path", () => {
  let otel: InstalledOtel;
  beforeAll(() => {
    otel = installOtel();
  });
  afterAll(() => otel.uninstall());
  beforeEach(() => otel.spans.reset());

  it("continues the sender's traceparent: webhook.receive, and the handler span as its child", async () => {
    const body = notification("SUBSCRIPTION_RENEW");
    const receiver = createReceiver({ idempotency: memoryStore(), logger: captureLogger().logger, onRenew: () => {} });
    const response = await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json", traceparent },
      rawBody: json(body),
    });
    expect(response.status).toBe(200);

    const [receive] = otel.finished("webhook.receive");
    const [handler] = otel.finished("webhook.handler");
    expect(receive!.spanContext().traceId).toBe(TRACE_ID);
    expect(receive!.parentSpanContext?.spanId).toBe(PARENT_SPAN_ID);
    expect(handler!.spanContext().traceId).toBe(TRACE_ID);
    expect(handler!.parentSpanContext?.spanId).toBe(receive!.spanContext().spanId);
    expect(receive!.attributes).toEqual({
      "webhook.notification.id": body.id,
      "webhook.event_type": "SUBSCRIPTION_RENEW",
      "webhook.outcome": "processed",
      "http.response.status_code": 200,
      "webhook.attempt": 1,
      "webhook.subscription.id": body.resource.id,
    });
    expect(handler!.attributes).toMatchObject({ "webhook.outcome": "processed", "webhook.attempt": 1 });
  });

  it("starts a trace of its own without a traceparent, and marks a failed handler as an error", async () => {
    const receiver = createReceiver({
      idempotency: memoryStore(),
      logger: captureLogger().logger,
      onCancel: () => {
        throw new Error("card 4111111111111111 declined for ada@example.com");
      },
    });
    const response = await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json" },
      rawBody: json(notification("SUBSCRIPTION_CANCELLED")),
    });
    expect(response.status).toBe(500);

    const [receive] = otel.finished("webhook.receive");
    const [handler] = otel.finished("webhook.handler");
    expect(receive!.parentSpanContext).toBeUndefined();
    expect(handler!.spanContext().traceId).toBe(receive!.spanContext().traceId);
    expect(receive!.status).toEqual({ code: 2, message: "handler_failed" });
    expect(handler!.status).toEqual({ code: 2, message: "handler_failed" });
    // The error's message (which quotes the notification) is nowhere on the spans.
    expect(
      JSON.stringify([receive!.attributes, handler!.attributes, handler!.events, receive!.status, handler!.status]),
    ).not.toMatch(/4111|ada@/);
  });

  it("puts the receive span's trace_id and span_id on the notification's log line", async () => {
    const log = captureLogger();
    const receiver = createReceiver({ idempotency: memoryStore(), logger: log.logger, onRenew: () => {} });
    await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json", traceparent },
      rawBody: json(notification()),
    });

    const [receive] = otel.finished("webhook.receive");
    const line = log.lines().find((entry) => entry.outcome === "processed");
    expect(line).toMatchObject({ trace_id: TRACE_ID, span_id: receive!.spanContext().spanId });
  });

  it("never puts card data or personal data into an attribute, whatever the outcome", async () => {
    const receiver = createReceiver({
      idempotency: memoryStore(),
      logger: captureLogger().logger,
      onRenew: () => {},
      onCancel: () => {
        throw new Error("failed");
      },
    });
    const renewal = notification("SUBSCRIPTION_RENEW");
    const invalid = { ...notification("SUBSCRIPTION_RENEW"), create_time: "yesterday" };
    for (const body of [
      renewal,
      renewal,
      invalid,
      notification("SUBSCRIPTION_CANCELLED"),
      notification("SUBSCRIPTION_SUSPENDED"),
    ]) {
      await receiver.handle({
        method: "POST",
        headers: { "content-type": "application/json", traceparent },
        rawBody: json(body),
      });
    }

    const spans = otel.spans.getFinishedSpans();
    expect(spans.length).toBeGreaterThanOrEqual(7);
    const values = spans.flatMap((span) => Object.values(span.attributes).map(String));
    // Digits alone could occur inside an id or a timestamp by chance: those are compared whole.
    const leaks = (secret: string) =>
      values.filter((value) => (/^\d+$/.test(secret) ? value === secret : value.includes(secret)));
    for (const secret of SECRETS) expect(leaks(secret)).toEqual([]);
  });
});

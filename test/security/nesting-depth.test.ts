import express from "express";
import { createReceiver, MAX_BODY_DEPTH, memoryStore, type RecordedNotification } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { buildNotification, redactForRecording } from "merchant-webhooks/testing";
import request from "supertest";
import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";

/** A chain of `levels` objects, `{ "x": { "x": … } }`, as JSON text. */
const nestedText = (levels: number, leaf = '"end"') => '{"x":'.repeat(levels) + leaf + "}".repeat(levels);

/** A valid renewal whose subscriber address carries an extra field nested so that the body is `depth` deep. */
function renewalOfDepth(depth: number, leaf = '"end"'): string {
  const body = notification();
  // body > resource > subscriber > address > extra: the chain starts four levels down.
  body.resource.subscriber.address.extra = "__CHAIN__";
  return JSON.stringify(body).replace('"__CHAIN__"', nestedText(depth - 4, leaf));
}

const rawPost = (text: string) => ({ method: "POST", headers: {}, rawBody: new TextEncoder().encode(text) });
const recorder = () => {
  const entries: RecordedNotification[] = [];
  return { entries, write: (entry: RecordedNotification) => void entries.push(entry) };
};

describe(`bodies nested deeper than ${MAX_BODY_DEPTH} levels`, () => {
  it("are refused with 400 before any handler runs, even with record set (6,000 levels)", async () => {
    const onRenew = vi.fn();
    const record = recorder();
    const receiver = createReceiver({ logger: silentLogger(), onRenew, record });
    const response = await receiver.handle(rawPost(renewalOfDepth(6_000)));
    expect({ status: response.status, ...response.answer }).toEqual({
      status: 400,
      processed: false,
      message: `body is nested deeper than ${MAX_BODY_DEPTH} levels`,
    });
    // With a `\u` escape, JSON.parse's reviver used to overflow at about 4,000 levels: still the depth answer.
    expect((await receiver.handle(rawPost(renewalOfDepth(4_000, '"caf\\u00e9"')))).answer.message).toBe(
      `body is nested deeper than ${MAX_BODY_DEPTH} levels`,
    );
    expect(onRenew).not.toHaveBeenCalled();
    await receiver.close();
  });

  it("are refused when an earlier middleware parsed them, too", async () => {
    const onRenew = vi.fn();
    const receiver = createReceiver({ logger: silentLogger(), onRenew, record: recorder() });
    const response = await receiver.handle({
      method: "POST",
      headers: {},
      parsedBody: JSON.parse(renewalOfDepth(6_000)),
    });
    expect(response.status).toBe(400);
    expect(onRenew).not.toHaveBeenCalled();
  });

  it(`accept a valid notification exactly ${MAX_BODY_DEPTH} deep, \\u escapes and all, and record it`, async () => {
    const onRenew = vi.fn();
    const record = recorder();
    const receiver = createReceiver({ logger: silentLogger(), onRenew, record });
    expect((await receiver.handle(rawPost(renewalOfDepth(MAX_BODY_DEPTH, '"caf\\u00e9"')))).status).toBe(200);
    expect((await receiver.handle(rawPost(renewalOfDepth(MAX_BODY_DEPTH + 1, '"caf\\u00e9"')))).status).toBe(400);
    await receiver.close();
    expect(onRenew).toHaveBeenCalledTimes(1);
    expect(record.entries).toHaveLength(1);
  });

  it(`accept ${MAX_BODY_DEPTH} levels and refuse ${MAX_BODY_DEPTH + 1} without escapes too, keeping one fingerprint per payload`, async () => {
    const onRenew = vi.fn();
    const store = memoryStore();
    const receiver = createReceiver({ logger: silentLogger(), onRenew, idempotency: store });
    const text = renewalOfDepth(MAX_BODY_DEPTH);
    expect((await receiver.handle(rawPost(text))).answer).toEqual({ processed: true, message: "processed" });
    expect((await receiver.handle(rawPost(renewalOfDepth(MAX_BODY_DEPTH + 1)))).answer.message).toBe(
      `body is nested deeper than ${MAX_BODY_DEPTH} levels`,
    );
    // The same payload spaced out (fewer brackets than needed no longer decides): a duplicate, not a conflict.
    const spaced = JSON.stringify(JSON.parse(text), null, 1);
    expect((await receiver.handle(rawPost(spaced))).answer.message).toBe("already processed");
    const changed = text.replace('"end"', '"other end"');
    expect((await receiver.handle(rawPost(changed))).status).toBe(422);
    expect(onRenew).toHaveBeenCalledTimes(1);
    await receiver.close();
  });

  it("count brackets inside strings as text", async () => {
    const receiver = createReceiver({ logger: silentLogger(), onRenew: () => {} });
    const body = notification();
    body.summary = "[".repeat(500) + "{".repeat(500);
    expect((await receiver.handle(rawPost(JSON.stringify(body)))).status).toBe(200);
  });

  it("get a JSON 400 on Express, not an HTML stack trace", async () => {
    const app = express();
    app.post("/hook", subscriptionWebhook({ logger: silentLogger(), onRenew: () => {}, record: recorder() }));
    const res = await request(app).post("/hook").set("content-type", "application/json").send(renewalOfDepth(6_000));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ processed: false, message: `body is nested deeper than ${MAX_BODY_DEPTH} levels` });
  });
});

describe("recording never overflows or changes the answer", () => {
  it("redacts a deeply nested value without recursing past its depth limit", () => {
    const deep = JSON.parse(nestedText(20_000));
    const recorded = redactForRecording({ id: "n-1", resource: { subscriber: { address: deep } } }, {});
    expect(JSON.stringify(recorded).length).toBeLessThan(2_000);
  });

  it("answers as usual when the recorder throws", async () => {
    const onRenew = vi.fn();
    const receiver = createReceiver({
      logger: silentLogger(),
      onRenew,
      record: {
        write: () => {
          throw new RangeError("Maximum call stack size exceeded");
        },
      },
    });
    const response = await receiver.handle(rawPost(JSON.stringify(notification())));
    expect(response.status).toBe(200);
    expect(onRenew).toHaveBeenCalledTimes(1);
    await receiver.close();
  });
});

describe("the testing kit's overrides", () => {
  it("refuse nesting deeper than a body may have, instead of overflowing the stack", () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) deep = { x: deep };
    expect(() =>
      buildNotification("SUBSCRIPTION_RENEW", { resource: { subscriber: { address: deep } } } as never),
    ).toThrow(/nested deeper than 64 levels/);
  });
});

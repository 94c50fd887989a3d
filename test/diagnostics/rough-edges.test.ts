import express from "express";
import { createReceiver } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { createPlatformSimulator, type PlatformSimulator } from "merchant-webhooks/simulator";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

let simulator: PlatformSimulator | undefined;
afterEach(async () => {
  await simulator?.close();
  simulator = undefined;
});

describe("a GET on the webhook path", () => {
  it("mounted with app.all, answers JSON 405 with Allow: POST instead of Express's HTML 404", async () => {
    const app = express();
    app.all("/webhook", subscriptionWebhook({ logger: silentLogger(), onRenew: () => {} }));
    const response = await request(app).get("/webhook");
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe("POST");
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.body).toEqual({ processed: false, message: "method not allowed; use POST" });

    const posted = await request(app)
      .post("/webhook")
      .set("content-type", "application/json")
      .send(JSON.stringify(notification()));
    expect(posted.status).toBe(200);
  });
});

describe("the charset error names the charset", () => {
  it("JSON in latin1 is told the charset must be utf-8, not that it must send JSON", async () => {
    const receiver = createReceiver({ logger: silentLogger(), onRenew: () => {} });
    const latin1 = await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json; charset=latin1" },
      rawBody: json(notification()),
    });
    expect(latin1.status).toBe(415);
    expect(latin1.answer.message).toBe("charset must be utf-8: JSON notifications are UTF-8 (RFC 8259)");
    const xml = await receiver.handle({
      method: "POST",
      headers: { "content-type": "text/xml" },
      rawBody: json(notification()),
    });
    expect(xml.answer.message).toBe("content-type must be application/json");
  });
});

describe("failNext", () => {
  it("throws on a path the simulator does not serve, naming the nearest", async () => {
    simulator = createPlatformSimulator();
    await simulator.listen();
    expect(() => simulator!.failNext("/v1/refund/order", 503)).toThrow(
      /^failNext: no endpoint "\/v1\/refund\/order"; did you mean "\/v1\/refund\/orders"\? Endpoints: /,
    );
    expect(() => simulator!.failNext("/v1/refund/orders", 42)).toThrow(/status must be an HTTP status/);
    expect(() => simulator!.failNext("/v1/refund/orders", 503)).not.toThrow();
  });
});

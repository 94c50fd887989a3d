import express5 from "express";
import express4 from "express4";
import {
  type BodyParserErrorHandlerOptions,
  bodyParserErrorHandler,
  subscriptionWebhook,
} from "merchant-webhooks/express";
import request from "supertest";
import { describe, expect, it, vi } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";

const HOOK = "/webhooks/subscriptions";

describe.each([
  ["Express 4", express4 as unknown as typeof express5],
  ["Express 5", express5],
])("bodyParserErrorHandler on %s, behind app.use(express.json())", (_name, express) => {
  function app(options: BodyParserErrorHandlerOptions = {}, onRenew = vi.fn()) {
    const server = express();
    server.use(express.json()); // the mistake: a global parser in front of the webhook, 100 KB default limit
    server.post(HOOK, subscriptionWebhook({ logger: silentLogger(), onRenew }));
    server.post("/orders", (_req, res) => void res.json({ ok: true }));
    server.post(`${HOOK}/boom`, () => {
      throw new Error("not about the body");
    });
    server.use(HOOK, bodyParserErrorHandler(options));
    return server;
  }

  it("answers bad JSON on the webhook path with the receiver's 400 JSON, not an HTML page", async () => {
    const res = await request(app()).post(HOOK).set("content-type", "application/json").send('{"id": "WH-1",');
    expect(res.status).toBe(400);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body).toEqual({ processed: false, message: "body is not valid JSON" });
  });

  it("answers a 150 KB notification over express.json's limit with a JSON 413 naming the limit", async () => {
    const big = notification();
    big.resource.product = { description: "x".repeat(150 * 1024) };
    const onRenew = vi.fn();
    const res = await request(app({}, onRenew)).post(HOOK).send(big);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ processed: false, message: "body exceeds the limit of 102400 bytes" });
    expect(onRenew).not.toHaveBeenCalled();
  });

  it("answers an unsupported charset with the receiver's 415", async () => {
    const res = await request(app()).post(HOOK).set("content-type", "application/json; charset=klingon").send("{}");
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ processed: false, message: "content-type must be application/json" });
  });

  it("answers HTTP 200 with processed: false under failureStatus 200, and warns the logger", async () => {
    const { logger, lines } = captureLogger();
    const res = await request(app({ failureStatus: 200, logger }))
      .post(HOOK)
      .set("content-type", "application/json")
      .send("{");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ processed: false, message: "body is not valid JSON" });
    expect(lines()).toContainEqual(
      expect.objectContaining({
        level: 40,
        type: "entity.parse.failed",
        msg: expect.stringMatching(/mount the webhook before/),
      }),
    );
  });

  it("leaves other paths, and errors that are not about the body, to the app's own handling", async () => {
    const other = await request(app()).post("/orders").set("content-type", "application/json").send("{");
    expect(other.status).toBe(400);
    expect(other.headers["content-type"]).toMatch(/^text\/html/);
    const thrown = await request(app()).post(`${HOOK}/boom`).send({});
    expect(thrown.status).toBe(500);
    expect(thrown.headers["content-type"]).toMatch(/^text\/html/);
  });

  it("changes nothing for a valid notification", async () => {
    const onRenew = vi.fn();
    const res = await request(app({}, onRenew)).post(HOOK).send(notification());
    expect(res.body).toEqual({ processed: true, message: "processed" });
    expect(onRenew).toHaveBeenCalledTimes(1);
  });
});

import express5 from "express";
import express4 from "express4";
import { subscriptionWebhook } from "merchant-webhooks/express";
import request from "supertest";
import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";

const SECRET_HEADER = "x-test-signature";
const verify = (raw: Uint8Array, headers: Readonly<Record<string, string>>) =>
  headers[SECRET_HEADER] === String(raw.byteLength);

describe.each([
  ["Express 4", express4 as unknown as typeof express5],
  ["Express 5", express5],
])("subscriptionWebhook on %s", (_name, express) => {
  function app(options: Parameters<typeof subscriptionWebhook>[0], before: express5.RequestHandler[] = []) {
    const server = express();
    server.post("/hook", ...before, subscriptionWebhook({ logger: silentLogger(), ...options }));
    server.post("/other", express.json(), (req, res) => void res.json({ echoed: req.body }));
    return server;
  }

  it("reads the raw body itself, with no body parser in front", async () => {
    const onRenew = vi.fn();
    const body = notification();
    const res = await request(app({ onRenew })).post("/hook").send(body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ processed: true, message: "processed" });
    expect(onRenew).toHaveBeenCalledTimes(1);
    expect(onRenew.mock.calls[0]![0].id).toBe(body.id);
  });

  it("verifies the exact bytes when express.raw() ran first", async () => {
    const text = JSON.stringify(notification());
    const res = await request(app({ verify, onRenew: () => {} }, [express.raw({ type: "*/*" })]))
      .post("/hook")
      .set("content-type", "application/json")
      .set(SECRET_HEADER, String(Buffer.byteLength(text)))
      .send(text);
    expect(res.status).toBe(200);
  });

  it("uses the string express.text() left behind", async () => {
    const text = JSON.stringify(notification());
    const res = await request(app({ verify, onRenew: () => {} }, [express.text({ type: "*/*" })]))
      .post("/hook")
      .set("content-type", "application/json")
      .set(SECRET_HEADER, String(Buffer.byteLength(text)))
      .send(text);
    expect(res.status).toBe(200);
  });

  it("still works behind express.json() for unsigned notifications", async () => {
    const onRenew = vi.fn();
    const res = await request(app({ onRenew }, [express.json()]))
      .post("/hook")
      .send(notification());
    expect(res.status).toBe(200);
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("answers a clear 500 configuration error, not a hang, when express.json() ate the body and verify is set", async () => {
    const onRenew = vi.fn();
    const res = await request(app({ verify, onRenew }, [express.json()]))
      .post("/hook")
      .send(notification())
      .timeout(5_000);
    expect(res.status).toBe(500);
    expect(res.body.processed).toBe(false);
    expect(res.body.message).toMatch(/mount the webhook before app\.use\(express\.json\(\)\)/);
    expect(onRenew).not.toHaveBeenCalled();
  });

  it("rejects a body over the limit with 413 without buffering it", async () => {
    const res = await request(app({ bodyLimit: 1_000, onRenew: () => {} }))
      .post("/hook")
      .set("content-type", "application/json")
      .send(JSON.stringify({ pad: "x".repeat(50_000) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ processed: false, message: "body exceeds the limit of 1000 bytes" });
  });

  it("answers 405 to GET, 415 to a form post and 400 to broken JSON", async () => {
    const server = app({ onRenew: () => {} });
    server.get("/hook", subscriptionWebhook({ logger: silentLogger() }));
    expect((await request(server).get("/hook")).status).toBe(405);
    expect((await request(server).post("/hook").type("form").send("a=1")).status).toBe(415);
    const broken = await request(server).post("/hook").set("content-type", "application/json").send("{");
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({ processed: false, message: "body is not valid JSON" });
  });

  it("leaves the rest of the app's JSON parsing alone", async () => {
    const res = await request(app({})).post("/other").send({ a: 1 });
    expect(res.body).toEqual({ echoed: { a: 1 } });
  });
});

import Fastify from "fastify";
import { subscriptionWebhook } from "merchant-webhooks/fastify";
import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";

const apps: ReturnType<typeof Fastify>[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** An app with the webhook plugin and ordinary JSON routes beside it. */
async function appWith(options: Partial<Parameters<typeof subscriptionWebhook>[1]> = {}) {
  const app = Fastify();
  apps.push(app);
  app.post("/orders", async (request) => ({ echoed: request.body }));
  await app.register(subscriptionWebhook, { path: "/hook", logger: silentLogger(), ...options });
  app.post("/after", async (request) => ({ echoed: request.body }));
  return app;
}

describe("subscriptionWebhook", () => {
  it("leaves JSON parsing on, before and after it, for the app's other routes", async () => {
    const app = await appWith({ onRenew: () => {} });
    for (const url of ["/orders", "/after"]) {
      const response = await app.inject({ method: "POST", url, payload: { a: 1 } });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ echoed: { a: 1 } });
    }
  });

  it("leaves Fastify's own answers on other routes: bad JSON there is still Fastify's 400", async () => {
    const app = await appWith();
    const response = await app.inject({
      method: "POST",
      url: "/orders",
      headers: { "content-type": "application/json" },
      payload: "{",
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: "FST_ERR_CTP_INVALID_JSON_BODY" });
  });

  it("keeps the app's content-type restrictions: a text/plain post to another route is Fastify's business", async () => {
    const app = Fastify();
    apps.push(app);
    app.removeContentTypeParser("text/plain");
    app.post("/orders", async (request) => ({ echoed: request.body }));
    await app.register(subscriptionWebhook, { path: "/hook", logger: silentLogger() });
    const response = await app.inject({
      method: "POST",
      url: "/orders",
      headers: { "content-type": "text/plain" },
      payload: "hi",
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ code: "FST_ERR_CTP_INVALID_MEDIA_TYPE" });
  });

  it("gets the exact bytes sent, whitespace and key order included", async () => {
    const verify = vi.fn((_rawBody: Uint8Array, _headers: Readonly<Record<string, string>>) => true);
    const app = await appWith({ verify, onRenew: () => {} });
    const text = JSON.stringify(notification(), null, 3);
    await app.inject({ method: "POST", url: "/hook", headers: { "content-type": "application/json" }, payload: text });
    expect(new TextDecoder().decode(verify.mock.calls[0]![0])).toBe(text);
  });

  it("mounts under the prefix it is registered with", async () => {
    const app = Fastify();
    apps.push(app);
    const onRenew = vi.fn();
    await app.register(subscriptionWebhook, {
      prefix: "/webhooks",
      path: "/subscriptions",
      logger: silentLogger(),
      onRenew,
    });
    const response = await app.inject({ method: "POST", url: "/webhooks/subscriptions", payload: notification() });
    expect(response.statusCode).toBe(200);
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("leaves errors that are not about the body to the app's error handler", async () => {
    const app = Fastify();
    apps.push(app);
    app.setErrorHandler(async (_error, _request, reply) => reply.code(403).send({ app: "refused" }));
    app.addHook("onRequest", async (request) => {
      if (request.headers["x-api-key"] !== "open-sesame") throw new Error("no key");
    });
    const onRenew = vi.fn();
    await app.register(subscriptionWebhook, { path: "/hook", logger: silentLogger(), onRenew });
    const response = await app.inject({ method: "POST", url: "/hook", payload: notification() });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ app: "refused" });
    expect(onRenew).not.toHaveBeenCalled();
  });

  it("answers a HEAD request with 405 and no body", async () => {
    const app = await appWith();
    const response = await app.inject({ method: "HEAD", url: "/hook" });
    expect(response.statusCode).toBe(405);
    expect(response.body).toBe("");
  });

  it("answers OPTIONS with the JSON 405, not Fastify's 404", async () => {
    const app = await appWith();
    const response = await app.inject({ method: "OPTIONS", url: "/hook" });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe("POST");
    expect(response.json()).toEqual({ processed: false, message: "method not allowed; use POST" });
  });

  it("closes the receiver (and so its recorder and queue) when the app closes", async () => {
    const app = Fastify();
    const close = vi.fn(async () => {});
    await app.register(subscriptionWebhook, {
      path: "/hook",
      logger: silentLogger(),
      record: { write: () => {}, close },
    });
    await app.ready();
    await app.close();
    expect(close).toHaveBeenCalledTimes(1);
  });
});

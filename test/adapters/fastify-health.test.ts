import Fastify from "fastify";
import { type IdempotencyStore, memoryStore, StoreUnavailableError } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/fastify";
import { describe, expect, it } from "vitest";

async function appWith(idempotency: IdempotencyStore) {
  const app = Fastify();
  await app.register(subscriptionWebhook, { path: "/hook", healthPath: "/healthz", idempotency });
  return app;
}

describe("fastify plugin healthPath", () => {
  it("answers 200 with the health of a reachable store", async () => {
    const app = await appWith(memoryStore());
    const response = await app.inject({ method: "GET", url: "/healthz" });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true, store: "up", queue: "none", inFlight: 0, maxInFlight: 1000 });
    await app.close();
  });

  it("answers 503 while the store cannot be reached", async () => {
    const down: IdempotencyStore = {
      ...memoryStore(),
      ping: () => Promise.reject(new StoreUnavailableError("redis idempotency store: ping failed")),
    };
    const app = await appWith(down);
    const response = await app.inject({ method: "GET", url: "/healthz" });
    expect(response.statusCode).toBe(503);
    const { storeDownSince, ...rest } = response.json();
    expect(rest).toEqual({ ok: false, store: "down", queue: "none", inFlight: 0, maxInFlight: 1000 });
    expect(Date.parse(storeDownSince)).toBeLessThanOrEqual(Date.now());
    await app.close();
  });
});
